-- Web search and fetch: the `web_search` and `web_fetch` tools, shipped as an example of a
-- plugin written against the public API alone. Use it from your init.lua:
--
--   require("uji.plugins.websearch").setup{}                     -- Exa (no key: rate limited)
--   require("uji.plugins.websearch").setup{ key = "..." }         -- or EXA_API_KEY
--   require("uji.plugins.websearch").setup{ backend = "searxng", url = "http://localhost:8888" }
--
-- web_search{query, count?} asks the search backend and gives the model a numbered list of
-- titles, addresses and snippets. web_fetch{url} reads one page and gives its text (HTML
-- turned into text, at most `chars` characters). Both go through the gate like any call:
-- web_fetch's subject is the address, so URL rules apply to it, for example
--
--   uji.tool.policy({ web_fetch = { deny = { "*://*.internal/*" }, ask = { "http://*" } } })
--
-- Backends are modules `uji.plugins.websearch.backend.<name>` (exa, searxng): add your own
-- as lua/uji/plugins/websearch/backend/<name>.lua in the config dir or a pack, or pass a
-- table. A backend has `search(query, opts)` → list of {title, url, snippet}, or nil and
-- why; and may have `fetch(url, opts)` → text, or nil and why (otherwise pages are fetched
-- directly). `opts` holds the setup options (`key`, `url`, `count`, `timeout`, `chars`).
--
-- SearXNG needs the JSON format enabled (search.formats in settings.yml), and its limiter
-- needs X-Forwarded-For or must be off. Copy this file to ~/.config/uji/lua/ and change it
-- as you like.

local M = {}

local defaults = {
  backend = "exa", -- a backend module's name, or a table {search, fetch?}
  key = nil, -- the backend's API key (exa: default EXA_API_KEY)
  url = nil, -- the backend's address (searxng: default SEARXNG_URL)
  policy = "allow", -- both tools' policy when no rule matches
  count = 5, -- results per search
  chars = 20000, -- characters of a fetched page given to the model
  timeout = 30, -- seconds per request
}

local KNOWN = { backend = true, key = true, url = true, policy = true, count = true, chars = true, timeout = true }

-- HTML entities that pages use most; numeric ones are decoded too.
local ENTITIES = { amp = "&", lt = "<", gt = ">", quot = '"', apos = "'", nbsp = " ", mdash = "—", ndash = "–", hellip = "…" }

local function utf8_char(n)
  if n < 0x80 then return string.char(n) end
  if n < 0x800 then return string.char(0xC0 + math.floor(n / 0x40), 0x80 + n % 0x40) end
  if n < 0x10000 then
    return string.char(0xE0 + math.floor(n / 0x1000), 0x80 + math.floor(n / 0x40) % 0x40, 0x80 + n % 0x40)
  end
  return string.char(0xF0 + math.floor(n / 0x40000), 0x80 + math.floor(n / 0x1000) % 0x40,
    0x80 + math.floor(n / 0x40) % 0x40, 0x80 + n % 0x40)
end

local function decode_entities(text)
  return (text:gsub("&(#?x?)(%w+);", function(kind, name)
    if kind == "#" then return utf8_char(tonumber(name) or 63) end
    if kind == "#x" then return utf8_char(tonumber(name, 16) or 63) end
    return ENTITIES[name:lower()]
  end))
end

-- A page's HTML as plain text: no scripts, styles or tags; block elements on their own
-- lines, no blank ones; the title first.
function M.html_to_text(html)
  local text = html:gsub("<!%-%-.-%-%->", ""):gsub("<![^>]*>", "")
  for _, tag in ipairs({ "script", "style", "noscript", "svg", "head" }) do
    text = text:gsub("<" .. tag .. "[^>]*>.-</" .. tag .. "%s*>", "")
  end
  local title = html:match("<[Tt][Ii][Tt][Ll][Ee][^>]*>(.-)</[Tt][Ii][Tt][Ll][Ee]>")
  text = text:gsub("<[Bb][Rr][^>]*>", "\n")
  text = text:gsub("</?([%a][%w]*)[^>]*>", function(tag)
    tag = tag:lower()
    if tag:match("^h%d$") or tag == "p" or tag == "div" or tag == "li" or tag == "tr" or tag == "section"
      or tag == "article" or tag == "pre" or tag == "blockquote" or tag == "ul" or tag == "ol" or tag == "table" then
      return "\n"
    end
    return ""
  end)
  text = decode_entities(text)
  text = text:gsub("[ \t\r]+", " "):gsub(" ?\n ?", "\n"):gsub("\n\n+", "\n")
  text = text:gsub("^%s+", ""):gsub("%s+$", "")
  if title and title:find("%S") then
    title = decode_entities(title):gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
    if text:sub(1, #title) ~= title then text = title .. "\n\n" .. text end
  end
  return text
end

local function cut(text, chars)
  if #text <= chars then return text end
  return text:sub(1, chars) .. "\n[page cut at " .. chars .. " characters]"
end

local function backend_of(opts)
  if type(opts.backend) == "table" then return opts.backend end
  local ok, mod = pcall(require, "uji.plugins.websearch.backend." .. opts.backend)
  if not ok then error("websearch: no backend `" .. tostring(opts.backend) .. "`: " .. uji.message(mod), 3) end
  if type(mod) ~= "table" or type(mod.search) ~= "function" then
    error("websearch: backend `" .. opts.backend .. "` has no search function", 3)
  end
  return mod
end

-- A page fetched directly: its text, or nil and why.
function M.fetch(url, opts)
  local res, err = uji.http.request({ url = url, timeout = opts.timeout, headers = {
    ["user-agent"] = "uji-websearch", accept = "text/html, text/plain;q=0.9, */*;q=0.5",
  } })
  if not res then return nil, err end
  if res.status >= 400 then return nil, "HTTP " .. res.status end
  local kind = (res.headers["content-type"] or ""):lower()
  if kind:find("html") or (kind == "" and res.body:find("<[Hh][Tt][Mm][Ll]")) then
    return M.html_to_text(res.body)
  end
  if kind ~= "" and not kind:find("text") and not kind:find("json") and not kind:find("xml") then
    return nil, "not a text page (" .. kind .. ")"
  end
  return res.body
end

local function format_results(results, query)
  if #results == 0 then return "no results for: " .. query end
  local lines = {}
  for i, r in ipairs(results) do
    lines[#lines + 1] = i .. ". " .. (r.title or r.url) .. "\n   " .. r.url
      .. (r.snippet and r.snippet ~= "" and "\n   " .. r.snippet:gsub("%s+", " ") or "")
  end
  return table.concat(lines, "\n\n")
end

function M.setup(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("websearch.setup expects a table of options", 2) end
  for key in pairs(opts) do
    if not KNOWN[key] then error("websearch.setup: unknown option `" .. tostring(key) .. "`", 2) end
  end
  for key, value in pairs(defaults) do
    if opts[key] == nil then opts[key] = value end
  end
  for _, key in ipairs({ "count", "chars", "timeout" }) do
    if type(opts[key]) ~= "number" or opts[key] <= 0 then error("websearch.setup: `" .. key .. "` must be a number above 0", 2) end
  end
  local backend = backend_of(opts)
  M.opts, M.backend = opts, backend

  uji.tool.add("web_search", {
    description = "Search the web. Gives titles, addresses and snippets; read a page with web_fetch.",
    parameters = {
      type = "object",
      properties = {
        query = { type = "string", description = "what to search for" },
        count = { type = "integer", description = "how many results (default " .. opts.count .. ")" },
      },
      required = { "query" },
    },
    policy = opts.policy,
    subject = function(args) return tostring(args.query or "") end,
    display = { label = "Search" },
    run = function(args)
      if type(args.query) ~= "string" or not args.query:find("%S") then return "error: give a `query`" end
      local count = math.floor(tonumber(args.count) or opts.count)
      if count < 1 then count = opts.count end
      local results, err = backend.search(args.query, setmetatable({ count = count }, { __index = opts }))
      if not results then return "error: the search failed: " .. tostring(err) end
      return format_results(results, args.query)
    end,
  })

  uji.tool.add("web_fetch", {
    description = "Read a web page (http or https) as text.",
    parameters = {
      type = "object",
      properties = { url = { type = "string", description = "the page's address" } },
      required = { "url" },
    },
    policy = opts.policy,
    subject = function(args) return tostring(args.url or "") end,
    display = { label = "Fetch" },
    run = function(args)
      local url = args.url
      if type(url) ~= "string" or not url:match("^https?://[^/%s]+") then
        return "error: `url` must be an http or https address"
      end
      local fetch = backend.fetch or M.fetch
      local text, err = fetch(url, opts)
      if not text then return "error: could not fetch " .. url .. ": " .. tostring(err) end
      return cut(text, opts.chars)
    end,
  })
  return M
end

return M
