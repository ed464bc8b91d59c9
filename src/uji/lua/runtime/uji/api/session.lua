-- uji.session: the open session.
local uji, host, lib = ...
local check, call, wait, clean, mark_array = lib.check, lib.call, lib.wait, lib.clean, lib.mark_array

uji.session = {
  info = function() return host.session_info() end,
  -- messages({before?, limit?}): all messages by default, read from the store; a page is
  -- the last `limit` of those before seq `before`.
  messages = function(opts)
    check(opts == nil or type(opts) == "table", "uji.session.messages: options must be a table")
    local before, limit = opts and opts.before, opts and opts.limit
    local function whole(n) return type(n) == "number" and n == math.floor(n) and n >= 0 and n < 2^53 end
    check(before == nil or whole(before), "uji.session.messages: before must be a seq (a whole number)")
    check(limit == nil or whole(limit), "uji.session.messages: limit must be a whole number >= 0")
    return mark_array(host.session_messages(before, limit))
  end,
  usage = function() return host.session_usage() end,
  configure = function(opts)
    check(type(opts) == "table", "uji.session.configure: expects a table {max_steps=, max_cost=, max_tokens=, max_minutes=}")
    call(host.session_configure, opts)
  end,
  context = function() return host.session_context() end,
  queue = function() return mark_array(host.session_queue()) end,
  state = function() return host.session_state() end,
  elapsed = function() return host.session_elapsed() end,
  set_title = function(title)
    check(type(title) == "string" and title:match("%S"), "uji.session.set_title: the title must be a non-empty string")
    call(host.session_set_title, clean(title))
  end,
  submit = function(text)
    check(type(text) == "string" and text:match("%S"), "uji.session.submit: the text must be a non-empty string")
    call(host.session_submit, clean(text))
  end,
  interrupt = function() return host.session_interrupt() end,
  -- compact(cb?) -> true, or false and the reason; waits for the summary.
  compact = function(cb)
    local cb2 = cb and function(r) cb(r.ok, r.why) end or nil
    local r = wait(host.session_compact(), cb2)
    if cb then return r end
    return r.ok, r.why
  end,
  list = function(opts)
    check(opts == nil or type(opts) == "table", "uji.session.list: options must be a table")
    local directory = opts and opts.directory
    check(directory == nil or type(directory) == "string", "uji.session.list: directory must be a string")
    return mark_array(host.session_list(directory))
  end,
  delete = function(id)
    check(type(id) == "string", "uji.session.delete expects a session id string")
    return host.session_delete(id)
  end,
}
