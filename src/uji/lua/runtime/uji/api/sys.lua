-- The runtime modules (`uji.sys.*`) and `require` (loaded after the other api files, before
-- missing.lua). The runtime helpers (uji.task, uji.os, uji.regex, ...) are the modules
-- `uji.sys.<name>`: a Lua module `lua/uji/sys/<name>.lua`, or a native one
-- `native/uji/sys/<name>.so`, in the config dir or in a pack loaded from boot replaces uji's
-- own, and `uji.<name>` answers with it. A name the `uji` table does not define is looked
-- up the same way, when it is first read.
local uji, host, lib = ...

-- The runtime helpers as uji ships them; each is the module `uji.sys.<name>`.
local NAMES = {
  "task", "sleep", "promise", "net", "proc", "db", "os", "modules", "keychain", "clipboard", "image",
  "message", "regex", "glob", "fuzzy", "markdown", "width", "lossy", "base64", "toml", "sha256", "random",
}
local helper, builtin, replaced = {}, {}, {}
for _, name in ipairs(NAMES) do
  helper[name] = true
  builtin[name] = rawget(uji, name) -- nil while its file waits for its first use
  uji[name] = nil
end

-- uji's own `name`, its file loaded if it waits.
local function own(name)
  if helper[name] and builtin[name] == nil then lib.namespace(name) end
  return builtin[name]
end

-- A file that loaded late defines uji's own helpers: a replacement chosen at boot stays.
lib.after_load[#lib.after_load + 1] = function(names)
  for _, name in ipairs(names) do
    if helper[name] then
      builtin[name] = rawget(uji, name)
      if replaced[name] ~= nil then uji[name] = replaced[name] end
    end
  end
end

-- After Lua's own searchers (lua/ and native/ on the path come first): uji's own modules.
local loaders = package.loaders or package.searchers
loaders[#loaders + 1] = function(modname)
  local name = modname:match("^uji%.sys%.([%a_][%w_]*)$")
  if name == nil or own(name) == nil then return nil end
  return function() return builtin[name] end
end

-- `require` errors that carry no position (a module not found, a native module that
-- fails to open) are given the line that called require.
local raw_require = require
local function has_position(message)
  return message:match("^[^\n]-:%d+:") ~= nil
end

function require(modname) -- luacheck: ignore (the global require, wrapped)
  local r = lib.pack(pcall(raw_require, modname))
  if r[1] then return lib.unpack(r, 2, r.n) end
  local e = r[2]
  if type(e) == "string" and not has_position(e) then e = lib.where() .. ": " .. e end
  error(e, 0)
end

-- Whether the search path holds a module of that name (Lua or native).
local function on_path(modname, path, cpath)
  return package.searchpath(modname, path or package.path) ~= nil
    or package.searchpath(modname, cpath or package.cpath) ~= nil
end

-- `uji.sys.<name>`: the module, or nil when there is none.
local function module(name)
  if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then return nil end
  local modname = "uji.sys." .. name
  if package.loaded[modname] == nil and not helper[name] and not on_path(modname) then return nil end
  local value = raw_require(modname)
  if type(value) ~= "table" and type(value) ~= "function" then
    error(modname .. " must return its module (a table or a function), not " .. type(value), 0)
  end
  return value
end

uji.sys = setmetatable({}, {
  __index = function(_, name)
    local ok, value = pcall(module, name)
    if ok then return value end
    lib.fail(value)
  end,
})

-- The host hands the search path as it is now without the folders that hold no uji/sys/:
-- the same modules are found, without a failed look-up per folder and helper.
local boot_path, boot_cpath = rawget(host, "sys_path"), rawget(host, "sys_cpath")
-- Each runtime helper: a replacement on the path at boot, else uji's own (left unset while
-- its file waits: reading it loads the file). A replacement that fails to load is a
-- notice, and uji's own stays.
for _, name in ipairs(NAMES) do
  local modname = "uji.sys." .. name
  local value = builtin[name]
  if on_path(modname, boot_path, boot_cpath) then
    local ok, found = pcall(module, name)
    if ok then
      value = found
      replaced[name] = found
    else
      package.loaded[modname] = nil
      host.notify("config error: " .. tostring(found) .. " (uji." .. name .. " stays uji's own)")
    end
  end
  uji[name] = value
end

-- A name `uji` lacks: the runtime module of that name, if the path has one.
function lib.runtime_module(name)
  local ok, value = pcall(module, name)
  if ok then return value end
  lib.fail(tostring(value))
end
