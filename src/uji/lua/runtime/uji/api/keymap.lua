-- uji.keymap: key bindings per mode (normal, suggest, select, prompt, confirm, overlay).
local uji, host, lib = ...
local call, check, fail, clean, where = lib.call, lib.check, lib.fail, lib.clean, lib.where
local is_callable, list_of_strings, mark_array = lib.is_callable, lib.list_of_strings, lib.mark_array

-- A mode, or a list of modes for one binding in several.
local function modes_of(mode, fname)
  if type(mode) == "string" then return mark_array({ mode }) end
  check(type(mode) == "table", fname .. ": the mode must be a string such as \"normal\", or a list of modes")
  return list_of_strings(mode, fname)
end

local function key_of(key, fname)
  check(type(key) == "string" and key ~= "", fname .. ": the key must be a string such as \"<C-x>\" or \"y\"")
  return clean(key)
end

uji.keymap = {
  -- add(mode, key, "action_name" | {command = "name"} | {action = "name"} | function)
  add = function(mode, key, binding)
    local modes = modes_of(mode, "uji.keymap.add")
    key = key_of(key, "uji.keymap.add")
    local kind, value
    if type(binding) == "string" then
      kind, value = "action", binding
    elseif is_callable(binding) then
      kind, value = "function", binding
    elseif type(binding) == "table" then
      if type(binding.command) == "string" then
        kind, value = "command", binding.command:gsub("^/", "")
      elseif type(binding.action) == "string" then
        kind, value = "action", binding.action
      else
        fail("uji.keymap.add: a binding table needs `command = \"name\"` or `action = \"name\"`")
      end
    else
      fail("uji.keymap.add: the binding must be an action name, {command = ...}, {action = ...} or a function")
    end
    call(host.keymap_add, modes, key, kind, value, where())
  end,
  -- Marks the key unbound in the mode, defaults included.
  remove = function(mode, key)
    local modes = modes_of(mode, "uji.keymap.remove")
    call(host.keymap_remove, modes, key_of(key, "uji.keymap.remove"))
  end,
  reset = function() host.keymap_reset() end,
  list = function() return mark_array(host.keymap_list()) end,
}
