-- Telescope: a fuzzy finder over files, past messages and file contents, shipped as an
-- example of a plugin written against the public API alone (uji.ui.pick, uji.job.start,
-- uji.ui.exec). Use it from your init.lua:
--
--   require("uji.plugins.telescope").setup{}
--
-- Ctrl+P  telescope_find     pick a file (with a preview) and open it in your editor
-- Ctrl+R  telescope_history  pick one of your past messages and put it back in the composer
-- Ctrl+F  telescope_search   live grep: results follow what you type; Enter opens the
--                            file at the line
-- /find [text]   /history   /grep [pattern]   the same, as commands
--
-- `editor` defaults to UJI_EDITOR, then VISUAL, then EDITOR (then vi); it is run as
-- `<editor> +<line> <file>`. `keys = false` leaves Ctrl+P, Ctrl+R and Ctrl+F as they were
-- (the actions and commands stay). Files come from `git ls-files` in a git repository,
-- else `find`; the search is `rg` when it is installed, else `grep`. Copy this file to
-- ~/.config/uji/lua/ and change it as you like.

local M = {}

local defaults = {
  editor = nil,
  keys = true,
  limit = 2000, -- items a list holds at most
}

local function editor()
  local chosen = M.opts.editor
  for _, var in ipairs({ "UJI_EDITOR", "VISUAL", "EDITOR" }) do
    if chosen then break end
    local value = uji.os.env(var)
    if value and value ~= "" then chosen = value end
  end
  return chosen or "vi"
end

local function quote(text) return "'" .. text:gsub("'", "'\\''") .. "'" end

-- Opens `path` (at `line`) in the editor, the screen handing it the terminal.
function M.open(path, line)
  if path:sub(1, 1) ~= "/" then path = uji.os.cwd() .. "/" .. path end
  local cmd = editor() .. (line and " +" .. line or "") .. " " .. quote(path)
  uji.ui.exec(cmd)
end

-- Runs `argv` and gives its output lines (at most `limit`) to `done`; the job's handle.
local function collect(argv, done)
  local lines = {}
  return uji.job.start({
    cmd = argv,
    on_stdout = function(line)
      if #lines < M.opts.limit and line ~= "" then lines[#lines + 1] = line end
    end,
    on_exit = function() done(lines) end,
  })
end

-- Waits for `argv`'s output lines (inside a task).
local function output(argv)
  local ready = uji.promise()
  collect(argv, function(lines) ready:resolve(lines) end)
  return ready:await()
end

local function has(program)
  return #output({ "sh", "-c", "command -v " .. program .. " || true" }) > 0
end

-- The project's files, relative to the working directory.
function M.files()
  local listed = output({ "sh", "-c", "git ls-files --cached --others --exclude-standard 2>/dev/null" })
  if #listed > 0 then return listed end
  listed = output({ "sh", "-c", "find . -type f -not -path '*/.git/*' 2>/dev/null | sed 's|^\\./||' | sort" })
  return listed
end

-- A file's first lines, for the preview.
local function head(path)
  local f = io.open(path:sub(1, 1) == "/" and path or uji.os.cwd() .. "/" .. path, "r")
  if not f then return { "(cannot read " .. path .. ")" } end
  local out = {}
  for line in f:lines() do
    out[#out + 1] = line
    if #out >= 12 then break end
  end
  f:close()
  return out
end

function M.find(text)
  local files = M.files()
  if text and text ~= "" then
    local wanted = text:lower()
    local kept = {}
    for _, path in ipairs(files) do
      if path:lower():find(wanted, 1, true) then kept[#kept + 1] = path end
    end
    files = kept
  end
  if #files == 0 then return uji.notify("telescope: no files" .. (text and text ~= "" and " match " .. text or "")) end
  local path = uji.ui.pick({ title = "Find a file", items = files, preview = head })
  if path then M.open(path) end
end

-- Your past messages, newest first, each once: this session's, then the directory's others.
function M.messages()
  local seen, out = {}, {}
  local function add(messages)
    for i = #messages, 1, -1 do
      local m = messages[i]
      if m.type == "user" and m.text and m.text:find("%S") and not seen[m.text] then
        seen[m.text] = true
        out[#out + 1] = m.text
      end
    end
  end
  local open = uji.session.info()
  if open then add(uji.session.messages()) end
  for _, row in ipairs(uji.session.list()) do
    if not open or row.id ~= open.id then add(uji.session.messages({ session = row.id })) end
  end
  return out
end

function M.history()
  local messages = M.messages()
  if #messages == 0 then return uji.notify("telescope: no past messages") end
  local text = uji.ui.pick({
    title = "Past messages",
    items = messages,
    label = function(m) return (m:gsub("%s+", " ")) end,
    preview = function(m) return m end,
  })
  if text then uji.input.set(text) end
end

-- The grep command for `pattern`: "path:line:text" lines.
local function grep_command(pattern)
  if M.rg == nil then M.rg = has("rg") end
  if M.rg then return { "rg", "--line-number", "--no-heading", "--color", "never", "--smart-case", "--", pattern } end
  return { "grep", "-rnI", "--exclude-dir=.git", "--", pattern, "." }
end

function M.search(pattern)
  local running = nil
  local item = uji.ui.pick({
    title = "Search (live grep)",
    items = {},
    on_query = function(query, show)
      if running then running.stop() end
      if query == "" then return {} end
      running = collect(grep_command(query), function(lines)
        for i, line in ipairs(lines) do lines[i] = line:gsub("^%./", "") end
        show(lines)
      end)
    end,
  })
  if running then running.stop() end
  if item then
    local path, line = item:match("^([^:]+):(%d+):")
    if path then M.open(path, tonumber(line)) end
  end
  return pattern
end

function M.setup(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("telescope.setup expects a table of options", 2) end
  for key, value in pairs(defaults) do
    if opts[key] == nil then opts[key] = value end
  end
  M.opts = opts

  uji.action.add("telescope_find", function() M.find() end)
  uji.action.add("telescope_history", M.history)
  uji.action.add("telescope_search", function() M.search() end)
  uji.command.add("find", { desc = "Find a file and open it in your editor: /find [text]", handler = M.find })
  uji.command.add("history", { desc = "Put one of your past messages back in the composer", handler = M.history })
  uji.command.add("grep", { desc = "Search the files as you type (live grep)", handler = function() M.search() end })
  if opts.keys then
    uji.keymap.add("normal", "<C-p>", "telescope_find")
    uji.keymap.add("normal", "<C-r>", "telescope_history")
    uji.keymap.add("normal", "<C-f>", "telescope_search")
  end
  return M
end

return M
