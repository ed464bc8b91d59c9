-- uji.config and uji.data: the config dir's files (and each pack's, and the project's
-- .uji/<folder> when asked), and a plugin's private files in the data dir.
local uji, host, lib = ...
local call, check, wait, clean = lib.call, lib.check, lib.wait, lib.clean
local is_callable, mark_array = lib.is_callable, lib.mark_array

uji.config = {
  dir = host.config_dir(),
  -- files(folder, {project = true}?) → { {name, path, text, project?}, ... }: the files
  -- directly in <config>/<folder>, then each pack's <folder>, then (with project = true)
  -- .uji/<folder> of the nearest ancestor of the working directory that has one.
  files = function(folder, opts, cb)
    check(type(folder) == "string", "uji.config.files expects a folder name such as \"agents\"")
    if is_callable(opts) and cb == nil then opts, cb = nil, opts end
    check(opts == nil or type(opts) == "table", "uji.config.files: the options must be a table {project = true}")
    check(cb == nil or is_callable(cb), "uji.config.files: the callback must be a function")
    local found = call(host.config_files, clean(folder), opts ~= nil and opts.project == true)
    found = mark_array(found)
    if cb then
      cb(found)
      return function() end
    end
    return found
  end,
}

uji.data = {
  dir = host.data_dir(),
  -- read(name) → the text of <data>/<name>, or nil when there is none.
  read = function(name)
    check(type(name) == "string", "uji.data.read expects a file name")
    return call(host.data_read, clean(name))
  end,
  -- write(name, text): <data>/<name>, readable by the user only.
  write = function(name, text)
    check(type(name) == "string", "uji.data.write expects a file name")
    check(type(text) == "string", "uji.data.write expects the text to write")
    call(host.data_write, clean(name), clean(text))
  end,
}
