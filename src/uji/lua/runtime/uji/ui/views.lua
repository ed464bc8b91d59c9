-- The transcript's replaceable views, drawn with ito in the theme's colours and words.
-- uji draws its entries itself until a config or a theme replaces one of these:
--
--   local base = uji.ui.Notice
--   uji.ui.Notice = function(props) return base(props):border("rounded") end
--   uji.ui.UserMessage = function(props)
--     local ito = require("ito")
--     return ito.Text("you: " .. props.text):bold()
--   end
--
-- or in a theme: require("uji.themes.default"){ views = { UserMessage = function(props) ... end } }.
-- Each gets the message as render_message does ({type, text, width, name?, tool_calls?})
-- and returns an ito view. One that raises falls back to uji's own drawing, and the error
-- goes to the diagnostics log.

local ito = require("ito")

local M = {}

local function theme() return ito.theme() end

local function lines_of(text)
  local out = {}
  for line in (tostring(text or "") .. "\n"):gmatch("(.-)\n") do out[#out + 1] = line end
  if out[#out] == "" then out[#out] = nil end
  return out
end

function M.UserMessage(props)
  local t = theme()
  return ito.Text(t.symbols.prompt .. " " .. props.text):background(t.colors.user_bg)
end

function M.ToolCall(props)
  local t = theme()
  return ito.Text({ { t.symbols.tool .. " ", { foreground = t.colors.accent } }, { props.name or "tool", { bold = true } },
    " " .. props.text })
end

function M.ToolOutput(props)
  local t = theme()
  return ito.VStack({
    ito.Text({ { t.symbols.tool .. " ", { foreground = t.colors.accent } }, { props.name or "tool", { bold = true } } }),
    ito.Fold({ rows = lines_of(props.text), limit = t.limits.tool_preview, more = t.text.more_lines })
      :padding({ left = 2 }):foreground(t.colors.muted),
  })
end

function M.Shell(props) return ito.Text("! " .. props.text) end

function M.SystemMessage(props) return ito.Text(props.text):foreground(theme().colors.muted) end

function M.ErrorMessage(props) return ito.Text(props.text):foreground(theme().colors.error) end

function M.Notice(props) return ito.Text(props.text):foreground(theme().colors.notice) end

function M.Thinking(props) return ito.Text(props.text):foreground(theme().colors.muted):italic() end

function M.Queued(props)
  local t = theme()
  return ito.Text({ { "queued ", { foreground = t.colors.muted } }, t.symbols.prompt .. " " .. props.text })
end

return M
