-- uji.proc.spawn(argv, {cwd, env, stdio}): a process with pid, :line(), :lines(),
-- :write(data), :close(), :kill() and :wait().
local uji, host, lib = ...
local check, wait, clean, mark_array = lib.check, lib.wait, lib.clean, lib.mark_array

local Proc = {}
Proc.__index = Proc

-- The next line and its stream ("stdout" or "stderr"), or nil once both have ended.
function Proc:line()
  local got = wait(host.proc_line(self._p))
  if got == nil then return nil end
  return got[1], got[2]
end

function Proc:lines()
  return function() return self:line() end
end

function Proc:write(data)
  check(type(data) == "string", "proc:write expects a string")
  return wait(host.proc_write(self._p, lib.hex(data)))
end

function Proc:close() host.proc_close(self._p) end
function Proc:kill() host.proc_kill(self._p) end

-- Waits for the exit: {code, signal, success}.
function Proc:wait()
  return wait(host.proc_wait(self._p))
end

-- A process nobody references any more is killed: its handle holds a value whose
-- finaliser releases it when Lua collects the handle (a userdata: LuaJIT's tables have no
-- __gc). Collection runs inside any Lua code, so the release must not raise.
local function release_on_collect(p)
  local function release() pcall(host.proc_release, p) end
  if newproxy then
    local guard = newproxy(true)
    getmetatable(guard).__gc = release
    return guard
  end
  return setmetatable({}, { __gc = release })
end

uji.proc = {
  spawn = function(argv, opts)
    check(type(argv) == "table" and type(argv[1]) == "string" and argv[1] ~= "",
      "uji.proc.spawn expects a list {program, args...}")
    local args = {}
    for i, a in ipairs(argv) do
      check(type(a) == "string" or type(a) == "number", "uji.proc.spawn: argument " .. i .. " is not a string")
      args[i] = tostring(a)
    end
    check(opts == nil or type(opts) == "table", "uji.proc.spawn: options must be a table {cwd, env, stdio}")
    opts = opts or {}
    check(opts.cwd == nil or type(opts.cwd) == "string", "uji.proc.spawn: cwd must be a string")
    check(opts.env == nil or type(opts.env) == "table", "uji.proc.spawn: env must be a table of name = value")
    check(opts.stdio == nil or opts.stdio == "pipe" or opts.stdio == "inherit",
      "uji.proc.spawn: stdio must be \"pipe\" or \"inherit\"")
    local p, err = wait(host.proc_spawn(clean(mark_array(args)), opts.cwd and clean(opts.cwd),
      opts.env and clean(opts.env), opts.stdio == "inherit"))
    if p == nil then return nil, err end
    return setmetatable({ _p = p, pid = host.proc_pid(p), _release = release_on_collect(p) }, Proc)
  end,
}
