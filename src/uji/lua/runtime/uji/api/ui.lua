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

local NO_SCREEN = "no screen to show it on"
local CONFIGURE_KEYS = { theme = true, show_thinking = true, suggest = true, notify = true }

-- The theme in use; ito.theme() reads it (package.loaded["uji.themes.current"]).
local current = { selection = "default", theme = nil }
package.loaded["uji.themes.current"] = current

local function load_theme(name)
  if type(name) == "table" then return name end
  if not name:match("^[%w_%-%.]+$") then error("no theme named " .. name, 0) end
  local ok, theme = pcall(require, "uji.themes." .. name)
  if not ok then
    if tostring(theme):find("module 'uji.themes." .. name .. "' not found", 1, true) then
      error("no theme named " .. name .. " (lua/uji/themes/" .. name .. ".lua in the config or a pack)", 0)
    end
    error(theme, 0)
  end
  if type(theme) ~= "table" or type(theme.colors) ~= "table" then
    error("uji.themes." .. name .. " is not a theme (build one with require(\"uji.themes.default\"){...})", 0)
  end
  return theme
end

-- Flattened for the screen: {{"diff.added", "#98c379"}, ...}.
local function flat(t, prefix, out)
  for k, v in pairs(t or {}) do
    local key = prefix .. tostring(k)
    if type(v) == "table" and getmetatable(v) == nil and v[1] == nil then
      flat(v, key .. ".", out)
    elseif type(v) == "table" and v.spec then
      out[#out + 1] = mark_array({ key, tostring(v.spec) })
    elseif type(v) == "table" then
      local parts = {}
      for i, p in ipairs(v) do parts[i] = tostring(p) end
      out[#out + 1] = mark_array({ key, table.concat(parts, " ") })
    elseif type(v) ~= "function" then
      out[#out + 1] = mark_array({ key, type(v) == "number" and v or tostring(v) })
    end
  end
  return out
end

local function use_theme(selection)
  local theme = load_theme(selection)
  host.ui_set_theme({
    name = theme.name or (type(selection) == "string" and selection or "custom"),
    colors = mark_array(flat(theme.colors, "", {})),
    symbols = mark_array(flat(theme.symbols, "", {})),
    text = mark_array(flat(theme.text, "", {})),
    limits = mark_array(flat(theme.limits, "", {})),
  })
  current.theme = theme
  current.selection = type(selection) == "string" and selection or (theme.name or "custom")
end

-- The replaceable views (uji/ui/views.lua): uji.ui.<View> starts as the default; what a
-- config puts there instead, or a theme's `views`, draws that kind of message.
local VIEWS = { "UserMessage", "ToolCall", "ToolOutput", "Shell", "SystemMessage", "ErrorMessage", "Notice",
  "Thinking", "Queued", "Running", "Diff", "Partial", "Compaction", "Job", "Jump", "Paragraph", "Heading",
  "CodeBlock", "MathBlock", "TableRow", "Rule", "Activity", "Flash" }
-- The screen's and the panels' views: each asked for by what it draws, not per message.
local PANELS = { "Screen", "Input", "SelectList", "Picker", "Sessions", "Suggestions", "Approval", "PromptField" }
local default_views = {}
for _, list in ipairs({ VIEWS, PANELS }) do
  for _, name in ipairs(list) do
    default_views[name] = function(props) return require("uji.ui.views")[name](props) end
  end
end

-- The view replacing `name`, or nil while uji draws it itself.
function current.replacement(name)
  local mine = uji.ui[name]
  if mine ~= nil and mine ~= default_views[name] then return mine end
  local views = current.theme and current.theme.views
  return views and views[name] or nil
end

-- The saved theme applies before the config runs (the Lua host calls this first; a name
-- that no longer loads is skipped).
function current.apply_saved()
  local saved = host.ui_saved_theme()
  if saved and saved ~= "default" then pcall(use_theme, saved) end
end

local next_handle = 0

local Toolbar = {}
Toolbar.__index = Toolbar
function Toolbar:remove() return host.ui_toolbar_remove(self.id) end

local Overlay = {}
Overlay.__index = Overlay
-- handle:close(v): the overlay goes; wait() gives v.
function Overlay:close(v)
  if self.closed then return false end
  self.closed, self.value = true, v
  host.ui_overlay_close(self.id)
  return true
end
-- handle:wait() → the value it was closed with (nil for Esc, or with no screen).
function Overlay:wait()
  if not self.closed then
    local pending = host.ui_overlay_wait(self.id)
    if pending ~= nil then wait(pending) end
    self.closed = true
  end
  return self.value
end

-- A toolbar item's root: an item that raises draws nothing, and says so once.
local function reporting_root(ito, content)
  return ito.root(content)
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

  -- configure{theme, show_thinking, suggest = {enabled}, notify}: raises on unknown keys;
  -- a theme that fails to load keeps the old one.
  configure = function(spec)
    local fname = "uji.ui.configure"
    check(type(spec) == "table", fname .. " expects a table {theme = ..., show_thinking = ..., suggest = ..., notify = ...}")
    for k in pairs(spec) do
      check(CONFIGURE_KEYS[k], fname .. ": unknown key `" .. tostring(k) .. "` (known: theme, show_thinking, suggest, notify)")
    end
    check(spec.show_thinking == nil or type(spec.show_thinking) == "boolean", fname .. ": `show_thinking` must be a boolean")
    check(spec.suggest == nil or type(spec.suggest) == "table", fname .. ": `suggest` must be a table {enabled = true|false}")
    if spec.suggest then
      for k in pairs(spec.suggest) do check(k == "enabled", fname .. ": unknown key `suggest." .. tostring(k) .. "`") end
    end
    local notify = spec.notify
    if notify ~= nil then
      check(notify == false or type(notify) == "string" or is_callable(notify),
        fname .. ': `notify` must be "auto", "osc9", "osc777", "bell", "off", false or a function')
    end
    if spec.theme ~= nil then
      check(type(spec.theme) == "string" or type(spec.theme) == "table", fname .. ": `theme` must be a name or a theme table")
      local ok, err = pcall(use_theme, spec.theme)
      if not ok then lib.fail(fname .. ": " .. tostring(err):gsub("^[^:]+:%d+: ", "")) end
    end
    if notify ~= nil then call(host.ui_configure_notify, notify == false and "off" or notify) end
    local suggest = spec.suggest and spec.suggest.enabled
    if spec.show_thinking ~= nil or suggest ~= nil then
      host.ui_set_options(spec.show_thinking, suggest == nil and nil or suggest ~= false)
    end
  end,

  -- theme() → the selection: the theme's name.
  theme = function() return current.selection end,

  -- save_theme(name): persists the choice; it applies before the config runs next time.
  save_theme = function(name)
    check(type(name) == "string" and name ~= "", "uji.ui.save_theme expects a theme name")
    local ok, err = pcall(load_theme, name)
    check(ok, "uji.ui.save_theme: " .. tostring(err):gsub("^[^:]+:%d+: ", ""))
    host.ui_save_theme(clean(name))
  end,

  -- toolbar(items) → handle with handle:remove() → bool. Items are ito.ToolbarItem.
  toolbar = function(items)
    local fname = "uji.ui.toolbar"
    local ito = require("ito")
    if ito.is_toolbar_item(items) then items = { items } end
    check(type(items) == "table", fname .. " expects a list of ito.ToolbarItem")
    next_handle = next_handle + 1
    local id = next_handle
    for i, item in ipairs(items) do
      check(ito.is_toolbar_item(item), fname .. ": item " .. i .. " is not an ito.ToolbarItem")
      call(host.ui_toolbar_add, id, item.placement, reporting_root(ito, item.content), item._id)
    end
    return setmetatable({ id = id }, Toolbar)
  end,

  -- overlay(content_fn, {float = true}) → handle with :close(v) and :wait().
  overlay = function(content, opts)
    local fname = "uji.ui.overlay"
    check(content ~= nil, fname .. " expects a view or a function(handle) returning one")
    check(opts == nil or type(opts) == "table", fname .. ": options must be a table {float = true}")
    local ito = require("ito")
    next_handle = next_handle + 1
    local handle = setmetatable({ id = next_handle, closed = false }, Overlay)
    local body = content
    if type(content) == "function" then body = function() return content(handle) end end
    handle.open = call(host.ui_overlay_open, handle.id, ito.root(ito.ToolbarHost(body)), not (opts and opts.float == false))
    if not handle.open then
      handle.closed = true
      host.notify("uji.ui.overlay: " .. NO_SCREEN)
    end
    return handle
  end,

  -- Markdown(text): a view of rendered markdown.
  Markdown = function(text) return require("ito").Markdown(text) end,

  -- redraw(): ito views are drawn again (a state change does it by itself).
  redraw = function() host.ui_redraw() end,

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

-- The replaceable views: each takes its props (a message's {type, text, width, ...}, or
-- what uji/ui/views.lua writes above it) and returns an ito view.
for name, view in pairs(default_views) do uji.ui[name] = view end

-- The older window model (before ito toolbars), kept so configs written for it run:
-- open_win{view, title, height, lines} → id; set_lines, clear, set_size, set_title,
-- close_win, list_wins. A "modal" window is an overlay; "messages" and "input" windows
-- sit above the composer (ito's keyboard toolbar). A line is a string or a list of spans
-- ({text, style} or {text = , style = }).
local WIN_VIEWS = { messages = true, input = true, modal = true }
local wins, win_ids, next_win = {}, {}, 0

local function win_of(id, fname)
  local w = wins[id]
  check(w ~= nil, fname .. ": no window " .. tostring(id) .. " (open_win gives the ids; list_wins lists them)")
  return w
end

local function lines_arg(lines, fname)
  check(type(lines) == "table", fname .. ": `lines` must be a list of strings or span lists")
  local out = {}
  for i, line in ipairs(lines) do
    check(type(line) == "string" or type(line) == "table", fname .. ": line " .. i .. " must be a string or a list of spans")
    out[i] = line
  end
  return out
end

local function forget_win(id)
  if not wins[id] then return false end
  wins[id] = nil
  for i, w in ipairs(win_ids) do
    if w == id then table.remove(win_ids, i) break end
  end
  return true
end

local function draw_win(w)
  local ito = require("ito")
  local rows = {}
  for i, line in ipairs(w.lines.value) do rows[i] = ito.Text(line) end
  local view = ito.VStack(rows)
  if w.height.value then view = view:height(w.height.value) end
  if w.title.value == "" then return view end
  -- The overlay is a box already: a modal window's title heads it.
  if w.view == "modal" then return ito.VStack({ ito.Text(w.title.value):bold(), view }) end
  return view:border("rounded"):title(w.title.value)
end

function uji.ui.open_win(opts)
  local fname = "uji.ui.open_win"
  opts = opts or {}
  check(type(opts) == "table", fname .. " expects a table {view, title, height, lines}")
  local view = opts.view or "messages"
  check(WIN_VIEWS[view], fname .. ': `view` must be "messages", "input" or "modal"')
  check(opts.title == nil or type(opts.title) == "string", fname .. ": `title` must be a string")
  check(opts.height == nil or (type(opts.height) == "number" and opts.height > 0), fname .. ": `height` must be a number > 0")
  local ito = require("ito")
  next_win = next_win + 1
  local id = next_win
  local w = { id = id, view = view, title = ito.state(opts.title or ""), height = ito.state(opts.height),
    lines = ito.state(lines_arg(opts.lines or {}, fname)) }
  wins[id] = w
  win_ids[#win_ids + 1] = id
  local function body() return draw_win(w) end
  if view == "modal" then
    if uji.ui.size() then
      w.overlay = uji.ui.overlay(body)
      uji.task.spawn(function() -- Esc closes it: it is gone from list_wins too
        w.overlay:wait()
        forget_win(id)
      end)
    end
  else
    w.toolbar = uji.ui.toolbar({ ito.ToolbarItem("keyboard", body) })
  end
  return id
end

function uji.ui.set_lines(id, lines)
  win_of(id, "uji.ui.set_lines").lines.value = lines_arg(lines, "uji.ui.set_lines")
end

function uji.ui.clear(id) win_of(id, "uji.ui.clear").lines.value = {} end

function uji.ui.set_size(id, height)
  check(type(height) == "number" and height > 0, "uji.ui.set_size: `height` must be a number > 0")
  win_of(id, "uji.ui.set_size").height.value = height
end

function uji.ui.set_title(id, title)
  check(type(title) == "string", "uji.ui.set_title: `title` must be a string")
  win_of(id, "uji.ui.set_title").title.value = title
end

function uji.ui.close_win(id)
  local w = wins[id]
  if not w then return false end
  forget_win(id)
  if w.toolbar then w.toolbar:remove() end
  if w.overlay then w.overlay:close() end
  return true
end

function uji.ui.list_wins()
  local out = {}
  for i, id in ipairs(win_ids) do out[i] = id end
  return mark_array(out)
end
