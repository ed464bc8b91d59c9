-- uji.regex, uji.glob, uji.fuzzy, uji.markdown, uji.width, uji.lossy, uji.base64, uji.toml,
-- uji.sha256, uji.random, uji.diff, uji.class and uji.message.
local uji, host, lib = ...
local call, check, clean, mark_array, unpack = lib.call, lib.check, lib.clean, lib.mark_array, lib.unpack

local hex = lib.hex

-- Matchers ------------------------------------------------------------------------------

local Matcher = {}
Matcher.__index = Matcher

-- The start and end byte positions of the first match, or nil.
function Matcher:find(text)
  check(type(text) == "string", "matcher:find expects a string")
  return host.matcher_find(self._pattern, clean(text), self._whole)
end

-- Whether the pattern matches `text`.
function Matcher:test(text)
  check(type(text) == "string", "matcher:test expects a string")
  return host.matcher_find(self._pattern, clean(text), self._whole) ~= nil
end

local function matcher(compiled, err, whole)
  if compiled == nil then return nil, err end
  return setmetatable({ _pattern = compiled, _whole = whole }, Matcher)
end

function uji.regex(pattern)
  check(type(pattern) == "string", "uji.regex expects a pattern string")
  local compiled, err = host.regex_new(clean(pattern))
  return matcher(compiled, err, false)
end

-- A glob matches the whole text (a path, a name).
function uji.glob(pattern, opts)
  check(type(pattern) == "string", "uji.glob expects a pattern string")
  check(opts == nil or type(opts) == "table", "uji.glob: options must be a table {separator = true}")
  local compiled, err = host.glob_new(clean(pattern), opts ~= nil and opts.separator == true)
  return matcher(compiled, err, true)
end

function uji.fuzzy(query, items)
  check(type(query) == "string", "uji.fuzzy expects a query string")
  check(type(items) == "table", "uji.fuzzy expects a list of strings")
  for i, item in ipairs(items) do
    check(type(item) == "string", "uji.fuzzy: item " .. i .. " is not a string")
  end
  return call(host.fuzzy, clean(query), clean(mark_array({ unpack(items) })))
end

function uji.markdown(source)
  check(type(source) == "string", "uji.markdown expects a string")
  return call(host.markdown, clean(source))
end

function uji.width(text)
  check(type(text) == "string", "uji.width expects a string")
  return host.width(clean(text))
end

function uji.lossy(data)
  check(type(data) == "string", "uji.lossy expects a string")
  return clean(data)
end

-- Encodings -----------------------------------------------------------------------------

local function coding_opts(opts, name)
  check(opts == nil or type(opts) == "table", name .. ": options must be a table {url = , pad = }")
  opts = opts or {}
  return opts.url == true, opts.pad ~= false
end

uji.base64 = {
  encode = function(data, opts)
    check(type(data) == "string", "uji.base64.encode expects a string")
    local url, pad = coding_opts(opts, "uji.base64.encode")
    return host.base64_encode(hex(data), url, pad)
  end,
  decode = function(text, opts)
    check(type(text) == "string", "uji.base64.decode expects a string")
    local url = coding_opts(opts, "uji.base64.decode")
    return host.base64_decode(clean(text), url)
  end,
}

uji.toml = {
  encode = function(value)
    check(type(value) == "table", "uji.toml.encode expects a table")
    return call(host.toml_encode, clean(value))
  end,
  decode = function(text)
    check(type(text) == "string", "uji.toml.decode expects a string")
    return call(host.toml_decode, clean(text))
  end,
}

function uji.sha256(data)
  check(type(data) == "string", "uji.sha256 expects a string")
  return host.sha256(hex(data))
end

function uji.random(n)
  check(type(n) == "number" and n >= 0 and n == math.floor(n) and n <= 1048576,
    "uji.random expects a whole number of bytes from 0 to 1048576")
  return host.random_bytes(n)
end

function uji.diff(old, new, path)
  check(type(old) == "string", "uji.diff: old must be a string")
  check(type(new) == "string", "uji.diff: new must be a string")
  check(path == nil or type(path) == "string", "uji.diff: path must be a string")
  return host.diff(clean(old), clean(new), path and clean(path))
end

-- Classes and errors --------------------------------------------------------------------

-- A class: calling it makes an object and runs its `init`; methods are inherited from
-- `parent`, whose own methods stay reachable as `Parent.method(self, ...)`.
function uji.class(parent)
  check(parent == nil or type(parent) == "table", "uji.class: the parent must be a class")
  local cls = {}
  cls.__index = cls
  return setmetatable(cls, {
    __index = parent,
    __call = function(c, ...)
      local obj = setmetatable({}, c)
      if obj.init then obj:init(...) end
      return obj
    end,
  })
end

-- The text of a caught error, without a stack trace.
function uji.message(err)
  if type(err) == "table" and type(err.message) == "string" then err = err.message end
  local text = tostring(err)
  local cut = text:find("\nstack traceback:", 1, true)
  if cut then text = text:sub(1, cut - 1) end
  return text
end
