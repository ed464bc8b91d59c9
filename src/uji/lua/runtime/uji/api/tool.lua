-- uji.tool: add, remove, list, disable, enable, policy, allow, confine, roots, read_roots, inherit_keys.
local uji, host, lib = ...
local call, check, wait, where, clean = lib.call, lib.check, lib.wait, lib.where, lib.clean
local is_callable, list_of_strings, mark_array = lib.is_callable, lib.list_of_strings, lib.mark_array

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
    local t = spec.timeout
    check(t == nil or (type(t) == "number" and t > 0 and t < math.huge),
      "uji.tool.add: `timeout` must be a number of seconds above 0, got " .. tostring(t))
    call(host.tool_add, clean(name), clean(spec), where())
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
  policy = function(rules)
    check(type(rules) == "table", "uji.tool.policy expects a table of rules")
    call(host.tool_policy, clean(rules), where())
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

