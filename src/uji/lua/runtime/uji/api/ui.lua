-- uji.ui: questions on the screen (select, prompt, confirm) and small screen controls.
-- The questions wait for the answer (inside a task) or take a final callback. With no
-- screen (`uji run`) they answer nil, with a notice.
local uji, host, lib = ...
local call, check, wait, clean, is_callable, mark_array = lib.call, lib.check, lib.wait, lib.clean, lib.is_callable, lib.mark_array

local function optional_string(v, fname, field)
  check(v == nil or type(v) == "string", fname .. ": `" .. field .. "` must be a string")
  return v and clean(v)
end

local function callback(cb, fname)
  check(cb == nil or is_callable(cb), fname .. ": the callback must be a function")
  return cb
end

-- select and pick: the chosen item of `spec.items`, or nil.
local function choose(spec, cb, fname)
  check(type(spec) == "table", fname .. " expects a table {title = ..., items = {...}}")
  local title = optional_string(spec.title, fname, "title")
  check(type(spec.items) == "table", fname .. ": `items` must be a list")
  check(spec.label == nil or is_callable(spec.label), fname .. ": `label` must be a function")
  cb = callback(cb, fname)
  local items, labels, current = {}, {}, nil
  for i, item in ipairs(spec.items) do
    local label = item
    if spec.label then label = spec.label(item) end
    check(type(label) == "string" or type(label) == "number",
      fname .. ": item " .. i .. " has no text to show (give a `label = function(item) ... end`)")
    items[i], labels[i] = item, clean(tostring(label))
    if spec.current ~= nil and item == spec.current then current = i end
  end
  local pending = call(host.ui_select, title or "Select", mark_array(labels), current, fname)
  if pending == nil then
    if cb then cb(nil) end
    return nil
  end
  if cb then
    return wait(pending, function(i, err) cb(i and items[i] or nil, err) end)
  end
  local i, err = wait(pending)
  if i == nil then return nil, err end
  return items[i]
end

uji.ui = {
  -- select{title, items, current?, label?} → the chosen item, or nil.
  select = function(spec, cb) return choose(spec, cb, "uji.ui.select") end,

  -- pick{title, items, current?, label?, preview?, on_query?} → the chosen item, or nil: the
  -- screen's picker, which filters as you type. `preview` and `on_query` are taken and
  -- not used yet.
  pick = function(spec, cb)
    if type(spec) == "table" then
      check(spec.preview == nil or is_callable(spec.preview), "uji.ui.pick: `preview` must be a function")
      check(spec.on_query == nil or is_callable(spec.on_query), "uji.ui.pick: `on_query` must be a function")
    end
    return choose(spec, cb, "uji.ui.pick")
  end,

  -- prompt{title, value?, hidden?} → the text, or nil when cancelled.
  prompt = function(spec, cb)
    local fname = "uji.ui.prompt"
    check(type(spec) == "table", fname .. " expects a table {title = ..., value = ..., hidden = ...}")
    local title = optional_string(spec.title, fname, "title")
    local value = optional_string(spec.value, fname, "value")
    check(spec.hidden == nil or type(spec.hidden) == "boolean", fname .. ": `hidden` must be a boolean")
    cb = callback(cb, fname)
    local pending = call(host.ui_prompt, title or "", value or "", spec.hidden == true)
    if pending == nil then
      if cb then cb(nil) end
      return nil
    end
    return wait(pending, cb)
  end,

  -- confirm{title, body?, timeout?, preview?} → true, false, or nil on timeout.
  confirm = function(spec, cb)
    local fname = "uji.ui.confirm"
    check(type(spec) == "table", fname .. " expects a table {title = ..., body = ..., timeout = ...}")
    local title = optional_string(spec.title, fname, "title")
    local body = optional_string(spec.body, fname, "body")
    local preview = optional_string(spec.preview, fname, "preview")
    check(spec.timeout == nil or (type(spec.timeout) == "number" and spec.timeout > 0),
      fname .. ": `timeout` must be a number of seconds > 0")
    cb = callback(cb, fname)
    local pending = call(host.ui_confirm, title or "Are you sure?", body or "", spec.timeout, preview)
    if pending == nil then
      if cb then cb(nil) end
      return nil
    end
    return wait(pending, cb)
  end,

  -- configure{notify = "auto"|"osc9"|"osc777"|"bell"|"off"|false|function(reason, text)}:
  -- what the terminal is sent when a turn ends or a question waits while it is not focused.
  configure = function(spec)
    local fname = "uji.ui.configure"
    check(type(spec) == "table", fname .. " expects a table {notify = ...}")
    local notify = spec.notify
    if notify ~= nil then
      check(notify == false or type(notify) == "string" or is_callable(notify),
        fname .. ': `notify` must be "auto", "osc9", "osc777", "bell", "off", false or a function')
      call(host.ui_configure_notify, notify == false and "off" or notify)
    end
  end,

  -- Shows or hides the model's reasoning; returns whether it is now shown.
  toggle_thinking = function() return host.ui_toggle_thinking() end,
  -- exec(cmd): hands the terminal to a program (a string runs in `sh -c`, a list is argv)
  -- and waits for it; its exit code.
  exec = function(cmd)
    check(type(cmd) == "string" and cmd ~= "" or (type(cmd) == "table" and type(cmd[1]) == "string"),
      "uji.ui.exec expects a command string or a list {program, args...}")
    if type(cmd) == "table" then cmd = mark_array({ lib.unpack(cmd) }) end
    return wait(call(host.ui_exec, clean(cmd)))
  end,
  -- open(target): a file or URL in the system's program for it; true, or nil and why.
  open = function(target)
    check(type(target) == "string" and target ~= "", "uji.ui.open expects a file or URL")
    return host.ui_open(clean(target))
  end,

  -- The screen's width and height, or nothing without a screen.
  size = function()
    local w, h = host.ui_size()
    if w == nil then return end
    return w, h
  end,
}
