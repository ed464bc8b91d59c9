-- The Exa backend of the websearch plugin (the default). `key` (or EXA_API_KEY) lifts the
-- rate limit of keyless use; `url` points at another Exa-compatible server. web_fetch reads
-- pages through Exa's contents endpoint.

local M = {}

local function post(path, body, opts)
  local base = (opts.url or "https://api.exa.ai"):gsub("/+$", "")
  local headers = { ["content-type"] = "application/json", accept = "application/json" }
  local key = opts.key or uji.os.env("EXA_API_KEY")
  if key and key ~= "" then headers["x-api-key"] = key end
  local res, err = uji.http.request({
    url = base .. path, method = "POST", headers = headers, body = uji.json.encode(body), timeout = opts.timeout,
  })
  if not res then return nil, err end
  if res.status == 429 then return nil, "Exa's rate limit was reached: set an API key (key = ... or EXA_API_KEY)" end
  if res.status >= 400 then return nil, "Exa answered HTTP " .. res.status end
  local ok, data = pcall(uji.json.decode, res.body)
  if not ok or type(data) ~= "table" then return nil, "Exa did not answer JSON" end
  return data
end

function M.search(query, opts)
  local data, err = post("/search", {
    query = query, numResults = opts.count, contents = { text = { maxCharacters = 300 } },
  }, opts)
  if not data then return nil, err end
  local out = {}
  for _, r in ipairs(data.results or {}) do
    if type(r.url) == "string" then out[#out + 1] = { title = r.title, url = r.url, snippet = r.text } end
  end
  return out
end

function M.fetch(url, opts)
  local data, err = post("/contents", { urls = { url }, text = { maxCharacters = opts.chars } }, opts)
  if not data then return nil, err end
  local first = (data.results or {})[1]
  if type(first) ~= "table" or type(first.text) ~= "string" then return nil, "Exa has no text for this page" end
  return (first.title and first.title ~= "" and first.title .. "\n\n" or "") .. first.text
end

return M
