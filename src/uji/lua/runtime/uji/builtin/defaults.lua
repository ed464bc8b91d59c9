-- uji's defaults. They load before your init.lua, which can change any of them:
-- a later uji.tool.policy call that names run_command replaces this rule set.
--
-- Rules for run_command match each command of a line in normal form (quotes, escapes,
-- leading assignments and redirections removed, words joined by one space), so one
-- rule for a forced recursive rm also stops `\rm -fr x`, `{ sudo rm -r -f x; }` and
-- `/bin/rm x --recursive --force`. `rm -r x`, `rm -f x` and `echo rm -rf` are not
-- matched; like any command without an allow rule, they ask.
local rm = "^(\\S*/)?rm(?=\\s)" -- rm, /bin/rm, …
local recursive = "(?=.*\\s(-[a-zA-Z]*[rR][a-zA-Z]*|--r[ecursiv]*)(\\s|$))" -- -r, -R, -rf, --recursive
local force = "(?=.*\\s(-[a-zA-Z]*f[a-zA-Z]*|--f[orce]*)(\\s|$))" -- -f, -fr, --force

uji.tool.policy({
  run_command = {
    deny = { "/" .. rm .. recursive .. force .. "/" },
  },
})
