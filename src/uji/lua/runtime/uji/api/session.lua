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
    local session = opts and opts.session
    check(session == nil or type(session) == "string", "uji.session.messages: session must be a session id")
    return mark_array(call(host.session_messages, before, limit, session))
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
  -- rewind(n?, {files?, conversation?, force?}, cb?) -> true, report; or nil, why (and the
  -- paths changed outside uji). Waits for the files to be restored.
  rewind = function(n, opts, cb)
    if type(n) == "table" and opts == nil then n, opts = nil, n end
    if type(opts) == "function" and cb == nil then opts, cb = nil, opts end
    n = n == nil and 1 or n
    check(type(n) == "number" and n == math.floor(n) and n >= 1 and n < 2^31,
      "uji.session.rewind: n must be a whole number of turns >= 1")
    check(opts == nil or type(opts) == "table", "uji.session.rewind: options must be a table")
    opts = opts or {}
    for _, k in ipairs({ "files", "conversation", "force" }) do
      check(opts[k] == nil or type(opts[k]) == "boolean", "uji.session.rewind: " .. k .. " must be a boolean")
    end
    check(opts.files ~= false or opts.conversation ~= false,
      "uji.session.rewind: files and conversation are both false: nothing to rewind")
    local pending = host.session_rewind(n, opts.files ~= false, opts.conversation ~= false, opts.force == true)
    local function out(r)
      if r.ok then
        mark_array(r.report.restored)
        mark_array(r.report.removed)
        return true, r.report
      end
      if r.files then mark_array(r.files) end
      return nil, r.why, r.files
    end
    local cb2 = cb and function(r)
      local ok, report, files = out(r)
      if ok then cb(report) else cb(nil, report, files) end
    end or nil
    local r = wait(pending, cb2)
    if cb then return r end
    return out(r)
  end,
  list = function(opts)
    check(opts == nil or type(opts) == "table", "uji.session.list: options must be a table")
    local directory = opts and opts.directory
    check(directory == nil or type(directory) == "string", "uji.session.list: directory must be a string")
    local parent = opts and opts.parent
    check(parent == nil or type(parent) == "string", "uji.session.list: parent must be a session id")
    return mark_array(host.session_list(directory, parent))
  end,
  delete = function(id)
    check(type(id) == "string", "uji.session.delete expects a session id string")
    return host.session_delete(id)
  end,
}
