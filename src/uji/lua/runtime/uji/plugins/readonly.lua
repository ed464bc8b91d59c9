-- Read-only directories: the file tools may read them but never edit or write them,
-- shipped as an example of a plugin written against the public API alone.
--
--   require("uji.plugins.readonly").setup({ "~/notes", "/etc" })
--   require("uji.plugins.readonly").setup({ paths = { "~/notes" } })
--
-- A before_tool hook denies edit_file and write_file under those directories (the model
-- is told why); it comes before your policy, so no rule can allow such a write. Relative
-- paths start at the directory uji started in; `..` and `.` are taken out before the
-- check. Calling setup again replaces the list.

local M = { paths = {} }

-- `path` made absolute and without `.`, `..` or repeated slashes.
local function normal(path)
  path = uji.os.expand(path)
  if path:sub(1, 1) ~= "/" then path = uji.os.cwd() .. "/" .. path end
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part == ".." then
      parts[#parts] = nil
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  return "/" .. table.concat(parts, "/")
end

-- The read-only directory `path` is in, or nil.
function M.covering(path)
  local full = normal(path)
  for _, root in ipairs(M.paths) do
    if full == root or full:sub(1, #root + 1) == root .. "/" or root == "/" then return root end
  end
  return nil
end

local WRITERS = { edit_file = true, write_file = true }

function M.setup(opts)
  if type(opts) ~= "table" then error("readonly.setup expects a list of directories or {paths = {...}}", 2) end
  local list = opts.paths or opts
  local paths = {}
  for i, p in ipairs(list) do
    if type(p) ~= "string" or p == "" then error("readonly.setup: entry " .. i .. " is not a directory path", 2) end
    paths[#paths + 1] = normal(p)
  end
  M.paths = paths
  uji.on("before_tool", function(e)
    if not WRITERS[e.name] or type(e.arguments) ~= "table" or type(e.arguments.path) ~= "string" then
      return nil
    end
    local root = M.covering(e.arguments.path)
    if root then return { deny = e.arguments.path .. " is in a read-only directory (" .. root .. ")" } end
    return nil
  end, { name = "readonly", priority = 5 })
  return M
end

return M
