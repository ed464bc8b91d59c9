-- The `uji` table. Lua's side of the bridge is thin: argument checks that must point
-- at the caller's line, the callback-or-wait convention, and the coroutine driver.
-- The work itself happens in Python, behind `host`.
local host = ...

local pack = function(...) return { n = select("#", ...), ... } end
local unpack = unpack or table.unpack

local M = {}

-- JSON helpers ---------------------------------------------------------------

-- JSON null: a unique value, because nil cannot be stored in a table.
local NULL = setmetatable({}, {
  __tostring = function() return "uji.json.null" end,
  __newindex = function() error("uji.json.null is read-only", 2) end,
})
-- Tables marked as arrays encode as [] even when empty.
local ARRAY = { __jsontype = "array" }

function M.mark_array(t)
  if getmetatable(t) == nil then setmetatable(t, ARRAY) end
  return t
end

-- What a table stands for when it crosses into Python: "null", "array" or "table".
function M.kind(t)
  if t == NULL then return "null" end
  if getmetatable(t) == ARRAY then return "array" end
  return "table"
end

-- Valid UTF-8 at the boundary: Python strings cannot hold arbitrary bytes, so invalid
-- sequences become U+FFFD before a Lua string crosses into Python.
local REPLACEMENT = "\239\191\189"

local function clean_string(s)
  if not s:find("[\128-\255]") then return s end
  local out, i, n, changed = {}, 1, #s, false
  local byte = string.byte
  while i <= n do
    local c = byte(s, i)
    local len = c < 0x80 and 1 or (c >= 0xC2 and c <= 0xDF) and 2 or (c >= 0xE0 and c <= 0xEF) and 3
      or (c >= 0xF0 and c <= 0xF4) and 4 or 0
    local ok = len > 0 and i + len - 1 <= n
    if ok and len > 1 then
      for k = 1, len - 1 do
        local cc = byte(s, i + k)
        if cc < 0x80 or cc > 0xBF then ok = false break end
      end
      if ok then
        local c2 = byte(s, i + 1)
        if (c == 0xE0 and c2 < 0xA0) or (c == 0xED and c2 > 0x9F)
          or (c == 0xF0 and c2 < 0x90) or (c == 0xF4 and c2 > 0x8F) then ok = false end
      end
    end
    if ok then
      out[#out + 1] = s:sub(i, i + len - 1)
      i = i + len
    else
      out[#out + 1] = REPLACEMENT
      changed = true
      i = i + 1
    end
  end
  return changed and table.concat(out) or s
end

local function clean(v, seen)
  local t = type(v)
  if t == "string" then return clean_string(v) end
  if t ~= "table" or v == NULL then return v end
  seen = seen or {}
  if seen[v] then return v end
  seen[v] = true
  for k, x in pairs(v) do
    local cx = clean(x, seen)
    if cx ~= x then rawset(v, k, cx) end
  end
  return v
end
M.clean = clean
M.null = NULL

function M.type(v)
  return type(v)
end

-- The coroutine driver -------------------------------------------------------

-- Coroutines stay on the Lua side (lupa would wrap a thread handed to Python): Python
-- holds a number for each task.
local tasks = {} -- coroutine -> id, for the check in wait()
local by_id = {} -- id -> coroutine
local next_id = 0
local HOOK_EVERY = 1000000

-- What an interrupt raises inside Lua. It is not a string, so the driver tells it from
-- an error; and the host keeps raising it until the interrupted code has stopped, so a
-- pcall around a loop cannot swallow it.
local INTERRUPT = setmetatable({}, { __tostring = function() return "interrupted" end })

local function interrupt_hook()
  if host.check_interrupt() then error(INTERRUPT, 0) end
end

local function describe_error(e)
  if e == INTERRUPT then return "interrupted" end
  if type(e) == "string" then return e end
  if type(e) == "table" and type(e.message) == "string" then return e.message end
  return "error object (" .. type(e) .. "): " .. tostring(e)
end

-- Lua cuts long chunk names in error messages ("...fig/uji/init.lua:3: x"); put the
-- whole path back using the frame that raised.
local function full_position(co, msg)
  for level = 0, 3 do
    local info = debug.getinfo(co, level, "Sl")
    if info == nil then break end
    if info.what ~= "C" and info.short_src then
      local prefix = info.short_src .. ":"
      if msg:sub(1, #prefix) == prefix then
        local src = info.source
        if src:sub(1, 1) == "@" then src = src:sub(2) end
        return src .. ":" .. msg:sub(#prefix + 1)
      end
    end
  end
  return msg
end

function M.spawn(fn, ...)
  local args = pack(...)
  local co = coroutine.create(function() return fn(unpack(args, 1, args.n)) end)
  next_id = next_id + 1
  tasks[co] = next_id
  by_id[next_id] = co
  debug.sethook(co, interrupt_hook, "", HOOK_EVERY)
  return next_id
end

local function finish(id)
  local co = by_id[id]
  by_id[id] = nil
  if co then tasks[co] = nil end
end
M.forget = finish

-- Resume once. Returns "yield", value | "done", results... | "error", message |
-- "interrupted".
function M.step(id, ...)
  local co = by_id[id]
  if co == nil then return "error", "this task has ended" end
  local r = pack(coroutine.resume(co, ...))
  if not r[1] then
    finish(id)
    if r[2] == INTERRUPT then return "interrupted" end
    return "error", clean(full_position(co, describe_error(r[2])))
  end
  if coroutine.status(co) == "dead" then
    finish(id)
    for i = 2, r.n do r[i] = clean(r[i]) end
    return "done", unpack(r, 2, r.n)
  end
  return "yield", r[2]
end

-- The ctx table a Lua tool's run receives. `call` (the call's context on the Python side)
-- stays out of reach of Lua code; `uji.tool.get(name).run(args, ctx)` finds it again.
local USAGE_FIELDS = { input = true, output = true, cache_read = true, cache_write = true, cost = true }
local USAGE_SHAPE = "{input=, output=, cache_read=, cache_write=, cost=}"
local ctx_calls = setmetatable({}, { __mode = "k" })

local TASK_STATUS = { queued = true, running = true, done = true, failed = true }
local TASK_FIELDS = { label = true, status = true, line = true, detail = true, group = true }

-- ctx.task(label, {status?, group?, line?, detail?}): a task handle with :update{...},
-- :done(detail?) and :fail(detail?); every change reports all of the call's tasks.
local function task_maker(report)
  local rows = {}
  local function send()
    local out = {}
    for i, row in ipairs(rows) do
      out[i] = { label = row.label, status = row.status, line = row.line, detail = row.detail, group = row.group }
    end
    report(clean(M.mark_array(out)))
  end
  local function set(row, fields, fname)
    if type(fields) ~= "table" then error(fname .. ": expects a table {label, status, line, detail, group}", 3) end
    for k, v in pairs(fields) do
      if not TASK_FIELDS[k] then
        error(fname .. ": unknown field " .. tostring(k) .. " (known: label, status, line, detail, group)", 3)
      end
      if k == "status" and not TASK_STATUS[v] then
        error(fname .. ": status must be queued, running, done or failed, got " .. tostring(v), 3)
      end
      if v ~= nil and type(v) ~= "string" then error(fname .. ": " .. k .. " must be a string", 3) end
      row[k] = v
    end
  end
  return function(label, opts)
    if type(label) ~= "string" or label == "" then error("ctx.task: the label must be a non-empty string", 2) end
    local row = { label = label, status = "running" }
    if opts ~= nil then set(row, opts, "ctx.task") end
    rows[#rows + 1] = row
    send()
    local handle = {}
    function handle:update(fields) set(row, fields, "task:update") send() end
    function handle:done(detail) row.status, row.detail = "done", detail ~= nil and tostring(detail) or row.detail send() end
    function handle:fail(detail) row.status, row.detail = "failed", detail ~= nil and tostring(detail) or row.detail send() end
    return handle
  end
end

function M.make_ctx(done, progress, usage, call, tasks)
  local ctx = {
    task = task_maker(tasks),
    done = function(v) done(clean(v)) end,
    progress = function(line) progress(clean(line == nil and "" or tostring(line))) end,
    -- usage{input, output, cache_read, cache_write, cost}: tokens and dollars spent for
    -- the session outside its own requests (a child session), added to its totals.
    usage = function(spent)
      if type(spent) ~= "table" then error("ctx.usage: expects a table " .. USAGE_SHAPE, 2) end
      local out = {}
      for k, v in pairs(spent) do
        if not USAGE_FIELDS[k] then
          error("ctx.usage: unknown field " .. tostring(k) .. " (known: input, output, cache_read, cache_write, cost)", 2)
        end
        if type(v) ~= "number" or v ~= v or v < 0 or v >= 2 ^ 53 then
          error("ctx.usage: " .. k .. " must be a number >= 0, got " .. tostring(v), 2)
        end
        if k ~= "cost" and v ~= math.floor(v) then
          error("ctx.usage: " .. k .. " must be a whole number of tokens, got " .. tostring(v), 2)
        end
        out[k] = v
      end
      usage(out)
    end,
  }
  ctx_calls[ctx] = call
  return ctx
end

local function ctx_call(ctx)
  return type(ctx) == "table" and ctx_calls[ctx] or nil
end

-- The reply table a Lua wire's stream receives.
function M.make_reply(text, reasoning, done, fail)
  return {
    text = function(d) text(clean(d)) end,
    reasoning = function(d) reasoning(clean(d)) end,
    done = function(a) done(clean(a)) end,
    fail = function(f) fail(clean(f)) end,
  }
end

-- The frame of the user's code that called into the API: the first one outside
-- this file, skipping C functions and tail calls.
local PRELUDE = debug.getinfo(1, "S").source
local API_DIR = PRELUDE:gsub("prelude%.lua$", "") .. "api/"

local function ours(source)
  return source == PRELUDE or source:sub(1, #API_DIR) == API_DIR
end

local function user_frame()
  local level = 3
  while true do
    local info = debug.getinfo(level, "Sl")
    if info == nil then return nil end
    if not ours(info.source) and info.what ~= "C" and info.what ~= "tail" then return info end
    level = level + 1
  end
end

local function position(info)
  if info == nil then return "?" end
  local src = info.source or "?"
  if src:sub(1, 1) == "@" then src = src:sub(2) end
  return src .. ":" .. tostring(info.currentline or 0)
end

-- `file:line` of the user's code that called the API function, in full (Lua's own
-- positions cut long paths to 60 characters).
local function where()
  return position(user_frame())
end

-- Raises `msg` at the user's line.
local function fail(msg)
  error(where() .. ": " .. msg, 0)
end

-- Calls a host function; a Python error is raised again at the caller of the API.
local function call(fn, ...)
  local r = pack(pcall(fn, ...))
  if r[1] then return unpack(r, 2, r.n) end
  fail(host.errtext(r[2]))
end

-- Runs a waiting host call: with a callback, in the background (returns a cancel
-- function); without one, waits here, which needs a task (config, tool, hook, timer).
local function wait(pending, cb)
  if cb ~= nil then
    if type(cb) ~= "function" then fail("the callback must be a function") end
    host.settle(pending, cb)
    return function() host.cancel(pending) end
  end
  local co = coroutine.running()
  if co == nil or not tasks[co] then
    fail("this call waits for its result: call it inside a task, or pass a callback")
  end
  local ok, result = coroutine.yield(pending)
  if ok then return result end
  return nil, result
end

-- Whether the running code is a task that may wait.
local function in_task()
  local co = coroutine.running()
  return co ~= nil and tasks[co] ~= nil
end

local function check(cond, msg)
  if not cond then fail(msg) end
end

local function is_callable(v)
  if type(v) == "function" then return true end
  -- Only tables and userdata: nil has a metatable of its own (the stand-ins, missing.lua).
  if type(v) ~= "table" and type(v) ~= "userdata" then return false end
  local mt = getmetatable(v)
  return type(mt) == "table" and mt.__call ~= nil
end

-- Shared by the files in api/, one per namespace; each gets (uji, host, lib).
local function list_of_strings(names, fname)
  if type(names) == "string" then names = { names } end
  check(type(names) == "table", fname .. " expects a list of names")
  local out = {}
  for i, n in ipairs(names) do
    check(type(n) == "string", fname .. ": entry " .. i .. " is not a string")
    out[#out + 1] = n
  end
  return M.mark_array(out)
end

-- Binary data crosses to Python as hex (a Python str holds only valid UTF-8); gsub with a
-- table does it in C.
local HEX = {}
for i = 0, 255 do HEX[string.char(i)] = string.format("%02x", i) end
local function hex(data)
  return (data:gsub(".", HEX))
end

local uji = {}
M.uji = uji
M.lib = {
  call = call, check = check, wait = wait, where = where, fail = fail, clean = clean,
  is_callable = is_callable, list_of_strings = list_of_strings, mark_array = M.mark_array, hex = hex, in_task = in_task,
  null = NULL, ARRAY = ARRAY, pack = pack, unpack = unpack, ctx_call = ctx_call,
}

-- `require("uji")` gives the same table; the defaults module is loaded once.
package.loaded["uji"] = uji

return M
