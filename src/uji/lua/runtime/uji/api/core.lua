-- uji.json, uji.notify, uji.schedule, uji.defer, and print as a notice.
local uji, host, lib = ...
local call, check, wait, where, clean = lib.call, lib.check, lib.wait, lib.where, lib.clean
local is_callable, list_of_strings, mark_array = lib.is_callable, lib.list_of_strings, lib.mark_array

uji.json = {
  null = lib.null,
  array = function(t)
    check(type(t) == "table", "uji.json.array expects a table")
    return setmetatable(t, lib.ARRAY)
  end,
  encode = function(v) return call(host.json_encode, clean(v)) end,
  decode = function(text, opts)
    check(type(text) == "string", "uji.json.decode expects a string")
    local nulls = true
    if type(opts) == "table" and opts.nulls == false then nulls = false end
    return call(host.json_decode, clean(text), nulls)
  end,
}

function uji.notify(msg)
  host.notify(clean(tostring(msg)))
end

function uji.schedule(fn)
  check(is_callable(fn), "uji.schedule expects a function")
  host.schedule(fn)
end

function uji.defer(seconds, fn)
  check(type(seconds) == "number" and seconds >= 0, "uji.defer expects a number of seconds >= 0")
  check(is_callable(fn), "uji.defer expects a function")
  local cancel = host.defer(seconds, fn)
  return function() cancel() end
end


-- Lua's print would scribble over the screen or the JSON stream: make it a notice.
_G.print = function(...)
  local parts = {}
  for i = 1, select("#", ...) do parts[#parts + 1] = tostring((select(i, ...))) end
  uji.notify(table.concat(parts, "\t"))
end
