-- Loaded on first use by api/apis.lua (a provider's api object or loop): the uji.api
-- classes, what an api object is, and the agent a provider's loop is made with.
local uji, host, lib = ...
local call, check, clean, wait, fail, where = lib.call, lib.check, lib.clean, lib.wait, lib.fail, lib.where
local is_callable = lib.is_callable
local M = {}

-- name -> { wire, the options an object may set, the methods an object may override }
local KINDS = {
  openai = {
    wire = "openai-chat",
    options = { max_tokens_field = "max_tokens", finish_reason = true, cache_key = false,
      tool_result_name = false, bridge_tool_images = false },
    methods = { "url", "headers", "body", "thinking", "user", "assistant", "tool", "reasoning" },
  },
  responses = { wire = "responses", options = { cache_key = true }, methods = { "url", "headers", "body" } },
  anthropic = { wire = "anthropic", options = {}, methods = { "url", "headers", "body" } },
  gemini = { wire = "gemini", options = {}, methods = { "url", "headers", "body" } },
}

local classes = {} -- name -> the built-in class
local kind_of = {} -- built-in class -> its KINDS entry

-- The built-in class `obj` derives from (it may be an object of it or of a subclass).
local function base_of(obj)
  local cls = getmetatable(obj)
  local guard = 0
  while type(cls) == "table" and guard < 100 do
    if kind_of[cls] then return cls end
    local meta = getmetatable(cls)
    cls = meta and rawget(meta, "__index")
    guard = guard + 1
  end
  return nil
end

-- What Python needs to know of an api object: its wire, the options it sets (on itself
-- or on a subclass), the methods it overrides. nil for an object of no built-in class.
local function describe(obj)
  local base = base_of(obj)
  if base == nil then return nil end
  local kind = kind_of[base]
  local options, overrides = {}, {}
  -- Set on the object or a subclass (even to the class's own value), or inherited as
  -- something other than the built-in default.
  local at, guard = obj, 0
  while at ~= nil and at ~= base and guard < 100 do
    for name in pairs(kind.options) do
      local v = rawget(at, name)
      if v ~= nil and options[name] == nil then options[name] = v end
    end
    local meta = getmetatable(at)
    at = meta and rawget(meta, "__index")
    guard = guard + 1
  end
  for _, name in ipairs(kind.methods) do
    if obj[name] ~= base[name] then overrides[#overrides + 1] = name end
  end
  return {
    wire = kind.wire,
    options = options,
    overrides = lib.mark_array(overrides),
    stream = obj.stream ~= base.stream,
    efforts = type(obj.efforts) == "function",
    ready = type(obj.ready) == "function",
  }
end

local function check_request(name, request)
  check(type(request) == "table", name .. " expects the request table")
end

local function builtin(name)
  local kind = KINDS[name]
  local cls = uji.class()
  for option, value in pairs(kind.options) do cls[option] = value end
  function cls:init(opts)
    check(opts == nil or type(opts) == "table", "uji.api." .. name .. ": options must be a table")
    for key, value in pairs(opts or {}) do
      if kind.options[key] ~= nil then
        local want = type(kind.options[key])
        check(type(value) == want or (key == "max_tokens_field" and value == false),
          "uji.api." .. name .. ": option " .. key .. " must be a " .. want)
      end
      self[key] = value
    end
  end
  -- The built-in parts, each as the wire makes it: a subclass calls them as
  -- `uji.api.<name>.body(self, request)`.
  for _, part in ipairs({ "url", "headers", "body" }) do
    cls[part] = function(self, request)
      check_request("uji.api." .. name .. ":" .. part, request)
      return call(host.api_part, part, describe(self), self, clean(request))
    end
  end
  function cls:stream(request, reply)
    check_request("uji.api." .. name .. ":stream", request)
    check(type(reply) == "table", "uji.api." .. name .. ":stream expects a reply table")
    return lib.wait(call(host.api_stream, describe(self), self, clean(request), reply))
  end
  if name == "openai" then
    -- Sends the level as `reasoning_effort` (nothing for "off").
    function cls:thinking(body, request)
      if request.effort and request.effort ~= "off" then body.reasoning_effort = request.effort end
    end
    -- The reasoning text of a streamed delta.
    function cls:reasoning(delta)
      for _, field in ipairs({ "reasoning_content", "reasoning", "reasoning_text" }) do
        if type(delta[field]) == "string" then return delta[field] end
      end
    end
    for _, role in ipairs({ "user", "assistant", "tool" }) do
      cls[role] = function(self, item, request)
        check(type(item) == "table", "uji.api.openai:" .. role .. " expects a message table")
        return call(host.api_item, role, describe(self), self, clean(item))
      end
    end
  end
  classes[name] = cls
  kind_of[cls] = kind
  return cls
end


M.builtin = function(name)
  if KINDS[name] then return builtin(name) end
  return nil
end

-- For uji.provider.add: what an `api` value is. Returns the description (built-in
-- derived), or false for an object of its own with a `stream` method; raises otherwise.
function M.api_value(value, where)
  check(type(value) == "table", where .. ": `api` must be a wire name or an api object")
  if rawget(value, "__index") == value and kind_of[value] ~= nil then
    lib.fail(where .. ": `api` is a class; call it to make the object (uji.api.openai())")
  end
  local described = describe(value)
  if described then return described end
  check(type(value.stream) == "function", where .. ": the api needs a stream method")
  return false
end

-- The agent a provider's loop class is made with (`uji.provider.add{ loop = Class }`):
-- each method reports one step of the turn to uji (`f`, from lua/provider_loop.py).
function M.make_loop_agent(f)
  local agent = {}
  local function table_arg(name, v)
    if type(v) ~= "table" then fail("agent:" .. name .. " expects a table") end
    return clean(v)
  end
  function agent:delta(kind, text)
    if kind ~= "text" and kind ~= "reasoning" then fail("agent:delta: kind must be text or reasoning") end
    f.delta(kind, text ~= nil and clean(tostring(text)) or nil)
  end
  function agent:assistant_step(message) f.assistant_step(table_arg("assistant_step", message)) end
  function agent:tool_running(call) f.tool_running(table_arg("tool_running", call)) end
  -- { allow = true, arguments } or { deny = reason }; may ask the user.
  function agent:approve(name, args, subject)
    if type(name) ~= "string" then fail("agent:approve expects a tool name") end
    if subject ~= nil and type(subject) ~= "string" then fail("agent:approve: subject must be a string") end
    local result, err = wait(f.approve(clean(name), clean(args or {}), subject and clean(subject)))
    if result == nil then fail("agent:approve: " .. tostring(err)) end
    return result
  end
  -- The content after the after_tool hooks.
  function agent:after_tool(name, content)
    local result, err = wait(f.after_tool(clean(tostring(name)), content ~= nil and clean(tostring(content)) or nil))
    if result == nil then fail("agent:after_tool: " .. tostring(err)) end
    return result
  end
  function agent:tool_result(call, content, images)
    f.tool_result(table_arg("tool_result", call), clean(content), images ~= nil and clean(images) or nil)
  end
  function agent:usage(spent) f.usage(table_arg("usage", spent)) end
  function agent:done(message) f.done(table_arg("done", message)) end
  function agent:failed(text) f.failed(clean(tostring(text))) end
  function agent:queued() return f.queued() end
  function agent:steer() return f.steer() end
  return agent
end

-- uji.tool.display (api/tool.lua).
function M.tool_display(name, opts)
  check(type(name) == "string" and name ~= "", "uji.tool.display: the name must be a non-empty string")
  check(type(opts) == "table", "uji.tool.display: opts must be a table {label, subject, question, preview}")
  for k in pairs(opts) do
    check(k == "label" or k == "subject" or k == "question" or k == "preview",
      "uji.tool.display: unknown field " .. tostring(k) .. " (known: label, subject, question, preview)")
  end
  check(opts.label == nil or type(opts.label) == "string", "uji.tool.display: `label` must be a string")
  check(opts.question == nil or type(opts.question) == "string", "uji.tool.display: `question` must be a string")
  check(opts.subject == nil or type(opts.subject) == "string" or is_callable(opts.subject),
    "uji.tool.display: `subject` must be a string or a function")
  check(opts.preview == nil or is_callable(opts.preview), "uji.tool.display: `preview` must be a function")
  call(host.tool_display, clean(name), clean(opts), where())
end

return M
