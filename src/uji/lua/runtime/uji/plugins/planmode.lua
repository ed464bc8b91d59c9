-- Plan mode: a read-only planning mode, shipped as an example of what a plugin can do
-- with the public API alone. Use it from your init.lua:
--
--   require("uji.plugins.planmode").setup({ allow = { "git log", "git diff", "ls", "rg" } })
--
-- /plan            enter plan mode (the model can read and run allowed commands only)
-- /plan <task>     enter plan mode and ask for a plan for <task>
-- /approve         leave plan mode and carry out the plan
-- Shift+Tab        (in the terminal UI) cycles into and out of this plan mode too
--
-- While planning, edit_file and write_file are disabled (the model still sees them, and
-- every call is refused), and a before_tool hook refuses commands that are not on the
-- allow list. Copy this file to ~/.config/uji/lua/ and change it as you like.

local M = { active = false }

local defaults = {
  allow = { "git status", "git log", "git diff", "git show", "ls", "cat", "rg", "grep", "find", "head", "tail", "wc" },
  priority = 10, -- before other before_tool hooks, so plan mode has the first word
}

local EDITING = { "edit_file", "write_file" }

local function starts_with_any(command, prefixes)
  for _, prefix in ipairs(prefixes) do
    if command == prefix or command:sub(1, #prefix + 1) == prefix .. " " then return true end
  end
  return false
end

local function enter(opts)
  if M.active then return end
  M.active = true
  if uji.mode.get() ~= "plan" then uji.mode.set("plan") end -- the footer and Shift+Tab agree
  uji.tool.disable(EDITING)
  M.announce = "Plan mode is on: do not change any file. Read what you need, then answer with a numbered plan and stop."
  uji.notify("plan mode: on (edits are off; /approve to carry out the plan)")
  uji.emit("status_changed", { plan = true })
end

local function leave()
  if not M.active then return end
  M.active = false
  if uji.mode.get() == "plan" then uji.mode.set("ask") end
  uji.tool.enable(EDITING)
  M.announce = "Plan mode is off: you may now change files. Carry out the plan."
  uji.notify("plan mode: off")
  uji.emit("status_changed", { plan = false })
end

function M.setup(opts)
  opts = opts or {}
  local allow = opts.allow or defaults.allow

  -- Shift+Tab's plan mode is this one: the same read-only layer, entered and left
  -- through the plugin (edits off, commands from the allow list, the model told).
  local EDITS_DENIED = {}
  for _, name in ipairs(EDITING) do EDITS_DENIED[name] = { default = "deny" } end
  uji.mode.add("plan", EDITS_DENIED, {
    desc = "read-only: edits are off, commands from the plan mode allow list",
    on_enter = function() enter(opts) end,
    on_leave = function() leave() end,
  })

  uji.command.add("plan", {
    desc = "Plan before changing anything: /plan [task]",
    handler = function(args)
      enter(opts)
      if args and args:match("%S") then uji.session.submit("Make a plan for: " .. args) end
    end,
  })

  uji.command.add("approve", {
    desc = "Leave plan mode and carry out the plan",
    handler = function()
      local was = M.active
      leave()
      if was then uji.session.submit("The plan is approved. Carry it out.") end
    end,
  })

  -- Each change of mode is told to the model once, as hidden context with the turn.
  uji.context.add("planmode", function()
    local text = M.announce
    M.announce = nil
    if text then return { text = text, at = "turn" } end
  end)

  uji.on("before_tool", function(e)
    if not M.active or e.name ~= "run_command" then return nil end
    local command = e.arguments.command or ""
    if command:find("[;&|`$><]") then
      return { deny = "plan mode: only simple read-only commands run while planning" }
    end
    if starts_with_any(command, allow) then return { allow = true } end
    return { deny = "plan mode: `" .. command .. "` is not on the plan mode allow list" }
  end, { priority = opts.priority or defaults.priority, name = "planmode" })

  return M
end

M.enter, M.leave = enter, leave
return M
