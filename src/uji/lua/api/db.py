"""uji.db: SQLite databases for plugins (Python's sqlite3, on the loop thread: statements
are short, and a transaction must not wait in the middle).

Rows come back as tables of column = value; SQL NULL is `uji.db.null` (the same sentinel
as `uji.json.null`), BLOBs are Lua strings of their bytes. Parameters are a list (for `?`) or a table (for `:name`).
"""

from __future__ import annotations

import os
import sqlite3
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import Api, ApiError

if TYPE_CHECKING:
    from uji.lua.host import LuaHost


def install(host: LuaHost) -> Api:
    opened: set[sqlite3.Connection] = set()

    def close_all() -> None:
        for conn in list(opened):
            conn.close()

    host.on_close.append(close_all)

    def params(raw: Any) -> Any:
        if raw is None:
            return ()
        value = host.lua.convert.to_python(raw)
        if isinstance(value, list):
            return value
        if isinstance(value, dict):
            return value
        raise ApiError("params must be a list (for ?) or a table (for :name)")

    def db_open(path: str) -> Any:
        full = path if path == ":memory:" else os.path.expanduser(path)
        try:
            conn = sqlite3.connect(full, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 5000")
        except sqlite3.Error as e:
            return None, f"uji.db.open: {path}: {e}"
        opened.add(conn)
        return conn

    def db_exec(conn: sqlite3.Connection, sql: str, raw: Any) -> int:
        before = conn.total_changes
        try:
            if raw is not None:
                conn.execute(sql, params(raw))
            elif conn.in_transaction:
                _each(conn, sql)  # executescript would commit the open transaction first
            else:
                conn.executescript(sql)
        except sqlite3.Error as e:
            raise ApiError(f"sql: {e}") from None
        return conn.total_changes - before

    def db_query(conn: sqlite3.Connection, sql: str, raw: Any) -> Any:
        try:
            cur = conn.execute(sql, params(raw))
            names = [d[0] for d in cur.description or ()]
            rows = [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
        except sqlite3.Error as e:
            raise ApiError(f"sql: {e}") from None
        return host.lua.convert.to_lua(rows)  # NULL becomes the null sentinel

    def db_close(conn: sqlite3.Connection) -> None:
        opened.discard(conn)
        conn.close()

    return {"db_open": db_open, "db_exec": db_exec, "db_query": db_query, "db_close": db_close}


def _each(conn: sqlite3.Connection, sql: str) -> None:
    """Several statements inside a transaction (executescript would commit it first)."""
    for statement in _split(sql):
        conn.execute(statement)


def _split(sql: str) -> list[str]:
    out, buf = [], ""
    for piece in sql.split(";"):
        buf += piece
        if sqlite3.complete_statement(buf + ";"):
            if buf.strip():
                out.append(buf + ";")
            buf = ""
        else:
            buf += ";"
    if buf.strip(" ;\n\t"):
        out.append(buf)
    return out
