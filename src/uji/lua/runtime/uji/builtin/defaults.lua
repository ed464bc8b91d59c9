-- uji's defaults. They load before your init.lua, which can change any of them:
-- a later uji.tool.policy call that names run_command replaces this rule set.
uji.tool.policy({
  run_command = {
    deny = { "/^rm\\s+-rf/" },
  },
})
