"""A session as one HTML page that reads offline: inline CSS, no script, nothing fetched.
Text is escaped and kept as written (white-space: pre-wrap); diffs are coloured by line."""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING

from uji.export.entries import Call, Entry, Note, Prompt, Reply
from uji.export.markdown import NOTE_TITLES, when

if TYPE_CHECKING:
    from uji.store.sessions import Session

STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem;
  color: #1d1d1f; background: #fff; }
@media (prefers-color-scheme: dark) { body { color: #e6e6e6; background: #161618; }
  .call, pre { background: #222226 !important; } }
h1 { font-size: 1.5rem; } .meta { color: #777; font-size: .9rem; }
.entry { margin: 1.2rem 0; } .who { font-weight: 600; margin-bottom: .3rem; }
.user .who { color: #0a66c2; } .uji .who { color: #8a4baf; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
.call { background: #f5f5f7; border-radius: 6px; padding: .5rem .8rem; }
.call summary { cursor: pointer; font-family: ui-monospace, monospace; }
.failed summary { color: #c0392b; }
pre { background: #f5f5f7; padding: .6rem; overflow-x: auto; white-space: pre-wrap; font: 13px/1.4 ui-monospace, monospace; }
.add { color: #1e8e3e; } .del { color: #c0392b; } .hunk { color: #777; }
.note { color: #777; }
"""


def page(session: Session, items: list[Entry]) -> str:
    body = "\n".join(filter(None, (_entry(item) for item in items)))
    started = when(session.get("time_created"))
    meta = f"session {escape(session['id'])} · {escape(session['directory'])}" + (
        f" · {started}" if started else ""
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(session['title'])}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f'<h1>{escape(session["title"])}</h1>\n<p class="meta">{meta}</p>\n'
        f"{body}\n</body>\n</html>\n"
    )


def _text(text: str) -> str:
    return f'<div class="text">{escape(text)}</div>'


def _entry(item: Entry) -> str:
    match item:
        case Prompt(text=text, images=images):
            extra = (
                f'<div class="note">({images} image{"s" if images != 1 else ""} attached)</div>'
                if images
                else ""
            )
            return f'<div class="entry user"><div class="who">User</div>{_text(text)}{extra}</div>'
        case Reply(text=text, reasoning=reasoning):
            if not text and not reasoning:  # an answer that only made calls: they follow
                return ""
            thinking = (
                f'<details class="note"><summary>Thinking</summary>{_text(reasoning)}</details>'
                if reasoning
                else ""
            )
            return f'<div class="entry uji"><div class="who">uji</div>{thinking}{_text(text) if text else ""}</div>'
        case Call():
            return _call(item)
        case Note(kind=kind, text=text):
            title = escape(NOTE_TITLES.get(kind, kind))
            return f'<div class="entry note"><div class="who">{title}</div><pre>{escape(text)}</pre></div>'
    return ""


def _call(call: Call) -> str:
    cls = "call failed" if call.failed else "call"
    args = call.argument_object()
    parts = [f"<summary>⏺ {escape(call.name)} {escape(call.subject)}</summary>"]
    if args:
        parts.append(f"<pre>{escape(json.dumps(args, indent=2, ensure_ascii=False))}</pre>")
    parts.append(f"<pre>{escape(call.result)}</pre>")
    if call.diff:
        parts.append(f"<pre>{_diff(call.diff)}</pre>")
    return f'<div class="entry"><details class="{cls}" open>{"".join(parts)}</details></div>'


def _diff(diff: str) -> str:
    lines = []
    for line in diff.splitlines():
        cls = (
            "hunk"
            if line.startswith("@@")
            else "add"
            if line.startswith("+")
            else "del"
            if line.startswith("-")
            else ""
        )
        lines.append(f'<span class="{cls}">{escape(line)}</span>' if cls else escape(line))
    return "\n".join(lines)
