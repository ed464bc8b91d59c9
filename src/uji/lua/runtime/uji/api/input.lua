-- uji.input: the composer's text.
local uji, host, lib = ...
local check, clean = lib.check, lib.clean

local function text_of(text, fname)
  check(type(text) == "string" or type(text) == "number", fname .. " expects a string")
  return clean(tostring(text))
end

uji.input = {
  get = function() return host.input_get() end,
  -- Puts the cursor at the end; "/x" opens the command suggestions.
  set = function(text) host.input_set(text_of(text, "uji.input.set")) end,
  append = function(text) host.input_append(text_of(text, "uji.input.append")) end,
  clear = function() host.input_set("") end,
}
