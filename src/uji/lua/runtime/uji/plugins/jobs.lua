-- Background jobs: long commands (a dev server, a watcher, a slow test run) keep running
-- while the model goes on working. Shipped as an example of what a plugin can do with
-- the public API alone. Use it from your init.lua:
--
--   require("uji.plugins.jobs").setup{}                  -- or setup{ max = 4, limit = 600 }
--
-- What it changes:
--   run_command   takes `run_in_background`: the command starts as a job and the call
--                 returns at once. A command still running at its timeout moves to the
--                 background and the model is told so (commands starting with `sleep`
--                 are killed instead, as before).
--   job_output    the output of a job since the last read (or since line `since`)
--   stop_job      stops a job (its whole process group)
--   /jobs         lists the jobs with their state; pick one to stop it
--   Ctrl+Z        moves the command running in the foreground to the background as a job
--                 (setup{ keys = false } leaves Ctrl+Z alone)
--   uji.jobs      list(), stop(id), configure{ max, limit, wake }
--
-- Limits: at most `max` (8) jobs run at once; a job is stopped after `limit` seconds
-- (30 minutes; the model may ask for up to 2 hours). A job's output is kept in a log file
-- with a cap. Jobs end with the session, and uji's reaper kills them even if uji itself
-- is killed. When a job ends by itself, a notice shows (drawn by uji.ui.Job: replace it to
-- draw them your way) and the model gets a short report with its next turn.
--
-- run_command is replaced by a wrapper that calls the original (uji.tool.get): the
-- wrapper's subject is the command line, judged part by part like run_command's
-- (`command = true`), so your policy rules, hooks and approvals apply to background
-- commands exactly as to foreground ones. Copy this file to ~/.config/uji/lua/ and change
-- it as you like.

local M = {}

local HARD_CAP = 2 * 60 * 60 -- seconds: the longest any job may run
local DEFAULT_TIMEOUT = 120 -- seconds a foreground command runs before it moves
local REPORT_LINES = 20 -- lines of output in the report of a finished job

local config = { max = 8, limit = 30 * 60, wake = false }
local jobs = {} -- id -> job
local next_id = 0
local reports = {} -- what the model learns with its next turn
local builtin -- the run_command that was registered before ours

local function running_count()
  local n = 0
  for _, job in pairs(jobs) do
    if job.state == "running" then n = n + 1 end
  end
  return n
end

local function sorted_jobs()
  local list = {}
  for _, job in pairs(jobs) do list[#list + 1] = job end
  table.sort(list, function(a, b)
    if (a.state == "running") ~= (b.state == "running") then return a.state == "running" end
    return a.id > b.id
  end)
  return list
end

local function status_text(job)
  local st = job.process:status()
  if job.state == "running" then return ("running for %ds"):format(math.floor(st.seconds)) end
  if job.state == "timed out" then return ("stopped at its %gs limit"):format(job.limit) end
  if job.state == "stopped" then return "stopped" end
  return ("finished, exit %d"):format(st.code or -1)
end

-- A command as a header shows it: its first line, cut at 80 characters.
local function short(command)
  local line = command:match("^[^\n]*")
  if #line > 80 or line ~= command then line = line:sub(1, 80) .. "…" end
  return line
end

local function last_lines(text, n)
  local lines = {}
  for line in (text .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
  while #lines > 0 and lines[#lines] == "" do lines[#lines] = nil end
  local from = math.max(1, #lines - n + 1)
  return table.concat(lines, "\n", from)
end

-- The notice of a job that ended is drawn by uji.ui.Job (replace it to draw them your way):
-- a render_message handler, added with the first such notice, that draws those notices
-- and leaves every other message alone.
local ended = {} -- notice text -> the job it is about
local drawing = false
local function notify_ended(job, head)
  ended[head] = job
  if not drawing then
    drawing = true
    uji.on("render_message", function(m)
      local about = m.type == "notice" and ended[m.text]
      if not about then return nil end
      return uji.ui.Job({ type = "job", id = about.id, command = about.command, status = status_text(about),
        text = m.text, width = m.width })
    end)
  end
  uji.notify(head)
end

-- Waits, as a task of its own, for the job to end or reach its limit.
local function watch(job)
  uji.schedule(function()
    local left = job.limit - job.process:status().seconds
    local result = job.process:wait(math.max(0, left))
    if result == nil then -- its limit: stop it
      if job.state == "running" then job.state = "timed out" end
      job.process:stop()
      job.process:wait()
    elseif job.state == "running" then
      job.state = "finished"
    end
    job.code = job.process:status().code
    if job.state == "stopped" then return end -- stopped on purpose: nothing to report
    local head = ("Background job %d (`%s`) %s."):format(job.id, short(job.command), status_text(job))
    notify_ended(job, head)
    local tail = last_lines(job.process:output(), REPORT_LINES)
    reports[#reports + 1] = head
      .. (tail ~= "" and ("\nLast lines:\n" .. tail) or "")
      .. ("\n(job_output with id=%d gives its output.)"):format(job.id)
    if config.wake then pcall(uji.session.submit, "(a background job ended; see the report)") end
  end)
end

local function add_job(command, process, limit)
  next_id = next_id + 1
  local job = { id = next_id, command = command, process = process, state = "running", limit = limit }
  jobs[job.id] = job
  watch(job)
  return job
end

local function stop(id)
  local job = jobs[id]
  if job == nil or job.state ~= "running" then return false end
  job.state = "stopped"
  return job.process:stop()
end

local function starts_with_sleep(command)
  return command:match("^%s*sleep%s") ~= nil or command:match("^%s*sleep$") ~= nil
end

local function seconds_arg(value, default)
  if type(value) == "number" and value >= 1 then return math.floor(value) end
  return default
end

-- The wrapper around run_command ----------------------------------------------------

local function run_in_background(args, ctx)
  if running_count() >= config.max then
    return ("error: the background job limit (%d) is reached; stop a job with stop_job first"):format(config.max)
  end
  local limit = math.min(seconds_arg(args.timeout, config.limit), HARD_CAP)
  local process, err = builtin.start(args, ctx)
  if process == nil then return err end
  local job = add_job(args.command, process, limit)
  return ("Started in the background as job %d (stopped after %gs). Use job_output with id=%d to read "
    .. "its output and stop_job to stop it."):format(job.id, limit, job.id)
end

-- The commands running in the foreground (Ctrl+Z moves them to the background), and those
-- the user moved.
local foreground, moved = {}, {}
-- Commands being started, and whether Ctrl+Z came meanwhile (they go on in the background).
local starting, wanted = 0, false

-- Ctrl+Z: the foreground commands go on as background jobs, up to the limit.
function M.background()
  if next(foreground) == nil and starting > 0 then
    wanted = true
    return
  end
  local any = false
  for process in pairs(foreground) do
    if running_count() >= config.max then
      uji.notify(("the background job limit (%d) is reached"):format(config.max))
      break
    end
    if process:release() then
      moved[process] = true
      any = true
    end
  end
  if not any and next(foreground) == nil then uji.notify("no command is running in the foreground") end
end

local function run(args, ctx)
  if args.run_in_background then return run_in_background(args, ctx) end
  local timeout = seconds_arg(args.timeout, DEFAULT_TIMEOUT)
  starting = starting + 1
  local process, err = builtin.start(args, ctx)
  starting = starting - 1
  if process == nil then
    wanted = false
    return err
  end
  local ok, result = true, nil
  if wanted and running_count() < config.max then -- Ctrl+Z while it started
    wanted = false
    moved[process] = true
  else
    foreground[process] = true
    ok, result = pcall(process.wait, process, timeout, ctx) -- the whole result once it ends
    foreground[process] = nil
  end
  if not ok then error(result, 0) end
  if result then return result end
  local so_far = process:output()
  if moved[process] then
    moved[process] = nil
    local job = add_job(args.command, process, math.min(config.limit, HARD_CAP))
    process:read()
    return ("The user moved the command to the background as job %d (it keeps running; use job_output "
      .. "with id=%d to read its output and stop_job to stop it).\n\nOutput so far:\n%s"):format(
      job.id, job.id, so_far ~= "" and so_far or "(none)")
  end
  local function killed(why)
    process:stop()
    process:wait()
    return "error: " .. why .. (so_far ~= "" and ("\n" .. so_far) or "")
  end
  if starts_with_sleep(args.command) then
    return killed(("command timed out after %ds"):format(timeout))
  end
  if running_count() >= config.max then
    return killed(("command timed out after %ds, and the background job limit (%d) is reached"):format(
      timeout, config.max))
  end
  local job = add_job(args.command, process, math.min(config.limit, HARD_CAP))
  process:read() -- the output so far is in this result: job_output goes on after it
  return ("The command did not finish within its %ds timeout and was moved to the background as job %d "
    .. "(it keeps running; use job_output with id=%d to read its output and stop_job to stop it)."
    .. "\n\nOutput so far:\n%s"):format(timeout, job.id, job.id, so_far ~= "" and so_far or "(none)")
end

-- The model's tools -----------------------------------------------------------------

local JOB_PARAM = { type = "integer", minimum = 1, description = "The job's number" }

-- The job a call names: `id`, as the original's docs have it (`job` in older sessions).
local function job_id(args) return args.id or args.job end

-- The job tools' subject, "job 3", in the theme's words (its text.job).
local function job_subject(args)
  local id = job_id(args)
  local ok, ito = pcall(require, "ito")
  local form = ok and ito.theme().text.job or "job %d"
  if type(id) ~= "number" then return "job " .. tostring(id) end
  return (form:gsub("%%d", tostring(math.floor(id))))
end

local function job_output(args)
  local job = jobs[job_id(args)]
  if job == nil then return ("error: there is no job %s"):format(tostring(job_id(args))) end
  local since = args.since
  if since ~= nil and (type(since) ~= "number" or since < 0) then
    return "error: `since` must be a line number >= 0"
  end
  local r = job.process:read(since and math.floor(since) or nil)
  local out = { ("job %d (`%s`) %s"):format(job.id, short(job.command), status_text(job)) }
  if r.dropped > 0 then
    out[#out + 1] = ("[%d older lines were dropped to keep the log under %s: %s]"):format(r.dropped, r.cap, r.path)
  end
  if r.skipped > 0 then
    out[#out + 1] = ("[%d lines not shown; ask with since=%d for less at a time, or read %s]"):format(
      r.skipped, r.first - 1, r.path)
  end
  if r.text == "" then
    out[#out + 1] = "(no new output)"
  else
    out[#out + 1] = r.text
    out[#out + 1] = ("[lines %d-%d; the next read starts after line %d]"):format(r.first, r.last, r.last)
  end
  return table.concat(out, "\n")
end

local function stop_job(args)
  local job = jobs[job_id(args)]
  if job == nil or not stop(job_id(args)) then
    return ("error: job %s is not running"):format(tostring(job_id(args)))
  end
  return ("stopped job %d"):format(job.id)
end

-- /jobs ------------------------------------------------------------------------------

local function jobs_command()
  local list = sorted_jobs()
  if #list == 0 then
    uji.notify("no background jobs")
    return
  end
  local job = uji.ui.select({
    title = "Background jobs (Enter stops the one picked)",
    items = list,
    label = function(j)
      local preview = last_lines(j.process:output(), 1)
      return ("job %d  %-26s %s%s"):format(j.id, status_text(j), short(j.command),
        preview ~= "" and ("  ⎿ " .. preview:sub(1, 80)) or "")
    end,
  })
  if job == nil then return end
  if stop(job.id) then
    uji.notify(("stopped job %d"):format(job.id))
  else
    uji.notify(("job %d is not running (%s)"):format(job.id, status_text(job)))
  end
end

-- The Lua API: uji.jobs ----------------------------------------------------------------

M.list = function()
  local rows = {}
  for _, job in ipairs(sorted_jobs()) do
    rows[#rows + 1] = {
      id = job.id, command = job.command, state = job.state, code = job.process:status().code,
      status = status_text(job), tail = last_lines(job.process:output(), REPORT_LINES),
    }
  end
  return rows
end

M.stop = function(id)
  if type(id) ~= "number" then error("uji.jobs.stop expects a job number", 2) end
  return stop(id)
end

M.configure = function(opts)
  if type(opts) ~= "table" then error("uji.jobs.configure expects a table {max = ..., limit = ...}", 2) end
  for key in pairs(opts) do
    if key ~= "max" and key ~= "limit" and key ~= "wake" then
      error("uji.jobs.configure: unknown key " .. tostring(key) .. " (known: wake, max, limit)", 2)
    end
  end
  local max, limit, wake = opts.max, opts.limit, opts.wake
  if max ~= nil and (type(max) ~= "number" or max < 1 or max % 1 ~= 0) then
    error("uji.jobs.configure: `max` must be a whole number >= 1, got " .. tostring(max), 2)
  end
  if limit ~= nil and (type(limit) ~= "number" or limit <= 0 or limit > HARD_CAP) then
    error(("uji.jobs.configure: `limit` must be seconds above 0 and at most %d, got %s"):format(
      HARD_CAP, tostring(limit)), 2)
  end
  if wake ~= nil and type(wake) ~= "boolean" then error("uji.jobs.configure: `wake` must be a boolean", 2) end
  if max ~= nil then config.max = max end
  if limit ~= nil then config.limit = limit end
  if wake ~= nil then config.wake = wake end
end

function M.setup(opts)
  opts = opts or {}
  local keys = opts.keys
  if keys ~= nil and type(keys) ~= "boolean" then error("uji.plugins.jobs: `keys` must be a boolean", 2) end
  local settings = {}
  for key, value in pairs(opts) do
    if key ~= "keys" then settings[key] = value end
  end
  M.configure(settings)
  if keys ~= false then uji.keymap.add("normal", "<C-z>", M.background) end
  if builtin ~= nil then return M end -- set up once; setup again only configures
  builtin = uji.tool.get("run_command")
  if builtin == nil or builtin.start == nil then
    error("uji.plugins.jobs: there is no run_command that can run in the background to extend", 2)
  end

  uji.tool.add("run_command", {
    description = "Run a bash command line in the working directory; returns stdout and stderr merged, "
      .. "then the exit code. stdin is closed, so nothing can prompt for input. Only the last 2000 lines "
      .. "or 50 KB are shown. A command still running after `timeout` seconds (default 120) moves to the "
      .. "background as a job and you are told its number; commands starting with `sleep` are killed "
      .. "instead. With run_in_background=true the command starts as a job and the call returns at once "
      .. "(use it for servers and watchers). Read a job's output with job_output; stop it with stop_job.",
    parameters = {
      type = "object",
      properties = {
        command = { type = "string" },
        timeout = {
          type = "integer", minimum = 1,
          description = "Seconds (default 120). With run_in_background: the job's limit (default 1800, "
            .. "at most 7200)",
        },
        run_in_background = { type = "boolean", description = "Start as a background job; return at once" },
      },
      required = { "command" },
      additionalProperties = false,
    },
    policy = builtin.policy,
    command = true, -- the subject is a command line: rules judge each part of it
    subject = function(args) return type(args.command) == "string" and args.command or "" end,
    display = { verb = "Ran" },
    run = run,
  })

  uji.tool.add("job_output", {
    description = "Output of a background job since your last read (or after line `since`), with its "
      .. "status: running, finished with its exit code, or stopped.",
    parameters = {
      type = "object",
      properties = {
        id = JOB_PARAM,
        since = { type = "integer", minimum = 0, description = "Give the lines after this line number" },
      },
      required = { "id" },
      additionalProperties = false,
    },
    policy = "allow",
    subject = job_subject,
    display = { verb = "Read output of" },
    run = job_output,
  })

  uji.tool.add("stop_job", {
    description = "Stop a background job (its whole process group).",
    parameters = {
      type = "object",
      properties = { id = JOB_PARAM },
      required = { "id" },
      additionalProperties = false,
    },
    policy = "allow",
    subject = job_subject,
    display = { verb = "Stopped" },
    run = stop_job,
  })

  uji.command.add("jobs", { desc = "Background jobs: pick one to stop it", handler = jobs_command })

  -- Jobs that ended by themselves are reported to the model once, with its next turn.
  uji.context.add("jobs", function()
    if #reports == 0 then return nil end
    local text = table.concat(reports, "\n\n")
    reports = {}
    return { text = text, at = "turn" }
  end)

  uji.jobs = M
  return M
end

return M
