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

return M
