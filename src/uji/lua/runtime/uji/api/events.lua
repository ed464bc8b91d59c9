-- uji.on, uji.off, uji.emit.
local uji, host, lib = ...
local call, check, wait, where, clean = lib.call, lib.check, lib.wait, lib.where, lib.clean
local is_callable, list_of_strings, mark_array = lib.is_callable, lib.list_of_strings, lib.mark_array

function uji.on(event, handler, opts)
  check(type(event) == "string" and event ~= "", "uji.on: the event must be a non-empty string")
  check(is_callable(handler), "uji.on: the handler must be a function")
  check(opts == nil or type(opts) == "table", "uji.on: options must be a table")
  opts = opts or {}
  check(opts.priority == nil or type(opts.priority) == "number", "uji.on: priority must be a number")
  check(opts.name == nil or type(opts.name) == "string", "uji.on: name must be a string")
  return host.on(event, handler, opts.priority or 50, opts.name, where())
end

function uji.off(event, name)
  check(type(event) == "string", "uji.off: the event must be a string")
  check(type(name) == "string", "uji.off: the name must be a string")
  return host.off(event, name)
end

-- Inside a task the handlers run within the call (it returns once they all have); elsewhere
-- (a tool's subject function, a cancel function) they run right after it.
function uji.emit(event, payload)
  check(type(event) == "string" and event ~= "", "uji.emit: the event must be a non-empty string")
  check(payload == nil or type(payload) == "table", "uji.emit: the payload must be a table")
  if lib.in_task() then
    wait(host.emit_now(event, clean(payload or {})))
  else
    host.emit(event, clean(payload or {}))
  end
end

