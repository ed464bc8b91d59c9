-- uji.net.request (uji.http.request), uji.net.open (a response read line by line) and
-- uji.net.listen (a TCP server on 127.0.0.1).
local uji, host, lib = ...
local call, check, wait, clean = lib.call, lib.check, lib.wait, lib.clean

local Stream = {}
Stream.__index = Stream

-- The next line of the body; nil at the end, false when none came within `idle`.
function Stream:line() return wait(host.stream_line(self._stream)) end
function Stream:lines()
  return function()
    local line = self:line()
    if line == false then return nil end
    return line
  end
end
-- The rest of the body.
function Stream:read() return wait(host.stream_read(self._stream)) end
function Stream:close() host.stream_close(self._stream) end

local Conn = {}
Conn.__index = Conn
function Conn:line() return wait(host.conn_line(self._conn)) end
function Conn:lines() return function() return self:line() end end
function Conn:read(n)
  check(type(n) == "number" and n >= 1, "conn:read expects a number of bytes")
  return wait(host.conn_read(self._conn, n))
end
function Conn:write(data)
  check(type(data) == "string", "conn:write expects a string")
  return wait(host.conn_write(self._conn, lib.hex(data)))
end
function Conn:close() host.conn_close(self._conn) end

local Server = {}
Server.__index = Server
-- Waits for the next connection.
function Server:accept()
  local conn, err = wait(host.server_accept(self._server))
  if conn == nil then return nil, err end
  return setmetatable({ _conn = conn }, Conn)
end
function Server:close() host.server_close(self._server) end

local function request_args(spec, name)
  check(type(spec) == "table", name .. " expects a table {url = ..., method = ..., ...}")
  check(type(spec.url) == "string" and spec.url ~= "", name .. ": `url` is required and must be a string")
  check(spec.method == nil or type(spec.method) == "string", name .. ": `method` must be a string")
  check(spec.body == nil or type(spec.body) == "string", name .. ": `body` must be a string")
  check(spec.headers == nil or type(spec.headers) == "table", name .. ": `headers` must be a table")
  for _, key in ipairs({ "timeout", "idle" }) do
    check(spec[key] == nil or (type(spec[key]) == "number" and spec[key] > 0),
      name .. ": `" .. key .. "` must be a number of seconds > 0")
  end
end

uji.net = {
  request = function(spec, cb)
    return uji.http.request(spec, cb)
  end,
  open = function(spec)
    request_args(spec, "uji.net.open")
    local headers = {}
    for k, v in pairs(spec.headers or {}) do headers[#headers + 1] = lib.mark_array({ clean(k), clean(tostring(v)) }) end
    local pending = call(host.net_open, clean(spec.url), spec.method and clean(spec.method),
      lib.mark_array(headers), spec.body and clean(spec.body), spec.timeout, spec.idle)
    local r, err = wait(pending)
    if r == nil then return nil, err end
    return setmetatable(r, Stream)
  end,
  listen = function(port)
    check(type(port) == "number" and port >= 0 and port < 65536 and port == math.floor(port),
      "uji.net.listen expects a port number (0 picks a free one)")
    local server, err = wait(host.net_listen(port))
    if server == nil then return nil, err end
    return setmetatable({ _server = server, port = host.server_port(server) }, Server)
  end,
}
