-- uji.pack: plugin repositories cloned with git into <data>/site/<name>, pinned in
-- <config>/uji-lock.json; `/sync` updates them. A pack that fails is a notice, never an
-- error: the rest of the config goes on.
local uji, host, lib = ...
local call, check, wait, clean = lib.call, lib.check, lib.wait, lib.clean
local mark_array = lib.mark_array
local _, _, LIBRARY = host.os_values() -- "so", or "dylib" on macOS

-- A pack's lua/ and native/ (its C modules) are searched before the rest.
local function on_path(root)
  local lua_dir = root .. "/lua/"
  local entry = lua_dir .. "?.lua;" .. lua_dir .. "?/init.lua;"
  if not package.path:find(entry, 1, true) then package.path = entry .. package.path end
  local native = root .. "/native/?." .. LIBRARY .. ";"
  if not package.cpath:find(native, 1, true) then package.cpath = native .. package.cpath end
end

-- One spec as the host takes it: string keys only.
local function normal(spec)
  if type(spec) ~= "table" then return spec end
  return {
    url = spec.url or spec[1], dir = spec.dir, name = spec.name,
    tag = spec.tag, branch = spec.branch, commit = spec.commit,
  }
end

uji.pack = {
  -- add{ "owner/repo", "https://…/x.git", {"owner/repo", tag = "v1"}, {url = …}, {dir = "~/x"} }
  add = function(specs)
    check(type(specs) == "table", "uji.pack.add expects a list of packs, such as { \"owner/repo\" }")
    local roots = {}
    for i, spec in ipairs(specs) do
      local pending = call(host.pack_add, clean(normal(spec)), i)
      local root = wait(pending)
      if root then
        on_path(root)
        roots[#roots + 1] = root
        uji.os.roots = mark_array({ host.os_roots() })
      end
    end
    return mark_array(roots)
  end,
  -- The roots: the config dir first, then each pack.
  list = function() return mark_array(host.pack_list()) end,
  -- Fetches every pack, moves it to its newest commit and rewrites the lock (what /sync does).
  update = function(cb)
    return wait(call(host.pack_update), cb)
  end,
}
