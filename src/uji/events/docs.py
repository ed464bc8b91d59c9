"""The notifications and hooks of the catalog as documentation: a markdown section of the
Lua API reference and LuaLS definitions (`---@meta`) for editors.

The Lua API reference (uji.lua.typegen, written by `uji.devtools.gen_docs` to
`docs/lua-api.md` and `src/uji/lua/meta/uji.lua`) takes the pieces: `markdown_section`,
`luals_classes`, `luals_on_overloads`.
"""

from __future__ import annotations

from uji.events.catalog import FOLDS, HOOKS, NOTIFICATIONS, Spec

INTRO = """\
`uji.on(event, handler, {priority=50, name?})` → name · `uji.off(event, name)` → bool ·
`uji.emit(event, payload)`

Handlers run lower priority first, then in the order they were added; a handler named
like an earlier one of the same event replaces it, and `uji.off` removes it by name.
Every payload has `event`, the event's name. A handler that raises becomes a notice and
the rest go on, except in `before_tool`, where it denies the call. `uji.on` takes any
other name too: a custom event, which plugins fire with `uji.emit(name, payload)`."""


def _payload_md(spec: Spec) -> str:
    if not spec.fields:
        return "—"
    return ", ".join(f"`{f.name}: {spec.lua_type(f.name)}`" for f in spec.fields)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_section(level: int = 2) -> str:
    """The "Events and hooks" section of the Lua API reference; `level` is its heading level."""
    h = "#" * level
    out = [f"{h} Events and hooks", "", INTRO, "", f"{h}# Notifications", ""]
    out += [f"{FOLDS['notify'].capitalize()}.", ""]
    out += ["| Event | Payload | When |", "|---|---|---|"]
    for spec in NOTIFICATIONS:
        out.append(f"| `{spec.name}` | {_cell(_payload_md(spec))} | {_cell(spec.doc)} |")
    out += ["", f"{h}# Hooks", "", "Return values are used, as each hook says.", ""]
    for spec in HOOKS:
        out += [f"{h}## `{spec.name}`", "", spec.doc, ""]
        for f in spec.fields:
            note = f" — {f.doc}" if f.doc else ""
            out.append(f"- `{f.name}: {spec.lua_type(f.name)}`{note}")
        out.append(f"- returns `{spec.returns}`: {FOLDS[spec.fold]}")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def class_name(spec: Spec) -> str:
    return f"uji.event.{spec.name}"


def luals_classes() -> list[str]:
    """One `---@class` per event and hook payload, the decision a `before_tool` handler
    returns, `uji.OnOptions` and the alias of every known event name."""
    out: list[str] = []
    for spec in NOTIFICATIONS + HOOKS:
        out.append(f"---{spec.doc}")
        out.append(f"---@class {class_name(spec)}")
        out.append(f'---@field event "{spec.name}"')
        for f in spec.fields:
            note = f" {f.doc}" if f.doc else ""
            out.append(f"---@field {f.name} {spec.lua_type(f.name)}{note}")
        out.append("")
    out += [
        "---What a `before_tool` handler decides; nil leaves it to the next handler and the policy.",
        "---@class uji.ToolDecision",
        "---@field allow? true",
        "---@field deny? string the reason the model sees",
        "---@field ask? true|string a question, with its title if a string",
        "",
        "---@class uji.OnOptions",
        "---@field priority? number lower runs first (default 50)",
        "---@field name? string replaces the handler of this event with this name",
        "",
        "---@alias uji.EventName",
    ]
    for spec in NOTIFICATIONS + HOOKS:
        out.append(f'---| "{spec.name}" # {spec.doc}')
    out.append("---| string # a custom event, fired with uji.emit")
    return out


def luals_on_overloads() -> list[str]:
    """`---@overload` lines for `uji.on`, one per known event, typing the handler."""
    out = []
    for spec in NOTIFICATIONS + HOOKS:
        returns = f": {spec.returns}" if spec.returns else ""
        handler = f"fun(e: {class_name(spec)}){returns}"
        out.append(
            f'---@overload fun(event: "{spec.name}", handler: {handler}, opts?: uji.OnOptions): string'
        )
    return out
