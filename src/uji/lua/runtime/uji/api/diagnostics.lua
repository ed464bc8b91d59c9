-- uji.diagnostics: the log of what went wrong (<data>/diagnostics.log), newest first.
local uji, host, lib = ...
local check, is_callable, mark_array = lib.check, lib.is_callable, lib.mark_array

uji.diagnostics = {
  -- list(cb?) → { {time = "YYYY-MM-DD HH:MM:SS", source, text}, ... }, newest first, no repeats.
  list = function(cb)
    check(cb == nil or is_callable(cb), "uji.diagnostics.list: the callback must be a function")
    local rows = mark_array(host.diagnostics_list())
    if cb then
      cb(rows)
      return function() end
    end
    return rows
  end,
}
