-- uji.sandbox: the OS sandbox of the commands the model starts: configure, status.
local uji, host, lib = ...
local call, check, clean = lib.call, lib.check, lib.clean

local MODES = { ["workspace-write"] = true, ["read-only"] = true, off = true }
local KEYS = { mode = true, network = true, writable = true, deny_read = true }

local function check_paths(value, key)
  if value == nil then return end
  if type(value) == "string" then value = { value } end
  check(type(value) == "table", "uji.sandbox.configure: `" .. key .. "` must be a list of paths")
  for _, p in ipairs(value) do
    check(type(p) == "string" and p ~= "", "uji.sandbox.configure: `" .. key .. "` must be a list of paths")
  end
  return value
end

uji.sandbox = {
  configure = function(opts)
    check(type(opts) == "table", "uji.sandbox.configure expects a table")
    for key in pairs(opts) do
      check(KEYS[key], "uji.sandbox.configure: unknown key `" .. tostring(key)
        .. "` (mode, network, writable, deny_read)")
    end
    check(opts.mode == nil or MODES[opts.mode],
      "uji.sandbox.configure: `mode` is \"workspace-write\", \"read-only\" or \"off\"")
    check(opts.network == nil or type(opts.network) == "boolean",
      "uji.sandbox.configure: `network` must be true or false")
    local writable = check_paths(opts.writable, "writable")
    local deny_read = check_paths(opts.deny_read, "deny_read")
    return call(host.sandbox_configure, opts.mode, opts.network, writable and clean(writable), deny_read and clean(deny_read))
  end,
  status = function() return host.sandbox_status() end,
}
