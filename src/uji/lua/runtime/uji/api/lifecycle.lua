-- uji.quit and uji.reload.
local uji, host, lib = ...

-- Ends uji: the screen fires before_quit and exits; `uji run` stops once this code returns.
function uji.quit() host.quit() end

-- Restarts Lua on the same session, keeping the draft (the screen); `uji run` reads the
-- config again before its prompt, once.
function uji.reload() host.reload() end
