-- uji.tool: add, remove, list, disable, enable, policy, allow, confine, roots, read_roots, inherit_keys.
local uji, host, lib = ...
local call, check, wait, where, clean = lib.call, lib.check, lib.wait, lib.where, lib.clean
local is_callable, list_of_strings, mark_array = lib.is_callable, lib.list_of_strings, lib.mark_array
local ctx_call = lib.ctx_call

-- What `start` returns: a command running past its call (see uji.tool.get).
local function process_handle(p)
  local handle = {}
  local function method(fn)
    return function(first, ...)
      if first == handle then return fn(...) end
      return fn(first, ...)
    end
  end
  handle.pid = host.process_status(p).pid
  -- wait(seconds?, ctx?): its result once it ends, or nil if it still runs after `seconds`.
  handle.wait = method(function(seconds, ctx)
    check(seconds == nil or (type(seconds) == "number" and seconds >= 0),
      "process.wait: `seconds` must be a number >= 0")
    if seconds == math.huge then seconds = nil end
    return wait(host.process_wait(p, seconds, ctx_call(ctx)))
  end)
  handle.status = method(function() return host.process_status(p) end)
  handle.output = method(function() return host.process_output(p) end)
  handle.read = method(function(since)
    check(since == nil or (type(since) == "number" and since >= 0 and since % 1 == 0),
      "process.read: `since` must be a line number >= 0")
    return host.process_read(p, since)
  end)
  handle.stop = method(function() return host.process_stop(p) end)
  handle.release = method(function() return host.process_release(p) end)
  return handle
end

local function tool_handle(tool, info)
  local function running_ctx(ctx, what)
    local owner = ctx_call(ctx)
    check(owner ~= nil, "uji.tool.get(\"" .. info.name .. "\")." .. what
      .. ": `ctx` must be the ctx of the tool call that is running")
    return owner
  end
  local handle = {
    name = info.name, description = info.description, parameters = info.parameters, policy = info.policy,
  }
  -- run(args, ctx): the tool's own run, with the ctx of the call running now (no policy
  -- check: that call was checked). Returns {text, images?, summary?}.
  handle.run = function(args, ctx)
    check(type(args) == "table", "uji.tool.get(\"" .. info.name .. "\").run: `args` must be a table")
    return wait(call(host.tool_run, tool, clean(args), running_ctx(ctx, "run")))
  end
  if info.starts then
    -- start(args, ctx): starts the call and returns at once a process handle, or nil and
    -- the error the call would give.
    handle.start = function(args, ctx)
      check(type(args) == "table", "uji.tool.get(\"" .. info.name .. "\").start: `args` must be a table")
      local p, err = wait(call(host.tool_start, tool, clean(args), running_ctx(ctx, "start")))
      if p == nil then return nil, err end
      return process_handle(p)
    end
  end
  return handle
end

local POLICIES = { allow = true, ask = true, deny = true }

uji.tool = {
  add = function(name, spec)
    check(type(name) == "string" and name ~= "", "uji.tool.add: the name must be a non-empty string")
    check(type(spec) == "table", "uji.tool.add: the spec must be a table")
    check(is_callable(spec.run), "uji.tool.add: `run` is required and must be a function")
    check(spec.policy == nil or POLICIES[spec.policy],
      "uji.tool.add: `policy` must be \"allow\", \"ask\" or \"deny\", got " .. tostring(spec.policy))
    check(spec.subject == nil or type(spec.subject) == "string" or is_callable(spec.subject),
      "uji.tool.add: `subject` must be a string or a function, got a " .. type(spec.subject))
    check(spec.description == nil or type(spec.description) == "string",
      "uji.tool.add: `description` must be a string")
    check(spec.parameters == nil or type(spec.parameters) == "table",
      "uji.tool.add: `parameters` must be a table (a JSON Schema)")
    check(spec.display == nil or type(spec.display) == "table", "uji.tool.add: `display` must be a table")
    check(spec.command == nil or type(spec.command) == "boolean", "uji.tool.add: `command` must be a boolean")
    check(spec.path == nil or type(spec.path) == "boolean", "uji.tool.add: `path` must be a boolean")
    check(spec.resolve == nil or is_callable(spec.resolve),
      "uji.tool.add: `resolve` must be a function(args) returning args, or nil and an error")
    local t = spec.timeout
    check(t == nil or (type(t) == "number" and t > 0 and t < math.huge),
      "uji.tool.add: `timeout` must be a number of seconds above 0, got " .. tostring(t))
    call(host.tool_add, clean(name), clean(spec), where())
  end,
  -- display(name, opts): how uji judges and shows a tool it does not run (one a provider's
  -- own loop runs): `label`, `subject` (a string or fn(args)), `question`, `preview(args)`.
  display = function(name, opts) lib.providers().tool_display(name, opts) end,
  -- get(name): the tool registered now, to call from a tool that replaces it.
  get = function(name)
    check(type(name) == "string", "uji.tool.get expects a tool name")
    local tool, info = host.tool_get(name)
    if tool == nil then return nil end
    return tool_handle(tool, info)
  end,
  remove = function(name)
    check(type(name) == "string", "uji.tool.remove expects a tool name")
    return host.tool_remove(name)
  end,
  list = function()
    return mark_array(host.tool_list())
  end,
  disable = function(names)
    host.tool_disable(list_of_strings(names, "uji.tool.disable"))
  end,
  enable = function(names)
    host.tool_enable(list_of_strings(names, "uji.tool.enable"))
  end,
  -- opts.name: the rule set this call replaces the named tools of (see tools/policy.py);
  -- without it, the unnamed one. uji's own rules are the set named "defaults".
  policy = function(rules, opts)
    check(type(rules) == "table", "uji.tool.policy expects a table of rules")
    check(opts == nil or type(opts) == "table", "uji.tool.policy: `opts` must be a table, as { name = \"…\" }")
    local name = opts and opts.name
    check(name == nil or (type(name) == "string" and name ~= ""),
      "uji.tool.policy: `opts.name` must be a non-empty string, got " .. tostring(name))
    call(host.tool_policy, clean(rules), name or "", where())
  end,
  -- Flags that make a read command write files or run programs (`git diff --output`,
  -- `find -delete`): a command carrying one asks even where an allow rule covers it.
  -- Replaces the table (uji/builtin/defaults.lua ships one); returns it.
  write_flags = function(flags)
    check(flags == nil or type(flags) == "table",
      "uji.tool.write_flags expects a table (command = { flags } or true) or nothing")
    if flags == nil then return call(host.tool_write_flags, nil, where()) end
    flags = clean(flags)
    call(host.tool_write_flags, flags, where())
    -- What was set, as reading the table back gives it (made here: the shipped table is
    -- set at every start, and sending it back from Python cost more than this copy).
    local copy = {}
    for command, value in pairs(flags) do
      if value == true then
        copy[command] = true
      else
        local list = {}
        for i, flag in ipairs(value) do list[i] = flag end
        copy[command] = mark_array(list)
      end
    end
    return copy
  end,
  -- One remembered approval: calls of `tool` whose subject is exactly `subject` (for
  -- run_command, one normalised part of the line) no longer ask. Never overrides a
  -- deny. `<data>/rules.lua` is made of these lines ("always allow").
  allow = function(tool, subject)
    check(type(tool) == "string" and tool ~= "", "uji.tool.allow: the tool name must be a non-empty string")
    check(type(subject) == "string" and subject ~= "",
      "uji.tool.allow: the subject must be a non-empty string (exact, not a pattern)")
    call(host.tool_allow, tool, subject, where())
  end,
  confine = function(enabled)
    check(enabled == nil or type(enabled) == "boolean", "uji.tool.confine expects true, false or nothing")
    return host.tool_confine(enabled)
  end,
  -- The run's limits, which a run it starts (a subagent's child) must not exceed: what a
  -- call that would ask gets with nobody to answer ("allow" or "deny", `uji run --on-ask`;
  -- nil when a person answers), and the tools a call can use (offered, not disabled).
  on_ask = function()
    return host.tool_on_ask()
  end,
  available = function()
    return mark_array(host.tool_available())
  end,
  roots = function(paths)
    if paths ~= nil then paths = list_of_strings(paths, "uji.tool.roots") end
    return mark_array(call(host.tool_roots, paths))
  end,
  -- Directories the file tools (and uji.fs) may read but not write, besides the working
  -- one and the roots: skill folders, a library's sources.
  read_roots = function(paths)
    if paths ~= nil then paths = list_of_strings(paths, "uji.tool.read_roots") end
    return mark_array(call(host.tool_read_roots, paths))
  end,
  -- Which provider key variables run_command and uji.job.start pass on: false (the
  -- default) none, true all, or a list of variable names.
  inherit_keys = function(keep)
    if type(keep) == "table" or type(keep) == "string" then
      keep = list_of_strings(keep, "uji.tool.inherit_keys")
    else
      check(keep == nil or type(keep) == "boolean",
        "uji.tool.inherit_keys expects true, false, a list of variable names or nothing")
    end
    local now = host.tool_inherit_keys(keep)
    if type(now) == "table" then return mark_array(now) end
    return now
  end,
}

