-- uji.auth: credentials saved in auth.toml (or the keychain), or found in a provider's
-- `auth_env`; subscription sign-in in the browser.
local uji, host, lib = ...
local call, check, clean, wait, where = lib.call, lib.check, lib.clean, lib.wait, lib.where

uji.auth = {
  -- configure{keychain = bool}: keep credentials in the system keychain (service uji,
  -- the provider id as account); a keychain that refuses a save leaves it in auth.toml.
  configure = function(opts)
    check(type(opts) == "table", "uji.auth.configure expects a table {keychain = bool}")
    for k, v in pairs(opts) do
      check(k == "keychain", "uji.auth.configure: unknown key " .. tostring(k) .. " (known: keychain)")
      check(type(v) == "boolean", "uji.auth.configure: keychain must be a boolean")
    end
    if opts.keychain ~= nil then
      local why = call(host.auth_configure, opts.keychain)
      if why ~= nil then uji.notify(where() .. ": uji.auth.configure: " .. why) end
    end
  end,
  -- login(id, cb?) -> true, or nil, err: the browser sign-in of a provider with `oauth`.
  login = function(id, cb)
    check(type(id) == "string" and id ~= "", "uji.auth.login expects a provider id")
    check(cb == nil or type(cb) == "function", "uji.auth.login: the callback must be a function")
    return wait(call(host.auth_login, clean(id)), cb)
  end,
  -- save_key(id, key) -> true, or nil, err. Raises on an unknown provider or an empty key.
  save_key = function(id, key)
    check(type(id) == "string" and id ~= "", "uji.auth.save_key expects a provider id")
    check(type(key) == "string" and key ~= "", "uji.auth.save_key: the key must be a non-empty string")
    local err = call(host.auth_save_key, clean(id), clean(key))
    if err ~= nil then return nil, err end
    return true
  end,
  -- authenticated(id) -> bool: a saved key or an `auth_env` variable that is set.
  authenticated = function(id)
    check(type(id) == "string" and id ~= "", "uji.auth.authenticated expects a provider id")
    return call(host.auth_authenticated, clean(id)) == true
  end,
}
