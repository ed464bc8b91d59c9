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
-- A transcript entry's view gets the message as render_message does ({type, text, width,
-- name?, tool_calls?}); the others get the props written above each below. Each returns an
-- ito view. One that raises falls back to uji's own drawing, and the error goes to the
-- diagnostics log.

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

-- A tool call while it runs: {name, text (its subject), progress (its live lines), width}.
function M.Running(props)
  local t = theme()
  local rows = lines_of(props.progress ~= "" and props.progress or "running…")
  local out = { ito.Text({ { t.symbols.tool .. " ", { foreground = t.colors.code } }, { props.name or "tool", { bold = true } },
    " " .. props.text }) }
  for i, row in ipairs(rows) do
    out[#out + 1] = ito.Text((i == 1 and ("  " .. t.symbols.branch .. " ") or "    ") .. row):foreground(t.colors.muted)
  end
  return ito.VStack(out)
end

-- The diff a tool's result shows: {text (a unified diff), name (the tool), path?, width}.
function M.Diff(props)
  local t = theme()
  local rows = {}
  for _, row in ipairs(lines_of(props.text)) do
    if not (row:sub(1, 4) == "--- " or row:sub(1, 4) == "+++ ") then
      local first = row:sub(1, 1)
      local color = first == "+" and t.colors.diff.added or first == "-" and t.colors.diff.removed
        or row:sub(1, 2) == "@@" and t.colors.diff.hunk or t.colors.diff.context
      rows[#rows + 1] = ito.Text(row):foreground(color)
    end
  end
  return ito.Fold({ rows = rows, limit = t.limits.diff_preview, more = t.text.more_lines }):padding({ left = 4 })
end

-- The answer while it streams: {text (the markdown so far), width}.
function M.Partial(props) return ito.Markdown(props.text) end

-- Where older messages were summarised: {text, summary, width}.
function M.Compaction(props) return ito.Text("compacted: " .. props.text):foreground(theme().colors.muted) end

-- The notice of a background job that ended (the jobs plugin): {id, command, status, text
-- (the notice: "Background job 2 (`make`) finished, exit 0."), width}.
function M.Job(props) return ito.Text(props.text):foreground(theme().colors.notice) end

-- Under the transcript while the reader is scrolled up and more came: {count, text, width}.
function M.Jump(props)
  return ito.HStack({ ito.Spacer, ito.Text(props.text):bold():foreground(theme().colors.notice), ito.Spacer })
end

-- The blocks of an answer's markdown (the top-level ones; lists and quotes draw as uji draws them).
-- A paragraph: {text (plain), markdown (its source), width}.
function M.Paragraph(props) return ito.Markdown(props.markdown) end

-- {level (1-6), text, width}
function M.Heading(props)
  local t = theme()
  return ito.Text(props.text):style(t.styles["heading" .. props.level] or t.styles.heading6)
end

-- {language ("" when none), text, width}
function M.CodeBlock(props)
  local t = theme()
  local rows = {}
  if props.language ~= "" then rows[1] = ito.Text(props.language):foreground(t.colors.muted) end
  for _, row in ipairs(lines_of(props.text)) do rows[#rows + 1] = ito.Text(row):style(t.styles.code) end
  return ito.VStack(rows):padding({ left = 2 })
end

-- A `$$ ... $$` block: {text (the TeX inside), width}.
function M.MathBlock(props)
  return ito.Lines(lines_of(props.text)):foreground(theme().colors.code):italic():padding({ left = 2 })
end

-- A row of a table: {cells (strings), header (the first row), widths (each column's), width}.
function M.TableRow(props)
  local cells = {}
  for i, cell in ipairs(props.cells) do
    local text = ito.Text(cell):width(props.widths[i] or #cell)
    cells[#cells + 1] = props.header and text:bold() or text
  end
  return ito.HStack(cells):spacing(2)
end

-- {width}
function M.Rule() return ito.Text("─"):repeating():foreground(theme().colors.muted) end

-- The activity row while a turn or a `!` command runs: {text ("Working (3s)"), seconds,
-- spinner (the frame), hint, width}.
function M.Activity(props)
  local t = theme()
  return ito.Text({ { props.spinner .. " ", { foreground = t.colors.code } }, { props.text, { foreground = t.colors.text } },
    { props.hint ~= "" and ("  " .. props.hint) or "", { foreground = t.colors.muted } } })
end

-- A short note in the activity row ("copied 2 lines"): {text, width}.
function M.Flash(props) return ito.Text(props.text):foreground(theme().colors.notice) end

-- The screen and its panels. Their keys and answers stay uji's; these draw them.

-- The screen, top to bottom: `screen` gives its regions (uji's own widgets), to put in an
-- ito.VStack in any order, with views of your own between them.
function M.Screen(screen)
  return ito.VStack({ screen.top_bar(), screen.transcript(), screen.activity(), screen.modals(), screen.keyboard(),
    screen.composer(), screen.bottom_bar() })
end

-- What sits above the composer's text, in place of its rules: {width, placeholder}.
function M.Input(props) return ito.Text(string.rep("─", props.width)):foreground(theme().colors.muted) end

-- A row of uji.ui.select's list (SelectList) or uji.ui.pick's (Picker):
-- {label, index, selected, current, width}.
local function list_row(props)
  local t = theme()
  local out = {
    { props.selected and (t.symbols.pointer .. " ") or "  ", { foreground = t.colors.accent } },
    { props.label, props.selected and { foreground = t.colors.accent, bold = true } or {} },
  }
  if props.current then out[#out + 1] = { " (current)", { foreground = t.colors.muted } } end
  return ito.Text(out)
end
M.SelectList = list_row
M.Picker = list_row

-- A row of /sessions: {title, ago ("3m ago"), id, label, index, selected, current, width}.
function M.Sessions(props)
  return ito.HStack({ list_row({ label = props.title, selected = props.selected, current = props.current }),
    ito.Spacer, ito.Text(props.ago .. "  " .. props.id):foreground(theme().colors.muted) })
end

-- A row of the `/` suggestions: {name, desc, selected, width}.
function M.Suggestions(props)
  return ito.HStack({ list_row({ label = "/" .. props.name, selected = props.selected }),
    ito.Text(props.desc ~= "" and "  " .. props.desc or ""):foreground(theme().colors.muted) })
end

-- The approval question, frame and all: {title, body, preview?, choices = {{label, key,
-- kind}}, selected (the highlighted choice), hint, width}. y, n, the numbers and Enter
-- answer it whatever it looks like.
function M.Approval(props)
  local t = theme()
  local rows = {}
  if props.body ~= "" then rows[#rows + 1] = ito.Text(props.body) end
  if props.preview then rows[#rows + 1] = ito.Lines(lines_of(props.preview)):foreground(t.colors.muted) end
  rows[#rows + 1] = ito.Text("")
  for i, choice in ipairs(props.choices) do
    local row = list_row({ label = i .. ". " .. choice.label, selected = i == props.selected })
    rows[#rows + 1] = ito.HStack({ row, ito.Text("  " .. choice.key):foreground(t.colors.muted) })
  end
  rows[#rows + 1] = ito.Lines(lines_of(props.hint)):foreground(t.colors.muted)
  return ito.VStack(rows):padding({ left = 1, right = 1 }):border("rounded"):title(props.title)
end

-- What sits above a prompt's text field (uji.ui.prompt), in place of its frame: {title,
-- hidden, width}.
function M.PromptField(props) return ito.Text(props.title):bold() end

return M
