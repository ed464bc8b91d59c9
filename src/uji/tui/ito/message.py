"""The `render_message` hook (reference §2 events): a handler given
`{type, text, width, name?, tool_calls?}` may return an ito view, which then stands for
the transcript entry. The first view wins; a handler that returns something else is
skipped with a notice; one that raises is a notice and the entry draws as usual.

Besides the saved messages' types, a tool call waiting for its result is offered as
`pending` (with `tool_calls`), then again as `tool` once its result is in; a message
typed during a turn is offered as `queued` while it waits (its row of the queue)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.text import Text
    from textual.widget import Widget

    from uji.app import App
    from uji.lua.api.ito import LuaSource
    from uji.tui.entry import Entry

Notice = Callable[[str], None]
# The entry kinds as the hook names the message types.
TYPES = {"answer": "assistant", "user": "user", "tool": "tool", "thinking": "thinking", "notice": "notice",
         "error": "error", "shell": "shell", "info": "info"}  # fmt: skip
WAITING = ("pending", "running")  # a tool entry's statuses before its result
# Called in Lua: the handler's answer as an ito root, false for a non-view, nil for none.
# A list of lines (strings or span lists: the older `set_lines` format) is drawn as lines.
WRAP = """
return function(fn, payload)
  local v = fn(payload)
  if v == nil then return nil end
  local ito = require("ito")
  if ito.is_view(v) then return ito.root(v) end
  if type(v) == "table" and getmetatable(v) == nil and #v > 0 then
    for _, line in ipairs(v) do
      if type(line) ~= "string" and (type(line) ~= "table" or ito.is_view(line)) then return false end
    end
    return ito.root(ito.Lines(v))
  end
  return false
end
"""


# The replaceable views (`uji.ui.<View>`, reference §6) by the type the hook names.
VIEWS = {"user": "UserMessage", "pending": "ToolCall", "tool": "ToolOutput", "shell": "Shell",
         "info": "SystemMessage", "error": "ErrorMessage", "notice": "Notice", "thinking": "Thinking",
         "queued": "Queued"}  # fmt: skip
ENTRY_VIEWS = (*VIEWS.values(), "Running", "Compaction")  # the views that draw a whole entry


def offered(app: App) -> bool:
    """Whether messages go through Lua before they are drawn: a render_message handler, or
    a replaced view of a message."""
    if app.events.handlers("render_message"):
        return True
    from uji.tui.ito.replaced import replaced_among

    return bool(replaced_among(app, ENTRY_VIEWS))


def is_pending(entry: Entry) -> bool:
    return entry.kind == "tool" and entry.data.get("status") in WAITING


def payload(entry: Entry, width: int) -> dict[str, Any]:
    d = entry.data
    if is_pending(entry):
        try:
            arguments = json.loads(str(d.get("arguments") or "{}"))
        except ValueError:
            arguments = str(d.get("arguments") or "")
        name = str(d.get("name") or "")
        return {
            "type": "pending",
            "text": str(d.get("subject") or ""),
            "width": width,
            "name": name,
            "progress": str(d.get("progress") or ""),
            "tool_calls": [{"id": str(d.get("id") or ""), "name": name, "arguments": arguments}],
        }
    text = d.get("text") or d.get("content") or d.get("output") or ""
    out: dict[str, Any] = {"type": TYPES.get(entry.kind, entry.kind), "text": str(text), "width": width}
    if d.get("name"):
        out["name"] = str(d["name"])
    if d.get("view") == "Compaction":
        out["summary"] = str(d.get("summary") or "")
    return out


def custom_source(app: App, data: dict[str, Any], notice: Notice, view: str | None) -> LuaSource | None:
    """The first handler's view for `data` as a root the screen draws, else the view that
    replaces `view` (`uji.ui.<View>`; one that fails is logged), or None."""
    from uji.tui.ito.replaced import source

    rt = app.lua
    given = rt.convert.to_lua(data, json_null=False)
    hooked = _hooked(app, given, notice)
    if hooked is not None or view is None:
        return hooked
    return source(app, view, given, int(data["width"]))


def view_name(entry: Entry, kind: str) -> str | None:
    """The view that draws an entry offered as `kind`: a running call is Running (a pending
    one ToolCall), and an entry may name its own (a compaction's info line)."""
    if kind == "pending" and entry.data.get("status") == "running":
        return "Running"
    return str(entry.data.get("view") or "") or VIEWS.get(kind)


def _hooked(app: App, given: Any, notice: Notice) -> LuaSource | None:
    handlers = app.events.handlers("render_message")
    if not handlers:
        return None
    from uji.lua.api.ito import LuaSource
    from uji.lua.runtime import LuaError

    rt = app.lua
    wrap = rt.load_source(WRAP, "=render_message")()
    for handler in handlers:
        try:
            values = rt.call_sync(wrap, handler.fn, given)
        except LuaError as e:  # the entry draws as usual; said, and logged
            notice(f"render_message: {e}")
            app.diagnostics.add("ui", f"render_message failed, drawn as uji draws it: {e}")
            continue
        root = values[0] if values else None
        if root is None:
            continue
        if root is False:
            notice(
                f"render_message: the handler from {handler.origin or '?'} returned something that is not an ito view; skipped"
            )
            continue
        return LuaSource(app.host, root)
    return None


def custom_view(app: App, entry: Entry, width: int, notice: Notice, colors: Any) -> Widget | None:
    if entry.kind not in TYPES:
        return None
    data = payload(entry, width)
    source = custom_source(app, data, notice, view_name(entry, str(data["type"])))
    if source is None:
        return None
    from uji.tui.ito.view import ItoView

    return ItoView(source, notice, colors, classes=f"entry {entry.kind}")


def queued_rows(app: App, text: str, width: int, notice: Notice, colors: dict[str, str]) -> list[Text] | None:
    """A queued message's rows as the hook's view draws them, or None to draw it as usual."""
    source = custom_source(app, {"type": "queued", "text": text, "width": width}, notice, "Queued")
    if source is None:
        return None
    from uji.tui.ito.layout import paint
    from uji.ui.ito import ItoError

    try:
        tree = source.render(width)
    except ItoError as e:
        notice(f"render_message: a view failed to draw: {e}")
        return None
    return paint(tree, width, source=source, colors=colors).lines
