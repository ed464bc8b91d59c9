-- uji.tty: the terminal itself, for a program of its own drawn in Lua (reference §2
-- runtime, terminal). `uji.tty.open()` (or `ito.open()`) takes the terminal: the screen
-- of uji steps aside until `screen:close()`.
--
--   local screen, input = uji.tty.open()
--   screen:text(2, 1, "hello", { foreground = "cyan", bold = true })
--   screen:flush()
--   local event = input:read()          -- {type = "key", key = "q", char = "q", ...}
--   screen:close()
--
-- Cells are 0-based (x from the left, y from the top). Input events: key {key, char,
-- ctrl, alt, shift}, mouse {action = press|release|drag|wheel, x, y, button, delta?},
-- paste {text}, resize {width, height}, focus {focused}; closed once the screen closes.
local uji, host, lib = ...
local call, check, wait = lib.call, lib.check, lib.wait

local Screen = {}
Screen.__index = Screen
local Input = {}
Input.__index = Input

local function int(v, fname, what)
  check(type(v) == "number", fname .. ": `" .. what .. "` must be a number")
  return math.floor(v)
end

local function sized(screen)
  screen.width, screen.height = call(host.tty_size, screen.id)
end

-- screen:text(x, y, text, style?): text from the cell, cut at the edge.
function Screen:text(x, y, text, style)
  call(host.tty_text, self.id, int(x, "screen:text", "x"), int(y, "screen:text", "y"), tostring(text), style)
end

-- screen:spans(x, y, spans): a list of {text, style} from the cell.
function Screen:spans(x, y, spans)
  check(type(spans) == "table" or type(spans) == "string", "screen:spans: `spans` must be a list of {text, style}")
  call(host.tty_spans, self.id, int(x, "screen:spans", "x"), int(y, "screen:spans", "y"), spans)
end

-- screen:line(y, text_or_spans): a whole row.
function Screen:line(y, spans)
  call(host.tty_line, self.id, int(y, "screen:line", "y"), spans or "")
end

-- screen:fill(x, y, width, height, char?, style?)
function Screen:fill(x, y, w, h, char, style)
  local f = "screen:fill"
  call(host.tty_fill, self.id, int(x, f, "x"), int(y, f, "y"), int(w, f, "width"), int(h, f, "height"), char, style)
end

-- screen:paint(view): an ito view over the whole screen (its taps answer screen:clicked).
function Screen:paint(view)
  local ito = require("ito")
  -- The same view again keeps its root: the state it remembers (a ScrollView's place).
  if self.root == nil or self.root.content ~= view then self.root = ito.root(view) end
  call(host.tty_paint, self.id, self.root)
end

-- screen:clicked(x, y) → whether a view painted there took the click (its on_tap ran).
function Screen:clicked(x, y)
  local handler = call(host.tty_clicked, self.id, int(x, "screen:clicked", "x"), int(y, "screen:clicked", "y"))
  if handler == nil or self.root == nil then return false end
  self.root:fire(handler)
  return true
end

-- screen:key(event) → whether the focused control of the view painted last used the key
-- (an ito.Window's key; Tab moves the focus between controls).
function Screen:key(event)
  check(type(event) == "table", "screen:key: `event` must be a key event of input:read()")
  return call(host.tty_key, self.id, event)
end

-- screen:wheel(x, y, delta) → whether a scroll view of the view painted last, under the
-- cell, scrolled (delta < 0: up; 3 rows a step). An ito.Window's wheel.
function Screen:wheel(x, y, delta)
  check(type(delta) == "number", "screen:wheel: `delta` must be a number (-1 up, 1 down)")
  local handler, top, at_end = call(host.tty_wheel, self.id, int(x, "screen:wheel", "x"), int(y, "screen:wheel", "y"),
    math.floor(delta))
  if handler == nil or self.root == nil then return false end
  self.root:fire(handler, top, at_end)
  return true
end

-- screen:select(x0, y0, x1, y1, style?): selects the cells from one to the other, row after
-- row as a terminal does, drawn in `style` (reverse by default) at each flush until
-- screen:select(nil). screen:selection() → the selected text (rows' trailing blanks cut), or nil.
function Screen:select(x0, y0, x1, y1, style)
  if x0 == nil then return call(host.tty_select, self.id, nil, 0, 0, 0, nil) end
  local f = "screen:select"
  call(host.tty_select, self.id, int(x0, f, "x0"), int(y0, f, "y0"), int(x1, f, "x1"), int(y1, f, "y1"), style)
end
function Screen:selection() return call(host.tty_selection, self.id) end

-- screen:copy(text): to the clipboard through the terminal (OSC 52), with the next flush.
function Screen:copy(text)
  check(type(text) == "string", "screen:copy: `text` must be a string")
  call(host.tty_copy, self.id, text)
end

-- screen:cursor(shape, x?, y?): "block", "bar", "underline" or "hidden".
function Screen:cursor(shape, x, y)
  check(shape == "block" or shape == "bar" or shape == "underline" or shape == "hidden",
    'screen:cursor: `shape` must be "block", "bar", "underline" or "hidden"')
  call(host.tty_cursor, self.id, shape, x, y)
end

-- screen:write(raw): bytes sent as they are with the next flush (escape sequences).
function Screen:write(raw) call(host.tty_write, self.id, tostring(raw)) end

-- screen:flush(): the rows that changed go to the terminal.
function Screen:flush()
  call(host.tty_flush, self.id)
  sized(self)
end

-- screen:suspend() / screen:resume(): the terminal as it was, for a while.
function Screen:suspend() call(host.tty_suspend, self.id) end
function Screen:resume() call(host.tty_resume, self.id) end

-- screen:close(): the terminal goes back to uji's screen (or to the shell).
function Screen:close() return call(host.tty_close, self.id) end

-- input:read(timeout?) → the next event, or nil after `timeout` seconds (or once closed).
function Input:read(timeout)
  check(timeout == nil or (type(timeout) == "number" and timeout >= 0), "input:read: `timeout` must be seconds >= 0")
  local event = wait(call(host.tty_read, self.id, timeout))
  if event and event.type == "resize" then sized(self.screen) end
  return event
end

-- for event in input:events() do ... end: until the screen closes.
function Input:events()
  return function()
    local event = self:read()
    if event == nil or event.type == "closed" then return nil end
    return event
  end
end

uji.tty = {
  -- open() → screen, input: the terminal, until screen:close().
  open = function()
    local id, w, h = call(host.tty_open)
    local screen = setmetatable({ id = id, width = w, height = h }, Screen)
    return screen, setmetatable({ id = id, screen = screen }, Input)
  end,
}
