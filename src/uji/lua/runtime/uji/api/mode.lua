-- uji.mode: the gate's modes (Shift+Tab cycles them): add, set, get, list.
local uji, host, lib = ...
local call, check, where, clean = lib.call, lib.check, lib.where, lib.clean
local is_callable, mark_array = lib.is_callable, lib.mark_array

uji.mode = {
  -- A mode is a policy laid over the rules as written while it is on: it can allow what
  -- would ask and deny anything; a deny of the rules as written stays.
  add = function(name, policy, opts)
    check(type(name) == "string" and name ~= "", "uji.mode.add: the name must be a non-empty string")
    check(type(policy) == "table", "uji.mode.add: the policy must be a table of rules, as uji.tool.policy takes")
    check(opts == nil or type(opts) == "table", "uji.mode.add: opts must be a table")
    opts = opts or {}
    check(opts.desc == nil or type(opts.desc) == "string", "uji.mode.add: `desc` must be a string")
    check(opts.on_enter == nil or is_callable(opts.on_enter), "uji.mode.add: `on_enter` must be a function")
    check(opts.on_leave == nil or is_callable(opts.on_leave), "uji.mode.add: `on_leave` must be a function")
    call(host.mode_add, clean(name), clean(policy), clean(opts.desc or ""), opts.on_enter, opts.on_leave, where())
  end,
  set = function(name)
    check(type(name) == "string", "uji.mode.set expects a mode name")
    call(host.mode_set, name)
  end,
  get = function() return host.mode_get() end,
  list = function() return mark_array(host.mode_list()) end,
}
