"""The `render_message` hook (reference §2 events): a handler given
`{type, text, width, name?, tool_calls?}` may return an ito view, which then stands for
the transcript entry. The first view wins; a handler that returns something else is
skipped with a notice; one that raises is a notice and the entry draws as usual."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.widget import Widget

    from uji.app import App
    from uji.tui.entry import Entry

# The entry kinds as the hook names the message types.
TYPES = {"answer": "assistant", "user": "user", "tool": "tool", "thinking": "thinking", "notice": "notice",
         "error": "error", "shell": "shell", "info": "info"}  # fmt: skip
# Called in Lua: the handler's answer as an ito root, false for a non-view, nil for none.
WRAP = """
return function(fn, payload)
  local v = fn(payload)
  if v == nil then return nil end
  local ito = require("ito")
  if ito.is_view(v) then return ito.root(v) end
  return false
end
"""


def payload(entry: Entry, width: int) -> dict[str, Any]:
    d = entry.data
    text = d.get("text") or d.get("content") or d.get("output") or ""
    out: dict[str, Any] = {"type": TYPES.get(entry.kind, entry.kind), "text": str(text), "width": width}
    if d.get("name"):
        out["name"] = str(d["name"])
    return out


def custom_view(app: App, entry: Entry, width: int, notice: Any, colors: Any) -> Widget | None:
    handlers = app.events.handlers("render_message")
    if not handlers or entry.kind not in TYPES:
        return None
    from uji.lua.api.ito import LuaSource
    from uji.lua.runtime import LuaError
    from uji.tui.ito.view import ItoView

    rt = app.lua
    wrap = rt.load_source(WRAP, "=render_message")()
    data = rt.convert.to_lua(payload(entry, width), json_null=False)
    for handler in handlers:
        try:
            values = rt.call_sync(wrap, handler.fn, data)
        except LuaError as e:
            notice(f"render_message: {e}")
            continue
        root = values[0] if values else None
        if root is None:
            continue
        if root is False:
            notice(
                f"render_message: the handler from {handler.origin or '?'} returned something that is not an ito view; skipped"
            )
            continue
        view = ItoView(LuaSource(app.host, root), notice, colors, classes=f"entry {entry.kind}")
        return view
    return None
