-- The status line: ito views of the session for the bottom bar (or any toolbar),
-- shipped as an example of a plugin written against the public API alone.
--
--   local statusline = require("uji.plugins.statusline")
--   statusline.setup()   -- statusline.Default as the bottom_bar item
--
--   -- or a bar of your own: segments that draw nothing get no separator; a Spacer
--   -- splits the bar into left, centre and right.
--   local ito = require("ito")
--   uji.ui.toolbar({ ito.ToolbarItem("bottom_bar", function()
--     return statusline.Bar({ statusline.Model(), statusline.Context(), ito.Spacer, statusline.Cwd() },
--       { separator = " | " })
--   end) })
--
-- Segments: Cwd, Model, Effort, Context (in the notice colour from 80 %), Tokens, Cache
-- (the last request's cache hit rate), Turns, and Logo (while the session is empty).

local ito = require("ito")

local M = {}

local function muted() return ito.theme().colors.muted end

local function short(n)
  if n >= 1000000 then return string.format("%.1fM", n / 1000000) end
  if n >= 1000 then return string.format("%.1fk", n / 1000) end
  return tostring(n)
end

-- The working directory, with ~ for home; a long one keeps its end.
M.Cwd = ito.view(function()
  local info = uji.session.info()
  local dir = info and info.short_directory or uji.os.cwd()
  if #dir > 40 then dir = "…" .. dir:sub(-39) end
  return ito.Text(dir):foreground(muted())
end)

-- provider/model.
M.Model = ito.view(function()
  local m = uji.model.current()
  if not m or not m.model or m.model == "" then return ito.Text("no model"):foreground(ito.theme().colors.notice) end
  return ito.Text(m.provider .. "/" .. m.model):foreground(ito.theme().colors.accent)
end)

-- The reasoning effort, when the model has one.
M.Effort = ito.view(function()
  local m = uji.model.current()
  if not m or not m.effort then return nil end
  return ito.Text("effort " .. m.effort):foreground(muted())
end)

-- How full the context window is; the notice colour from 80 %.
M.Context = ito.view(function()
  local c = uji.session.context()
  if not c then return nil end
  if not c.window or c.window == 0 then return ito.Text("context " .. short(c.used)):foreground(muted()) end
  local pct = math.floor(100 * c.used / c.window)
  local colour = pct >= 80 and ito.theme().colors.notice or muted()
  return ito.Text(string.format("context %d%%", pct)):foreground(colour)
end)

-- Tokens sent and received in the session.
M.Tokens = ito.view(function()
  local u = uji.session.usage()
  if not u or (u.total or 0) == 0 then return nil end
  return ito.Text(short(u.total) .. " tokens"):foreground(muted())
end)

-- The last request's cache hit rate.
M.Cache = ito.view(function()
  local u = uji.session.usage()
  local last = u and u.last
  if not last or (last.input or 0) + (last.cache_read or 0) == 0 then return nil end
  local read = last.cache_read or 0
  local pct = math.floor(100 * read / (read + (last.input or 0) + (last.cache_write or 0)))
  return ito.Text(string.format("cache %d%%", pct)):foreground(muted())
end)

-- How many messages the user has sent.
M.Turns = ito.view(function()
  local n = 0
  for _, m in ipairs(uji.session.messages()) do if m.type == "user" then n = n + 1 end end
  if n == 0 then return nil end
  return ito.Text(n == 1 and "1 turn" or (n .. " turns")):foreground(muted())
end)

-- "uji", while the session is empty.
M.Logo = ito.view(function()
  if #uji.session.messages() > 0 then return nil end
  return ito.Text("uji"):bold():foreground(ito.theme().colors.accent)
end)

-- Bar(children, {separator = "  ·  "}): the segments that drew something, separated;
-- a Spacer among them splits the bar.
function M.Bar(children, opts)
  local separator = (opts and opts.separator) or "  ·  "
  return ito.SubcomposeLayout(function()
    local row, shown = {}, false
    for _, child in ipairs(children) do
      if child == ito.Spacer or (type(child) == "table" and child.kind == "spacer") then
        row[#row + 1] = child
        shown = false
      else
        local probe = ito.root(child):render(200)
        if probe ~= nil then
          if shown then row[#row + 1] = ito.Text(separator):foreground(muted()) end
          row[#row + 1] = child
          shown = true
        end
      end
    end
    return ito.HStack(row):spacing(0)
  end)
end

-- The default bar: logo, model, effort, context on the left; the directory on the right.
function M.Default()
  return M.Bar({ M.Logo(), M.Model(), M.Effort(), M.Context(), M.Tokens(), ito.Spacer, M.Cwd() })
end

local handle = nil

-- setup(): the default bar as the bottom_bar item (again: replaces it).
function M.setup(opts)
  opts = opts or {}
  if handle then handle:remove() end
  handle = uji.ui.toolbar({ ito.ToolbarItem("bottom_bar", opts.bar or M.Default):id("statusline") })
  return handle
end

return M
