-- Subagents: a `subagent` tool that hands side work to child agents, shipped as an example
-- of what a plugin can do with the public API alone. Use it from your init.lua:
--
--   require("uji.plugins.subagent").setup({ concurrency = 4 })
--
-- Each agent runs as a separate `uji run --json --parent <session>` process (uji.job.start
-- with `uji = true`): a child session with its own history, saved under this one (see it
-- with `uji resume --id <id>`, or /subagents). The child loads the same config in the same
-- directory, and gets this session's model, mode, confinement and roots on its command
-- line. It never exceeds this session: it has the tools this session can use
-- (uji.tool.available, less the disabled ones) but `subagent`, or fewer (the `tools` the
-- call, the agent file or the options name), so it cannot start subagents of its own.
-- Nobody can answer a child's approval question: a call that would ask is refused
-- (`on_ask = "deny"`), and the answer tells the model which calls were; `on_ask = "allow"`
-- never lifts a `uji run --on-ask deny` of this session (uji.tool.on_ask).
--
-- The model calls `subagent{task, agent?}` for one task, `subagent{tasks = {...}}` to run
-- several at once (at most `concurrency` at the same time), or `subagent{chain = {...}}` to
-- run them one after another, each step's `{previous}` replaced by the answer before it (a
-- failed step stops the chain). Each item may set `cwd`. Every child is a task of the call
-- (ctx.task: the screen's live line and the `tasks` JSON events). Interrupting the turn
-- stops every child. A child's final answer is the result, and what the children spent
-- counts toward this session's totals and budgets (ctx.usage).
--
-- A model per subagent: `model = "provider/model"` makes that the children's model (a
-- cheap one for exploration, say, while this session keeps the strong one), and `models =
-- {...}` lists the models the calling model may choose from for one task
-- (`subagent{task, model = "provider/model"}`); without `models` it may not choose. An agent
-- file's `model` is that agent's. A child prices what it spends at its own model's prices,
-- and that is what counts toward this session's totals and budgets.
--
-- Agents are markdown files with front matter, in `agents/` of the config dir or of a pack
-- (scope "user") and in the project's `.uji/agents/` (scope "project"; "both" lets project
-- agents replace user ones of the same name):
--
--   ---
--   name: reviewer              (default: the file name)
--   description: Reviews a diff for bugs   (required)
--   tools: read_file, run_command          (brackets optional; default: all it may have)
--   model: openai/gpt-5                    (default: this session's)
--   effort: high
--   ---
--   You review code. Report bugs only, most serious first.   (added to its system prompt)
--
-- The repository controls project agents, so with `confirm_project` (the default) uji asks
-- before running one the first time in a session; `uji run` has nobody to ask, and refuses.
--
-- /agent               lists the agents
-- /agent <name> <task> runs one; its answer shows as a notice and goes to the model with
--                      your next message
-- /subagents           this session's subagent sessions (pick one to see its answer)
--
-- Copy this file to ~/.config/uji/lua/ and change it as you like.

local M = {}

local defaults = {
  concurrency = 4, -- children running at the same time
  max_tasks = 8, -- tasks (or chain steps) in one call
  tools = nil, -- the tools a child may use (default: every tool but `subagent`)
  on_ask = "deny", -- a call that would ask, in a child: "deny" (nobody can answer) or "allow"
  timeout = 1800, -- seconds a child may run before it is stopped
  output = 51200, -- bytes of each child's answer given to the model
  policy = "allow", -- the subagent tool's own policy
  grace = 3, -- seconds an interrupted child has to end before it is killed
  scope = "user", -- where agent files come from: "user", "project" or "both"
  confirm_project = true, -- ask before running a project's agent (the repository wrote it)
  model = nil, -- "provider/model" the children use (default: this session's model)
  models = nil, -- the "provider/model"s a call may choose (default: none, no choosing)
}

local NAME = "subagent"
local SCOPES = { user = true, project = true, both = true }
local CHILD_PROMPT = "You are a subagent: another agent gave you the task below. Do it on your own; "
  .. "nobody can answer questions. Your final answer goes back to that agent as the result, so "
  .. "make it complete and self-contained."

-- Children wait here for a free slot; `running` counts those that have one.
local queue = { running = 0, waiting = {} }
-- Project agents confirmed in this session, by path.
local confirmed = {}
-- Files already reported as unusable, so each is told once.
local told = {}

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

local function trim(text) return (text:gsub("^%s+", ""):gsub("%s+$", "")) end

-- Agent files ---------------------------------------------------------------------------

-- The front matter's `key: value` lines and the body after it, or nil and why.
local function front_matter(text)
  local head, body = text:match("^%-%-%-[ \t]*\r?\n(.-)\r?\n%-%-%-[ \t]*\r?\n?(.*)$")
  if not head then return nil, "it does not start with a front matter block (--- ... ---)" end
  local fields = {}
  for line in head:gmatch("[^\r\n]+") do
    local key, value = line:match("^([%w_%-]+)%s*:%s*(.-)%s*$")
    if key then
      value = value:match('^"(.*)"$') or value:match("^'(.*)'$") or value
      fields[key] = value
    end
  end
  return fields, body
end

-- "a, b", "[a, b]" or "" as a list of names.
local function name_list(value)
  local names = {}
  for name in value:gsub("^%[", ""):gsub("%]$", ""):gmatch("[^,%s\"']+") do names[#names + 1] = name end
  return names
end

-- A front matter value, or nil when it is absent or empty.
local function given(value)
  if value ~= nil and value ~= "" then return value end
  return nil
end

-- One agent file as an agent, or nil and why.
local function read_agent(file)
  local fields, body = front_matter(file.text)
  if not fields then return nil, body end
  if not fields.description or fields.description == "" then return nil, "its front matter has no `description`" end
  if fields.model and fields.model ~= "" and not fields.model:find("/") then
    return nil, "`model` must be provider/model, got " .. fields.model
  end
  local tools = given(fields.tools)
  return {
    name = given(fields.name) or (file.name:gsub("%.md$", "")),
    description = fields.description,
    tools = tools and name_list(tools),
    model = given(fields.model),
    effort = given(fields.effort),
    prompt = trim(body or ""),
    path = file.path,
    project = file.project == true,
  }
end

-- The agents of `scope` by name (a project agent replaces a user one of its name under
-- "both"), and their names sorted.
function M.agents(scope)
  scope = scope or M.opts.scope
  local files = uji.config.files("agents", { project = scope ~= "user" })
  local agents, names = {}, {}
  for _, file in ipairs(files) do
    local wanted = (scope == "both") or (scope == "project") == (file.project == true)
    if wanted and file.name:match("%.md$") then
      local agent, why = read_agent(file)
      if agent then
        if not agents[agent.name] then names[#names + 1] = agent.name end
        agents[agent.name] = agent
      elseif not told[file.path] then
        told[file.path] = true
        uji.notify("subagent: " .. file.path .. " is not an agent: " .. why)
      end
    end
  end
  table.sort(names)
  return agents, names
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

-- The children of a call (`tasks`, `chain` or one `task`), or nil and an error message
-- for the model.
local function read_items(args, opts)
  local items, kind = args.tasks, "tasks"
  if args.chain ~= nil then
    if items ~= nil then return nil, "give `tasks` or `chain`, not both" end
    items, kind = args.chain, "chain"
  end
  if items == nil then
    local text = args.task or args.prompt
    if type(text) ~= "string" then return nil, "give `task` (one), `tasks` (in parallel) or `chain` (in turn)" end
    items = { { task = text, agent = args.agent, tools = args.tools, cwd = args.cwd, model = args.model } }
  end
  if type(items) ~= "table" or #items == 0 then return nil, "`" .. kind .. "` is an empty list" end
  if #items > opts.max_tasks then
    return nil, "at most " .. opts.max_tasks .. " tasks in one call, got " .. #items
  end
  local scope = args.scope or opts.scope
  if not SCOPES[scope] then return nil, "`scope` is user, project or both, got " .. tostring(scope) end
  local agents, names = {}, {}
  for _, item in ipairs(items) do
    if type(item) == "table" and item.agent ~= nil then
      agents, names = M.agents(scope)
      break
    end
  end
  local allowed = child_tools(opts)
  local known = {}
  for _, name in ipairs(allowed) do known[name] = true end
  local children = {}
  for i, item in ipairs(items) do
    local text = type(item) == "table" and (item.task or item.prompt) or nil
    if type(text) ~= "string" or not text:find("%S") then return nil, "task " .. i .. " has no task" end
    local agent
    if item.agent ~= nil then
      agent = agents[item.agent]
      if not agent then
        return nil, "task " .. i .. ": no agent `" .. tostring(item.agent) .. "` (scope " .. scope .. "); agents: "
          .. (#names > 0 and table.concat(names, ", ") or "none")
      end
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
    elseif agent and agent.tools then
      tools = {} -- the agent's tools that a subagent may have here
      for _, name in ipairs(agent.tools) do
        if known[name] then tools[#tools + 1] = name end
      end
    end
    if item.cwd ~= nil and type(item.cwd) ~= "string" then return nil, "task " .. i .. ": `cwd` is a directory path" end
    local model, why = task_model(item.model, opts)
    if why then return nil, "task " .. i .. ": " .. why end
    children[i] = { n = i, prompt = text, agent = agent, tools = tools, cwd = item.cwd, model = model, line = "queued" }
  end
  return children, kind
end

-- Project agents are the repository's: each is confirmed once a session, or why not.
local function confirm_project(children, opts)
  if not opts.confirm_project then return nil end
  for _, child in ipairs(children) do
    local agent = child.agent
    if agent and agent.project and not confirmed[agent.path] then
      local yes = uji.ui.confirm({
        title = "Run the project's agent `" .. agent.name .. "`?",
        body = agent.path .. " comes from the repository, which controls what it tells the agent to do.",
      })
      if yes ~= true then
        return "the project's agent `" .. agent.name .. "` (" .. agent.path .. ") was not confirmed"
          .. (yes == nil and " (nobody could answer; setup{confirm_project = false} trusts project agents)" or "")
      end
      confirmed[agent.path] = true
    end
  end
  return nil
end

-- `uji run` arguments for one child: this session's model (or its agent's) and its
-- INHERITED settings.
local function command(child, parent, opts)
  local agent = child.agent
  local prompt = CHILD_PROMPT
  if agent and agent.prompt ~= "" then prompt = prompt .. "\n\n" .. agent.prompt end
  local cmd = {
    "run", "--json", "--parent", parent,
    "--title", child.title or ((agent and agent.name or "task") .. ": " .. first_line(child.prompt, 60)),
    "--tools", table.concat(child.tools, ","),
    "--on-ask", child_on_ask(opts),
    "--append-prompt", prompt,
  }
  for _, setting in ipairs(INHERITED) do
    cmd[#cmd + 1] = setting[1]
    cmd[#cmd + 1] = setting[2]()
  end
  -- The call's model, else the agent's, else the options', else this session's (with its
  -- effort); a model of its own runs at its default effort unless the agent sets one.
  local model, effort = child.model, child.effort or (agent and agent.effort)
  if not model and agent and agent.model then
    model = agent.model
  elseif not model and opts.model then
    model = opts.model
  elseif not model then
    local current = uji.model.current()
    if current and current.provider ~= "" and current.model ~= "" then
      model = current.provider .. "/" .. current.model
      effort = effort or current.effort
    end
  end
  if model then
    cmd[#cmd + 1] = "--model"
    cmd[#cmd + 1] = model
  end
  if effort then
    cmd[#cmd + 1] = "--effort"
    cmd[#cmd + 1] = effort
  end
  for _, root in ipairs(uji.tool.roots()) do
    cmd[#cmd + 1] = "--root"
    cmd[#cmd + 1] = root
  end
  cmd[#cmd + 1] = "-" -- the prompt comes on stdin: it may start with "-" or be long
  return cmd
end

-- The child's row among the call's tasks.
local function label_of(child, batch)
  local name = child.agent and child.agent.name or nil
  if batch.kind == "chain" then return "step " .. child.n .. (name and ": " .. name or "") end
  if #batch.children > 1 then return "#" .. child.n .. " " .. (name or first_line(child.prompt, 40)) end
  return name or NAME
end

local function show(child, batch)
  if batch.stopped or not child.row then return end
  child.row:update({ line = child.line, detail = child.detail })
end

-- What one `uji run --json` line says about the child; true when its row changed.
local function on_event(child, line)
  if line:sub(1, 19) == '{"type": "message",' then return false end -- whole messages: not needed here
  local ok, e = pcall(uji.json.decode, line)
  if not ok or type(e) ~= "table" then return false end
  if e.type == "session" then
    child.session = e.id
  elseif e.type == "call" then
    local subject = e.subject ~= e.name and e.subject or nil
    child.line = e.name .. (subject and " " .. first_line(subject, 80) or "")
    child.detail = nil
    if e.decision == "deny" and e.by == "auto" then
      child.refused[#child.refused + 1] = e.name .. (subject and " `" .. first_line(subject, 80) .. "`" or "")
    end
    return true
  elseif e.type == "progress" then
    child.detail = first_line(tostring(e.line or ""), 80)
    return true
  elseif e.type == "done" then
    child.done = e
  end
  return false
end

local function succeeded(child)
  return child.why == nil and child.done ~= nil and child.done.error == nil
end

local function answer_of(child, opts)
  local done = child.done
  local text
  if child.failure then
    text = "error: " .. child.failure
  elseif child.why == "stopped" then
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

-- The call's result once it is over: each task's answer, or the chain's last one.
local function result_of(batch, opts)
  if batch.kind == "chain" then
    local last = batch.children[batch.reached]
    local text = answer_of(last, opts)
    if succeeded(last) then return text end
    return "error: step " .. last.n .. " of the chain failed, so it stopped there:\n" .. text
  end
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

local enqueue

-- One child has ended: its row, then the next chain step or, when all are over, the result.
local function ended(child, batch, ctx, parent, opts)
  count_spending(child, ctx)
  batch.left = batch.left - 1
  if child.row and not batch.stopped then
    if succeeded(child) then
      child.row:done(first_line(child.done.text or "", 80))
    else
      child.row:fail(first_line(answer_of(child, opts):gsub("^error: ", ""), 80))
    end
  end
  if batch.kind == "chain" then
    local following = batch.children[child.n + 1]
    if following and succeeded(child) and not batch.stopped then
      local previous = child.done.text or ""
      following.prompt = following.prompt:gsub("{previous}", function() return previous end)
      batch.reached = following.n
      return enqueue(following, batch, ctx, parent, opts)
    end
    return ctx.done(result_of(batch, opts))
  end
  if batch.left == 0 then ctx.done(result_of(batch, opts)) end
end

local function start(child, batch, ctx, parent, opts)
  if batch.stopped then -- interrupted while it waited for a slot
    queue.running = queue.running - 1
    return next_in_queue(opts)
  end
  local model = child.model or (child.agent and child.agent.model) or opts.model
  child.line = model and "starting on " .. model or "starting"
  if child.row then child.row:update({ status = "running", line = child.line }) end
  local over = false
  local function finish(code, why)
    over = true
    child.code, child.why, child.job = code, why, nil
    queue.running = queue.running - 1
    ended(child, batch, ctx, parent, opts)
    next_in_queue(opts)
  end
  local ok, job = pcall(uji.job.start, {
    uji = true,
    cmd = command(child, parent, opts),
    cwd = child.cwd,
    timeout = opts.timeout,
    on_stdout = function(line)
      if on_event(child, line) and not over then show(child, batch) end
    end,
    on_stderr = function(line)
      if #child.stderr < 5 then child.stderr[#child.stderr + 1] = line end
    end,
    on_exit = finish,
  })
  if not ok then
    child.failure = "the subagent could not start: " .. uji.message(job)
    return uji.defer(0, function() finish(nil, nil) end)
  end
  child.job = job
  job.send(child.prompt)
  job.close()
end

enqueue = function(child, batch, ctx, parent, opts)
  table.insert(queue.waiting, function() start(child, batch, ctx, parent, opts) end)
  next_in_queue(opts)
end

-- Runs the children of a call (`ctx` is the tool's, or a stand-in for /agent); gives the
-- function that stops them.
local function run_children(children, kind, ctx, parent, opts)
  local batch = { children = children, kind = kind, left = #children, reached = 1 }
  for _, child in ipairs(children) do
    child.refused, child.stderr = {}, {}
    child.row = ctx.task(label_of(child, batch), { status = "queued" })
  end
  local first = kind == "chain" and { children[1] } or children
  for _, child in ipairs(first) do
    table.insert(queue.waiting, function() start(child, batch, ctx, parent, opts) end)
  end
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
end

local function agents_described(opts)
  local ok, agents, names = pcall(M.agents, opts.scope)
  if not ok or #names == 0 then return "" end
  local lines = { "", "Agents (`agent`):" }
  for _, name in ipairs(names) do lines[#lines + 1] = "- " .. name .. ": " .. agents[name].description end
  return table.concat(lines, "\n")
end

local function item_schema(model)
  return {
    type = "object",
    properties = {
      task = { type = "string" },
      agent = { type = "string" },
      cwd = { type = "string" },
      tools = { type = "array", items = { type = "string" } },
      model = model,
    },
    required = { "task" },
  }
end

-- /agent: the agents, or run one now (its answer as a notice, and to the model with the
-- next message).
local function agent_command(args, opts)
  local name, task = (args or ""):match("^%s*(%S+)%s*(.-)%s*$")
  if not name then
    local agents, names = M.agents(opts.scope)
    if #names == 0 then
      uji.notify("no agents: add markdown files to agents/ in the config dir"
        .. (opts.scope ~= "user" and " or .uji/agents/ in the project" or ""))
      return
    end
    local lines = { "agents:" }
    for _, n in ipairs(names) do
      lines[#lines + 1] = "  " .. n .. " — " .. agents[n].description .. (agents[n].project and " (project)" or "")
    end
    uji.notify(table.concat(lines, "\n"))
    return
  end
  if task == "" then error("/agent " .. name .. ": what should it do? /agent <name> <task>", 0) end
  local children, problem = read_items({ agent = name, task = task }, opts)
  if not children then error("/agent: " .. problem, 0) end
  problem = confirm_project(children, opts)
  if problem then error("/agent: " .. problem, 0) end
  local session = uji.session.info()
  if not session then error("/agent: no session is open", 0) end
  local finished = uji.promise()
  local ctx = {
    task = function(label)
      return { update = function() end, done = function() end, fail = function() end, label = label }
    end,
    usage = function() end,
    done = function(text) finished:resolve(text) end,
  }
  uji.notify("agent " .. name .. ": started")
  run_children(children, "tasks", ctx, session.id, opts)
  local answer = finished:await()
  uji.notify("agent " .. name .. ": " .. answer)
  M.pending[#M.pending + 1] = "The user ran the agent `" .. name .. "` with the task:\n" .. task
    .. "\n\nIts answer:\n" .. answer
end

-- /subagents: the child sessions of this one; the chosen one's last answer as a notice.
local function subagents_command()
  local session = uji.session.info()
  if not session then error("/subagents: no session is open", 0) end
  local children = uji.session.list({ parent = session.id })
  if #children == 0 then
    uji.notify("no subagents have run in this session")
    return
  end
  local chosen = uji.ui.select({
    title = "Subagents of this session",
    items = children,
    label = function(row) return row.title .. "  " .. row.id end,
  })
  if chosen == nil then -- no screen to choose on: list them
    local lines = { "subagents:" }
    for _, row in ipairs(children) do lines[#lines + 1] = "  " .. row.title .. "  " .. row.id end
    uji.notify(table.concat(lines, "\n"))
    return
  end
  local last = nil
  for _, m in ipairs(uji.session.messages({ session = chosen.id })) do
    if m.type == "assistant" and m.text and m.text ~= "" then last = m.text end
  end
  uji.notify(chosen.title .. " (" .. chosen.id .. "):\n" .. (last or "(no answer)"))
end

-- Runs one subagent and waits for its answer, for other plugins (workflow): spec =
-- {task, agent?, tools?, cwd?, model?, effort?, scope?, title?, label?}; `ctx` is the
-- running tool call's (the child is one of its tasks, and its spending counts) or nil.
-- Gives the answer, or nil and why; `on_start(stop)` gets the function that stops it.
function M.run(spec, ctx, on_start)
  local opts = M.opts
  if not opts then return nil, "the subagent plugin is not set up (require(\"uji.plugins.subagent\").setup{})" end
  local children, problem = read_items({
    task = spec.task, agent = spec.agent, tools = spec.tools, cwd = spec.cwd, scope = spec.scope,
  }, opts)
  if not children then return nil, problem end
  problem = confirm_project(children, opts)
  if problem then return nil, problem end
  local child = children[1]
  child.model, child.effort, child.title = spec.model, spec.effort, spec.title
  local session = uji.session.info()
  if not session then return nil, "no session is open" end
  local finished = uji.promise()
  local quiet = { update = function() end, done = function() end, fail = function() end }
  local inner = {
    task = function(label, o)
      if ctx then return ctx.task(spec.label or label, o) end
      return quiet
    end,
    usage = function(spent) if ctx then ctx.usage(spent) end end,
    done = function() finished:resolve() end,
  }
  local stop = run_children(children, "tasks", inner, session.id, opts)
  if on_start then on_start(stop) end
  finished:await()
  local text = answer_of(child, opts)
  if succeeded(child) then return text end
  return nil, (text:gsub("^error: ", ""))
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
  check(SCOPES[opts.scope], "`scope` must be \"user\", \"project\" or \"both\"")
  local function model_name(name) return type(name) == "string" and name:find("^[^/]+/.+") ~= nil end
  check(opts.model == nil or model_name(opts.model), "`model` must be \"provider/model\"")
  check(opts.models == nil or type(opts.models) == "table", "`models` must be a list of \"provider/model\"")
  for _, name in ipairs(opts.models or {}) do
    check(model_name(name), "`models` must be a list of \"provider/model\", got " .. tostring(name))
  end
  -- `model` is offered to the calling model only where it may choose one.
  local model_schema = nil
  if opts.models and #opts.models > 0 then
    local choices = { opts.model }
    for _, name in ipairs(opts.models) do
      if name ~= opts.model then choices[#choices + 1] = name end
    end
    model_schema = {
      type = "string",
      enum = choices,
      description = "the subagent's model (default: " .. (opts.model or "this session's") .. ")",
    }
  end
  M.opts = opts
  M.pending = {}

  uji.tool.add(NAME, {
    description = "Hand a self-contained task to a subagent: a separate agent with its own "
      .. "context that works on it alone and returns only its final answer. Use it for research "
      .. "or side work whose details you do not need. `tasks` runs several at the same time; "
      .. "`chain` runs them one after another, `{previous}` in a step's task standing for the "
      .. "answer before it." .. agents_described(opts),
    parameters = {
      type = "object",
      properties = {
        task = { type = "string", description = "the task, with everything the subagent needs to know" },
        agent = { type = "string", description = "the agent to give it to (default: a general one)" },
        cwd = { type = "string", description = "the directory it works in" },
        tools = { type = "array", items = { type = "string" }, description = "limit the subagent to these tools" },
        model = model_schema,
        tasks = { type = "array", description = "several tasks, run in parallel (instead of task)", items = item_schema(model_schema) },
        chain = { type = "array", description = "tasks run in turn; a failure stops the chain", items = item_schema(model_schema) },
        scope = { type = "string", enum = { "user", "project", "both" }, description = "where agents come from" },
      },
    },
    policy = opts.policy,
    subject = function(args)
      if type(args.tasks) == "table" then return #args.tasks .. " tasks" end
      if type(args.chain) == "table" then return "a chain of " .. #args.chain end
      local text = first_line(tostring(args.task or args.prompt or ""), 80)
      return type(args.agent) == "string" and args.agent .. ": " .. text or text
    end,
    display = { label = "Subagent", question = "Start a subagent?" },
    -- Long enough for every child of a full call to take its turn in the queue.
    timeout = opts.timeout * opts.max_tasks + 60,
    run = function(args, ctx)
      local children, kind = read_items(args, opts)
      if not children then return "error: " .. kind end
      local problem = confirm_project(children, opts)
      if problem then return "error: " .. problem end
      local session = uji.session.info()
      if not session then return "error: no session is open" end
      return run_children(children, kind, ctx, session.id, opts)
    end,
  })

  uji.command.add("agent", {
    desc = "Run an agent: /agent <name> <task>; /agent lists them",
    handler = function(args) agent_command(args, opts) end,
  })
  uji.command.add("subagents", { desc = "This session's subagents and their answers", handler = subagents_command })

  -- What /agent ran goes to the model with the next message.
  uji.context.add("subagent", function()
    if #M.pending == 0 then return nil end
    local text = table.concat(M.pending, "\n\n")
    M.pending = {}
    return { text = text, at = "turn" }
  end)
  return M
end

return M
