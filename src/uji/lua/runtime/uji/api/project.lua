-- uji.project: the project's root, and per-project trust for what a plugin takes from
-- the repository (files the repository controls: agents, skills, servers).
local uji, host, lib = ...
local call, check, wait, clean, is_callable, mark_array = lib.call, lib.check, lib.wait, lib.clean, lib.is_callable, lib.mark_array

local function file_list(files, fname)
  check(type(files) == "table", fname .. ": `files` must be a list of paths (relative to uji.project.root())")
  local out = {}
  for i, f in ipairs(files) do
    check(type(f) == "string" and f ~= "", fname .. ": file " .. i .. " is not a non-empty string")
    out[i] = clean(f)
  end
  return mark_array(out)
end

local function kind_of(kind, fname)
  check(type(kind) == "string" and kind:match("^[%w_.-]+$") ~= nil,
    fname .. ": the kind must be a short name (letters, digits, _ . -)")
  return kind
end

uji.project = {
  -- The repository's top (the nearest directory up with .git), else the working directory.
  root = function() return host.project_root() end,

  -- The remembered decision for `kind` and these files as they are now: true, false, or
  -- nil (never asked, or a file changed since).
  trusted = function(kind, files)
    local fname = "uji.project.trusted"
    return host.project_trusted(kind_of(kind, fname), file_list(files, fname))
  end,

  -- trust(kind, {files, title?, body?}) → true or false: the remembered decision, else the
  -- user's answer (asked once; asked again when a file changes). With no screen (uji run)
  -- it is false with a notice, unless the run was given --trust-project.
  trust = function(kind, spec, cb)
    local fname = "uji.project.trust"
    kind = kind_of(kind, fname)
    check(type(spec) == "table", fname .. " expects a table {files = {...}, title = ..., body = ...}")
    local files = file_list(spec.files or {}, fname)
    check(spec.title == nil or type(spec.title) == "string", fname .. ": `title` must be a string")
    check(spec.body == nil or type(spec.body) == "string", fname .. ": `body` must be a string")
    check(cb == nil or is_callable(cb), fname .. ": the callback must be a function")
    local title = clean(spec.title or ("Use this project's " .. kind .. "?"))
    local body = clean(spec.body or ("Files: " .. table.concat(files, ", ")))
    local decision = call(host.project_trust, kind, files, title, body)
    if type(decision) == "boolean" then
      if cb then cb(decision) end
      return decision
    end
    return wait(decision, cb)
  end,
}
