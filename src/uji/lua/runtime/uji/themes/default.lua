-- The default theme, and the builder of every other one:
--
--   return require("uji.themes.default"){
--     name = "mine",
--     colors = { accent = "#7aa2f7", user_bg = "#24283b" },
--     styles = function(c) return { heading1 = { foreground = c.accent, bold = true } } end,
--   }
--
-- What a theme leaves out comes from the default. Unknown keys are errors. Used with
-- uji.ui.configure{theme = "mine"} (lua/uji/themes/mine.lua in the config or a pack).

local KEYS = {
  name = true, colors = true, styles = true, symbols = true, borders = true, text = true,
  limits = true, options = true, views = true,
}

local colors = {
  text = "#d4d4d4", muted = "#808080", code = "#e0af68", accent = "cyan",
  user_bg = "#343541", selected_bg = "#3a3a4a", cursor = "white",
  error = "#e06c75", notice = "#d19a66",
  syntax = {
    keyword = "#c678dd", string = "#98c379", number = "#d19a66", comment = "#5c6370",
    ["function"] = "#61afef", type = "#e5c07b", operator = "#56b6c2",
  },
  diff = { added = "#98c379", removed = "#e06c75", hunk = "cyan", context = "#808080" },
}

local function default_styles(c)
  return {
    user = { background = c.user_bg }, thinking = { foreground = c.muted, italic = true, dim = true },
    heading1 = { foreground = c.accent, bold = true, underline = true }, heading2 = { foreground = c.accent, bold = true },
    heading3 = { bold = true }, heading4 = { bold = true }, heading5 = { bold = true }, heading6 = { bold = true },
    code = { foreground = c.code }, link = { foreground = c.link or c.accent, underline = true },
    quote = { foreground = c.muted, italic = true }, muted = { foreground = c.muted },
    error = { foreground = c.error }, notice = { foreground = c.notice },
    ["diff.added"] = { foreground = c.diff.added }, ["diff.removed"] = { foreground = c.diff.removed },
    ["diff.hunk"] = { foreground = c.diff.hunk }, ["diff.context"] = { foreground = c.diff.context },
    ["call.name"] = { bold = true }, ["call.subject"] = { foreground = c.text }, ["call.output"] = { foreground = c.muted },
    confirm_title = { bold = true }, confirm_selected = { foreground = c.accent, bold = true },
    confirm_option = { foreground = c.text }, selected = { background = c.selected_bg },
    pointer = { foreground = c.accent }, spinner = { foreground = c.code }, activity = { foreground = c.text },
    status = { foreground = c.muted }, prompt = { foreground = c.accent, bold = true },
  }
end

local base = {
  name = "default",
  colors = colors,
  symbols = {
    spinner = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏", tool = "⏺", branch = "⎿", pointer = "›", prompt = ">",
    bullets = { "•", "◦", "▪" },
  },
  borders = { composer = "horizontal", modal = "rounded" },
  -- The screen's words: the approval's choices, the activity row, a cut preview, the
  -- composer's image marker and a background job's name. Each keeps its one %d.
  text = {
    yes = "Yes", no = "No", proceed = "proceed", tell = "and tell uji what to do differently",
    working = "Working (%ds)", job = "job %d", more_lines = "+%d lines", image = "[image #%d]",
  },
  -- Seconds a spinner frame shows; rows of the `/` suggestions, a tool's output, a diff,
  -- the composer and a picker; a floating overlay's share of the screen (width, height);
  -- a paste longer than these lines or characters goes in as a marker.
  limits = {
    spinner = 0.08, suggest_rows = 5, tool_preview = 8, diff_preview = 20, diff_context = 3,
    input_rows = 10, select_rows = 13, float = { 0.9, 0.8 }, paste_lines = 1, paste_chars = 80,
  },
  options = {},
  views = {},
}

local function copy(t)
  if type(t) ~= "table" or getmetatable(t) ~= nil then return t end
  local out = {}
  for k, v in pairs(t) do out[k] = copy(v) end
  return out
end

-- `over`'s keys on a copy of `under` (nested tables merge; lists replace).
local function merge(under, over)
  local out = copy(under) or {}
  for k, v in pairs(over or {}) do
    if type(v) == "table" and getmetatable(v) == nil and v[1] == nil and type(out[k]) == "table" then
      out[k] = merge(out[k], v)
    else
      out[k] = copy(v)
    end
  end
  return out
end

local Theme = {}

local function build(spec)
  if type(spec) ~= "table" then error("a theme is built from a table {name, colors, ...}", 2) end
  for k in pairs(spec) do
    if not KEYS[k] then
      error("theme: unknown key `" .. tostring(k) .. "` (known: name, colors, styles, symbols, borders, text, limits, options, views)", 2)
    end
  end
  local theme = {}
  theme.name = spec.name or "custom"
  theme.colors = merge(colors, spec.colors)
  local styles = default_styles(theme.colors)
  local extra = spec.styles
  if type(extra) == "function" then extra = extra(theme.colors) end
  theme.styles = merge(styles, extra)
  for _, key in ipairs({ "symbols", "borders", "text", "limits", "options", "views" }) do
    theme[key] = merge(base[key], spec[key])
  end
  return setmetatable(theme, Theme)
end

Theme.__index = Theme
Theme.__call = function(_, spec) return build(spec) end

local default = build({ name = "default" })
return default
