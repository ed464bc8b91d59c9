-- uji.api: the provider APIs as classes (the original's late-era form of uji.wire).
--
-- `uji.api.openai` (Chat Completions), `uji.api.responses`, `uji.api.anthropic` and
-- `uji.api.gemini` stand for uji's built-in wires. Call one to get an object for a
-- provider's `api` field; give it options, or subclass it with uji.class and override
-- methods. An object whose class overrides nothing runs the built-in wire exactly as a
-- provider without an object does; each overridden method is called where the wire
-- would do that part itself. Any other name loads `uji.builtin.apis.<name>` with require,
-- so a config or a pack can add its own (a class with a `stream(request, reply)` method).
local uji, host, lib = ...

-- The classes and the rest load on first use: a config without them pays nothing.
local here = debug.getinfo(1, "S").source:sub(2):gsub("apis%.lua$", "")
local impl = nil
function lib.providers()
  if impl == nil then impl = assert(loadfile(here .. "lazy/providers.lua"))(uji, host, lib) end
  return impl
end

uji.api = setmetatable({}, {
  __index = function(apis, name)
    if type(name) ~= "string" then return nil end
    local found = lib.providers().builtin(name) or require("uji.builtin.apis." .. name)
    rawset(apis, name, found)
    return found
  end,
})
