-- Loaded after every other api file (see Runtime): a name of the original uji that this
-- one lacks. Reading `uji.foo.bar` gives nil, so a feature check (`if uji.ui.configure
-- then`) takes the branch for a uji without it. Calling it, on the same line, shows a
-- notice naming the function, the line that called it and which form of the original's
-- docs added it ("uji.ui.toolbar is not supported yet; ..."), and returns nil, so the rest
-- of the config file still loads (its providers, its policy). Raising instead would lose
-- every line after the call, which is what a config of the original cannot afford.
--
-- How: the namespaces' __index remembers the missing name and where it was read; nil's
-- metatable (debug.setmetatable) answers a call or an index of that nil on that same line,
-- and raises Lua's usual error for any other nil.
local uji, host, lib = ...

-- Where the original added the names it documents that this uji lacks: its current docs
-- or its older ones. None is left; a name read that no docs have gets no such note.
local ADDED = {}

local function added(name)
  local probe = name
  while probe do
    local era = ADDED[probe]
    if era then return " (a name of the original uji's " .. era .. " docs)" end
    probe = probe:match("^(.*)%.[^.]+$")
  end
  return ""
end

local told = {}
local pending = nil -- { name, source, line }: the missing name read last

local function place(level)
  local info = debug.getinfo(level + 1, "Sl")
  if info == nil then return nil, nil end
  return info.source, info.currentline
end

-- Whether the nil at hand is the missing name just read: read on this same line (a tail
-- call leaves no caller to compare, and counts).
local function is_pending(level)
  if pending == nil then return false end
  local source, line = place(level + 1)
  return source == nil or (source == pending.source and line == pending.line)
end

local function remember(name, level)
  local source, line = place(level + 1)
  pending = { name = name, source = source, line = line }
end

debug.setmetatable(nil, {
  __index = function(_, k)
    if type(k) == "string" and is_pending(2) then
      pending.name = pending.name .. "." .. k
      return nil
    end
    error("attempt to index a nil value", 2)
  end,
  __call = function()
    if not is_pending(2) then error("attempt to call a nil value", 2) end
    local p = pending
    pending = nil
    local src = (p.source or "?"):gsub("^@", "")
    local at = src .. ":" .. tostring(p.line or 0)
    local key = p.name .. "@" .. at
    if not told[key] then
      told[key] = true
      host.unsupported(at .. ": " .. p.name .. " is not supported yet; the call did nothing" .. added(p.name))
    end
    return nil
  end,
})

-- `fallback(k)`: what a name the table lacks answers before it counts as missing.
local function cover(t, name, fallback)
  local mt = {
    __uji_namespace = true,
    __index = function(_, k)
      if type(k) ~= "string" or k:sub(1, 2) == "__" then return nil end
      local found = fallback and fallback(k)
      if found ~= nil then
        rawset(t, k, found)
        return found
      end
      remember(name .. "." .. k, 2)
      return nil
    end,
  }
  setmetatable(t, mt)
end

local function cover_namespace(k, v)
  if type(v) == "table" and getmetatable(v) == nil and type(k) == "string" then
    cover(v, "uji." .. k)
  end
end
for k, v in next, uji do -- what is loaded (pairs would load every namespace)
  cover_namespace(k, v)
end
-- The namespaces of a file loaded on first use get theirs then.
lib.after_load[#lib.after_load + 1] = function(names)
  for _, k in ipairs(names) do cover_namespace(k, rawget(uji, k)) end
end
-- uji.<name>: the namespace (loaded on first use), else uji.sys.<name>.
cover(uji, "uji", function(name)
  local found = lib.namespace(name)
  if found ~= nil then return found end
  return lib.runtime_module(name)
end)
