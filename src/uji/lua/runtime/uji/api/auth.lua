-- uji.auth: API keys saved in auth.toml, or found in a provider's `auth_env`.
local uji, host, lib = ...
local call, check, clean = lib.call, lib.check, lib.clean

uji.auth = {
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
