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

local function labels_of(list, label_fn, fname)
  local labels = {}
  for i, item in ipairs(list) do
    local label = item
    if label_fn then label = label_fn(item) end
    check(type(label) == "string" or type(label) == "number",
      fname .. ": item " .. i .. " has no text to show (give a `label = function(item) ... end`)")
    labels[i] = clean(tostring(label))
  end
  return labels
end

local pick

-- select: the chosen item of `spec.items`, or nil.
local function choose(spec, cb, fname)
  check(type(spec) == "table", fname .. " expects a table {title = ..., items = {...}}")
  local title = optional_string(spec.title, fname, "title")
  check(type(spec.items) == "table", fname .. ": `items` must be a list")
  check(spec.label == nil or is_callable(spec.label), fname .. ": `label` must be a function")
  cb = callback(cb, fname)
  local items, labels, current = spec.items, labels_of(spec.items, spec.label, fname), nil
  for i, item in ipairs(items) do
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

-- The lines of `path` around `line` (a "path:line:" item's default preview).
local function file_region(label)
  local path, line = tostring(label):match("^([^:\n]+):(%d+):")
  if not path then return {} end
  line = tonumber(line)
  if path:sub(1, 1) ~= "/" then path = uji.os.cwd() .. "/" .. path end
  local f = io.open(path, "r")
  if not f then return {} end
  local out, n, first = {}, 0, math.max(1, line - 3)
  for text in f:lines() do
    n = n + 1
    if n >= first then out[#out + 1] = string.format("%5d%s %s", n, n == line and ">" or " ", text) end
    if n >= first + 11 then break end
  end
  f:close()
  return mark_array(out)
end

-- pick: the lists (the items, then each query's) are kept here; the screen answers
-- which list and which of its items.
function pick(spec, cb)
  local fname = "uji.ui.pick"
  check(type(spec) == "table", fname .. " expects a table {title = ..., items = {...}}")
  local title = optional_string(spec.title, fname, "title")
  check(type(spec.items) == "table", fname .. ": `items` must be a list")
  check(spec.label == nil or is_callable(spec.label), fname .. ": `label` must be a function")
  check(spec.preview == nil or is_callable(spec.preview), fname .. ": `preview` must be a function")
  check(spec.on_query == nil or is_callable(spec.on_query), fname .. ": `on_query` must be a function")
  cb = callback(cb, fname)
  local lists, labels = { [0] = spec.items }, { [0] = labels_of(spec.items, spec.label, fname) }
  local current = nil
  for i, item in ipairs(spec.items) do
    if spec.current ~= nil and item == spec.current then current = i end
  end
  local function preview(list, i)
    local item = lists[list] and lists[list][i]
    if item == nil then return {} end
    local lines = spec.preview and spec.preview(item) or file_region(labels[list][i])
    if type(lines) == "string" then lines = { lines } end
    if type(lines) ~= "table" then return {} end
    local out = {}
    for k, line in ipairs(lines) do out[k] = clean(tostring(line)) end
    return mark_array(out)
  end
  local asked = 0
  local function query(text)
    asked = asked + 1
    local id = asked
    local shown = uji.promise()
    local given = spec.on_query(text, function(list) shown:resolve(list) end)
    local list = type(given) == "table" and given or shown:await()
    check(type(list) == "table", fname .. ": on_query must give a list of items")
    lists[id], labels[id] = list, labels_of(list, spec.label, fname)
    return mark_array(labels[id]), id
  end
  local pending = call(host.ui_pick, title or "Pick", mark_array(labels[0]), current, preview,
    spec.on_query and query or nil)
  local function chosen(answer)
    if answer == nil then return nil end
    return lists[answer[1]] and lists[answer[1]][answer[2]]
  end
  if pending == nil then
    if cb then cb(nil) end
    return nil
  end
  if cb then
    return wait(pending, function(answer, err) cb(chosen(answer), err) end)
  end
  local answer, err = wait(pending)
  if answer == nil then return nil, err end
  return chosen(answer)
end

uji.ui = {
  -- select{title, items, current?, label?} → the chosen item, or nil.
  select = function(spec, cb) return choose(spec, cb, "uji.ui.select") end,

  -- pick{title, items, current?, label?, preview?, on_query?} → the chosen item, or nil: the
  -- screen's picker. It filters as you type, or with `on_query(query, show)` asks for the
  -- items of what is typed when typing pauses (return them, or call show(items) later).
  -- `preview(item)` gives the lines shown for the highlighted item; by default an item
  -- like "path:line:..." shows that file around the line.
  pick = function(spec, cb) return pick(spec, cb) end,

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
