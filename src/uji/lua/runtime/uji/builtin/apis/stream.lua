-- uji.api.stream: the shared SSE helper for a provider API written in Lua.
--
-- An api class of one's own streams its model's answer with it:
--
--   local Mine = uji.class()
--   function Mine:stream(request, reply)
--     uji.api.stream.run({
--       url = request.provider.base_url .. "/chat/completions",
--       headers = { Authorization = "Bearer " .. request.auth.key },
--       body = { model = request.model, stream = true, messages = ... },
--       reply = reply,
--       read = function(event, parts)          -- each `data:` event, decoded
--         local choice = event.choices and event.choices[1]
--         if not choice then return end
--         if choice.delta.content then parts:push_text(choice.delta.content) end
--         for _, d in ipairs(choice.delta.tool_calls or {}) do
--           local call = parts:call(d.index + 1)  -- made on first use: {id, name, arguments = ""}
--           call.id = d.id or call.id
--           call.name = d["function"].name or call.name
--           call.arguments = call.arguments .. (d["function"].arguments or "")
--         end
--         if choice.finish_reason then
--           parts.hit_limit = choice.finish_reason == "length"
--           parts:finish()
--         end
--       end,
--     })
--   end
--
-- `run` POSTs `body` as JSON (a string is sent as it is) with Content-Type added, reads the
-- `data:` events until `[DONE]` or the end, and ends the reply: `reply.done{text, reasoning,
-- tool_calls, usage, replay}`, or `reply.fail{...}` when
--   - the status is not 2xx: 401 and 403 are `auth`; any other is `http` with the status,
--     `retry-after` and the start of the body;
--   - no data came for `idle` seconds (120);
--   - the stream ended before `parts:finish()` (a dropped connection: retried);
--   - a tool call's arguments are not complete JSON;
--   - the output limit was hit (`parts.hit_limit`) with no tool calls;
--   - `read` set `parts.failure` (a string, or a reply.fail table).
-- `finished(parts)`, if given, is called when the events end (before those checks: it may
-- call `parts:finish()` for a stream whose end is its own); `settle(parts, calls)`, if
-- given, may change the calls (or return new ones) before they are sent.
-- It returns what it gave reply.done, or nil and the failure.

local M = {}

local Parts = {}
Parts.__index = Parts

local function new_parts(reply)
  return setmetatable({ reply = reply, text = {}, reasoning = {}, calls = {}, finished = false }, Parts)
end

function Parts:push_text(delta)
  if type(delta) ~= "string" or delta == "" then return end
  self.text[#self.text + 1] = delta
  if self.reply.text then self.reply.text(delta) end
end

function Parts:push_reasoning(delta)
  if type(delta) ~= "string" or delta == "" then return end
  self.reasoning[#self.reasoning + 1] = delta
  if self.reply.reasoning then self.reply.reasoning(delta) end
end

-- The tool call at position `i` (1, 2, ...), made on first use.
function Parts:call(i)
  if type(i) ~= "number" or i < 1 or i ~= math.floor(i) then error("parts:call expects a position 1, 2, ...", 2) end
  local call = self.calls[i]
  if call == nil then
    call = { id = "", name = "", arguments = "" }
    self.calls[i] = call
  end
  return call
end

function Parts:finish() self.finished = true end

function Parts:has_text() return #self.text > 0 end

local function fail(reply, failure)
  if type(failure) == "string" then failure = { kind = "provider", message = failure } end
  if reply.fail then reply.fail(failure) end
  return nil, failure
end

-- The calls in order, their arguments checked; or nil and the failure's message.
local function settled_calls(parts)
  local positions = {}
  for i in pairs(parts.calls) do positions[#positions + 1] = i end
  table.sort(positions)
  local calls = {}
  for _, i in ipairs(positions) do
    local call = parts.calls[i]
    local args = call.arguments
    if type(args) == "string" then
      if args == "" then args = "{}" end
      local ok, decoded = pcall(uji.json.decode, args)
      if not ok or type(decoded) ~= "table" then
        return nil, "the arguments of tool call " .. #calls + 1 .. " (" .. tostring(call.name) .. ") are not complete JSON"
      end
    end
    calls[#calls + 1] = { id = call.id, name = call.name, arguments = args, signature = call.signature }
  end
  return calls
end

local function http_failure(response)
  local start = response:read() or ""
  response:close()
  if response.status == 401 or response.status == 403 then
    return { kind = "auth", status = response.status, message = "http " .. response.status .. ": " .. start:sub(1, 500) }
  end
  local retry_after = tonumber(response.headers["retry-after"] or "")
  return { kind = "http", status = response.status, retry_after = retry_after,
    message = "http " .. response.status .. ": " .. start:sub(1, 500) }
end

-- Reads the events: true once they ended ([DONE] or the end of the body), or false and the
-- failure (no data for `idle` seconds, an event that is not JSON).
local function read_events(response, spec, parts)
  local data = {}
  local function dispatch()
    if #data == 0 then return true end
    local payload = table.concat(data, "\n")
    data = {}
    if payload == "[DONE]" then return "done" end
    local ok, event = pcall(uji.json.decode, payload)
    if not ok then return false, { kind = "provider", message = "an event that is not JSON: " .. payload:sub(1, 200) } end
    spec.read(event, parts)
    return true
  end
  while true do
    local line = response:line()
    if line == false then
      return false, { kind = "http", message = "no data from the server for " .. (spec.idle or 120) .. " s" }
    end
    if line == nil then return dispatch() ~= false end
    line = line:gsub("\r$", "")
    if line == "" then
      local went, failure = dispatch()
      if went == "done" then return true end
      if went == false then return false, failure end
    elseif line:sub(1, 5) == "data:" then
      data[#data + 1] = line:sub(6):gsub("^ ", "")
    end -- `event:`, `id:` and comments (`:`) carry nothing `read` needs
    if parts.failure ~= nil then return true end
  end
end

-- A mistake in the spec is an error at the caller's line.
local function check(ok, message) if not ok then error("uji.api.stream.run: " .. message, 3) end end

function M.run(spec)
  check(type(spec) == "table", "expects a table {url, headers, body, reply, read, ...}")
  check(type(spec.url) == "string" and spec.url ~= "", "`url` is required and must be a string")
  check(type(spec.reply) == "table", "`reply` (the stream method's reply) is required")
  check(type(spec.read) == "function", "`read(event, parts)` is required")
  for _, name in ipairs({ "finished", "settle" }) do
    check(spec[name] == nil or type(spec[name]) == "function", "`" .. name .. "` must be a function")
  end
  local reply, parts = spec.reply, new_parts(spec.reply)
  local headers = { ["Content-Type"] = "application/json", Accept = "text/event-stream" }
  for k, v in pairs(spec.headers or {}) do headers[k] = v end
  local body = spec.body
  if type(body) == "table" then body = uji.json.encode(body) end

  local response, err = uji.net.open({ url = spec.url, method = "POST", headers = headers, body = body,
    idle = spec.idle or 120, timeout = spec.timeout })
  if response == nil then
    -- A connection that failed is retried (http); a request that cannot be sent is not.
    err = tostring(err)
    local transport = err:find("^could not connect") or err:find("^connection failed") or err:find("^timed out")
    return fail(reply, { kind = transport and "http" or "provider", message = err })
  end
  if response.status < 200 or response.status > 299 then return fail(reply, http_failure(response)) end

  local ok, failure = read_events(response, spec, parts)
  response:close()
  if not ok then return fail(reply, failure) end
  if parts.failure ~= nil then return fail(reply, parts.failure) end
  if spec.finished then spec.finished(parts) end
  if not parts.finished then
    return fail(reply, { kind = "http", message = "the stream ended before the answer finished" })
  end
  local calls, bad = settled_calls(parts)
  if calls == nil then return fail(reply, bad) end
  if spec.settle then calls = spec.settle(parts, calls) or calls end
  if parts.hit_limit and #calls == 0 then
    return fail(reply, "the answer hit the output limit before it finished")
  end
  local answer = { text = table.concat(parts.text), tool_calls = uji.json.array(calls), usage = parts.usage,
    replay = parts.replay }
  if #parts.reasoning > 0 then answer.reasoning = table.concat(parts.reasoning) end
  if reply.done then reply.done(answer) end
  return answer
end

return M
