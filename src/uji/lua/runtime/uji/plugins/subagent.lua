-- Subagents: a `task` tool that hands a side task to a child agent, shipped as an example
-- of what a plugin can do with the public API alone. Use it from your init.lua:
--
--   require("uji.plugins.subagent").setup({ concurrency = 4 })
--
-- Each task runs as a separate `uji run --json --parent <session>` process (uji.job.start
-- with `uji = true`): a child session with its own history, saved under this one (see it
-- with `uji resume --id <id>`). The child loads the same config in the same directory, and
-- gets this session's mode, confinement and roots on its command line, and this session's
-- model unless another is chosen (below). It never
-- exceeds this session: it has the tools this session can use (uji.tool.available: a
-- `uji run --tools` list, less the disabled ones) but `task`, or fewer (the `tools` the call
-- or the options name), so it cannot start subagents of its own. Nobody can answer a
-- child's approval question: a call that would ask is refused (`on_ask = "deny"`), and the
-- answer tells the model which calls were; `on_ask = "allow"` never lifts a `uji run
-- --on-ask deny` of this session (uji.tool.on_ask).
--
-- The model calls `task{prompt, tools?}` for one task, or `task{tasks = {...}}` to run
-- several at once; at most `concurrency` children run at the same time (several task calls
-- in one reply run one after another, as every call does). Each child's current step shows
-- under the call. Interrupting the turn stops every child. The child's final answer is the
-- result, and what the children spent counts toward this session's totals and budgets
-- (ctx.usage).
--
-- A model per subagent: `model = "provider/model"` makes that the children's model (a
-- cheap one for exploration, say, while this session keeps the strong one), and `models =
-- {...}` lists the models the calling model may choose from for one task
-- (`task{prompt, model = "provider/model"}`); without `models` it may not choose. A child
-- prices what it spends at its own model's prices, and that is what counts toward this
-- session's totals and budgets.
--
-- Copy this file to ~/.config/uji/lua/ and change it as you like.

local M = {}

local defaults = {
  concurrency = 4, -- children running at the same time
  max_tasks = 8, -- tasks in one call
  tools = nil, -- the tools a child may use (default: every tool but `task`)
  on_ask = "deny", -- a call that would ask, in a child: "deny" (nobody can answer) or "allow"
  timeout = 1800, -- seconds a child may run before it is stopped
  output = 51200, -- bytes of each child's answer given to the model
  policy = "allow", -- the task tool's own policy
  grace = 3, -- seconds an interrupted child has to end before it is killed
  model = nil, -- "provider/model" the children use (default: this session's model)
  models = nil, -- the "provider/model"s a task call may choose (default: none, no choosing)
}

local NAME = "task"
local CHILD_PROMPT = "You are a subagent: another agent gave you the task below. Do it on your own; "
  .. "nobody can answer questions. Your final answer goes back to that agent as the result, so "
  .. "make it complete and self-contained."

-- Children wait here for a free slot; `running` counts those that have one.
local queue = { running = 0, waiting = {} }

local function next_in_queue(opts)
  while queue.running < opts.concurrency and #queue.waiting > 0 do
    local start = table.remove(queue.waiting, 1)
    queue.running = queue.running + 1
    start()
  end
end

local function first_line(text, max)
  local line = (text:match("^%s*([^\n]*)") or ""):gsub("%s+$", "")
  if #line > max then line = line:sub(1, max - 1) .. "…" end
  return line
end

local function cut(text, max)
  if #text <= max then return text end
  return text:sub(1, max) .. "\n[answer cut at " .. max .. " bytes]"
end

-- The tools a child may have: those this session can use but this one, or the option's
-- list of them.
local function child_tools(opts)
  local usable = {}
  for _, name in ipairs(uji.tool.available()) do usable[name] = name ~= NAME end
  local out = {}
  for _, name in ipairs(opts.tools or uji.tool.available()) do
    if usable[name] then out[#out + 1] = name end
  end
  return out
end

-- What a child gets when a call would ask: the option, never laxer than this session's.
local function child_on_ask(opts)
  local parent = uji.tool.on_ask()
  if parent == "deny" then return "deny" end
  if parent == "sandbox" and opts.on_ask == "allow" then return "sandbox" end
  return opts.on_ask
end

-- The settings a child inherits from this session, one flag each: it may not be laxer.
local INHERITED = {
  { "--mode", function() return uji.mode.get() end },
  { "--confine", function() return uji.tool.confine() and "on" or "off" end },
}

-- The model a task asks for, checked against the options: nil (the default), or an error.
local function task_model(wanted, opts)
  if wanted == nil then return nil end
  if type(wanted) ~= "string" then return nil, "`model` is a \"provider/model\" string" end
  if wanted == opts.model then return wanted end
  for _, name in ipairs(opts.models or {}) do
    if name == wanted then return wanted end
  end
  if not opts.models or #opts.models == 0 then
    return nil, "this session does not let you choose a subagent's model; leave `model` out"
  end
  return nil, "no model `" .. wanted .. "` for subagents; choose one of: " .. table.concat(opts.models, ", ")
end

-- The tasks of a call, or an error message for the model.
local function read_tasks(args, opts)
  local items = args.tasks
  if items == nil then
    if type(args.prompt) ~= "string" then return nil, "give `prompt` (one task) or `tasks` (several)" end
    items = { { prompt = args.prompt, tools = args.tools, model = args.model } }
  end
  if type(items) ~= "table" or #items == 0 then return nil, "`tasks` is an empty list" end
  if #items > opts.max_tasks then
    return nil, "at most " .. opts.max_tasks .. " tasks in one call, got " .. #items
  end
  local allowed = child_tools(opts)
  local known = {}
  for _, name in ipairs(allowed) do known[name] = true end
  local tasks = {}
  for i, item in ipairs(items) do
    if type(item) ~= "table" or type(item.prompt) ~= "string" or not item.prompt:find("%S") then
      return nil, "task " .. i .. " has no prompt"
    end
    local tools = allowed
    if item.tools ~= nil then
      if type(item.tools) ~= "table" then return nil, "task " .. i .. ": `tools` is a list of tool names" end
      for _, name in ipairs(item.tools) do
        if not known[name] then
          return nil, "task " .. i .. ": a subagent has no tool `" .. tostring(name) .. "`; it may use: "
            .. table.concat(allowed, ", ")
        end
      end
      tools = item.tools
    end
    local model, why = task_model(item.model, opts)
    if why then return nil, "task " .. i .. ": " .. why end
    tasks[i] = { n = i, prompt = item.prompt, tools = tools, model = model, line = "queued" }
  end
  return tasks
end

-- `uji run` arguments for one child: this session's model and its INHERITED settings.
local function command(child, parent, opts)
  local cmd = {
    "run", "--json", "--parent", parent,
    "--title", "task: " .. first_line(child.prompt, 60),
    "--tools", table.concat(child.tools, ","),
    "--on-ask", child_on_ask(opts),
    "--append-prompt", CHILD_PROMPT,
  }
  for _, setting in ipairs(INHERITED) do
    cmd[#cmd + 1] = setting[1]
    cmd[#cmd + 1] = setting[2]()
  end
  local chosen = child.model or opts.model
  local model = uji.model.current()
  if chosen then -- a model of its own, at its default effort
    cmd[#cmd + 1] = "--model"
    cmd[#cmd + 1] = chosen
  elseif model and model.provider ~= "" and model.model ~= "" then
    cmd[#cmd + 1] = "--model"
    cmd[#cmd + 1] = model.provider .. "/" .. model.model
    if model.effort then
      cmd[#cmd + 1] = "--effort"
      cmd[#cmd + 1] = model.effort
    end
  end
  for _, root in ipairs(uji.tool.roots()) do
    cmd[#cmd + 1] = "--root"
    cmd[#cmd + 1] = root
  end
  cmd[#cmd + 1] = "-" -- the prompt comes on stdin: it may start with "-" or be long
  return cmd
end

-- One line per child under the running call.
local function show(batch, ctx)
  if batch.stopped then return end
  local lines = {}
  for _, child in ipairs(batch.children) do
    local line = child.line
    if child.detail then line = line .. " · " .. child.detail end
    if #batch.children > 1 then line = "#" .. child.n .. " " .. first_line(child.prompt, 40) .. ": " .. line end
    lines[#lines + 1] = line
  end
  ctx.progress(table.concat(lines, "\n"))
end

-- What one `uji run --json` line says about the child.
local function on_event(child, line)
  if line:sub(1, 19) == '{"type": "message",' then return end -- whole messages: not needed here
  local ok, e = pcall(uji.json.decode, line)
  if not ok or type(e) ~= "table" then return end
  if e.type == "session" then
    child.session = e.id
  elseif e.type == "call" then
    local subject = e.subject ~= e.name and e.subject or nil
    child.line = e.name .. (subject and " " .. first_line(subject, 80) or "")
    child.detail = nil
    if e.decision == "deny" and e.by == "auto" then
      child.refused[#child.refused + 1] = e.name .. (subject and " `" .. first_line(subject, 80) .. "`" or "")
    end
  elseif e.type == "progress" then
    child.detail = first_line(tostring(e.line or ""), 80)
  elseif e.type == "done" then
    child.done = e
  end
end

local function answer_of(child, opts)
  local done = child.done
  local text
  if child.why == "stopped" then
    text = "error: the subagent was stopped"
  elseif child.why == "timeout" then
    text = "error: the subagent was stopped after " .. opts.timeout .. " s"
  elseif done and done.error then
    text = "error: the subagent failed: " .. done.error
  elseif done then
    text = cut(done.text or "", opts.output)
  else
    local said = table.concat(child.stderr, "\n")
    text = "error: the subagent ended (exit code " .. tostring(child.code) .. ") without an answer"
      .. (said ~= "" and ":\n" .. said or "")
  end
  if #child.refused > 0 then
    text = text .. "\n\n[refused because a subagent cannot ask for approval: "
      .. table.concat(child.refused, ", ") .. "]"
  end
  if child.session then text = text .. "\n[subagent session " .. child.session .. "]" end
  return text
end

-- The call's result once every child has ended: the answers.
local function result_of(batch, opts)
  local parts = {}
  for _, child in ipairs(batch.children) do
    local text = answer_of(child, opts)
    if #batch.children > 1 then text = "## Task " .. child.n .. ": " .. first_line(child.prompt, 60) .. "\n" .. text end
    parts[#parts + 1] = text
  end
  return table.concat(parts, "\n\n")
end

-- What a child spent (its `done` line: tokens, and dollars when prices are known) counts
-- toward this session's totals and budgets.
local function count_spending(child, ctx)
  local done = child.done
  if not done or type(done.usage) ~= "table" then return end
  local spent = {}
  for _, key in ipairs({ "input", "output", "cache_read", "cache_write" }) do
    if type(done.usage[key]) == "number" then spent[key] = done.usage[key] end
  end
  if type(done.cost) == "number" then spent.cost = done.cost end
  ctx.usage(spent)
end

local function start(child, batch, ctx, parent, opts)
  if batch.stopped then -- interrupted while it waited for a slot
    queue.running = queue.running - 1
    return next_in_queue(opts)
  end
  local model = child.model or opts.model
  child.line = model and "starting on " .. model or "starting"
  show(batch, ctx)
  local ended = false
  child.job = uji.job.start({
    uji = true,
    cmd = command(child, parent, opts),
    timeout = opts.timeout,
    on_stdout = function(line)
      on_event(child, line)
      if not ended then show(batch, ctx) end
    end,
    on_stderr = function(line)
      if #child.stderr < 5 then child.stderr[#child.stderr + 1] = line end
    end,
    on_exit = function(code, why)
      ended = true
      child.code, child.why, child.job = code, why, nil
      count_spending(child, ctx)
      queue.running = queue.running - 1
      batch.left = batch.left - 1
      if batch.left == 0 then
        ctx.done(result_of(batch, opts))
      else
        child.line = child.done and not child.done.error and "done" or "failed"
        child.detail = nil
        show(batch, ctx)
      end
      next_in_queue(opts)
    end,
  })
  child.job.send(child.prompt)
  child.job.close()
end

-- A bad option is the caller's mistake: the error names its file and line.
local function check(ok, message)
  if not ok then error("subagent: " .. message, 3) end
end

function M.setup(opts)
  opts = opts or {}
  for key, value in pairs(defaults) do
    if opts[key] == nil then opts[key] = value end
  end
  check(type(opts.concurrency) == "number" and opts.concurrency >= 1, "`concurrency` must be 1 or more")
  check(type(opts.max_tasks) == "number" and opts.max_tasks >= 1, "`max_tasks` must be 1 or more")
  check(opts.on_ask == "deny" or opts.on_ask == "allow", "`on_ask` must be \"deny\" or \"allow\"")
  check(opts.tools == nil or type(opts.tools) == "table", "`tools` must be a list of tool names")
  local function model_name(name) return type(name) == "string" and name:find("^[^/]+/.+") ~= nil end
  check(opts.model == nil or model_name(opts.model), "`model` must be \"provider/model\"")
  check(opts.models == nil or type(opts.models) == "table", "`models` must be a list of \"provider/model\"")
  for _, name in ipairs(opts.models or {}) do
    check(model_name(name), "`models` must be a list of \"provider/model\", got " .. tostring(name))
  end

  -- `model` is offered to the calling model only where it may choose one.
  local task_properties = { prompt = { type = "string" }, tools = { type = "array", items = { type = "string" } } }
  local properties = {
    prompt = { type = "string", description = "the task, with everything the subagent needs to know" },
    tools = { type = "array", items = { type = "string" }, description = "limit the subagent to these tools" },
  }
  if opts.models and #opts.models > 0 then
    local choices = { opts.model }
    for _, name in ipairs(opts.models) do
      if name ~= opts.model then choices[#choices + 1] = name end
    end
    local model = {
      type = "string",
      enum = choices,
      description = "the subagent's model (default: " .. (opts.model or "this session's") .. ")",
    }
    properties.model, task_properties.model = model, model
  end
  properties.tasks = {
    type = "array",
    description = "several tasks, run in parallel (instead of prompt)",
    items = { type = "object", properties = task_properties, required = { "prompt" } },
  }

  uji.tool.add(NAME, {
    description = "Hand a self-contained task to a subagent: a separate agent with its own "
      .. "context that works on it alone and returns only its final answer. Use it for research "
      .. "or side work whose details you do not need. `tasks` runs several at the same time.",
    parameters = { type = "object", properties = properties },
    policy = opts.policy,
    subject = function(args)
      if type(args.tasks) == "table" then return #args.tasks .. " tasks" end
      return first_line(tostring(args.prompt or ""), 80)
    end,
    display = { verb = "Task", question = "Start a subagent?" },
    -- Long enough for every child of a full call to take its turn in the queue.
    timeout = opts.timeout * math.ceil(opts.max_tasks / opts.concurrency) + 60,
    run = function(args, ctx)
      local tasks, problem = read_tasks(args, opts)
      if not tasks then return "error: " .. problem end
      local session = uji.session.info()
      if not session then return "error: no session is open" end
      local batch = { children = tasks, left = #tasks }
      for _, child in ipairs(tasks) do
        child.refused, child.stderr = {}, {}
        table.insert(queue.waiting, function() start(child, batch, ctx, session.id, opts) end)
      end
      show(batch, ctx)
      next_in_queue(opts)
      -- Interrupted: interrupt the children that run, as Ctrl+C would (each stops its turn
      -- and its commands, and saves its session), kill those still running a moment later,
      -- and drop those still waiting for a slot.
      return function()
        batch.stopped = true
        for _, child in ipairs(batch.children) do
          local job = child.job
          if job and not job.interrupt() then job.stop() end
          if job then uji.defer(opts.grace, function() job.stop() end) end
        end
      end
    end,
  })
  return M
end

return M
