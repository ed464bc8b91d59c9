-- uji.wire, uji.provider, uji.model.
local uji, host, lib = ...
local call, check, wait, where, clean = lib.call, lib.check, lib.wait, lib.where, lib.clean
local is_callable, list_of_strings, mark_array = lib.is_callable, lib.list_of_strings, lib.mark_array

uji.wire = {
  add = function(name, spec)
    check(type(name) == "string" and name ~= "", "uji.wire.add: the name must be a non-empty string")
    check(type(spec) == "table" and is_callable(spec.stream), "uji.wire.add: the spec needs a `stream(request, reply)` function")
    host.wire_add(name, spec.stream)
  end,
  remove = function(name)
    check(type(name) == "string", "uji.wire.remove expects a wire name")
    return host.wire_remove(name)
  end,
  list = function() return mark_array(host.wire_list()) end,
}

uji.provider = {
  STATE = { IDLE = "idle", LOADING = "loading", LOADED = "loaded", FAILED = "failed" },
  add = function(spec)
    check(type(spec) == "table", "uji.provider.add expects a table")
    local where = "uji.provider.add " .. tostring(spec.id)
    -- What does not convert goes apart: a lazy `models` function, an api object (its
    -- class's methods), a loop class. The rest of the table is copied.
    local models_fn = is_callable(spec.models) and spec.models or nil
    local api, info, stream = nil, nil, nil
    if type(spec.api) == "table" then
      api = spec.api
      info = lib.providers().api_value(api, where)
      if info == false or info.stream then
        stream = function(request, reply) return api:stream(request, reply) end
      end
    end
    local loop = spec.loop
    if loop ~= nil then
      check(type(loop) == "table" and rawget(loop, "__index") == loop and type(loop.run) == "function",
        "the loop of provider " .. tostring(spec.id) .. " must be a class with a run method")
    end
    local rest = {}
    for k, v in pairs(spec) do
      if not ((k == "models" and models_fn) or (k == "api" and api) or k == "loop") then rest[k] = v end
    end
    local make_agent = loop and lib.providers().make_loop_agent or nil
    call(host.provider_add, clean(rest), models_fn, api, info and clean(info) or nil, stream, loop, make_agent)
  end,
  get = function(id)
    check(type(id) == "string", "uji.provider.get expects a provider id")
    return host.provider_get(id)
  end,
  load = function(id, cb)
    check(type(id) == "string", "uji.provider.load expects a provider id")
    return wait(call(host.provider_load, id), cb)
  end,
  remove = function(id)
    check(type(id) == "string", "uji.provider.remove expects a provider id")
    return host.provider_remove(id)
  end,
  list = function() return mark_array(host.provider_list()) end,
}

uji.model = {
  use = function(spec)
    check(type(spec) == "table", "uji.model.use expects a table {provider=, model=, effort=}")
    call(host.model_use, clean(spec))
  end,
  current = function() return host.model_current() end,
  efforts = function() return mark_array(host.model_efforts()) end,
}
