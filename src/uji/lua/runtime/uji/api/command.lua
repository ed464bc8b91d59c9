-- uji.command: slash commands, `/name args`.
local uji, host, lib = ...
local check, where, clean, is_callable, mark_array = lib.check, lib.where, lib.clean, lib.is_callable, lib.mark_array

uji.command = {
  -- add(name, fn) or add(name, { handler = fn, desc = "..." }); replaces a command of that name.
  add = function(name, spec)
    check(type(name) == "string" and name:match("^[%w_%-%.:]+$"),
      "uji.command.add: the name must be a word such as \"review\" (no slash, no spaces)")
    local handler, desc = spec, nil
    if type(spec) == "table" and not is_callable(spec) then
      handler, desc = spec.handler, spec.desc
      check(desc == nil or type(desc) == "string", "uji.command.add: `desc` must be a string")
    end
    check(is_callable(handler), "uji.command.add: a handler function is required")
    host.command_add(name, handler, desc and clean(desc), where())
  end,
  remove = function(name)
    check(type(name) == "string", "uji.command.remove expects a command name")
    return host.command_remove(name)
  end,
  list = function() return mark_array(host.command_list()) end,
}
