-- ito: uji's declarative terminal UI library (`require("ito")`), written against the
-- public `uji.*` API only.
--
-- A view is plain Lua data: a table with a `kind`, its children or text, and the
-- modifiers called on it, in order (`ito.Text("hi"):bold():padding(1)`). Components
-- (`ito.view(body)`) and functions given where a view goes are called when the view is
-- drawn. uji's screen asks a root (`ito.root(content)`) for its tree: components run,
-- colours become names, callbacks become numbers the screen hands back to `root:fire`;
-- the screen lays the tree out and paints it (uji/tui/ito in the Python sources).
--
--   local ito = require("ito")
--   local count = ito.state(0)
--   uji.ui.toolbar({ ito.ToolbarItem("top_bar_trailing", function()
--     return ito.Text("clicked " .. count.value):on_tap(function() count.value = count.value + 1 end)
--   end) })

local ito = {}

-- Redraws ---------------------------------------------------------------------------
-- Any change to a state a view read asks the screen to draw the roots again.
local windows = setmetatable({}, { __mode = "k" }) -- the ito.Windows open, told too
local function invalidate()
  if uji and uji.ui and uji.ui.redraw then uji.ui.redraw() end
  for window in pairs(windows) do window.invalidate() end
end

-- Colours and text styles ------------------------------------------------------------

local Color = {}
Color.__index = Color
Color.__tostring = function(c) return c.spec end
local function color(spec) return setmetatable({ spec = spec }, Color) end

ito.Color = {}
local NAMES = {
  "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
  "bright_black", "bright_red", "bright_green", "bright_yellow", "bright_blue", "bright_magenta",
  "bright_cyan", "bright_white",
}
for _, name in ipairs(NAMES) do ito.Color[name] = color(name) end
ito.Color.gray, ito.Color.grey = ito.Color.bright_black, ito.Color.bright_black
ito.Color.default = color("default")

-- ito.rgb(0xRRGGBB)
function ito.rgb(n)
  if type(n) == "string" then
    n = tonumber((n:gsub("^#", "")), 16)
  end
  assert(type(n) == "number" and n >= 0 and n <= 0xFFFFFF, "ito.rgb expects a number 0xRRGGBB")
  return color(string.format("#%06x", n))
end

-- ito.Color.indexed(n): one of the terminal's 256 colours.
function ito.Color.indexed(n)
  assert(type(n) == "number" and n >= 0 and n <= 255, "ito.Color.indexed expects 0..255")
  return color("color(" .. math.floor(n) .. ")")
end

-- A colour as the screen reads it: a Color, a name ("cyan"), "#rrggbb", or a number.
local function color_spec(c)
  if c == nil then return nil end
  if getmetatable(c) == Color then return c.spec end
  if type(c) == "number" then return string.format("#%06x", c) end
  if type(c) == "string" then return c end
  error("ito: not a colour: " .. tostring(c), 3)
end
ito.color_spec = color_spec

local STYLE_FIELDS = {
  foreground = true, background = true, bold = true, dim = true, italic = true, underline = true,
  reverse = true, strikethrough = true, blink = true,
}
local TextStyle = {}
TextStyle.__index = TextStyle

-- ito.TextStyle{foreground, background, bold, dim, italic, underline, reverse, strikethrough, blink}
function ito.TextStyle(spec)
  spec = spec or {}
  local s = setmetatable({}, TextStyle)
  for k, v in pairs(spec) do
    if not STYLE_FIELDS[k] then error("ito.TextStyle: unknown field `" .. tostring(k) .. "`", 2) end
    s[k] = v
  end
  return s
end

-- style:merge(other): a new style, `other`'s fields over this one's.
function TextStyle:merge(other)
  local out = setmetatable({}, TextStyle)
  for k, v in pairs(self) do out[k] = v end
  for k, v in pairs(other or {}) do out[k] = v end
  return out
end

-- A style as the screen reads it: {fg, bg, bold, ...} with colours as names.
local function style_spec(s)
  if s == nil then return nil end
  if type(s) == "string" or getmetatable(s) == Color or type(s) == "number" then
    return { foreground = color_spec(s) }
  end
  local out = {}
  for k, v in pairs(s) do
    if k == "foreground" or k == "background" then out[k] = color_spec(v)
    elseif STYLE_FIELDS[k] then out[k] = v and true or false end
  end
  return out
end

-- Views and modifiers -----------------------------------------------------------------

local View = {}
View.__index = View
ito.View = View

local function is_view(v) return type(v) == "table" and getmetatable(v) == View end
ito.is_view = is_view

local function make(kind, fields)
  fields = fields or {}
  fields.kind = kind
  fields.mods = fields.mods or {}
  return setmetatable(fields, View)
end

-- A copy with one more modifier: views may be shared (`ito.Spacer`), so a modifier never
-- changes the view it was called on.
local function with(self, name, ...)
  local copy = {}
  for k, v in pairs(self) do copy[k] = v end
  local mods = {}
  for i, m in ipairs(self.mods) do mods[i] = m end
  mods[#mods + 1] = { name, select("#", ...), ... }
  copy.mods = mods
  return setmetatable(copy, View)
end

local MODIFIERS = {
  -- layout
  "padding", "border", "title", "background", "opaque", "hidden", "invisible", "height", "width",
  "max_height", "max_width", "share", "grow", "shrink", "align", "overlay", "spacing",
  -- identity and input
  "id", "layout_id", "on_tap", "focus_scope",
  -- text
  "foreground", "bold", "dim", "italic", "underline", "reverse", "strikethrough", "blink", "style",
  "wrap", "repeating",
  -- controls
  "placeholder", "on_submit", "focused", "selection", "on_choose", "footer", "item_id", "passive",
  "follow_end", "state",
  -- toolbars and preferences
  "toolbar", "preference", "overlay_preference_value",
}
for _, name in ipairs(MODIFIERS) do
  View[name] = function(self, ...) return with(self, name, ...) end
end
-- TextField:hidden() masks the text; any other view:hidden() takes it out.

-- The children of a stack: a list, with `Group`s spliced in and nils skipped.
local function children_of(spec)
  local out = {}
  if type(spec) ~= "table" or is_view(spec) then
    if spec ~= nil then out[1] = spec end
    return out
  end
  local n = 0
  for k in pairs(spec) do if type(k) == "number" and k > n then n = k end end
  for i = 1, n do
    if spec[i] ~= nil and spec[i] ~= false then out[#out + 1] = spec[i] end
  end
  return out
end

local function stack(kind)
  return function(spec, opts)
    opts = opts or {}
    local t = type(spec) == "table" and not is_view(spec) and spec or {}
    return make(kind, {
      children = children_of(spec),
      spacing = opts.spacing or t.spacing,
      alignment = opts.alignment or t.alignment,
    })
  end
end

ito.VStack = stack("vstack")
ito.HStack = stack("hstack")
ito.ZStack = stack("zstack")
ito.LazyVStack = stack("vstack")
ito.Grid = stack("grid")
ito.GridRow = stack("gridrow")

-- Group{...}: children that join the stack around them.
function ito.Group(spec) return make("group", { children = children_of(spec) }) end

-- Spacer: fills the room left along its stack (`ito.Spacer` or `ito.Spacer(min)`).
local SpacerMT = { __index = View, __call = function(_, min) return make("spacer", { min = min }) end }
ito.Spacer = setmetatable({ kind = "spacer", mods = {} }, SpacerMT)
local function is_spacer(v) return type(v) == "table" and getmetatable(v) == SpacerMT end

-- Text("string"), Text("string", style) or Text{ "plain", {"styled", style}, {text=, style=} }.
function ito.Text(content, style)
  if type(content) == "number" then content = tostring(content) end
  if type(content) == "string" then
    return make("text", { spans = { { content, style } } })
  end
  assert(type(content) == "table", "ito.Text expects a string or a list of spans")
  local spans = {}
  for _, span in ipairs(content) do
    if type(span) == "string" or type(span) == "number" then
      spans[#spans + 1] = { tostring(span), style }
    else
      spans[#spans + 1] = { tostring(span.text or span[1] or ""), span.style or span[2] or style }
    end
  end
  return make("text", { spans = spans })
end

-- Lines{ "a", {spans...}, ... }: one Text per line.
function ito.Lines(lines)
  local rows = {}
  for _, line in ipairs(lines or {}) do
    rows[#rows + 1] = (type(line) == "table" and not is_view(line)) and ito.Text(line) or
      (is_view(line) and line or ito.Text(tostring(line)))
  end
  return make("vstack", { children = rows })
end

-- Fold{rows, more, limit}: the first `limit` rows (3), then `more` (a format with the
-- number of rows hidden, "+%d lines" by default); a tap shows them all.
function ito.Fold(spec)
  return make("fold", {
    rows = children_of(spec.rows or spec), limit = spec.limit or 3, more = spec.more or "+%d lines",
  })
end

function ito.Spinner() return make("spinner", {}) end

-- ScrollView{content...}: its rows scroll; :follow_end() keeps the end in view.
function ito.ScrollView(spec) return make("scroll", { children = children_of(spec) }) end

-- ScrollState{follow}: where a ScrollView is; share it to scroll from outside.
function ito.ScrollState(spec)
  spec = spec or {}
  return ito.observable({ offset = spec.offset or 0, follow = spec.follow or false })
end

-- TextField(state): a one-line text field that edits `state.value`.
function ito.TextField(state)
  assert(type(state) == "table" and state.value ~= nil or type(state) == "table",
    "ito.TextField expects a state: ito.TextField(ito.state(\"\"))")
  return make("textfield", { bound = state })
end

-- List(items, row): `row(item, selected)` draws each item; ↑/↓ move, Enter chooses.
function ito.List(items, row)
  assert(type(items) == "table", "ito.List expects a list of items")
  return make("list", { items = items, row = row })
end

-- Markdown(text): text rendered as markdown by the screen.
function ito.Markdown(text) return make("markdown", { text = tostring(text or "") }) end

-- Subviews(content, fn): `fn(children)` gets the content's views and returns a view.
function ito.Subviews(content, fn) return make("subviews", { content = content, fn = fn }) end

-- Layout(measure): a container whose children are placed by `measure(sizes, width)`,
-- which returns a list of {x, y} (0-based cells); without positions, a VStack.
function ito.Layout(measure)
  return function(spec) return make("layout", { children = children_of(spec), measure = measure }) end
end

-- SubcomposeLayout(fn): `fn(width)` returns the view to draw in that width.
function ito.SubcomposeLayout(fn) return make("subcompose", { fn = fn }) end

-- ito.view(body): a component, `Component(props)` → a view; `body(props)` runs when drawn.
function ito.view(body)
  assert(type(body) == "function", "ito.view expects a body function(props) → view")
  return function(props) return make("component", { body = body, props = props or {} }) end
end

-- State -----------------------------------------------------------------------------

local rendering = nil -- the root being drawn: { slots, path, counter }

local function slot(make_value, keys)
  if rendering == nil then return make_value() end
  local scope = rendering.scope
  scope.n = scope.n + 1
  local key = scope.path .. "#" .. scope.n
  local held = rendering.root.memo[key]
  local same = held ~= nil and #held.keys == #keys
  if same then
    for i, k in ipairs(keys) do if held.keys[i] ~= k then same = false break end end
  end
  if not same then
    held = { value = make_value(), keys = keys }
    rendering.root.memo[key] = held
  end
  rendering.root.seen[key] = true
  return held.value
end

local State = {}
State.__index = function(s, k) if k == "value" then return rawget(s, "_value") end return State[k] end
State.__newindex = function(s, k, v)
  if k ~= "value" then error("ito.state: only `.value` can be set", 2) end
  if rawget(s, "_value") ~= v then
    rawset(s, "_value", v)
    invalidate()
  end
end

-- ito.state(v): `.value` reads and sets it; any change redraws. Inside a component's body
-- the same state comes back on every draw (by its place in the body).
function ito.state(v)
  return slot(function() return setmetatable({ _value = v }, State) end, {})
end

-- ito.remember(factory, keys...): the factory's value, made again when a key changes.
function ito.remember(factory, ...)
  local keys = { ... }
  return slot(factory, keys)
end

-- ito.observable(obj): a table whose field changes redraw.
function ito.observable(obj)
  local data = obj or {}
  return setmetatable({}, {
    __index = data,
    __newindex = function(_, k, v)
      if data[k] ~= v then
        data[k] = v
        invalidate()
      end
    end,
    __pairs = function() return next, data, nil end,
  })
end

-- ito.Local(default): a value a view provides to the views inside it.
local LocalMT = {}
LocalMT.__index = function(l, k)
  if k == "current" then
    local stack = rawget(l, "_stack")
    return #stack > 0 and stack[#stack] or rawget(l, "_default")
  end
  return LocalMT[k]
end
function LocalMT.provide(l, value, content) return make("provide", { loc = l, value = value, content = content }) end
function ito.Local(default) return setmetatable({ _default = default, _stack = {} }, LocalMT) end

-- ito.PreferenceKey{default, reduce}: values views inside set with
-- `:preference(key, value)`, read above them with `:overlay_preference_value(key, fn)`.
local PrefMT = {}
PrefMT.__index = PrefMT
function ito.PreferenceKey(spec)
  spec = spec or {}
  return setmetatable({
    default = spec.default,
    reduce = spec.reduce or function(_, b) return b end,
  }, PrefMT)
end
function PrefMT.preference(key, view, value) return view:preference(key, value) end
function PrefMT.overlay_preference_value(key, view, fn) return view:overlay_preference_value(key, fn) end

-- ito.theme(): the theme in use (`uji.ui.configure{theme}`).
function ito.theme()
  local holder = package.loaded["uji.themes.current"]
  if type(holder) == "table" and holder.theme then return holder.theme end
  return require("uji.themes.default")
end

-- Toolbars ------------------------------------------------------------------------------

local PLACEMENTS = { top_bar_leading = true, top_bar_trailing = true, keyboard = true, bottom_bar = true }
ito.placements = PLACEMENTS

local ToolbarItemMT = {}
ToolbarItemMT.__index = ToolbarItemMT
function ToolbarItemMT:id(name)
  local copy = setmetatable({}, ToolbarItemMT)
  for k, v in pairs(self) do copy[k] = v end
  copy._id = name
  return copy
end

-- ToolbarItem(placement, view_or_fn): top_bar_leading, top_bar_trailing, keyboard
-- (above the input) or bottom_bar.
function ito.ToolbarItem(placement, content)
  if not PLACEMENTS[placement] then
    error("ito.ToolbarItem: placement must be top_bar_leading, top_bar_trailing, keyboard or bottom_bar, got "
      .. tostring(placement), 2)
  end
  if content == nil then error("ito.ToolbarItem: give a view or a function that returns one", 2) end
  return setmetatable({ placement = placement, content = content }, ToolbarItemMT)
end
function ito.is_toolbar_item(v) return type(v) == "table" and getmetatable(v) == ToolbarItemMT end

-- ToolbarHost(content): draws the toolbars the views inside declare (`view:toolbar`): the
-- top bars above, the keyboard and bottom bars below.
function ito.ToolbarHost(content) return make("toolbar_host", { content = content }) end

-- ToolbarItems(placement, arrange): the items declared for `placement` inside the host,
-- laid out by `arrange(views)` (an HStack by default).
function ito.ToolbarItems(placement, arrange)
  return make("toolbar_items", { placement = placement, arrange = arrange })
end

-- Resolving: views → the plain tree the screen draws ----------------------------------

local resolve

local function resolve_list(list, out)
  for _, child in ipairs(list) do
    local node = resolve(child)
    if node ~= nil then
      if node.kind == "group" then
        for _, c in ipairs(node.children) do out[#out + 1] = c end
      else
        out[#out + 1] = node
      end
    end
  end
  return out
end

local function handler(fn)
  if fn == nil then return nil end
  local root = rendering.root
  root.handlers[#root.handlers + 1] = fn
  return #root.handlers
end

local function arg(m, i) return m[i + 2] end

-- Modifiers as the screen reads them: {name, args...} with colours, styles, views and
-- callbacks converted.
local function resolve_mods(view, node)
  local mods = {}
  for _, m in ipairs(view.mods) do
    local name, a = m[1], arg(m, 1)
    local out = { name }
    if name == "foreground" or name == "background" then
      out[2] = color_spec(a)
    elseif name == "style" then
      out[2] = style_spec(a)
    elseif name == "border" then
      local opts = arg(m, 2) or {}
      out[2] = a or "rounded"
      out[3] = { edges = opts.edges, color = color_spec(opts.color) }
      if type(a) == "table" then out[2] = "rounded"; out[3] = { edges = a.edges, color = color_spec(a.color) } end
    elseif name == "overlay" then
      out[2] = resolve(a)
      out[3] = arg(m, 2)
    elseif name == "on_tap" then
      out[2] = handler(a)
    elseif name == "padding" then
      out[2] = a == nil and 1 or a
    elseif name == "toolbar" or name == "preference" or name == "overlay_preference_value"
      or name == "on_submit" or name == "on_choose" or name == "selection" or name == "footer"
      or name == "item_id" or name == "state" then
      out = nil -- read by the control or the resolver itself
    elseif name == "bold" or name == "dim" or name == "italic" or name == "underline" or name == "reverse"
      or name == "strikethrough" or name == "blink" or name == "opaque" or name == "invisible"
      or name == "passive" or name == "follow_end" or name == "repeating" or name == "focused" then
      out[2] = a == nil and true or a
    elseif name == "hidden" and node.kind == "textfield" then
      out = nil
    else
      for i = 1, m[2] do
        local v = arg(m, i)
        if type(v) == "table" and getmetatable(v) == Color then v = v.spec end
        out[i + 1] = (type(v) == "function") and nil or v
      end
    end
    if out then mods[#mods + 1] = out end
  end
  node.mods = mods
  return node
end

local function last_mod(view, name)
  for i = #view.mods, 1, -1 do
    if view.mods[i][1] == name then return view.mods[i] end
  end
  return nil
end

local function spans_of(spans)
  local out = {}
  for i, s in ipairs(spans) do out[i] = { text = s[1], style = style_spec(s[2]) } end
  return out
end

-- Toolbar items declared inside a ToolbarHost, by placement.
local function collect_toolbars(view)
  local host = rendering.toolbars
  if host == nil then return end
  for _, m in ipairs(view.mods) do
    if m[1] == "toolbar" then
      for _, item in ipairs(arg(m, 1) or {}) do
        local list = host[item.placement] or {}
        list[#list + 1] = item
        host[item.placement] = list
      end
    end
  end
end

local function collect_preferences(view)
  for _, m in ipairs(view.mods) do
    if m[1] == "preference" then
      local key, value = arg(m, 1), arg(m, 2)
      local prefs = rendering.prefs
      local found = prefs[key]
      if found == nil then prefs[key] = { value } else found[#found + 1] = value end
    end
  end
end

local function reduce_pref(key, values)
  local acc = key.default
  for _, v in ipairs(values or {}) do acc = key.reduce(acc, v) end
  return acc
end

local function resolve_view(view)
  local kind = view.kind
  collect_toolbars(view)
  collect_preferences(view)
  -- :overlay_preference_value(key, fn): the preferences set inside, reduced, drawn on top.
  local pref_overlay = last_mod(view, "overlay_preference_value")
  local saved_prefs
  if pref_overlay then
    saved_prefs = rendering.prefs
    rendering.prefs = {}
  end

  local node
  if kind == "component" then
    local scope = rendering.scope
    rendering.scope = { path = scope.path .. "/" .. scope.n .. "c", n = 0 }
    scope.n = scope.n + 1
    local body = view.body(view.props)
    node = resolve(body)
    rendering.scope = scope
    if node == nil then return nil end
    if #view.mods > 0 then
      node = { kind = "vstack", children = { node } }
    end
  elseif kind == "text" then
    node = { kind = "text", spans = spans_of(view.spans) }
  elseif kind == "spacer" then
    node = { kind = "spacer", min = view.min }
  elseif kind == "vstack" or kind == "hstack" or kind == "zstack" or kind == "grid" or kind == "gridrow"
    or kind == "group" or kind == "scroll" or kind == "layout" then
    local spacing = view.spacing
    local sp = last_mod(view, "spacing")
    if sp then spacing = arg(sp, 1) end
    node = { kind = kind, children = resolve_list(view.children, {}), spacing = spacing, alignment = view.alignment }
    if kind == "scroll" then
      -- Where it is: the ScrollState given with :state(), or one kept for this view. Keys
      -- move it (the screen calls `scrolled`); scrolled away from the end, a view that
      -- follows its end stops following until it is back there.
      local st = last_mod(view, "state")
      local state = st and arg(st, 1) or ito.remember(function() return ito.ScrollState() end)
      node.offset = state.offset or 0
      node.follow = ((last_mod(view, "follow_end") ~= nil) or state.follow == true) and not state.away
      node.scrolled = handler(function(offset, at_end)
        state.offset = offset
        state.away = not at_end
      end)
    elseif kind == "layout" then
      node.measure = handler(view.measure)
    end
  elseif kind == "fold" then
    local open = ito.state(false)
    local rows = resolve_list(view.rows, {})
    local hidden = #rows - view.limit
    if hidden > 0 and not open.value then
      local shown = {}
      for i = 1, view.limit do shown[i] = rows[i] end
      local more = type(view.more) == "string" and string.format(view.more, hidden) or nil
      shown[#shown + 1] = more and { kind = "text", spans = { { text = more, style = { dim = true } } },
        mods = { { "on_tap", handler(function() open.value = true end) } } } or resolve(view.more)
      rows = shown
    end
    node = { kind = "vstack", children = rows }
  elseif kind == "spinner" then
    node = { kind = "spinner" }
  elseif kind == "markdown" then
    node = { kind = "markdown", text = view.text }
  elseif kind == "textfield" then
    local state = view.bound
    local ph = last_mod(view, "placeholder")
    local submit = last_mod(view, "on_submit")
    node = {
      kind = "textfield",
      value = tostring(state.value or ""),
      placeholder = ph and arg(ph, 1) or "",
      hidden = last_mod(view, "hidden") ~= nil,
      change = handler(function(text) state.value = text end),
      submit = submit and handler(function(text) return arg(submit, 1)(text) end) or nil,
    }
  elseif kind == "list" then
    local sel = last_mod(view, "selection")
    local selection = sel and arg(sel, 1) or ito.state(1)
    local items = view.items
    if type(items) == "table" and items.value ~= nil and getmetatable(items) == State then items = items.value end
    local idf = last_mod(view, "item_id")
    local choose = last_mod(view, "on_choose")
    local current = selection.value
    -- The selection holds an index, or an item id with :item_id(fn).
    local index = 1
    if idf then
      for i, item in ipairs(items) do if arg(idf, 1)(item) == current then index = i end end
    elseif type(current) == "number" then
      index = current
    end
    if index > #items then index = #items end
    if index < 1 then index = 1 end
    local rows = {}
    for i, item in ipairs(items) do
      local v = view.row and view.row(item, i == index) or tostring(item)
      rows[#rows + 1] = resolve(v) or { kind = "text", spans = {} }
    end
    local footer = last_mod(view, "footer")
    node = {
      kind = "list",
      rows = rows,
      selected = #items > 0 and index or 0,
      passive = last_mod(view, "passive") ~= nil,
      footer = footer and resolve(arg(footer, 1)) or nil,
      select = handler(function(i)
        if idf then selection.value = arg(idf, 1)(items[i]) else selection.value = i end
      end),
      choose = choose and handler(function(i) return arg(choose, 1)(items[i], i) end) or nil,
    }
  elseif kind == "provide" then
    local stack = rawget(view.loc, "_stack")
    stack[#stack + 1] = view.value
    node = resolve(view.content)
    stack[#stack] = nil
    return node
  elseif kind == "subviews" then
    local kids = {}
    local content = view.content
    for _, c in ipairs(is_view(content) and content.children or children_of(content)) do kids[#kids + 1] = c end
    node = resolve(view.fn(kids))
    if node == nil then return nil end
  elseif kind == "subcompose" then
    node = resolve(view.fn(rendering.width))
    if node == nil then return nil end
  elseif kind == "toolbar_host" then
    local saved = rendering.toolbars
    rendering.toolbars = {}
    local content = resolve(view.content)
    local bars = rendering.toolbars
    rendering.toolbars = saved
    node = { kind = "vstack", children = {} }
    local function row(placement)
      local out = {}
      for _, item in ipairs(bars[placement] or {}) do
        local n = resolve(item.content)
        if n then out[#out + 1] = n end
      end
      bars[placement] = nil
      return out
    end
    local leading, trailing = row("top_bar_leading"), row("top_bar_trailing")
    if #leading + #trailing > 0 then
      local top = {}
      for _, n in ipairs(leading) do top[#top + 1] = n end
      top[#top + 1] = { kind = "spacer" }
      for _, n in ipairs(trailing) do top[#top + 1] = n end
      node.children[#node.children + 1] = { kind = "hstack", children = top, spacing = 1 }
    end
    if content then
      -- The content takes the rows the bars leave: a box too short for it cuts the content,
      -- never its foot.
      node.children[#node.children + 1] = { kind = "vstack", children = { content }, mods = { { "grow" } } }
    end
    for _, placement in ipairs({ "keyboard", "bottom_bar" }) do
      local items = row(placement)
      if #items > 0 then node.children[#node.children + 1] = { kind = "hstack", children = items, spacing = 1 } end
    end
    for placement in pairs(bars) do
      rendering.root.unshown[placement] = true
    end
  elseif kind == "toolbar_items" then
    local bars = rendering.toolbars or {}
    local views = {}
    for _, item in ipairs(bars[view.placement] or {}) do views[#views + 1] = item.content end
    bars[view.placement] = nil
    local arranged = view.arrange and view.arrange(views) or ito.HStack(views)
    node = resolve(arranged)
    if node == nil then return nil end
  else
    error("ito: cannot draw a view of kind " .. tostring(kind))
  end

  node = resolve_mods(view, node)
  if pref_overlay then
    local key, fn = arg(pref_overlay, 1), arg(pref_overlay, 2)
    local value = reduce_pref(key, rendering.prefs[key])
    -- Preferences set inside still reach hosts further out.
    for k, vs in pairs(rendering.prefs) do
      local outer = saved_prefs[k] or {}
      for _, v in ipairs(vs) do outer[#outer + 1] = v end
      saved_prefs[k] = outer
    end
    rendering.prefs = saved_prefs
    local over = resolve(fn(value))
    if over then
      node = { kind = "zstack", children = { node, over }, mods = {} }
    end
  end
  return node
end

resolve = function(v)
  if v == nil or v == false then return nil end
  if type(v) == "function" then return resolve(v()) end
  if type(v) == "string" or type(v) == "number" then return resolve_view(ito.Text(tostring(v))) end
  if is_spacer(v) then return resolve_view(make("spacer", { mods = v.mods })) end
  if is_view(v) then return resolve_view(v) end
  if ito.is_toolbar_item(v) then return resolve(v.content) end
  if type(v) == "table" and v.kind ~= nil and getmetatable(v) == nil then return v end -- already plain
  error("ito: not a view: " .. tostring(v) .. " (a " .. type(v) .. ")")
end

-- Roots: what the screen draws --------------------------------------------------------

local Root = {}
Root.__index = Root

-- ito.root(content): `content` is a view or a function returning one.
function ito.root(content)
  return setmetatable({ content = content, memo = {}, handlers = {}, seen = {}, unshown = {}, told = {} }, Root)
end

-- root:render(width) → the plain tree, or nil for nothing; errors propagate.
function Root:render(width)
  local saved = rendering
  self.handlers = {}
  self.seen = {}
  rendering = { root = self, scope = { path = "", n = 0 }, prefs = {}, width = width or 80, toolbars = {} }
  local ok, node = pcall(resolve, self.content)
  local declared = rendering.toolbars
  rendering = saved
  if not ok then error(node, 0) end
  -- Toolbar items declared where no ToolbarHost drew them.
  for placement in pairs(declared) do self.unshown[placement] = true end
  -- State of components no longer drawn is forgotten.
  for key in pairs(self.memo) do if not self.seen[key] then self.memo[key] = nil end end
  return node
end

-- root:fire(id, ...): the screen calls a callback of the last render.
function Root:fire(id, ...)
  local fn = self.handlers[id]
  if fn then return fn(...) end
end

-- root:unshown_placements(): toolbar placements declared but drawn by no host, once each.
function Root:unshown_placements()
  local out = {}
  for p in pairs(self.unshown) do
    if not self.told[p] then
      self.told[p] = true
      out[#out + 1] = p
    end
  end
  self.unshown = {}
  return out
end

-- Window(screen, invalidate): ito views on a screen of `ito.open()` (uji.tty.open), for a
-- program of its own. `invalidate()` is called whenever a state a view read changes: draw
-- again then. window:render(content) paints and flushes; window:key(event) gives an input
-- key to the focused control (a TextField, List or ScrollView; Tab moves the focus) and
-- draws again if it used it. The mouse (each takes x, y or the mouse event itself):
-- window:press(x, y) runs the on_tap under the cell and starts a selection there;
-- window:drag(x, y) selects from the press to the cell, drawn in ito.SelectionHighlight;
-- window:release(x, y) ends it, copies the selected text through the terminal (OSC 52)
-- and gives it; window:wheel(x, y, delta) scrolls the ScrollView under the cell (delta < 0:
-- up). Each answers whether the window used the event.
local WindowMT = {}
WindowMT.__index = WindowMT

-- How a mouse selection of a Window is drawn: a TextStyle (replace it to restyle).
ito.SelectionHighlight = ito.TextStyle({ reverse = true })

function ito.Window(screen, invalidate_fn)
  assert(type(screen) == "table" and screen.paint, "ito.Window expects a screen of ito.open()")
  local window = setmetatable({ screen = screen, invalidate = invalidate_fn or function() end }, WindowMT)
  windows[window] = true
  return window
end
function WindowMT:render(content)
  if content ~= nil then self.content = content end
  self.screen:paint(self.content)
  self.screen:flush()
end
-- A mouse event or x, y (and the wheel's delta).
local function cell(x, y, delta)
  if type(x) == "table" then return x.x, x.y, x.delta end
  return x, y, delta
end
function WindowMT:press(x, y)
  x, y = cell(x, y)
  if self.selected and self.screen.select then
    self.screen:select(nil)
    self.screen:flush()
  end
  self.anchor, self.selected = { x, y }, false
  return self.screen:clicked(x, y)
end
local function select_to(window, x, y)
  window.screen:select(window.anchor[1], window.anchor[2], x, y, style_spec(ito.SelectionHighlight))
end
function WindowMT:drag(x, y)
  x, y = cell(x, y)
  if self.anchor == nil or self.screen.select == nil then return false end
  self.selected = true
  select_to(self, x, y)
  self.screen:flush()
  return true
end
function WindowMT:release(x, y)
  x, y = cell(x, y)
  if self.anchor == nil or not self.selected then
    self.anchor = nil
    return false
  end
  select_to(self, x, y)
  self.anchor = nil
  local text = self.screen:selection()
  if text == nil or text == "" then return false end
  self.screen:copy(text)
  self.screen:flush()
  return true, text
end
function WindowMT:wheel(x, y, delta)
  x, y, delta = cell(x, y, delta)
  if self.screen.wheel == nil or type(delta) ~= "number" or delta == 0 then return false end
  local used = self.screen:wheel(x, y, delta)
  if used then self:render() end
  return used
end
function WindowMT:key(event)
  if type(event) ~= "table" or event.type ~= "key" or self.screen.key == nil then return false end
  local used = self.screen:key(event)
  if used then self:render() end
  return used
end
function WindowMT:close() windows[self] = nil end

-- ito.open(): the terminal itself (uji.tty.open).
function ito.open(...)
  if uji and uji.tty and uji.tty.open then return uji.tty.open(...) end
  return nil, "ito.open: this uji has no raw terminal access (uji.tty.open)"
end

-- spans.wrap(spans, width): the spans cut into lines of at most `width` cells.
ito.spans = {}
local CHAR = "[%z\1-\127\194-\244][\128-\191]*"
function ito.spans.wrap(spans, width)
  assert(type(width) == "number" and width > 0, "ito.spans.wrap expects a width > 0")
  local lines, line, used = {}, {}, 0
  local function push(text, style)
    if text ~= "" then line[#line + 1] = { text, style } end
  end
  for _, span in ipairs(spans) do
    local text = type(span) == "string" and span or (span.text or span[1] or "")
    local style = type(span) == "table" and (span.style or span[2]) or nil
    local buf = {}
    for ch in tostring(text):gmatch(CHAR) do
      if ch == "\n" or used >= width then
        push(table.concat(buf), style)
        buf = {}
        lines[#lines + 1] = line
        line, used = {}, 0
      end
      if ch ~= "\n" then
        buf[#buf + 1] = ch
        used = used + 1
      end
    end
    push(table.concat(buf), style)
  end
  lines[#lines + 1] = line
  return lines
end

return ito
