-- Plan mode: a read-only planning mode, shipped as an example of what a plugin can do
-- with the public API alone. Use it from your init.lua:
--
--   require("uji.plugins.planmode").setup({ allow = { "git log", "git diff", "ls", "rg" } })
--
-- /plan            enter plan mode (the model can read and run allowed commands only)
-- /plan <task>     enter plan mode and ask for a plan for <task>
-- /approve         leave plan mode and carry out the plan
-- Ctrl+B           toggles plan mode (`keys = false` leaves Ctrl+B to the composer)
-- Shift+Tab        (in the terminal UI) cycles into and out of this plan mode too
--
-- With `confirm` (the default), a turn that ends in plan mode with an answer asks what
-- next: accept (leave plan mode and carry out the plan), keep planning, or leave plan mode
-- without carrying it out. `badge` puts planmode.Badge(), a "plan" view shown while
-- planning, in the bottom bar when this uji has ito toolbars (uji.ui.toolbar); the footer
-- names the mode either way.
--
-- While planning, edit_file and write_file are disabled (the model still sees them, and
-- every call is refused), and a before_tool hook refuses commands that are not on the
-- allow list. Copy this file to ~/.config/uji/lua/ and change it as you like.

local M = { active = false }

local defaults = {
  allow = { "git status", "git log", "git diff", "git show", "ls", "cat", "rg", "grep", "find", "head", "tail", "wc" },
  priority = 10, -- before other before_tool hooks, so plan mode has the first word
  confirm = true, -- the accept / keep planning / leave picker when a planning turn ends
  badge = true, -- the "plan" badge in the bottom bar (with ito toolbars)
  keys = true, -- Ctrl+B toggles
}

local CHOICES = {
  { id = "accept", label = "Accept the plan: leave plan mode and carry it out" },
  { id = "keep", label = "Keep planning" },
  { id = "leave", label = "Leave plan mode without carrying it out" },
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

local function approve()
  local was = M.active
  leave()
  if was then uji.session.submit("The plan is approved. Carry it out.") end
end

function M.toggle()
  if M.active then leave() else enter() end
end

-- Whether the session's last message is the model's answer (not an error or interrupt).
local function answered()
  local messages = uji.session.messages()
  local last = messages[#messages]
  return last ~= nil and last.type == "assistant"
end

-- What next, once a planning turn has answered.
local function ask_what_next()
  uji.ui.select({ title = "Plan mode: the plan is ready", items = CHOICES, label = function(c) return c.label end },
    function(choice)
      if not choice or not M.active then return end
      if choice.id == "accept" then
        approve()
      elseif choice.id == "leave" then
        leave()
      end
    end)
end

-- planmode.Badge(): an ito view, "plan" while planning and nothing otherwise.
function M.Badge()
  local ito = require("ito")
  return ito.view(function()
    if not M.active then return ito.Text("") end
    return ito.Text(" plan "):reverse()
  end)()
end

function M.setup(opts)
  opts = opts or {}
  for key, value in pairs(defaults) do
    if opts[key] == nil then opts[key] = value end
  end
  local allow = opts.allow

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
    handler = approve,
  })

  if opts.keys then uji.keymap.add("normal", "<C-b>", M.toggle) end

  if opts.confirm then
    uji.on("turn_finished", function()
      if M.active and uji.ui.size() and answered() then ask_what_next() end
    end, { name = "planmode_confirm" })
  end

  -- The badge needs ito's toolbars: a feature check, so this runs on a uji without them.
  if opts.badge and uji.ui.toolbar then
    local ok, ito = pcall(require, "ito")
    if ok then M.toolbar = uji.ui.toolbar({ ito.ToolbarItem("bottom_bar", M.Badge) }) end
  end

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
  end, { priority = opts.priority, name = "planmode" })

  return M
end

M.enter, M.leave = enter, leave
return M
