-- Loaded after every other api file (see Runtime): a name of the original uji that this
-- one lacks. Reading `uji.foo.bar` gives a stand-in; calling it shows a notice naming the
-- function and the line that called it ("uji.foo.bar is not supported yet") and returns
-- nil, so the rest of the config file still loads (its providers, its policy). Raising
-- instead would lose every line after the call, which is what a config of the original
-- cannot afford.
local uji, host, lib = ...
local where = lib.where

local told = {}
local stand_ins = {}

local function stand_in(name)
  local found = stand_ins[name]
  if found then return found end
  local mt = {}
  mt.__index = function(_, k)
    if type(k) ~= "string" then return nil end
    return stand_in(name .. "." .. k)
  end
  mt.__call = function()
    local at = where()
    local key = name .. "@" .. at
    if not told[key] then
      told[key] = true
      host.unsupported(at .. ": " .. name .. " is not supported yet; the call did nothing")
    end
    return nil
  end
  mt.__tostring = function() return name .. " (not supported yet)" end
  mt.__uji_missing = name
  found = setmetatable({}, mt)
  stand_ins[name] = found
  return found
end


local function cover(t, name)
  local mt = {
    __uji_namespace = true,
    __index = function(_, k)
      if type(k) ~= "string" or k:sub(1, 2) == "__" then return nil end
      return stand_in(name .. "." .. k)
    end,
  }
  setmetatable(t, mt)
end

for k, v in pairs(uji) do
  if type(v) == "table" and getmetatable(v) == nil and type(k) == "string" then
    cover(v, "uji." .. k)
  end
end
cover(uji, "uji")
