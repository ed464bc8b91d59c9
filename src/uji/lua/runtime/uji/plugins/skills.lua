-- Skills: Agent Skills folders announced to the model, shipped as an example of what a
-- plugin can do with the public API alone. Use it from your init.lua:
--
--   require("uji.plugins.skills").setup{}
--
-- A skill is a folder holding a SKILL.md: front matter with a `name` and a `description`,
-- then the instructions (and any files they mention, scripts say):
--
--   ---
--   name: release-notes
--   description: Writes release notes from the git log. Use when asked for a changelog.
--   ---
--   1. Run `git log --oneline v1.2..HEAD` ...
--
-- The system prompt lists each skill's name, description and the path of its SKILL.md;
-- the model reads the body with read_file when a task calls for it, so a skill costs
-- tokens only when used. The folders are readable (never writable) by the file tools.
--
-- Where skills come from:
--   <config dir>/skills/<skill>/SKILL.md          always (~/.config/uji/skills)
--   <project>/.agents/skills, <project>/.claude/skills
--                                                 once you approve them for the project:
--                                                 asked once, again when they change;
--                                                 `uji run --trust-project` approves them
-- /skills reads the folders again and lists what it found.
--
-- Options: setup{ user = "path", project = { ".agents/skills", ... } } (project = false:
-- none from the project). Copy this file to ~/.config/uji/lua/ and change it as you like.

local M = { skills = {}, problems = {}, project_state = nil }
local told = {} -- problems already shown in a notice

local MAX_SKILLS = 200
local MAX_DESCRIPTION = 1024

-- Front matter ------------------------------------------------------------------------
-- A small, tolerant reader of the `key: value` lines between the `---` lines: quotes are
-- taken off, `>` and `|` blocks and indented lines continue the key above, `- item` lines
-- (a list) too. Anything else is an error naming the line.

local function unquote(v)
  local q = v:sub(1, 1)
  if (q == '"' or q == "'") and #v >= 2 and v:sub(-1) == q then
    v = v:sub(2, -2)
    if q == '"' then v = v:gsub('\\"', '"'):gsub("\\\\", "\\") else v = v:gsub("''", "'") end
  end
  return v
end

local function front_matter(text)
  text = text:gsub("^\239\187\191", ""):gsub("\r\n", "\n")
  if not text:match("^%-%-%-[ \t]*\n") then
    return nil, "it does not start with a `---` line (front matter with name and description)"
  end
  local fields, current, n = {}, nil, 0
  for line in text:gmatch("([^\n]*)\n") do
    n = n + 1
    if n > 1 then
      if line:match("^%-%-%-[ \t]*$") then return fields end
      local key, value = line:match("^([%w_-]+):[ \t]*(.-)[ \t]*$")
      if key then
        current = key
        fields[key] = (value == ">" or value == "|" or value == ">-" or value == "|-") and "" or unquote(value)
      elseif line:match("^[ \t]+%S") or line:match("^%-[ \t]") then
        if current == nil then return nil, "line " .. n .. " continues no key" end
        local more = line:match("^[ \t]*(.-)[ \t]*$")
        fields[current] = fields[current] == "" and more or (fields[current] .. " " .. more)
      elseif not (line:match("^[ \t]*$") or line:match("^[ \t]*#")) then
        return nil, "line " .. n .. " is not `key: value`"
      end
    end
  end
  return nil, "the front matter has no closing `---` line"
end

-- Reading a root -------------------------------------------------------------------------

local function read_skill(dir)
  local path = uji.fs.join(dir, "SKILL.md")
  local text = uji.fs.read(path)
  if text == nil then return nil end -- a folder without SKILL.md is not a skill
  local fields, err = front_matter(text)
  if fields == nil then return nil, path .. ": " .. err end
  local name, description = fields.name, fields.description
  if name == nil or name == "" then return nil, path .. ": the front matter has no `name`" end
  if description == nil or description == "" then return nil, path .. ": the front matter has no `description`" end
  if #description > MAX_DESCRIPTION then description = description:sub(1, MAX_DESCRIPTION) .. "…" end
  return { name = name:sub(1, 64), description = description, path = path }
end

-- The skills of one root; a SKILL.md that cannot be used goes to `problems`.
local function read_root(root, found, problems, origin)
  local entries = uji.fs.list(root)
  for _, entry in ipairs(entries or {}) do
    if #found >= MAX_SKILLS then break end
    if entry.type == "dir" or entry.type == "link" then
      local skill, err = read_skill(uji.fs.join(root, entry.name))
      if err then
        table.insert(problems, err)
      elseif skill then
        skill.origin = origin
        local seen = nil
        for _, s in ipairs(found) do if s.name == skill.name then seen = s end end
        if seen then
          table.insert(problems, skill.path .. ": the name " .. skill.name .. " is taken by " .. seen.path)
        else
          table.insert(found, skill)
        end
      end
    end
  end
end

local function add_read_roots(roots)
  local now = uji.tool.read_roots()
  for _, root in ipairs(roots) do
    local known = false
    for _, r in ipairs(now) do if r == root then known = true end end
    if not known then table.insert(now, root) end
  end
  uji.tool.read_roots(now)
end

-- What the system prompt gets: one compact line a skill.
local function listing()
  if #M.skills == 0 then return nil end
  local lines = {
    "Skills: folders of instructions for particular tasks. When a task matches a skill's description, "
      .. "read its SKILL.md with read_file first and follow it (it may point to other files in its folder).",
  }
  for _, s in ipairs(M.skills) do
    table.insert(lines, "- " .. s.name .. ": " .. s.description .. " (" .. s.path .. ")")
  end
  return table.concat(lines, "\n")
end

-- Setup ----------------------------------------------------------------------------------

function M.setup(opts)
  opts = opts or {}
  local user = opts.user or uji.fs.join(uji.config.dir, "skills")
  local names = opts.project
  if names == nil then names = { ".agents/skills", ".claude/skills" } end
  if names == false then names = {} end
  local project = {}
  for _, name in ipairs(names) do table.insert(project, uji.fs.join(uji.project.root(), name)) end

  local approved = false
  -- Read the folders (again): each problem is told once, in a notice naming the file.
  local function scan()
    local found, problems = {}, {}
    read_root(user, found, problems, "user")
    if approved then
      for _, root in ipairs(project) do read_root(root, found, problems, "project") end
    end
    M.skills, M.problems = found, problems
    for _, problem in ipairs(problems) do
      if not told[problem] then
        told[problem] = true
        uji.notify("skills: " .. problem .. "; skipped")
      end
    end
  end

  add_read_roots({ user })
  scan()

  -- The project's folders, only once approved (uji.project.trust asks nothing when none
  -- of them exists; it lists what is in them under the question).
  if #names > 0 then
    local function decided(ok)
      M.project_state = ok and "approved" or "not used (not approved, or none there)"
      if not ok then return end
      approved = true
      add_read_roots(project)
      scan()
    end
    local known = uji.project.trusted("skills", names)
    if known == false then
      M.project_state = "not approved"
    else
      M.project_state = "waiting for your answer"
      uji.project.trust("skills", {
        files = names,
        title = "Use this project's skills?",
        body = "Their descriptions go into the prompt and the model may follow their instructions "
          .. "(asked again when they change). In " .. uji.project.root() .. ":",
      }, decided)
    end
  end

  uji.context.add("skills", listing)

  uji.command.add("skills", {
    desc = "List the skills the model is told about (reads their folders again)",
    handler = function()
      scan()
      local lines = {}
      for _, s in ipairs(M.skills) do
        table.insert(lines, s.name .. " — " .. s.description .. " (" .. s.path .. ")")
      end
      if #lines == 0 then table.insert(lines, "no skills found in " .. user) end
      for _, problem in ipairs(M.problems) do table.insert(lines, "skipped: " .. problem) end
      if M.project_state then table.insert(lines, "project skills: " .. M.project_state) end
      uji.notify(table.concat(lines, "\n"))
    end,
  })
  return M
end

M.front_matter = front_matter -- for tests and for other plugins
return M
