"""The session store: sessions, their messages and a few settings in one SQLite file.

This module is on the `uji run` start-up path, so it imports only cheap stdlib
modules (no `uuid`, no ORM).

Durability model: every `append` is its own committed transaction, so a crash or a
`kill -9` loses at most the message that was not yet appended. WAL with
`synchronous=NORMAL` keeps commits cheap; a power loss (not a process crash) may
drop the last few commits, which is the trade the reference makes too.

Concurrency model: writes start with `BEGIN IMMEDIATE`, taking SQLite's write lock
before anything is read, so the next `seq` computed inside the transaction cannot
race with another process appending to the same session. `busy_timeout` makes the
second writer wait instead of failing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast

if TYPE_CHECKING:
    from uji.store.rows import Row

__all__ = [
    "CRASH_ERROR",
    "SCHEMA_VERSION",
    "SchemaTooNewError",
    "SessionKind",
    "Store",
    "StoreError",
    "new_id",
    "now_ms",
]

# The answer given to tool calls that were cut off by a crash (reference wording).
CRASH_ERROR = "error: uji stopped before this tool returned a result"

# What made a session: the screen or ACP (a conversation), or a one-shot `uji run`.
SessionKind = Literal["conversation", "run"]

_Migration = Callable[[sqlite3.Connection], None]


class StoreError(Exception):
    """The session database cannot be used."""


class SchemaTooNewError(StoreError):
    """The database was written by a newer uji whose schema we do not know."""


# ---------------------------------------------------------------------------
# Ids and times


def now_ms() -> int:
    """Milliseconds since the epoch, the unit of every time column."""
    return time.time_ns() // 1_000_000


# State for monotonic ids within one process: the last timestamp used and the
# 12-bit counter in the `rand_a` field (RFC 9562, method 1).
_last_ms = 0
_counter = 0


# A session's id: a UUID, in lower case (as text: re compiles it when first used).
SESSION_ID = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"


def is_session_id(text: str) -> bool:
    import re

    return re.match(SESSION_ID, text) is not None


def new_id() -> str:
    """A UUIDv7: 48-bit ms timestamp, version 7, 12-bit counter, variant, 62 random bits.

    Ids made by one process are strictly increasing even within a millisecond, so
    ordering by id is a stable tie-break for rows created in the same ms.
    """
    global _last_ms, _counter
    ms = now_ms()
    if ms > _last_ms:
        _last_ms = ms
        # Start low in the counter space to leave room for many ids in one ms.
        _counter = int.from_bytes(os.urandom(2), "big") & 0x7FF
    else:
        _counter += 1
        if _counter > 0xFFF:  # exhausted this ms: borrow the next one
            _last_ms += 1
            _counter = 0
    rand_b = int.from_bytes(os.urandom(8), "big") & 0x3FFF_FFFF_FFFF_FFFF
    value = (_last_ms << 80) | (0x7 << 76) | (_counter << 64) | (0b10 << 62) | rand_b
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


# ---------------------------------------------------------------------------
# Schema migrations. Index i holds the migration to user_version i + 1. Only ever
# append to this list: released databases depend on the earlier entries.


def _migration_1(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE IF NOT EXISTS sessions ("
        " id TEXT PRIMARY KEY,"
        " title TEXT NOT NULL DEFAULT 'untitled',"
        " directory TEXT NOT NULL,"
        " time_created INTEGER NOT NULL,"
        " time_updated INTEGER NOT NULL)"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS messages ("
        " id TEXT PRIMARY KEY,"
        " session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
        " seq INTEGER NOT NULL,"
        " type TEXT NOT NULL,"
        " time_created INTEGER NOT NULL,"
        " data TEXT NOT NULL)"
    )
    db.execute("CREATE UNIQUE INDEX IF NOT EXISTS messages_session_seq ON messages(session_id, seq)")
    db.execute("CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT)")


def _migration_2(db: sqlite3.Connection) -> None:
    # ADD COLUMN with REFERENCES is allowed because the default is NULL.
    db.execute("ALTER TABLE sessions ADD COLUMN parent TEXT REFERENCES sessions(id) ON DELETE CASCADE")
    # The cascade looks children up by parent; listing filters by directory.
    db.execute("CREATE INDEX IF NOT EXISTS sessions_parent ON sessions(parent)")
    db.execute("CREATE INDEX IF NOT EXISTS sessions_directory ON sessions(directory, time_updated)")


def _migration_3(db: sqlite3.Connection) -> None:
    # A resume starts from the session's last compaction: find it without reading the
    # session's rows (a partial index holds only the compaction rows).
    db.execute(
        "CREATE INDEX IF NOT EXISTS messages_compaction ON messages(session_id, seq) WHERE type = 'compaction'"
    )


def _migration_4(db: sqlite3.Connection) -> None:
    # What the session's requests spent, summed (JSON: tokens, requests and dollars), so
    # that a resumed session goes on counting where it stopped.
    db.execute("ALTER TABLE sessions ADD COLUMN usage TEXT")


def _migration_5(db: sqlite3.Connection) -> None:
    # What made the session: a conversation (the screen, ACP) or a one-shot `uji run`, so
    # `uji resume` and `/sessions` can leave the scripts' runs out. Older rows count as
    # conversations.
    db.execute("ALTER TABLE sessions ADD COLUMN kind TEXT NOT NULL DEFAULT 'conversation'")


MIGRATIONS: list[_Migration] = [_migration_1, _migration_2, _migration_3, _migration_4, _migration_5]
SCHEMA_VERSION = len(MIGRATIONS)


# ---------------------------------------------------------------------------


def _dumps(data: Mapping[str, object]) -> str:
    # Compact and UTF-8 as is: smaller rows, and the file stays greppable.
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _usage(text: str | None) -> dict[str, float]:
    """A session's usage column, read leniently: what is not a number is left out."""
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


if TYPE_CHECKING:
    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class Session(TypedDict):
        id: str
        title: str
        directory: str
        parent: str | None
        time_created: int  # ms since the epoch
        time_updated: int

    class Listed(TypedDict):
        """A session as `list_sessions` gives it."""

        id: str
        title: str
        directory: str
        updated: int  # time_updated


def _session_dict(row: tuple[Any, ...]) -> Session:
    sid, title, directory, parent, created, updated = row
    return {
        "id": sid,
        "title": title,
        "directory": directory,
        "parent": parent,
        "time_created": created,
        "time_updated": updated,
    }


# How long a statement waits for another process's lock before it fails (busy_timeout).
BUSY_MS = 5000
# The pauses between tries to switch a file to WAL that another process holds (`_use_wal`).
WAL_FIRST_PAUSE, WAL_LAST_PAUSE = 0.005, 0.1
_pause = time.sleep


class Store:
    """One SQLite connection to the session database at `path`."""

    def __init__(self, path: str, clock: Callable[[], int] = now_ms) -> None:
        """`clock` gives the time stamped on sessions and messages, in ms since the epoch
        (real time unless a test passes its own). Ids keep real time: they only break ties."""
        self.path = path
        self._clock = clock
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            # isolation_level=None: the sqlite3 module must not open transactions
            # behind our back; we issue BEGIN IMMEDIATE / COMMIT ourselves.
            self._db = sqlite3.connect(path, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open session database {path}: {exc}") from exc
        try:
            self._configure()
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise StoreError(f"cannot open session database {path}: {exc}") from exc
        except BaseException:
            self._db.close()
            raise

    # -- set-up ------------------------------------------------------------

    def _configure(self) -> None:
        db = self._db
        # busy_timeout first, so the other pragmas wait for a concurrent opener.
        db.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        self._use_wal()
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")

    def _use_wal(self) -> None:
        """Switch the file to WAL (once per file: later opens find it so). The switch needs
        the file to itself, and while another connection holds its write lock SQLite says
        "locked" at once instead of waiting as busy_timeout asks (waiting could deadlock):
        several uji started together on a new database failed so. Tried again, with
        growing pauses, for as long as busy_timeout lets any other statement wait."""
        pause, waited = WAL_FIRST_PAUSE, 0.0
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode != sqlite3.SQLITE_BUSY or waited >= BUSY_MS / 1000:
                    raise
            _pause(pause)
            waited += pause
            pause = min(pause * 2, WAL_LAST_PAUSE)

    def _user_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _check_not_newer(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise SchemaTooNewError(
                f"session database {self.path} has schema version {version}, but this uji "
                f"only knows up to {SCHEMA_VERSION}; it was written by a newer uji. "
                "Upgrade uji, or point --db / UJI_DB at another file."
            )

    def _migrate(self) -> None:
        start = self._user_version()
        self._check_not_newer(start)
        # The common case, an up-to-date database, takes no write lock at all.
        for target in range(start + 1, SCHEMA_VERSION + 1):
            with self._write():
                # Re-read under the write lock: another process may have migrated.
                current = self._user_version()
                self._check_not_newer(current)
                if current >= target:
                    continue
                MIGRATIONS[target - 1](self._db)
                self._db.execute(f"PRAGMA user_version={target}")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction holding the write lock from its start."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            # Also covers a failed COMMIT (disk full...), which leaves the
            # transaction open; the next write would otherwise fail on BEGIN.
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sessions ----------------------------------------------------------

    def create_session(
        self,
        directory: str,
        title: str = "untitled",
        parent: str | None = None,
        kind: SessionKind = "conversation",
    ) -> str:
        """Create a session and return its id. An unknown `parent` raises KeyError."""
        sid = new_id()
        now = self._clock()
        try:
            self._db.execute(
                "INSERT INTO sessions(id, title, directory, parent, time_created, time_updated, kind)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (sid, title, directory, parent, now, now, kind),
            )
        except sqlite3.IntegrityError:
            raise KeyError(f"unknown parent session {parent!r}")
        return sid

    def get_session(self, session_id: str) -> Session | None:
        row = self._db.execute(
            "SELECT id, title, directory, parent, time_created, time_updated FROM sessions WHERE id = ?",
            (session_id,),
        ).fetchone()
        return _session_dict(row) if row else None

    def move_session(self, session_id: str, directory: str) -> None:
        """The session goes on in another directory (`/worktree`): listed there from now."""
        cur = self._db.execute("UPDATE sessions SET directory = ? WHERE id = ?", (directory, session_id))
        if cur.rowcount == 0:
            raise KeyError(f"unknown session {session_id!r}")

    def set_title(self, session_id: str, title: str) -> None:
        """Rename a session. Does not bump time_updated: a title is not activity."""
        cur = self._db.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))
        if cur.rowcount == 0:
            raise KeyError(f"unknown session {session_id!r}")

    def set_kind(self, session_id: str, kind: SessionKind) -> None:
        """A one-shot run taken up in the screen becomes a conversation."""
        self._db.execute("UPDATE sessions SET kind = ? WHERE id = ?", (kind, session_id))

    def latest_session(self, directory: str) -> str | None:
        """The latest top-level conversation of `directory` (a one-shot run only when
        there is none), preferring ones with messages."""
        row = self._db.execute(
            "SELECT s.id FROM sessions s WHERE s.directory = ? AND s.parent IS NULL"
            " ORDER BY s.kind = 'conversation' DESC,"
            " EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id) DESC,"
            " s.time_updated DESC, s.id DESC LIMIT 1",
            (directory,),
        ).fetchone()
        return row[0] if row else None

    def list_sessions(
        self, directory: str | None = None, parent: str | None = None, kind: SessionKind | None = None
    ) -> list[Listed]:
        """Top-level sessions (or with `parent`, that session's children), newest first by
        time_updated: `{id, title, directory, updated}`; with `kind`, only those of it."""
        sql = "SELECT id, title, directory, time_updated FROM sessions WHERE "
        args: tuple[str, ...] = ()
        if parent is None:
            sql += "parent IS NULL"
        else:
            sql += "parent = ?"
            args = (parent,)
        if directory is not None:
            sql += " AND directory = ?"
            args = (*args, directory)
        if kind is not None:
            sql += " AND kind = ?"
            args = (*args, kind)
        # id (time-ordered) breaks ties between sessions touched in the same ms.
        sql += " ORDER BY time_updated DESC, id DESC"
        return [
            {"id": sid, "title": title, "directory": d, "updated": updated}
            for sid, title, d, updated in self._db.execute(sql, args).fetchall()
        ]

    def usage(self, session_id: str) -> dict[str, float]:
        """What the session has spent so far: `input`, `output`, `cache_read`,
        `cache_write`, `requests`, and `cost` in dollars once a priced request counted;
        {} for a session that spent nothing (or an unknown one)."""
        row = self._db.execute("SELECT usage FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return _usage(row[0] if row else None)

    def add_usage(self, session_id: str, spent: dict[str, float]) -> dict[str, float]:
        """Add `spent` (keys as `usage` returns them) to the session's totals, in one
        write transaction (a child run may add to the same row); returns the new totals."""
        with self._write() as db:
            row = db.execute("SELECT usage FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise KeyError(f"unknown session {session_id!r}")
            totals = _usage(row[0])
            for key, value in spent.items():
                totals[key] = totals.get(key, 0) + value
            db.execute("UPDATE sessions SET usage = ? WHERE id = ?", (_dumps(totals), session_id))
        return totals

    def delete_session(self, session_id: str) -> bool:
        """Delete a session; its children and all their messages go with it (FK cascade)."""
        cur = self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        return cur.rowcount > 0

    # -- messages ----------------------------------------------------------

    def append(self, session_id: str, message: Row) -> int:
        """Store `message` as the session's next message and return its seq.

        The dict is stored as given, minus "type" (kept in its own column) and any
        stale "seq" (the store assigns seqs). Unknown sessions raise KeyError.
        """
        mtype, data = self._split(message)
        with self._write() as db:
            seq = self._insert(db, session_id, mtype, data, self._clock())
        return seq

    @staticmethod
    def _split(message: Mapping[str, object]) -> tuple[str, str]:
        mtype = message.get("type")
        if not isinstance(mtype, str) or not mtype:
            raise ValueError(f"message needs a string 'type', got {mtype!r}")
        body = {k: v for k, v in message.items() if k != "type" and k != "seq"}
        return mtype, _dumps(body)

    @staticmethod
    def _insert(db: sqlite3.Connection, session_id: str, mtype: str, data: str, now: int) -> int:
        """Insert one message inside an open write transaction."""
        # The UPDATE doubles as the existence check, giving a clear error before
        # the FK would reject the INSERT.
        cur = db.execute("UPDATE sessions SET time_updated = ? WHERE id = ?", (now, session_id))
        if cur.rowcount == 0:
            raise KeyError(f"unknown session {session_id!r}")
        seq = db.execute(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?", (session_id,)
        ).fetchone()[0]
        db.execute(
            "INSERT INTO messages(id, session_id, seq, type, time_created, data) VALUES (?, ?, ?, ?, ?, ?)",
            (new_id(), session_id, seq, mtype, now, data),
        )
        return int(seq)

    def messages(
        self, session_id: str, since: int = 1, before: int | None = None, limit: int | None = None
    ) -> list[Row]:
        """Messages of a session in seq order, each with "seq" added: those with
        `since` <= seq < `before`, and of those the last `limit` (all by default)."""
        loads = json.loads
        sql = "SELECT seq, type, data FROM messages WHERE session_id = ? AND seq >= ?"
        args: list[Any] = [session_id, since]
        if before is not None:
            sql += " AND seq < ?"
            args.append(before)
        if limit is None:
            rows = self._db.execute(sql + " ORDER BY seq", args).fetchall()
        else:
            rows = self._db.execute(sql + " ORDER BY seq DESC LIMIT ?", [*args, max(limit, 0)]).fetchall()
            rows.reverse()
        # The rows as this store wrote them (`append` takes only a `Row`).
        return [cast("Row", {"type": mtype, **loads(data), "seq": seq}) for seq, mtype, data in rows]

    def user_messages(self, session_id: str, limit: int) -> list[tuple[int, str]]:
        """(seq, text) of the session's last `limit` user messages, newest first."""
        rows = self._db.execute(
            "SELECT seq, data FROM messages WHERE session_id = ? AND type = 'user' ORDER BY seq DESC LIMIT ?",
            (session_id, max(limit, 0)),
        ).fetchall()
        out: list[tuple[int, str]] = []
        for seq, data in rows:
            text = json.loads(data).get("text")
            out.append((int(seq), text if isinstance(text, str) else ""))
        return out

    def truncate(self, session_id: str, since: int) -> int:
        """Delete the session's messages from seq `since` on (a rewind); how many went.
        A compaction among them goes too, so the live part is again what it was then."""
        with self._write() as db:
            cur = db.execute("DELETE FROM messages WHERE session_id = ? AND seq >= ?", (session_id, since))
            db.execute("UPDATE sessions SET time_updated = ? WHERE id = ?", (self._clock(), session_id))
        return cur.rowcount

    def checkpoint(self, session_id: str) -> int:
        """The seq the session's live part starts at: the first message its latest
        compaction did not fold (1 when it has none). What the model is sent, and what
        a resume needs, is from there on; older messages stay here for reading."""
        row = self._db.execute(
            "SELECT seq, data FROM messages WHERE session_id = ? AND type = 'compaction'"
            " ORDER BY seq DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        if row is None:
            return 1
        seq, data = row
        through = json.loads(data).get("through", 0)
        if not isinstance(through, int) or isinstance(through, bool):
            through = 0
        return max(1, min(through + 1, int(seq)))

    def count(self, session_id: str, before: int | None = None) -> int:
        """How many messages the session has (with seq < `before`, if given)."""
        sql = "SELECT COUNT(*) FROM messages WHERE session_id = ?"
        args: list[Any] = [session_id]
        if before is not None:
            sql += " AND seq < ?"
            args.append(before)
        return int(self._db.execute(sql, args).fetchone()[0])

    def repair(self, session_id: str) -> int:
        """Answer tool calls left without a `tool` message (a crash mid-call).

        Only the live part (from the latest compaction's checkpoint on) is looked at:
        older calls are never sent again, and each resume repaired them while they were
        live. The answers are appended now, in call order, so they get seqs after
        whatever followed the calls; readers pair answers by tool_call_id, not by
        position. Runs in one transaction, so two processes repairing at once
        cannot both answer. Idempotent: a second run finds nothing to do.
        """
        with self._write() as db:
            missing = self._unanswered(db, session_id, self.checkpoint(session_id))
            now = self._clock()
            for call_id, name in missing:
                answer = {"tool_call_id": call_id, "name": name, "content": CRASH_ERROR}
                self._insert(db, session_id, "tool", _dumps(answer), now)
        return len(missing)

    @staticmethod
    def _unanswered(db: sqlite3.Connection, session_id: str, since: int) -> list[tuple[str, str]]:
        rows = db.execute(
            "SELECT type, data FROM messages WHERE session_id = ? AND seq >= ?"
            " AND type IN ('assistant', 'tool') ORDER BY seq",
            (session_id, since),
        )
        calls: list[tuple[str, str]] = []
        answered: set[str] = set()
        for mtype, data in rows:
            body = json.loads(data)
            if mtype == "tool":
                answered.add(body.get("tool_call_id"))
                continue
            for call in body.get("tool_calls") or ():
                call_id = call.get("id")
                if call_id:  # a call without an id cannot be answered
                    calls.append((call_id, call.get("name") or ""))
        seen: set[str] = set()
        missing: list[tuple[str, str]] = []
        for call_id, name in calls:
            if call_id not in answered and call_id not in seen:
                seen.add(call_id)
                missing.append((call_id, name))
        return missing

    # -- settings ----------------------------------------------------------

    def get_setting(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_settings(self, values: dict[str, str | None]) -> None:
        """Save several settings in one transaction (None deletes one); those already
        stored as given are left alone, so saving what did not change writes nothing."""
        keys = list(values)
        marks = ", ".join("?" * len(keys))
        stored = dict(
            self._db.execute(f"SELECT key, value FROM settings WHERE key IN ({marks})", keys).fetchall()
        )
        changed = {k: v for k, v in values.items() if stored.get(k) != v}
        if not changed:
            return
        with self._write():
            for key, value in changed.items():
                self.set_setting(key, value)

    def set_setting(self, key: str, value: str | None) -> None:
        """Save a setting; None deletes it."""
        if value is None:
            self._db.execute("DELETE FROM settings WHERE key = ?", (key,))
        else:
            self._db.execute(
                "INSERT INTO settings(key, value) VALUES (?, ?)"
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
