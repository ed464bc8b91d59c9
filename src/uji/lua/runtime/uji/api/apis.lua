-- uji.api: the provider APIs as classes (the original's late-era form of uji.wire).
--
-- `uji.api.openai` (Chat Completions), `uji.api.responses`, `uji.api.anthropic` and
-- `uji.api.gemini` stand for uji's built-in wires. Call one to get an object for a
-- provider's `api` field; give it options, or subclass it with uji.class and override
-- methods. An object whose class overrides nothing runs the built-in wire exactly as a
-- provider without an object does; each overridden method is called where the wire
-- would do that part itself. Any other name loads `uji.builtin.apis.<name>` with require,
-- so a config or a pack can add its own (a class with a `stream(request, reply)` method).
local uji, host, lib = ...
local call, check, clean = lib.call, lib.check, lib.clean

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

uji.api = setmetatable({}, {
  __index = function(apis, name)
    if type(name) ~= "string" then return nil end
    local found
    if KINDS[name] then
      found = builtin(name)
    else
      found = require("uji.builtin.apis." .. name)
    end
    rawset(apis, name, found)
    return found
  end,
})

-- For uji.provider.add: what an `api` value is. Returns the description (built-in
-- derived), or false for an object of its own with a `stream` method; raises otherwise.
function lib.api_value(value, where)
  check(type(value) == "table", where .. ": `api` must be a wire name or an api object")
  if rawget(value, "__index") == value and kind_of[value] ~= nil then
    lib.fail(where .. ": `api` is a class; call it to make the object (uji.api.openai())")
  end
  local described = describe(value)
  if described then return described end
  check(type(value.stream) == "function", where .. ": the api needs a stream method")
  return false
end
