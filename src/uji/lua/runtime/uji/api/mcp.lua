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

local GRANTS = { authorization_code = true, client_credentials = true, identity_assertion = true }
local AUTH_METHODS = { none = true, client_secret_basic = true, client_secret_post = true }
local OAUTH_KEYS = {
  grant = "string", client_id = "string", client_secret = "string", token_endpoint_auth_method = "string",
  scope = "string", client_metadata_url = "string", callback_port = "number", private_key = "string",
  signing_algorithm = "string", issuer = "string", idp = "table",
}

-- `oauth`: false (a 401 is final), or how uji gets its token (uji.mcp.auth); nil: discovered.
local function check_oauth(o, url)
  if o == nil or o == false then return end
  check(type(o) == "table", "uji.mcp.add: `oauth` must be a table, or false")
  check(url ~= nil, "uji.mcp.add: `oauth` is for a `url` server")
  for k, v in pairs(o) do
    local kind = OAUTH_KEYS[k]
    check(kind ~= nil, "uji.mcp.add: unknown `oauth` field `" .. tostring(k) .. "`")
    check(type(v) == kind, "uji.mcp.add: `oauth." .. k .. "` must be a " .. kind)
  end
  local grant = o.grant or "authorization_code"
  check(GRANTS[grant], 'uji.mcp.add: `oauth.grant` must be "authorization_code", "client_credentials" or "identity_assertion"')
  check(o.token_endpoint_auth_method == nil or AUTH_METHODS[o.token_endpoint_auth_method],
    'uji.mcp.add: `oauth.token_endpoint_auth_method` must be "none", "client_secret_basic" or "client_secret_post"')
  local port = o.callback_port
  check(port == nil or (port == math.floor(port) and port > 0 and port < 65536),
    "uji.mcp.add: `oauth.callback_port` must be a port number")
  check(o.client_metadata_url == nil or o.client_metadata_url:match("^https://[^/]+/.") ~= nil,
    "uji.mcp.add: `oauth.client_metadata_url` must be an https:// URL with a path")
  if grant == "client_credentials" then
    check(o.client_id ~= nil and (o.client_secret ~= nil or o.private_key ~= nil),
      "uji.mcp.add: `oauth.grant = \"client_credentials\"` needs `client_id` and `client_secret` or `private_key`")
  elseif grant == "identity_assertion" then
    local idp = o.idp or {}
    check(o.client_id ~= nil and o.client_secret ~= nil and o.issuer ~= nil,
      "uji.mcp.add: `oauth.grant = \"identity_assertion\"` needs `client_id`, `client_secret` and `issuer`")
    for _, k in ipairs({ "token_endpoint", "client_id", "id_token" }) do
      check(type(idp[k]) == "string", "uji.mcp.add: `oauth.idp." .. k .. "` must be a string (identity_assertion)")
    end
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
    check_oauth(spec.oauth, spec.url)
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
