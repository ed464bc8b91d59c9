-- Workflows: a `workflow` tool that runs a small Lua script orchestrating subagents,
-- shipped as an example of a plugin written against the public API alone. It runs its
-- agents through the subagent plugin, so set that up too:
--
--   require("uji.plugins.subagent").setup{}
--   require("uji.plugins.workflow").setup{}
--
-- A script starts with a pure-data `meta = { name, description, phases }`, then uses:
--
--   agent(prompt, { label, phase, agent, model, effort, tools, cwd })  → answer, or nil, err
--   parallel({ fn, fn, ... })        → their results, run at the same time
--   pipeline(items, stage, stage...) → each item through the stages in turn (items at once)
--   phase(name)                      the phase the next agents belong to
--   log(...) / print(...)            a line in the run's log
--   args                             the call's `args`
--   json.encode / json.decode
--
-- and plain Lua (string, table, math, pairs, pcall, ...): no files, processes or modules.
-- What the script returns is the result (JSON unless a string). At most `concurrency`
-- agents run at once and `max_agents` in one run. Each run has an id like wf_1a2b3c4d;
-- `resume = <id>` reuses that run's answers for identical agent calls. The last 20 runs
-- are kept in the data dir (workflow.runs(), workflow.details(id)).
--
-- Saved workflows are `workflows/<name>.lua` in the config dir or a pack (and the
-- project's `.uji/workflows/` with scope "project" or "both"); the model runs one with
-- `workflow{name = ...}`.
--
-- /workflow                lists the saved workflows
-- /workflow <name> [args]  runs one (args: JSON, or else a string)
-- /workflows               the runs and their agents; on the screen, pick a run to see
--                          its details, open an agent's session, edit the saved workflow
--                          (in UJI_EDITOR, VISUAL or EDITOR) or stop it while it runs
--
-- The approval shows the whole script (policy "ask" by default). Copy this file to
-- ~/.config/uji/lua/ and change it as you like.

local M = {}
local runs = {} -- the kept runs, oldest first

local defaults = {
  policy = "ask",
  scope = "user",
  concurrency = 4,
  max_agents = 25,
  output = 51200,
}
local KEEP = 20
local SCOPES = { user = true, project = true, both = true }

local function first_line(text, max)
  local line = (tostring(text):match("^%s*([^\n]*)") or ""):gsub("%s+$", "")
  if #line > max then line = line:sub(1, max - 1) .. "…" end
  return line
end

local function new_id()
  local bytes = uji.random(4)
  return "wf_" .. bytes:gsub(".", function(c) return string.format("%02x", c:byte()) end)
end

-- The saved workflows of `scope`: name → {name, path, text, project}.
function M.saved(scope)
  scope = scope or M.opts.scope
  local out, names = {}, {}
  for _, file in ipairs(uji.config.files("workflows", { project = scope ~= "user" })) do
    local wanted = scope == "both" or (scope == "project") == (file.project == true)
    local name = file.name:match("^(.+)%.lua$")
    if wanted and name then
      if not out[name] then names[#names + 1] = name end
      out[name] = { name = name, path = file.path, text = file.text, project = file.project == true }
    end
  end
  table.sort(names)
  return out, names
end

-- The name a script's meta gives, read without running it (for the approval).
local function meta_name(source)
  return source:match("meta%s*=%s*{.-name%s*=%s*[\"']([^\"']+)[\"']")
end

-- Plain Lua for scripts: no files, processes, modules or the string metatable.
local function sandbox()
  local env = {}
  for _, name in ipairs({
    "assert", "error", "ipairs", "next", "pairs", "pcall", "select", "tonumber", "tostring", "type",
    "unpack", "xpcall", "rawequal", "rawget", "rawset", "rawlen", "setmetatable",
  }) do
    env[name] = _G[name]
  end
  env.getmetatable = function(v)
    if type(v) == "string" then return nil end
    return getmetatable(v)
  end
  for _, lib in ipairs({ "string", "table", "math" }) do
    local copy = {}
    for k, v in pairs(_G[lib]) do copy[k] = v end
    env[lib] = copy
  end
  env.string.dump = nil
  env.os = { time = os.time, clock = os.clock, date = os.date }
  env.json = { encode = uji.json.encode, decode = uji.json.decode }
  env._G = env
  return env
end

-- A slot among `concurrency` running agents.
local function slots(n)
  local free, waiting = n, {}
  return {
    take = function()
      if free > 0 then
        free = free - 1
        return
      end
      local turn = uji.promise()
      waiting[#waiting + 1] = turn
      turn:await()
    end,
    give = function()
      local nxt = table.remove(waiting, 1)
      if nxt then nxt:resolve() else free = free + 1 end
    end,
  }
end

-- The kept runs live in the data dir, so a later session can read and resume them.
local STORE = "workflow-runs.json"
local loaded = false

local function load_runs()
  if loaded then return end
  loaded = true
  local text = uji.data.read(STORE)
  local ok, saved = pcall(uji.json.decode, text or "[]")
  if not ok or type(saved) ~= "table" then return end
  for _, run in ipairs(saved) do
    if type(run) == "table" and type(run.id) == "string" then
      run.stops, run.cache, run.agents, run.log = {}, run.cache or {}, run.agents or {}, run.log or {}
      table.insert(runs, run)
    end
  end
end

local function save_runs()
  local out = {}
  for i, run in ipairs(runs) do
    out[i] = { id = run.id, name = run.name, status = run.status, agents = run.agents, log = run.log,
      cache = run.cache, result = run.result, error = run.error, time = run.time }
  end
  pcall(uji.data.write, STORE, uji.json.encode(out))
end

local function find_run(id)
  load_runs()
  for _, run in ipairs(runs) do
    if run.id == id then return run end
  end
  return nil
end

-- Runs `source` with `args`; gives the result text, or nil and why. `ctx` is the tool
-- call's, or nil (a /workflow command).
local function execute(run, source, args, ctx)
  local opts = M.opts
  local subagent = require("uji.plugins.subagent")
  if not subagent or not subagent.opts then
    return nil, "workflows run their agents through the subagent plugin: require(\"uji.plugins.subagent\").setup{}"
  end
  local env = sandbox()
  local phase = nil
  local slot = slots(opts.concurrency)
  local cached = run.resumed and run.resumed.cache or {}
  local function log(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[#parts + 1] = tostring((select(i, ...))) end
    local line = table.concat(parts, " ")
    run.log[#run.log + 1] = line
    if ctx then ctx.progress(line) end
  end
  local tasks_ctx = ctx and {
    task = function(label, o)
      o = o or {}
      o.group = phase
      return ctx.task(label, o)
    end,
    usage = ctx.usage,
  } or nil

  env.args, env.log, env.print = args, log, log
  env.phase = function(name)
    if type(name) ~= "string" then error("phase(name): name must be a string", 2) end
    phase = name
    log("phase: " .. name)
  end
  env.agent = function(prompt, o)
    if type(prompt) ~= "string" or not prompt:find("%S") then error("agent(prompt, opts): prompt must be text", 2) end
    o = o or {}
    if type(o) ~= "table" then error("agent(prompt, opts): opts must be a table", 2) end
    local key = uji.json.encode({ prompt, o.agent or "", o.model or "", o.effort or "", o.tools or {}, o.cwd or "" })
    local record = { label = o.label or first_line(prompt, 50), phase = o.phase or phase, status = "queued" }
    run.agents[#run.agents + 1] = record
    if run.status == "stopped" then
      record.status = "stopped"
      return nil, "the workflow was stopped"
    end
    if cached[key] then
      record.status, record.answer, record.cached = "done", cached[key], true
      run.cache[key] = cached[key]
      return cached[key]
    end
    if run.started_agents >= opts.max_agents then
      record.status = "failed"
      return nil, "this run already started its " .. opts.max_agents .. " agents (max_agents)"
    end
    run.started_agents = run.started_agents + 1
    slot.take()
    record.status = "running"
    local answer, err = subagent.run({
      task = prompt, agent = o.agent, model = o.model, effort = o.effort, tools = o.tools, cwd = o.cwd,
      label = record.label, title = (run.name or "workflow") .. ": " .. record.label,
    }, tasks_ctx, function(stop) run.stops[#run.stops + 1] = stop end)
    slot.give()
    if answer then
      if #answer > opts.output then answer = answer:sub(1, opts.output) .. "\n[answer cut at " .. opts.output .. " bytes]" end
      record.status, record.answer = "done", answer
      run.cache[key] = answer
      record.session = answer:match("%[subagent session ([%w%-]+)%]")
      return answer
    end
    record.status, record.error = "failed", err
    return nil, err
  end
  env.parallel = function(fns)
    if type(fns) ~= "table" then error("parallel(fns): a list of functions", 2) end
    local results, left, over = {}, #fns, uji.promise()
    if left == 0 then return results end
    local failure = nil
    for i, fn in ipairs(fns) do
      if type(fn) ~= "function" then error("parallel(fns): item " .. i .. " is not a function", 2) end
      uji.task.spawn(function()
        local ok, value = pcall(fn)
        if ok then results[i] = value elseif not failure then failure = value end
        left = left - 1
        if left == 0 then over:resolve() end
      end)
    end
    over:await()
    if failure then error(failure, 0) end
    return results
  end
  env.pipeline = function(items, ...)
    local stages = { ... }
    if type(items) ~= "table" then error("pipeline(items, stage, ...): items must be a list", 2) end
    local fns = {}
    for i, item in ipairs(items) do
      fns[i] = function()
        local value = item
        for _, stage in ipairs(stages) do value = stage(value) end
        return value
      end
    end
    return env.parallel(fns)
  end

  local chunk, err = load(source, "=" .. (run.name or "workflow"), "t", env)
  if not chunk then return nil, "the script does not load: " .. err end
  local ok, result = pcall(chunk)
  if not ok then return nil, "the script failed: " .. uji.message(result) end
  if type(env.meta) == "table" and type(env.meta.name) == "string" then run.name = env.meta.name end
  if result == nil then return "" end
  if type(result) == "string" then return result end
  local encoded_ok, encoded = pcall(uji.json.encode, result)
  if not encoded_ok then return nil, "the script's result is not JSON: " .. uji.message(encoded) end
  return encoded
end

-- A new run of `source`, kept among the last runs; gives it and its result or error.
local function start_run(source, args, ctx, resume, name)
  local run = {
    id = new_id(), name = name or meta_name(source), status = "running", agents = {}, log = {},
    cache = {}, stops = {}, started_agents = 0, time = uji.os.now(),
  }
  if resume then
    run.resumed = find_run(resume)
    if not run.resumed then return run, nil, "no run " .. resume .. " to resume (the last " .. KEEP .. " are kept)" end
  end
  load_runs()
  runs[#runs + 1] = run
  while #runs > KEEP do table.remove(runs, 1) end
  local result, err = execute(run, source, args, ctx)
  run.status = run.status == "stopped" and "stopped" or (result and "done" or "failed")
  run.result, run.error = result, err
  save_runs()
  return run, result, err
end

local function source_of(args)
  if type(args.script) == "string" and args.script:find("%S") then return args.script, nil end
  if type(args.name) == "string" then
    local saved, names = M.saved()
    local found = saved[args.name]
    if not found then
      return nil, "no saved workflow `" .. args.name .. "`; saved: " .. (#names > 0 and table.concat(names, ", ") or "none")
    end
    return found.text, found.name
  end
  return nil, "give `script` (Lua) or `name` (a saved workflow)"
end

-- workflow.runs(): the kept runs, newest first; workflow.details(id): one run.
function M.details(id)
  local run = find_run(id)
  if not run then return nil end
  local agents = {}
  for i, a in ipairs(run.agents) do
    agents[i] = { label = a.label, phase = a.phase, status = a.status, answer = a.answer, error = a.error,
      session = a.session, cached = a.cached }
  end
  return { id = run.id, name = run.name, status = run.status, result = run.result, error = run.error,
    log = run.log, agents = agents, time = run.time }
end

-- workflow.stop(id): stops a running run's agents; the script's agent() calls answer
-- nil, "the workflow was stopped" from then on. Whether it was running.
function M.stop(id)
  local run = find_run(id)
  if not run or run.status ~= "running" then return false end
  run.status = "stopped"
  for _, stop in ipairs(run.stops) do stop() end
  return true
end

function M.runs()
  load_runs()
  local out = {}
  for i = #runs, 1, -1 do
    local run = runs[i]
    out[#out + 1] = { id = run.id, name = run.name, status = run.status, agents = #run.agents, time = run.time }
  end
  return out
end

local function parse_args(text)
  if text == nil or text == "" then return nil end
  local ok, value = pcall(uji.json.decode, text)
  if ok then return value end
  return text
end

local function workflow_command(text, opts)
  local name, rest = (text or ""):match("^%s*(%S+)%s*(.-)%s*$")
  if not name then
    local saved, names = M.saved(opts.scope)
    if #names == 0 then return uji.notify("no saved workflows: add workflows/<name>.lua to the config dir") end
    local lines = { "workflows:" }
    for _, n in ipairs(names) do lines[#lines + 1] = "  " .. n .. (saved[n].project and " (project)" or "") end
    return uji.notify(table.concat(lines, "\n"))
  end
  local source, problem = source_of({ name = name })
  if not source then error("/workflow: " .. problem, 0) end
  local run, result, err = start_run(source, parse_args(rest), nil, nil, name)
  uji.notify("workflow " .. run.id .. (result and ": " .. result or " failed: " .. tostring(err)))
end

local function run_lines(r)
  local lines = { r.id .. "  " .. (r.name or "workflow") .. "  " .. r.status .. "  " .. r.agents .. " agents" }
  for _, a in ipairs(M.details(r.id).agents) do
    lines[#lines + 1] = "  " .. (a.phase and a.phase .. " · " or "") .. a.label .. ": " .. a.status
      .. (a.session and "  " .. a.session or "")
  end
  return lines
end

local function quote(text) return "'" .. text:gsub("'", "'\\''") .. "'" end

local function editor()
  for _, var in ipairs({ "UJI_EDITOR", "VISUAL", "EDITOR" }) do
    local value = uji.os.env(var)
    if value then return value end
  end
  return "vi"
end

-- An agent's session, read in a box: what it was asked and what it answered.
local function open_session(agent)
  local ito = require("ito")
  local rows = {}
  for _, m in ipairs(uji.session.messages({ session = agent.session })) do
    if (m.type == "user" or m.type == "assistant") and m.text and m.text ~= "" then
      rows[#rows + 1] = ito.Text((m.type == "user" and "> " or "") .. m.text)
    end
  end
  if #rows == 0 then rows[1] = ito.Text("(nothing in this session yet)") end
  uji.ui.overlay(ito.ScrollView(rows):follow_end():title(agent.label .. "  " .. agent.session):border("rounded"))
end

-- What can be done with one run, on the screen.
local function run_actions(r)
  local details = M.details(r.id)
  local actions = { { label = "details", go = function()
    local lines = run_lines(r)
    for _, line in ipairs(details.log) do lines[#lines + 1] = "  log: " .. line end
    if details.result then lines[#lines + 1] = "  result: " .. details.result end
    if details.error then lines[#lines + 1] = "  error: " .. details.error end
    uji.notify(table.concat(lines, "\n"))
  end } }
  if details.status == "running" then
    actions[#actions + 1] = { label = "stop this run", go = function()
      uji.notify("workflow " .. r.id .. (M.stop(r.id) and " stopped" or " was not running"))
    end }
  end
  for _, a in ipairs(details.agents) do
    if a.session then
      actions[#actions + 1] = { label = "open " .. a.label .. "'s session", go = function() open_session(a) end }
    end
  end
  local saved = M.saved(M.opts.scope)[r.name or ""]
  if saved then
    actions[#actions + 1] = { label = "edit " .. saved.path, go = function()
      uji.ui.exec(editor() .. " " .. quote(saved.path))
    end }
  end
  return actions
end

local function workflows_command()
  local listed = M.runs()
  if #listed == 0 then return uji.notify("no workflow has run yet") end
  local chosen = uji.ui.size() and uji.ui.select({
    title = "Workflow runs",
    items = listed,
    label = function(r) return r.id .. "  " .. (r.name or "workflow") .. "  " .. r.status .. "  " .. r.agents .. " agents" end,
  })
  if chosen == nil then
    if uji.ui.size() then return end -- the picker was closed
    local lines = { "workflow runs:" }
    for _, r in ipairs(listed) do
      for _, line in ipairs(run_lines(r)) do lines[#lines + 1] = "  " .. line end
    end
    return uji.notify(table.concat(lines, "\n"))
  end
  local action = uji.ui.select({ title = chosen.id, items = run_actions(chosen), label = function(a) return a.label end })
  if action then action.go() end
end

function M.setup(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("workflow.setup expects a table of options", 2) end
  for key in pairs(opts) do
    if defaults[key] == nil then error("workflow.setup: unknown option `" .. tostring(key) .. "`", 2) end
  end
  for key, value in pairs(defaults) do
    if opts[key] == nil then opts[key] = value end
  end
  if not SCOPES[opts.scope] then error("workflow.setup: `scope` must be \"user\", \"project\" or \"both\"", 2) end
  M.opts = opts

  uji.tool.add("workflow", {
    description = "Run a Lua workflow script that orchestrates subagents: agent(prompt, {label, phase, "
      .. "agent, model, effort, tools, cwd}) → answer or nil, err; parallel({fn, ...}); pipeline(items, "
      .. "stage, ...); phase(name); log(...); args; json.encode/decode; plain Lua otherwise (no files, "
      .. "processes or modules). Start the script with meta = {name, description, phases}. What it "
      .. "returns is the result. Or run a saved workflow by `name`. `resume` = a run id reuses that run's "
      .. "answers for identical agent calls.",
    parameters = {
      type = "object",
      properties = {
        script = { type = "string", description = "the Lua script" },
        name = { type = "string", description = "a saved workflow to run instead" },
        args = { description = "the script's `args`" },
        resume = { type = "string", description = "a run id (wf_...) whose answers to reuse" },
      },
    },
    policy = opts.policy,
    subject = function(args)
      if type(args.name) == "string" then return args.name end
      return meta_name(tostring(args.script or "")) or first_line(tostring(args.script or ""), 60)
    end,
    display = {
      label = "Workflow",
      question = "Run this workflow?",
      preview = function(args)
        if type(args.script) == "string" then return args.script end
        local source = source_of(args)
        return source or ""
      end,
    },
    timeout = 4 * 60 * 60,
    run = function(args, ctx)
      local source, name_or_problem = source_of(args)
      if not source then return "error: " .. name_or_problem end
      local current = nil
      local task = uji.task.spawn(function()
        local run, result, err = start_run(source, args.args, ctx, args.resume, name_or_problem)
        current = run
        if result then
          ctx.done("workflow " .. run.id .. " " .. (run.status == "stopped" and "stopped" or "done") .. ":\n" .. result)
        else
          ctx.done("error: workflow " .. run.id .. ": " .. tostring(err))
        end
      end)
      return function()
        task:cancel()
        local run = current or runs[#runs]
        if run and run.status == "running" then
          run.status = "stopped"
          for _, stop in ipairs(run.stops) do stop() end
        end
      end
    end,
  })

  uji.command.add("workflow", {
    desc = "Run a saved workflow: /workflow <name> [args]; /workflow lists them",
    handler = function(text) workflow_command(text, opts) end,
  })
  uji.command.add("workflows", { desc = "The workflow runs and their agents", handler = workflows_command })
  return M
end

return M
