-- uji.task.spawn/race/timeout, uji.sleep, uji.promise: cooperative tasks. What a task's
-- function returns is kept here, in the task's table; the host only runs and cancels.
local uji, host, lib = ...
local check, wait, pack, unpack, is_callable = lib.check, lib.wait, lib.pack, lib.unpack, lib.is_callable

local Task = {}
Task.__index = Task

-- Stops the task where it waits (and what race/timeout run for it).
function Task:cancel()
  host.task_cancel(self._handle)
end

-- Runs fn(...) as a task of its own; `catch` keeps its error for the caller instead of
-- letting it become a notice.
local function start(fn, args, catch)
  local task = setmetatable({}, Task)
  task._handle = host.task_spawn(function()
    if catch then
      task.results = pack(pcall(fn, unpack(args, 1, args.n)))
    else
      task.results = pack(true, fn(unpack(args, 1, args.n)))
    end
  end)
  return task
end

-- The results a finished task kept: raises its error again.
local function outcome(task)
  local r = task.results
  if not r[1] then error(r[2], 0) end
  return unpack(r, 2, r.n)
end

local NOT_A_TASK = "call it inside a task (a config, command, key, timer or tool), or in uji.task.spawn"

uji.task = {}

function uji.task.spawn(fn, ...)
  check(is_callable(fn), "uji.task.spawn expects a function")
  return start(fn, pack(...), false)
end

function uji.task.race(...)
  local fns = pack(...)
  check(fns.n > 0, "uji.task.race expects at least one function")
  local handles, tasks = {}, {}
  for i = 1, fns.n do
    check(is_callable(fns[i]), "uji.task.race: argument " .. i .. " is not a function")
  end
  for i = 1, fns.n do
    tasks[i] = start(fns[i], pack(), true)
    handles[i] = tasks[i]._handle
  end
  local first, err = wait(host.task_race(unpack(handles, 1, fns.n)))
  if first == nil then error(err or ("uji.task.race: " .. NOT_A_TASK), 0) end
  return first, outcome(tasks[first])
end

function uji.task.timeout(seconds, fn)
  check(type(seconds) == "number" and seconds >= 0, "uji.task.timeout expects a number of seconds >= 0")
  check(is_callable(fn), "uji.task.timeout expects a function")
  local task = start(fn, pack(), true)
  local finished = wait(host.task_timeout(seconds, task._handle))
  if not finished or task.results == nil then return false end
  return true, outcome(task)
end

function uji.sleep(seconds)
  check(type(seconds) == "number" and seconds == seconds and seconds >= 0,
    "uji.sleep expects a number of seconds >= 0")
  wait(host.sleep(seconds))
end

local Promise = {}
Promise.__index = Promise

-- Settles the promise with these values and wakes its waiters; true the first time.
function Promise:resolve(...)
  if self.settled then return false end
  self.settled = true
  self._values = pack(...)
  host.promise_settle(self._future)
  return true
end

-- Waits until the promise is settled; its values.
function Promise:await()
  if not self.settled then wait(host.promise_wait(self._future)) end
  local v = self._values
  return unpack(v, 1, v.n)
end

function uji.promise()
  return setmetatable({ settled = false, _future = host.promise_new() }, Promise)
end
