-- The SearXNG backend of the websearch plugin: `url` (or SEARXNG_URL) is your instance.
-- It needs the JSON format enabled (search.formats: [html, json] in settings.yml), and its
-- limiter needs X-Forwarded-For or must be off. Pages are fetched directly (web_fetch).

local M = {}

local function escape(text)
  return (text:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", c:byte()) end))
end

function M.search(query, opts)
  local base = opts.url or uji.os.env("SEARXNG_URL")
  if not base or base == "" then return nil, "set the searxng address: setup{ url = ... } or SEARXNG_URL" end
  local res, err = uji.http.request({
    url = base:gsub("/+$", "") .. "/search?format=json&q=" .. escape(query),
    timeout = opts.timeout,
    headers = { accept = "application/json", ["x-forwarded-for"] = "127.0.0.1" },
  })
  if not res then return nil, err end
  if res.status == 403 then return nil, "searxng refused the JSON format (HTTP 403): enable it in settings.yml" end
  if res.status >= 400 then return nil, "searxng answered HTTP " .. res.status end
  local ok, data = pcall(uji.json.decode, res.body)
  if not ok or type(data) ~= "table" or type(data.results) ~= "table" then
    return nil, "searxng did not answer JSON results"
  end
  local out = {}
  for _, r in ipairs(data.results) do
    if #out >= opts.count then break end
    if type(r.url) == "string" then out[#out + 1] = { title = r.title, url = r.url, snippet = r.content } end
  end
  return out
end

return M
