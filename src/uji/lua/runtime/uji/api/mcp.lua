-- uji.mcp: add, remove, list, configure (MCP servers; their tools are `server__tool`).
local uji, host, lib = ...
local call, check, clean, mark_array = lib.call, lib.check, lib.clean, lib.mark_array

local function strings_map(t, what)
  check(t == nil or type(t) == "table", "uji.mcp.add: `" .. what .. "` must be a table of strings")
  for k, v in pairs(t or {}) do
    check(type(k) == "string" and type(v) == "string",
      "uji.mcp.add: `" .. what .. "` must map names to strings")
  end
end

uji.mcp = {
  add = function(name, spec)
    check(type(name) == "string" and name:match("^[%w_-]+$") ~= nil,
      "uji.mcp.add: the name must be letters, digits, _ or - (it starts each tool's name)")
    check(type(spec) == "table", "uji.mcp.add: the spec must be a table")
    check((spec.command == nil) ~= (spec.url == nil), "uji.mcp.add: give either `command` or `url`")
    if spec.command ~= nil then
      check(type(spec.command) == "table" and #spec.command > 0,
        "uji.mcp.add: `command` must be a non-empty list of strings (the program and its arguments)")
      for i, part in ipairs(spec.command) do
        check(type(part) == "string", "uji.mcp.add: `command` entry " .. i .. " is not a string")
      end
      spec.command = mark_array(spec.command)
    else
      check(type(spec.url) == "string" and spec.url:match("^https?://") ~= nil,
        "uji.mcp.add: `url` must be an http:// or https:// URL")
    end
    check(spec.transport == nil or spec.transport == "http" or spec.transport == "sse",
      'uji.mcp.add: `transport` must be "http" (streamable HTTP) or "sse" (the legacy HTTP+SSE)')
    strings_map(spec.env, "env")
    strings_map(spec.headers, "headers")
    check(spec.cwd == nil or type(spec.cwd) == "string", "uji.mcp.add: `cwd` must be a string")
    check(spec.trust_read_only == nil or type(spec.trust_read_only) == "boolean",
      "uji.mcp.add: `trust_read_only` must be a boolean")
    local w = spec.wait
    check(w == nil or (type(w) == "number" and w >= 0 and w < math.huge),
      "uji.mcp.add: `wait` must be a number of seconds, 0 or more")
    call(host.mcp_add, name, clean(spec))
  end,
  remove = function(name)
    check(type(name) == "string", "uji.mcp.remove expects a server name")
    return host.mcp_remove(name)
  end,
  list = function()
    return mark_array(host.mcp_list())
  end,
  -- configure{project = false}: never read the project's .mcp.json (by default it is
  -- imported once you approve it for the project); `wait`: how long a turn waits for
  -- servers still connecting, each one without a `wait` of its own (seconds, default 10).
  configure = function(opts)
    check(type(opts) == "table", "uji.mcp.configure expects a table {project = true|false, wait = seconds}")
    for k in pairs(opts) do
      check(k == "project" or k == "wait", "uji.mcp.configure: unknown option `" .. tostring(k) .. "` (project, wait)")
    end
    check(opts.project == nil or type(opts.project) == "boolean", "uji.mcp.configure: `project` must be a boolean")
    local w = opts.wait
    check(w == nil or (type(w) == "number" and w >= 0 and w < math.huge),
      "uji.mcp.configure: `wait` must be a number of seconds, 0 or more")
    call(host.mcp_configure, opts.project, w)
  end,
}
