-- uji.job.start: a background process for a plugin, with line callbacks.
local uji, host, lib = ...
local call, check, fail, clean = lib.call, lib.check, lib.fail, lib.clean
local is_callable, mark_array = lib.is_callable, lib.mark_array

-- Made on the main state while the runtime loads: the Lua values Python keeps pass through
-- it, so they may outlive the task that gave them (see Anchor in api/fs.py).
host.job_bind(function(v) return v end)

local CALLBACKS = { "on_stdout", "on_stderr", "on_exit" }

-- A string goes through `sh -c`; a list is argv. Either must say something.
local function command_arg(cmd)
  if type(cmd) == "string" then
    check(cmd:find("%S") ~= nil, "uji.job.start: `cmd` is empty")
    return clean(cmd)
  end
  if type(cmd) ~= "table" then
    fail("uji.job.start: `cmd` is required: a shell command string or a list of arguments")
  end
  check(#cmd > 0, "uji.job.start: `cmd` is an empty list")
  local argv = {}
  for i, a in ipairs(cmd) do
    check(type(a) == "string", "uji.job.start: `cmd` entry " .. i .. " is not a string")
    argv[i] = clean(a)
  end
  check(argv[1] ~= "", "uji.job.start: the program name (cmd[1]) is empty")
  return mark_array(argv)
end

-- `handle.send(x)` and `handle:send(x)` both work.
local function method(handle, fn)
  return function(first, ...)
    if first == handle then return fn(...) end
    return fn(first, ...)
  end
end

uji.job = {
  start = function(spec)
    check(type(spec) == "table", "uji.job.start expects a table {cmd = ..., on_stdout = ..., ...}")
    check(spec.uji == nil or type(spec.uji) == "boolean", "uji.job.start: `uji` must be true or false")
    check(not spec.uji or type(spec.cmd) == "table",
      "uji.job.start: with `uji = true`, `cmd` is a list of uji's arguments, such as { \"run\", \"--json\", \"-\" }")
    local cmd = command_arg(spec.cmd)
    check(spec.cwd == nil or (type(spec.cwd) == "string" and spec.cwd ~= ""),
      "uji.job.start: `cwd` must be a non-empty string")
    check(spec.timeout == nil or (type(spec.timeout) == "number" and spec.timeout > 0),
      "uji.job.start: `timeout` must be a number of seconds > 0")
    for _, key in ipairs(CALLBACKS) do
      check(spec[key] == nil or is_callable(spec[key]), "uji.job.start: `" .. key .. "` must be a function")
    end
    local timeout = spec.timeout
    if timeout == math.huge then timeout = nil end
    local job = call(host.job_start, cmd, spec.cwd and clean(spec.cwd), timeout,
      spec.on_stdout, spec.on_stderr, spec.on_exit, spec.uji == true)
    local handle = {}
    -- send(text) writes text and a newline to stdin; false once stdin is closed or the job ended.
    handle.send = method(handle, function(text)
      check(type(text) == "string" or type(text) == "number", "uji.job: send expects a string")
      return host.job_send(job, clean(tostring(text)))
    end)
    -- close() closes stdin; stop() kills the process group (on_exit then gets "stopped").
    handle.close = method(handle, function() return host.job_close(job) end)
    handle.stop = method(handle, function() return host.job_stop(job) end)
    -- interrupt() sends SIGINT to the process group, as Ctrl+C would; false if not running.
    handle.interrupt = method(handle, function() return host.job_interrupt(job) end)
    return handle
  end,
}
