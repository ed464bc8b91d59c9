-- uji.fs: read, lines, write, list, glob, join. The same confinement as the file tools;
-- relative paths start at the cwd. read/lines/write wait or take a callback; failures are
-- `nil, err`, bad arguments raise here.
local uji, host, lib = ...
local call, check, wait, clean = lib.call, lib.check, lib.wait, lib.clean

local function path_arg(fname, path)
  check(type(path) == "string" and path ~= "", fname .. ": the path must be a non-empty string")
  return clean(path)
end

local function callback_arg(fname, cb)
  check(cb == nil or type(cb) == "function", fname .. ": the callback must be a function")
  return cb
end

-- nil, or a whole number >= `least`.
local function count_arg(fname, opts, key, least)
  local v = opts[key]
  check(v == nil or (type(v) == "number" and v == math.floor(v) and v >= least),
    fname .. ": `" .. key .. "` must be a whole number >= " .. least)
  return v
end

local function join(base, ...)
  check(type(base) == "string", "uji.fs.join: the base must be a string")
  local out = base
  for i = 1, select("#", ...) do
    local part = select(i, ...)
    check(type(part) == "string", "uji.fs.join: part " .. (i + 1) .. " is not a string")
    -- As a path join: an absolute part starts over.
    if part:sub(1, 1) == "/" then
      out = part
    elseif out == "" or out:sub(-1) == "/" then
      out = out .. part
    else
      out = out .. "/" .. part
    end
  end
  return out
end

uji.fs = {
  read = function(path, cb)
    path = path_arg("uji.fs.read", path)
    return wait(call(host.fs_read, path), callback_arg("uji.fs.read", cb))
  end,

  -- lines(path, {offset, limit, max_line}, cb?); lines(path, cb) also works.
  lines = function(path, opts, cb)
    path = path_arg("uji.fs.lines", path)
    if cb == nil and type(opts) == "function" then opts, cb = nil, opts end
    check(opts == nil or type(opts) == "table", "uji.fs.lines: options must be a table")
    opts = opts or {}
    local offset = count_arg("uji.fs.lines", opts, "offset", 1) or 1
    local limit = count_arg("uji.fs.lines", opts, "limit", 0)
    local max_line = count_arg("uji.fs.lines", opts, "max_line", 1)
    cb = callback_arg("uji.fs.lines", cb)
    return wait(call(host.fs_lines, path, offset, limit, max_line), cb)
  end,

  write = function(path, content, cb)
    path = path_arg("uji.fs.write", path)
    check(type(content) == "string", "uji.fs.write: the content must be a string")
    cb = callback_arg("uji.fs.write", cb)
    return wait(call(host.fs_write, path, clean(content)), cb)
  end,

  list = function(path)
    return call(host.fs_list, path_arg("uji.fs.list", path))
  end,

  glob = function(pattern)
    check(type(pattern) == "string" and pattern ~= "", "uji.fs.glob: the pattern must be a non-empty string")
    return call(host.fs_glob, clean(pattern))
  end,

  join = join,
}
