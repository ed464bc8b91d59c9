"""uji.session: the open session, its messages and usage, and the session list."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import Api, ApiError, Pending
from uji.store.sessions import is_session_id

if TYPE_CHECKING:
    from collections.abc import Callable

    from uji.agent.limits import Limits
    from uji.frontend import Frontend
    from uji.lua.host import LuaHost
    from uji.store.sessions import Store


def short_directory(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if path == home or path.startswith(home + os.sep) else path


def install(host: LuaHost, frontend: Frontend, store: Callable[[], Store], cwd: str, limits: Limits) -> Api:
    return {
        **_open_session_api(host, frontend, store, cwd, limits),
        **_steering_api(host, frontend),
        **_sessions_api(host, frontend, store),
    }


def _converter(host: LuaHost) -> Callable[[Any], Any]:
    def to_lua(value: Any) -> Any:
        return host.lua.convert.to_lua(value, json_null=False)

    return to_lua


def _open_session_api(
    host: LuaHost, frontend: Frontend, store: Callable[[], Store], cwd: str, limits: Limits
) -> Api:
    """What the open session is: its id and title, messages, usage, limits, context, queue, state."""
    to_lua = _converter(host)

    def agent() -> Any:
        return frontend.agent

    def session_info() -> Any:
        a = agent()
        if a is None:
            return None
        row = store().get_session(a.session_id)
        directory = row["directory"] if row else cwd
        return to_lua(
            {
                "id": a.session_id,
                "title": row["title"] if row else "",
                "directory": directory,
                "short_directory": short_directory(directory),
            }
        )

    def session_messages(
        before: float | None = None, limit: float | None = None, session: str | None = None
    ) -> Any:
        """The open session's messages (or those of session `session`, a child's say) from
        the store (the agent keeps only the live part): all of them, or the last `limit`
        before seq `before`."""
        a = agent()
        page = (None if before is None else int(before), None if limit is None else int(limit))
        if session is not None:
            if not is_session_id(session) or store().get_session(session) is None:
                raise ApiError(f"uji.session.messages: no session {session}")
            rows = store().messages(session, before=page[0], limit=page[1])
        else:
            rows = store().messages(a.session_id, before=page[0], limit=page[1]) if a else []
        out = []
        for m in rows:
            fields: Mapping[str, object] = m  # each type has its own of these
            item = {
                "type": m["type"],
                "text": fields.get("text") or fields.get("content") or fields.get("summary") or "",
                "seq": m["seq"],
            }
            if fields.get("name"):
                item["name"] = fields["name"]
            out.append(item)
        return to_lua(out)

    def session_usage() -> Any:
        a = agent()
        return to_lua(a.spending.report() if a else None)

    def session_configure(opts: Any) -> None:
        from uji.agent.limits import LimitError

        data = host.lua.convert.to_python(opts)
        try:
            limits.configure(data if isinstance(data, dict) else {}, "uji.session.configure")
        except LimitError as e:
            raise ApiError(str(e)) from None

    def session_context() -> Any:
        a = agent()
        return to_lua(a.meter.context() if a else None)

    def session_queue() -> Any:
        a = agent()
        return to_lua(a.steering.texts() if a else [])

    def session_state() -> str:
        a = agent()
        return "working" if a is not None and a.running else "idle"

    def session_elapsed() -> float | None:
        a = agent()
        return a.elapsed() if a else None

    def session_set_title(title: str) -> None:
        a = agent()
        if a is None:
            raise ApiError("uji.session.set_title: no session is open")
        a.titler.set(title)

    return {
        "session_info": session_info,
        "session_messages": session_messages,
        "session_usage": session_usage,
        "session_configure": session_configure,
        "session_context": session_context,
        "session_queue": session_queue,
        "session_state": session_state,
        "session_elapsed": session_elapsed,
        "session_set_title": session_set_title,
    }


def _steering_api(host: LuaHost, frontend: Frontend) -> Api:
    """What the open session is told: a message to submit, an interrupt, a compaction, a rewind."""
    to_lua = _converter(host)

    def agent() -> Any:
        return frontend.agent

    def session_submit(text: str) -> None:
        if frontend.on_submit is None:
            raise ApiError("uji.session.submit: no session is open")
        frontend.on_submit(text)

    def session_interrupt() -> bool:
        if frontend.on_interrupt is None:
            return False
        return bool(frontend.on_interrupt())

    def session_compact() -> Pending:
        async def run() -> Any:
            a = agent()
            if a is None:
                return to_lua({"ok": False, "why": "no session is open"})
            own = a.compactor.own_context()
            if own is not None:
                return to_lua({"ok": False, "why": own})
            if a.running:
                return to_lua({"ok": False, "why": "a turn is running"})
            done, why = await a.compactor.compact(manual=True)
            return to_lua({"ok": done, "why": why})

        return Pending(run())

    def session_rewind(n: float, files: bool, conversation: bool, force: bool) -> Pending:
        """Back `n` turns: the files and/or the conversation as before the n-th last turn."""

        async def run() -> Any:
            from uji.agent.rewind import RewindRefused, points, rewind

            a = agent()
            if a is None:
                return to_lua({"ok": False, "why": "no session is open"})
            turns = points(a, limit=int(n))
            if len(turns) < int(n):
                have = f"only {len(turns)}" if turns else "no"
                return to_lua({"ok": False, "why": f"the session has {have} turn(s) to rewind"})
            try:
                done = await rewind(a, turns[-1].seq, files=files, conversation=conversation, force=force)
            except RewindRefused as e:
                return to_lua({"ok": False, "why": f"{e} (force=true overwrites them)", "files": e.paths})
            except ValueError as e:
                return to_lua({"ok": False, "why": str(e)})
            report: dict[str, Any] = {"text": done.text, "restored": done.written, "removed": done.deleted}
            report["messages"] = done.messages
            if frontend.on_rewound is not None:
                frontend.on_rewound(done.text if conversation else None)
            return to_lua({"ok": True, "report": report})

        return Pending(run())

    return {
        "session_submit": session_submit,
        "session_interrupt": session_interrupt,
        "session_compact": session_compact,
        "session_rewind": session_rewind,
    }


def _sessions_api(host: LuaHost, frontend: Frontend, store: Callable[[], Store]) -> Api:
    """The saved sessions: listed, deleted."""
    to_lua = _converter(host)

    def session_list(directory: str | None, parent: str | None = None) -> Any:
        rows = store().list_sessions(directory, parent)
        return to_lua(
            [
                {"id": r["id"], "title": r["title"], "directory": r["directory"], "updated": r["updated"]}
                for r in rows
            ]
        )

    def session_delete(session_id: str) -> tuple[Any, ...]:
        if not is_session_id(session_id):
            return None, f"not a session id: {session_id!r}"
        a = frontend.agent
        if a is not None and a.session_id == session_id:
            return None, "cannot delete the open session"
        if not store().delete_session(session_id):
            return None, f"no session {session_id}"
        return (True,)

    return {"session_list": session_list, "session_delete": session_delete}
