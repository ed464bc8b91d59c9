-- uji.os, uji.modules, uji.keychain, uji.clipboard, uji.image.fit.
local uji, host, lib = ...
local call, check, wait, clean = lib.call, lib.check, lib.wait, lib.clean


local platform, executable, library = host.os_values()
uji.os = {
  platform = platform,
  executable = executable,
  argv = lib.mark_array({ host.os_argv() }),
  library = library,
  env = function(name)
    check(type(name) == "string", "uji.os.env expects a variable name")
    return host.os_env(name)
  end,
  cwd = function() return host.os_cwd() end,
  home = function() return host.os_home() end,
  now = function() return host.os_now() end,
  clock = function() return host.os_clock() end,
  expand = function(path)
    check(type(path) == "string", "uji.os.expand expects a path")
    return host.os_expand(clean(path))
  end,
  -- Starts uji again: in this process (the screen keeps its session and draft), or as
  -- `uji ARGS` with `args`; `carry` is the next run's uji.os.carry, `roots` come before
  -- uji's own Lua there.
  restart = function(opts)
    check(opts == nil or type(opts) == "table", "uji.os.restart: options must be a table {args, roots, carry}")
    opts = opts or {}
    for k in pairs(opts) do
      check(k == "args" or k == "roots" or k == "carry",
        "uji.os.restart: unknown option " .. tostring(k) .. " (known: args, roots, carry)")
    end
    local args = opts.args ~= nil and lib.list_of_strings(opts.args, "uji.os.restart: args") or nil
    local roots = opts.roots ~= nil and lib.list_of_strings(opts.roots, "uji.os.restart: roots") or nil
    local carry = nil
    if opts.carry ~= nil then
      local ok, text = pcall(uji.json.encode, opts.carry)
      check(ok, "uji.os.restart: carry must be what uji.json.encode takes: " .. tostring(text):gsub("^[^\n]-:%d+: ", ""))
      carry = text
    end
    call(host.os_restart, args and clean(args), roots and clean(roots), carry)
  end,
  -- Ends uji (as uji.quit), with exit status `code` (default 0).
  exit = function(code)
    check(code == nil or (type(code) == "number" and code == math.floor(code) and code >= 0 and code <= 255),
      "uji.os.exit: the status must be a whole number from 0 to 255")
    host.os_exit(code)
  end,
}
-- The config dir and the packs added so far (uji.pack.add keeps it up to date).
uji.os.roots = lib.mark_array({ host.os_roots() })

function uji.modules(namespace)
  check(type(namespace) == "string" and namespace ~= "", "uji.modules expects a namespace such as \"uji.themes\"")
  return host.modules(clean(namespace), package.path)
end

local function keychain_args(name, service, account)
  check(type(service) == "string" and service ~= "", name .. ": service must be a non-empty string")
  check(type(account) == "string" and account ~= "", name .. ": account must be a non-empty string")
end

uji.keychain = {
  get = function(service, account)
    keychain_args("uji.keychain.get", service, account)
    return wait(host.keychain("get", clean(service), clean(account), nil))
  end,
  set = function(service, account, secret)
    keychain_args("uji.keychain.set", service, account)
    check(type(secret) == "string", "uji.keychain.set: secret must be a string")
    return wait(host.keychain("set", clean(service), clean(account), clean(secret)))
  end,
  delete = function(service, account)
    keychain_args("uji.keychain.delete", service, account)
    return wait(host.keychain("delete", clean(service), clean(account), nil))
  end,
}

uji.clipboard = {
  get = function() return wait(host.clipboard_get()) end,
  set = function(text)
    check(type(text) == "string", "uji.clipboard.set expects a string")
    return wait(host.clipboard_set(clean(text)))
  end,
  image = function(edge, bytes)
    check(type(edge) == "number" and edge >= 1, "uji.clipboard.image: edge must be a number of pixels")
    check(type(bytes) == "number" and bytes >= 1, "uji.clipboard.image: bytes must be a number")
    return wait(host.clipboard_image(edge, bytes))
  end,
}

uji.image = {
  fit = function(data, edge, bytes)
    check(type(data) == "string", "uji.image.fit expects the image's bytes as a string")
    check(type(edge) == "number" and edge >= 1, "uji.image.fit: edge must be a number of pixels")
    check(type(bytes) == "number" and bytes >= 1, "uji.image.fit: bytes must be a number")
    return call(host.image_fit, lib.hex(data), edge, bytes)
  end,
}
