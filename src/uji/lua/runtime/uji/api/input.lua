-- uji.input: the composer's text.
local uji, host, lib = ...
local check, clean, wait, is_callable = lib.check, lib.clean, lib.wait, lib.is_callable

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
  -- attach(path): an image file (png, jpeg, gif, webp) into the draft as [image #N];
  -- true, or nil and why. Relative paths start at the session's directory. Waits.
  attach = function(path)
    check(type(path) == "string" and path ~= "", "uji.input.attach expects a file path")
    return wait(host.input_attach(clean(path)))
  end,
  -- capture(handler): every key goes to handler({key, char, ctrl, alt, shift}) instead of
  -- the keymap, until release() (or until the handler raises). With no screen no key comes.
  capture = function(handler)
    check(is_callable(handler), "uji.input.capture expects a function({key, char, ctrl, alt, shift})")
    host.input_capture(handler)
  end,
  -- release(): keys go back to the keymap; true if a handler had them.
  release = function() return host.input_release() end,
}
