-- uji.status: the older footer-segment registry of the original, kept for the configs
-- written against it. Segments added here draw in the bottom bar (an ito toolbar item),
-- by priority, separated by " · ".
local uji, host, lib = ...
local check, is_callable = lib.check, lib.is_callable

local SPINNER = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }
local segments = {} -- name → { render, priority, order }
local added = 0
local bar = nil

local function sorted()
  local list = {}
  for name, s in pairs(segments) do list[#list + 1] = { name = name, s = s } end
  table.sort(list, function(a, b)
    if a.s.priority ~= b.s.priority then return a.s.priority < b.s.priority end
    return a.s.order < b.s.order
  end)
  return list
end

uji.status = {
  provider = function() local m = uji.model.current() return m and m.provider end,
  model = function() local m = uji.model.current() return m and m.model end,
  effort = function() local m = uji.model.current() return m and m.effort end,
  -- "12%" of the context window (or the tokens used when the window is unknown).
  context = function()
    local c = uji.session.context()
    if not c then return nil end
    if not c.window or c.window == 0 then return tostring(c.used) end
    return string.format("%d%%", math.floor(100 * c.used / c.window))
  end,
  queue = function() return #uji.session.queue() end,
  state = function() return uji.session.state() end,
  elapsed = function() return uji.session.elapsed() end,
  loader_frame = function() return SPINNER[math.floor(uji.os.clock() / 0.08) % #SPINNER + 1] end,

  -- add(name, render, {priority = 50}): render() returns the segment's text (nil: none).
  add = function(name, render, opts)
    check(type(name) == "string" and name ~= "", "uji.status.add: the name must be a non-empty string")
    check(is_callable(render), "uji.status.add: render must be a function")
    check(opts == nil or type(opts) == "table", "uji.status.add: options must be a table {priority = ...}")
    added = added + 1
    segments[name] = { render = render, priority = (opts and opts.priority) or 50, order = added }
    if bar == nil then
      local ito = require("ito")
      bar = uji.ui.toolbar({ ito.ToolbarItem("bottom_bar", function()
        return ito.Text(uji.status.render()):foreground(ito.theme().colors.muted)
      end):id("uji.status") })
    end
  end,
  remove = function(name)
    local had = segments[name] ~= nil
    segments[name] = nil
    if next(segments) == nil and bar then bar:remove() bar = nil end
    return had
  end,
  list = function()
    local out = {}
    for i, e in ipairs(sorted()) do out[i] = e.name end
    return lib.mark_array(out)
  end,
  -- render(names?): the segments' texts joined by " · " (those that gave nothing left out).
  render = function(names)
    local parts = {}
    local wanted = nil
    if names then wanted = {} for _, n in ipairs(names) do wanted[n] = true end end
    for _, e in ipairs(sorted()) do
      if wanted == nil or wanted[e.name] then
        local ok, text = pcall(e.s.render)
        if ok and text ~= nil and text ~= "" then parts[#parts + 1] = tostring(text) end
      end
    end
    return table.concat(parts, " · ")
  end,
}
