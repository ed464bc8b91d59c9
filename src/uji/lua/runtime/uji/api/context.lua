-- uji.context: what each turn adds to the system prompt or as hidden context.
local uji, host, lib = ...
local check, is_callable, mark_array, clean = lib.check, lib.is_callable, lib.mark_array, lib.clean

uji.context = {
  -- add(name, provide, {priority=50}): provide() runs at the start of each turn and returns
  -- a string (added to the system prompt), {text=..., at="turn"} (a hidden message sent
  -- with this turn), or nil.
  add = function(name, provide, opts)
    check(type(name) == "string" and name ~= "", "uji.context.add: the name must be a non-empty string")
    check(is_callable(provide), "uji.context.add: provide must be a function")
    check(opts == nil or type(opts) == "table", "uji.context.add: options must be a table")
    local priority = (opts or {}).priority or 50
    check(type(priority) == "number", "uji.context.add: priority must be a number")
    host.context_add(name, provide, priority)
  end,
  remove = function(name)
    check(type(name) == "string", "uji.context.remove expects a name")
    return host.context_remove(name)
  end,
  -- list(): the names of the providers added with `add`, in the order they run (the
  -- original's shape).
  list = function() return mark_array(host.context_names()) end,
  -- parts(): every part of the prompt with its size in tokens, {name, kind, tokens, path?, at?}:
  -- the base prompt, the tools, each instruction file, each provider (in the order added).
  parts = function() return mark_array(host.context_list()) end,
  configure = function(opts)
    check(type(opts) == "table", "uji.context.configure expects a table {cache=, compaction=, instructions=}")
    lib.call(host.context_configure, clean(opts))
  end,
}
