-- uji.action: named actions for keys. `uji.keymap.add(mode, key, "name")` binds one.
local uji, host, lib = ...
local call, check, is_callable, mark_array = lib.call, lib.check, lib.is_callable, lib.mark_array

local function name_of(name, fname)
  check(type(name) == "string" and name:match("^[%w_%-%.:]+$"),
    fname .. ": the name must be a word such as \"greet\"")
  return name
end

uji.action = {
  -- add(name, fn): a key bound to `name` runs `fn`; raises if `name` is built in.
  add = function(name, fn)
    name = name_of(name, "uji.action.add")
    check(is_callable(fn), "uji.action.add: the action must be a function")
    call(host.action_add, name, fn)
  end,
  remove = function(name)
    check(type(name) == "string", "uji.action.remove expects an action name")
    return host.action_remove(name)
  end,
  list = function() return mark_array(host.action_list()) end,
}
