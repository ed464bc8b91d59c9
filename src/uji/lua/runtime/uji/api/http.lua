-- uji.http.request{url, method, headers, body, timeout, on_line, idle}, cb?
-- → {status, headers, body}; with a callback, returns a cancel function.
local uji, host, lib = ...
local call, check, wait, clean = lib.call, lib.check, lib.wait, lib.clean
local is_callable, mark_array = lib.is_callable, lib.mark_array

-- Made on the main state while the runtime loads: the Lua values Python keeps pass through
-- it, so they may outlive the task that gave them (see Anchor in api/fs.py).
host.http_bind(function(v) return v end)

local function seconds_arg(spec, key)
  local v = spec[key]
  check(v == nil or (type(v) == "number" and v > 0), "uji.http.request: `" .. key .. "` must be a number of seconds > 0")
  return v
end

-- Headers cross as a list of {name, value} pairs (copied: clean() must not rewrite the
-- caller's table), so Python sees every one in order.
local function headers_arg(headers)
  if headers == nil then return nil end
  check(type(headers) == "table", "uji.http.request: `headers` must be a table of name = value")
  local out = {}
  for name, value in pairs(headers) do
    check(type(name) == "string", "uji.http.request: a header name must be a string")
    check(type(value) == "string" or type(value) == "number",
      "uji.http.request: the value of header " .. name .. " must be a string")
    out[#out + 1] = mark_array({ clean(name), clean(tostring(value)) })
  end
  return mark_array(out)
end

uji.http = {
  request = function(spec, cb)
    check(type(spec) == "table", "uji.http.request expects a table {url = ..., method = ..., ...}")
    check(type(spec.url) == "string" and spec.url ~= "", "uji.http.request: `url` is required and must be a string")
    check(spec.method == nil or type(spec.method) == "string", "uji.http.request: `method` must be a string")
    check(spec.body == nil or type(spec.body) == "string", "uji.http.request: `body` must be a string")
    check(spec.on_line == nil or is_callable(spec.on_line), "uji.http.request: `on_line` must be a function")
    check(cb == nil or type(cb) == "function", "uji.http.request: the callback must be a function")
    local headers = headers_arg(spec.headers)
    local timeout, idle = seconds_arg(spec, "timeout"), seconds_arg(spec, "idle")
    local pending = call(host.http_request, clean(spec.url), spec.method and clean(spec.method), headers,
      spec.body and clean(spec.body), timeout, idle, spec.on_line)
    return wait(pending, cb)
  end,
}
