"""Tests for the SQLite session store, on real database files."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import drain, read_line

SRC = Path(__file__).resolve().parents[1] / "src"
if str(SRC) not in sys.path:  # the package may not be installed in the venv
    sys.path.insert(0, str(SRC))

from uji.store import sessions  # noqa: E402
from uji.store.sessions import (  # noqa: E402
    CRASH_ERROR,
    SCHEMA_VERSION,
    SchemaTooNewError,
    Store,
    StoreError,
    new_id,
)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "nested" / "uji.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    s = Store(str(db_path))
    yield s
    s.close()


class Clock:
    """A clock for the store that moves only when the test moves it (ms since the epoch)."""

    def __init__(self, now: int = 1_700_000_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int = 1) -> None:
        self.now += ms


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def timed(db_path: Path, clock: Clock) -> Iterator[Store]:
    """A store on the test's clock: ordering by time without sleeping."""
    s = Store(str(db_path), clock=clock)
    yield s
    s.close()


def raw(path: Path) -> sqlite3.Connection:
    """A separate connection, to look at the file the way another process would."""
    return sqlite3.connect(str(path))


# ---------------------------------------------------------------------------
# Schema, pragmas, migrations


def test_creates_parent_dirs_schema_and_pragmas(store: Store, db_path: Path) -> None:
    assert db_path.exists()
    con = raw(db_path)
    try:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"sessions", "messages", "settings"} <= tables
        cols = [r[1] for r in con.execute("PRAGMA table_info(sessions)")]
        assert cols == ["id", "title", "directory", "time_created", "time_updated", "parent", "usage", "kind"]
        cols = [r[1] for r in con.execute("PRAGMA table_info(messages)")]
        assert cols == ["id", "session_id", "seq", "type", "time_created", "data"]
        unique = [
            r
            for r in con.execute("PRAGMA index_list(messages)")
            if r[2] == 1 and not r[1].startswith("sqlite_")
        ]
        assert len(unique) == 1
        assert [r[2] for r in con.execute(f"PRAGMA index_info({unique[0][1]})")] == ["session_id", "seq"]
        fks = {(r[2], r[3], r[6]) for r in con.execute("PRAGMA foreign_key_list(messages)")}
        assert fks == {("sessions", "session_id", "CASCADE")}
        fks = {(r[2], r[3], r[6]) for r in con.execute("PRAGMA foreign_key_list(sessions)")}
        assert fks == {("sessions", "parent", "CASCADE")}
    finally:
        con.close()
    # Connection-level pragmas, as seen on the store's own connection.
    db = store._db
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL


def test_unique_index_rejects_duplicate_seq(store: Store, db_path: Path) -> None:
    sid = store.create_session("/p")
    store.append(sid, {"type": "user", "text": "a"})
    con = raw(db_path)
    try:
        with pytest.raises(sqlite3.IntegrityError):
            con.execute(
                "INSERT INTO messages VALUES (?, ?, 1, 'user', 0, '{}')",
                (new_id(), sid),
            )
    finally:
        con.close()


V1_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT 'untitled',
    directory TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE messages (id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL, type TEXT NOT NULL, time_created INTEGER NOT NULL, data TEXT NOT NULL);
CREATE UNIQUE INDEX messages_session_seq ON messages(session_id, seq);
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT);
PRAGMA user_version = 1;
"""


def test_migrates_version_1_database_keeping_data(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    con = raw(db_path)
    con.executescript(V1_SCHEMA)
    con.execute("INSERT INTO sessions VALUES ('s1', 'old one', '/proj', 100, 200)")
    con.execute("INSERT INTO messages VALUES ('m1', 's1', 1, 'user', 150, ?)", (json.dumps({"text": "hi"}),))
    con.execute(
        "INSERT INTO messages VALUES ('m2', 's1', 2, 'assistant', 160, ?)", (json.dumps({"text": "yo"}),)
    )
    con.execute("INSERT INTO settings VALUES ('provider', 'anthropic')")
    con.commit()
    con.close()

    with Store(str(db_path)) as s:
        assert s.get_session("s1") == {
            "id": "s1",
            "title": "old one",
            "directory": "/proj",
            "parent": None,
            "time_created": 100,
            "time_updated": 200,
        }
        assert s.messages("s1") == [
            {"type": "user", "text": "hi", "seq": 1},
            {"type": "assistant", "text": "yo", "seq": 2},
        ]
        assert s.get_setting("provider") == "anthropic"
        assert s.append("s1", {"type": "user", "text": "again"}) == 3
        child = s.create_session("/proj", parent="s1")
        assert s.get_session(child)["parent"] == "s1"

    con = raw(db_path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    con.close()


def test_reopening_is_a_no_op(db_path: Path) -> None:
    with Store(str(db_path)) as s:
        sid = s.create_session("/p", "t")
        s.append(sid, {"type": "user", "text": "x"})
    with Store(str(db_path)) as s:
        assert s.messages(sid) == [{"type": "user", "text": "x", "seq": 1}]


def test_refuses_newer_schema(db_path: Path) -> None:
    Store(str(db_path)).close()
    con = raw(db_path)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.close()
    with pytest.raises(SchemaTooNewError, match="newer uji"):
        Store(str(db_path))
    # Nothing was changed on the way out.
    con = raw(db_path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
    con.close()


def test_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    bad = tmp_path / "uji.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match=str(bad)):
        Store(str(bad))
    with pytest.raises(StoreError):  # a directory where the file should be
        Store(str(tmp_path))
    with pytest.raises(StoreError):  # a file where a parent directory should be
        Store(str(bad / "sub" / "uji.db"))


def test_ids_are_uuidv7_and_time_ordered() -> None:
    ids = [new_id() for _ in range(5000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    for i in ids[:50]:
        assert len(i) == 36
        assert i[14] == "7"  # version
        assert i[19] in "89ab"  # RFC 9562 variant
    ms = int(ids[0].replace("-", "")[:12], 16)
    assert abs(ms - time.time() * 1000) < 10_000


# ---------------------------------------------------------------------------
# Messages


ALL_TYPES: list[dict[str, Any]] = [
    {
        "type": "user",
        "text": "héllo 🌍 — 日本語 \u0000 nul",
        "images": [
            {"media_type": "image/png", "data": "iVBORw0KGgo=", "name": "a.png", "width": 1, "height": 2}
        ],
    },
    {
        "type": "assistant",
        "text": "let me look",
        "tool_calls": [{"id": "c1", "name": "read", "arguments": '{"path": "a.py"}', "signature": "sig"}],
        "reasoning": "thinking…",
        "replay": {"provider": "x", "blocks": [1, 2.5, None, True]},
    },
    {
        "type": "tool",
        "tool_call_id": "c1",
        "name": "read",
        "content": "x" * 2_000_000,
        "images": [],
        "diff": "--- a\n+++ b\n",
        "summary": "read a.py",
    },
    {"type": "error", "text": "interrupted"},
    {"type": "compaction", "summary": "## Goal\n…", "through": 3, "files": ["a.py", "b/ç.py"]},
    {"type": "context", "text": "hidden"},
    {"type": "shell", "command": "echo $SECRET", "output": "s3cr3t\n", "code": 0},
    {"type": "system", "text": "model switched"},
    {"type": "job", "id": "j1", "status": "done", "output": "", "code": None},
    {"type": "assistant", "text": ""},
]


def test_round_trip_every_type(store: Store, db_path: Path) -> None:
    sid = store.create_session("/p")
    seqs = [store.append(sid, m) for m in ALL_TYPES]
    assert seqs == list(range(1, len(ALL_TYPES) + 1))
    expected = [{**m, "seq": i} for m, i in zip(ALL_TYPES, seqs, strict=True)]
    assert store.messages(sid) == expected
    # And from a fresh connection (nothing cached in memory).
    with Store(str(db_path)) as other:
        assert other.messages(sid) == expected
    # The type lives in its own column and the data is valid JSON for SQLite.
    con = raw(db_path)
    types = [r[0] for r in con.execute("SELECT type FROM messages WHERE json_valid(data) ORDER BY seq")]
    con.close()
    assert types == [m["type"] for m in ALL_TYPES]


def test_append_does_not_mutate_and_ignores_stale_seq(store: Store) -> None:
    sid = store.create_session("/p")
    msg = {"type": "user", "text": "a", "seq": 99}
    assert store.append(sid, msg) == 1
    assert msg == {"type": "user", "text": "a", "seq": 99}
    assert store.messages(sid) == [{"type": "user", "text": "a", "seq": 1}]


def test_append_errors(store: Store) -> None:
    with pytest.raises(KeyError):
        store.append("nope", {"type": "user", "text": "a"})
    sid = store.create_session("/p")
    with pytest.raises(ValueError):
        store.append(sid, {"text": "no type"})
    assert store.messages(sid) == []
    # A failed append leaves no transaction open.
    assert store.append(sid, {"type": "user", "text": "ok"}) == 1


def test_seq_is_per_session_and_contiguous(store: Store) -> None:
    a = store.create_session("/p")
    b = store.create_session("/p")
    for i in range(50):
        store.append(a if i % 3 else b, {"type": "user", "text": str(i)})
    for sid in (a, b):
        seqs = [m["seq"] for m in store.messages(sid)]
        assert seqs == list(range(1, len(seqs) + 1))
    assert store.messages("missing") == []


def test_append_bumps_time_updated(timed: Store, clock: Clock) -> None:
    sid = timed.create_session("/p")
    before = timed.get_session(sid)["time_updated"]
    assert before == clock.now
    clock.advance(5)
    timed.append(sid, {"type": "user", "text": "a"})
    after = timed.get_session(sid)
    assert after["time_updated"] > before
    assert after["time_updated"] == clock.now
    assert after["time_created"] == before


CONCURRENT_CHILD = """
import os, sys, time
from uji.store.sessions import Store
path, sid, worker, go = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
s = Store(path)
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.001)
for i in range(500):
    s.append(sid, {"type": "user", "text": f"{worker}:{i}"})
    # Leave the lock free now and then, as a real session does between
    # messages; otherwise one writer can finish while the other backs off.
    time.sleep(0.0002)
s.close()
print("done", flush=True)
"""


def test_two_processes_append_concurrently(store: Store, db_path: Path, tmp_path: Path) -> None:
    sid = store.create_session("/p")
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT_CHILD, str(db_path), sid, w, str(go)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in ("a", "b")
    ]
    for p in procs:  # both are connected before either writes: a real race
        assert p.stdout is not None
        assert read_line(p.stdout).strip() == "ready"
    go.touch()
    for p in procs:
        with p:  # closes the pipes and waits
            assert p.stdout is not None and p.stderr is not None
            out, err = drain(p, timeout=60)
        assert p.returncode == 0, err
        assert out.strip() == "done"

    msgs = store.messages(sid)
    assert [m["seq"] for m in msgs] == list(range(1, 1001))
    for w in ("a", "b"):
        mine = [m["text"] for m in msgs if m["text"].startswith(w + ":")]
        assert mine == [f"{w}:{i}" for i in range(500)]  # nothing lost, in each writer's order
    # The writers really interleaved (otherwise this test proves little).
    firsts = [m["text"][0] for m in msgs]
    switches = sum(1 for x, y in itertools.pairwise(firsts) if x != y)
    assert switches > 1


OPENER_CHILD = """
import sys
from uji.store.sessions import Store
s = Store(sys.argv[1])
s.append(s.create_session("/p"), {"type": "user", "text": "x"})
s.close()
"""


def test_processes_creating_the_database_at_once(db_path: Path) -> None:
    # Several uji processes started together on a brand-new file: one migrates,
    # the others wait on the write lock and then find the schema in place.
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER_CHILD, str(db_path)], env=env, stderr=subprocess.PIPE, text=True
        )
        for _ in range(5)
    ]
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    con = raw(db_path)
    try:
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert con.execute("SELECT count(*) FROM messages").fetchone()[0] == 5
    finally:
        con.close()


def _writing_elsewhere(db_path: Path) -> sqlite3.Connection:
    """Another process's connection holding the write lock of a new file, still in SQLite's
    rollback journal (as the first of several uji started together has it)."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    other = sqlite3.connect(db_path, isolation_level=None)
    other.execute("CREATE TABLE elsewhere(x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO elsewhere VALUES (1)")
    return other


def test_a_new_database_another_process_is_writing_is_switched_to_wal_once_it_lets_go(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite refuses the switch at once then, without the wait busy_timeout asks for: the
    # store pauses and tries again instead of failing to open.
    other = _writing_elsewhere(db_path)
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        if other.in_transaction:
            other.execute("COMMIT")  # the other process lets go during the first pause

    monkeypatch.setattr(sessions, "_pause", pause)
    with Store(str(db_path)) as s:
        s.append(s.create_session("/p"), {"type": "user", "text": "x"})
        assert s._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert pauses == [sessions.WAL_FIRST_PAUSE]  # refused once, then switched
    other.close()


def test_a_database_whose_writer_never_lets_go_fails_to_open_after_busy_timeout(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = _writing_elsewhere(db_path)
    pauses: list[float] = []
    monkeypatch.setattr(sessions, "_pause", pauses.append)
    with pytest.raises(StoreError, match=r"cannot open session database .*: database is locked"):
        Store(str(db_path))
    # Pauses that grow to WAL_LAST_PAUSE and stop once they add up to busy_timeout.
    assert pauses[:3] == [0.005, 0.01, 0.02] and max(pauses) == sessions.WAL_LAST_PAUSE
    assert sessions.BUSY_MS / 1000 <= sum(pauses) < sessions.BUSY_MS / 1000 + sessions.WAL_LAST_PAUSE
    other.close()


KILLED_CHILD = """
import sys
from uji.store.sessions import Store
s = Store(sys.argv[1])
sid = sys.argv[2]
i = 0
while True:
    seq = s.append(sid, {"type": "tool", "tool_call_id": f"c{i}", "name": "read", "content": "z" * 20000})
    print(seq, flush=True)
    i += 1
"""


def test_kill_9_mid_append_keeps_committed_messages(store: Store, db_path: Path) -> None:
    sid = store.create_session("/p")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    with subprocess.Popen(
        [sys.executable, "-c", KILLED_CHILD, str(db_path), sid],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as p:
        assert p.stdout is not None and p.stderr is not None
        last = 0
        while last < 300:
            line = read_line(p.stdout)
            assert line, drain(p)[1]
            last = int(line)
        os.kill(p.pid, signal.SIGKILL)
        for line in drain(p)[0].split():  # anything it confirmed before dying
            last = int(line)
    assert p.returncode == -signal.SIGKILL

    with Store(str(db_path)) as after:
        assert after._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        msgs = after.messages(sid)
        # Every confirmed commit is there; at most one unconfirmed one on top.
        assert last <= len(msgs) <= last + 1
        assert [m["seq"] for m in msgs] == list(range(1, len(msgs) + 1))
        assert all(m["tool_call_id"] == f"c{m['seq'] - 1}" and len(m["content"]) == 20000 for m in msgs)
        assert after.append(sid, {"type": "user", "text": "still works"}) == len(msgs) + 1


# ---------------------------------------------------------------------------
# Repair


def call(cid: str, name: str = "bash") -> dict[str, Any]:
    return {"id": cid, "name": name, "arguments": "{}"}


def test_repair_answers_unanswered_calls_in_order(store: Store) -> None:
    sid = store.create_session("/p")
    store.append(sid, {"type": "user", "text": "go"})
    store.append(
        sid, {"type": "assistant", "text": "", "tool_calls": [call("c1", "read"), call("c2", "edit")]}
    )
    store.append(sid, {"type": "tool", "tool_call_id": "c1", "name": "read", "content": "ok"})
    store.append(
        sid, {"type": "assistant", "text": "", "tool_calls": [call("c3", "bash"), call("c4", "grep")]}
    )

    assert store.repair(sid) == 3
    msgs = store.messages(sid)
    assert msgs[:4] == [
        {"type": "user", "text": "go", "seq": 1},
        {"type": "assistant", "text": "", "tool_calls": [call("c1", "read"), call("c2", "edit")], "seq": 2},
        {"type": "tool", "tool_call_id": "c1", "name": "read", "content": "ok", "seq": 3},
        {"type": "assistant", "text": "", "tool_calls": [call("c3", "bash"), call("c4", "grep")], "seq": 4},
    ]
    assert msgs[4:] == [
        {"type": "tool", "tool_call_id": cid, "name": name, "content": CRASH_ERROR, "seq": seq}
        for cid, name, seq in [("c2", "edit", 5), ("c3", "bash", 6), ("c4", "grep", 7)]
    ]
    # Idempotent.
    assert store.repair(sid) == 0
    assert len(store.messages(sid)) == 7


def test_repair_leaves_answered_sessions_alone(timed: Store, clock: Clock) -> None:
    store = timed
    sid = store.create_session("/p")
    store.append(sid, {"type": "assistant", "text": "", "tool_calls": [call("c1")]})
    store.append(sid, {"type": "tool", "tool_call_id": "c1", "name": "bash", "content": "done"})
    store.append(sid, {"type": "assistant", "text": "all good"})
    updated = store.get_session(sid)["time_updated"]
    clock.advance(5)
    assert store.repair(sid) == 0
    assert len(store.messages(sid)) == 3
    assert store.get_session(sid)["time_updated"] == updated  # no write, no bump
    assert store.repair(store.create_session("/p")) == 0


# ---------------------------------------------------------------------------
# Sessions


def test_create_get_set_title(store: Store) -> None:
    sid = store.create_session("/p")
    info = store.get_session(sid)
    assert info is not None
    assert info["title"] == "untitled" and info["directory"] == "/p" and info["parent"] is None
    assert info["time_created"] == info["time_updated"]
    assert abs(info["time_created"] - time.time() * 1000) < 10_000
    store.set_title(sid, "Fix the parser")
    assert store.get_session(sid)["title"] == "Fix the parser"
    assert store.get_session("nope") is None
    with pytest.raises(KeyError):
        store.set_title("nope", "x")
    with pytest.raises(KeyError):
        store.create_session("/p", parent="nope")


def test_latest_session_prefers_history_and_skips_children(store: Store) -> None:
    assert store.latest_session("/p") is None
    old = store.create_session("/p", "old")
    store.append(old, {"type": "user", "text": "hi"})
    blank = store.create_session("/p", "blank")  # newer, but empty
    assert store.latest_session("/p") == old
    child = store.create_session("/p", "child", parent=old)
    store.append(child, {"type": "user", "text": "sub"})  # newest with history, but a child
    assert store.latest_session("/p") == old
    newer = store.create_session("/p", "newer")
    store.append(newer, {"type": "user", "text": "x"})
    assert store.latest_session("/p") == newer
    store.create_session("/other")
    assert store.latest_session("/p") == newer
    # With no history anywhere, the latest blank one is taken.
    only_blank = store.create_session("/q")
    assert store.latest_session("/q") == only_blank
    assert blank != only_blank


def test_list_sessions_order_and_children(timed: Store, clock: Clock) -> None:
    store = timed
    a = store.create_session("/p", "a")
    b = store.create_session("/p", "b")
    c = store.create_session("/other", "c")
    store.create_session("/p", "kid", parent=a)
    clock.advance()  # times are in ms: make "a is now the most recent" unambiguous
    store.append(a, {"type": "user", "text": "bump a"})
    assert [s["id"] for s in store.list_sessions("/p")] == [a, b]
    everything = store.list_sessions()
    assert [s["id"] for s in everything] == [a, c, b]
    assert set(everything[0]) == {"id", "title", "directory", "updated"}
    assert everything[0]["title"] == "a" and everything[0]["directory"] == "/p"
    assert store.list_sessions("/none") == []


def test_sessions_are_ordered_by_their_clock_time_not_by_creation(timed: Store, clock: Clock) -> None:
    # Created in the order x, y, z, but the clock says z, x, y (a clock set back, or
    # sessions written by processes whose clocks differ): listing follows the times.
    clock.now = 3_000
    x = timed.create_session("/p", "x")
    clock.now = 5_000
    y = timed.create_session("/p", "y")
    clock.now = 1_000
    z = timed.create_session("/p", "z")
    listed = timed.list_sessions("/p")
    assert [(s["id"], s["updated"]) for s in listed] == [(y, 5_000), (x, 3_000), (z, 1_000)]
    assert timed.latest_session("/p") == y
    # Activity moves a session up: a message stamps the session with the clock's time.
    clock.now = 9_000
    seq = timed.append(z, {"type": "user", "text": "now"})
    assert [s["id"] for s in timed.list_sessions("/p")] == [z, y, x]
    info = timed.get_session(z)
    assert info is not None and (info["time_created"], info["time_updated"]) == (1_000, 9_000)
    assert timed.latest_session("/p") == z  # the only one with history, and the newest
    con = raw(Path(timed.path))
    try:
        stamped = con.execute(
            "SELECT time_created FROM messages WHERE session_id = ? AND seq = ?", (z, seq)
        ).fetchone()
    finally:
        con.close()
    assert stamped == (9_000,)
    # A repair's answers are stamped with the clock too.
    timed.append(x, {"type": "assistant", "text": "", "tool_calls": [call("c1")]})
    clock.now = 12_000
    assert timed.repair(x) == 1
    assert timed.get_session(x)["time_updated"] == 12_000
    assert [s["id"] for s in timed.list_sessions("/p")] == [x, z, y]


def test_delete_cascades_to_children_and_messages(store: Store, db_path: Path) -> None:
    root = store.create_session("/p")
    kid = store.create_session("/p", parent=root)
    grandkid = store.create_session("/p", parent=kid)
    keep = store.create_session("/p")
    for sid in (root, kid, grandkid, keep):
        store.append(sid, {"type": "user", "text": sid})
    assert store.delete_session(root) is True
    for sid in (root, kid, grandkid):
        assert store.get_session(sid) is None
        assert store.messages(sid) == []
    assert store.messages(keep) == [{"type": "user", "text": keep, "seq": 1}]
    assert store.delete_session(root) is False
    con = raw(db_path)
    assert con.execute("SELECT count(*) FROM messages").fetchone()[0] == 1
    con.close()


# ---------------------------------------------------------------------------
# Settings


def test_settings(store: Store, db_path: Path) -> None:
    assert store.get_setting("model.anthropic") is None
    store.set_setting("model.anthropic", "claude")
    store.set_setting("model.anthropic", "claude-2")
    store.set_setting("effort", "high")
    assert store.get_setting("model.anthropic") == "claude-2"
    with Store(str(db_path)) as other:  # committed, visible elsewhere
        assert other.get_setting("effort") == "high"
    store.set_setting("effort", None)
    assert store.get_setting("effort") is None
    store.set_setting("never-set", None)  # deleting a missing key is fine


def test_settings_saved_together_write_only_what_changed(store: Store, db_path: Path) -> None:
    store.set_settings({"provider": "b", "model.b": "m", "effort": None})
    assert (store.get_setting("provider"), store.get_setting("model.b")) == ("b", "m")
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    try:
        store.set_settings({"provider": "b", "model.b": "m", "effort": None})  # as stored: no write
        unchanged = list(statements)
        statements.clear()
        store.set_settings({"provider": "c", "model.b": "m", "effort": "high"})
        changed = list(statements)
    finally:
        store._db.set_trace_callback(None)
    assert len(unchanged) == 1 and unchanged[0].startswith("SELECT"), unchanged
    assert [s.split()[0] for s in changed] == ["SELECT", "BEGIN", "INSERT", "INSERT", "COMMIT"], changed
    with Store(str(db_path)) as other:  # committed, visible elsewhere
        assert (other.get_setting("provider"), other.get_setting("effort")) == ("c", "high")
    store.set_settings({"effort": None})
    assert store.get_setting("effort") is None


# ---------------------------------------------------------------------------
# Cost that does not grow: no per-row round trips, no work that grows with the
# session on each append. Counted in SQL statements, not in seconds (the times are
# figures in bench/sessions.py).


def test_append_and_load_take_the_same_statements_at_any_size(store: Store) -> None:
    sid = store.create_session("/p")
    msg = {"type": "assistant", "text": "word " * 100, "tool_calls": [call("c")]}
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    try:
        store.append(sid, msg)
        first_append = list(statements)
        for _ in range(4998):
            store.append(sid, msg)
        statements.clear()
        store.append(sid, msg)
        last_append = list(statements)
        statements.clear()
        msgs = store.messages(sid)
        load = list(statements)
    finally:
        store._db.set_trace_callback(None)
    assert len(msgs) == 5000 and [m["seq"] for m in msgs] == list(range(1, 5001))
    assert msgs[-1] == {**msg, "seq": 5000}
    assert len(last_append) == len(first_append) <= 8, last_append
    assert len(load) == 1 and load[0].startswith("SELECT"), load


# ---------------------------------------------------------------------------
# Bounded reads: the checkpoint, pages


def _fill_turns(store: Store, sid: str, n: int) -> None:
    for i in range(n):
        store.append(sid, {"type": "user", "text": f"q{i}"})
        store.append(sid, {"type": "assistant", "text": f"a{i}"})


def test_checkpoint_is_where_the_latest_compaction_left_off(store: Store) -> None:
    sid = store.create_session("/p")
    assert store.checkpoint(sid) == 1  # no compaction: from the start
    _fill_turns(store, sid, 5)  # seqs 1..10
    store.append(sid, {"type": "compaction", "summary": "s1", "through": 4, "files": []})  # seq 11
    assert store.checkpoint(sid) == 5
    _fill_turns(store, sid, 2)  # 12..15
    store.append(sid, {"type": "compaction", "summary": "s2", "through": 13, "files": []})  # seq 16
    assert store.checkpoint(sid) == 14
    # A compaction that folded everything before it: the live part starts at itself.
    store.append(sid, {"type": "compaction", "summary": "s3", "through": 99, "files": []})  # seq 17
    assert store.checkpoint(sid) == 17
    assert store.checkpoint(store.create_session("/p")) == 1


def test_messages_since_before_and_limit_page_through_a_session(store: Store) -> None:
    sid = store.create_session("/p")
    _fill_turns(store, sid, 10)  # seqs 1..20
    assert [m["seq"] for m in store.messages(sid)] == list(range(1, 21))
    assert [m["seq"] for m in store.messages(sid, since=15)] == list(range(15, 21))
    assert [m["seq"] for m in store.messages(sid, before=4)] == [1, 2, 3]
    # A page: the last `limit` before `before`, in seq order.
    assert [m["seq"] for m in store.messages(sid, before=12, limit=3)] == [9, 10, 11]
    assert [m["seq"] for m in store.messages(sid, limit=2)] == [19, 20]
    assert [m["seq"] for m in store.messages(sid, before=3, limit=5)] == [1, 2]
    assert store.messages(sid, limit=0) == []
    assert store.messages(sid, before=12, limit=1) == [{"type": "user", "text": "q5", "seq": 11}]
    assert store.count(sid) == 20 and store.count(sid, before=12) == 11


def test_resume_queries_use_indices_not_full_scans(store: Store, db_path: Path) -> None:
    sid = store.create_session("/p")
    _fill_turns(store, sid, 3)
    con = raw(db_path)
    try:
        queries = [
            (
                "SELECT seq, data FROM messages WHERE session_id = ? AND type = 'compaction'"
                " ORDER BY seq DESC LIMIT 1",
                (sid,),
            ),
            ("SELECT seq, type, data FROM messages WHERE session_id = ? AND seq >= ? ORDER BY seq", (sid, 1)),
            (
                "SELECT seq, type, data FROM messages WHERE session_id = ? AND seq >= ? AND seq < ?"
                " ORDER BY seq DESC LIMIT ?",
                (sid, 1, 5, 2),
            ),
            ("SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?", (sid,)),
        ]
        for sql, args in queries:
            plan = " | ".join(r[3] for r in con.execute("EXPLAIN QUERY PLAN " + sql, args))
            # A search through an index of (session_id, ...), never a scan of the table.
            assert "SEARCH messages USING" in plan and "INDEX" in plan, (sql, plan)
        plan = " | ".join(r[3] for r in con.execute("EXPLAIN QUERY PLAN " + queries[0][0], queries[0][1]))
        assert "messages_compaction" in plan
    finally:
        con.close()


def test_repair_looks_only_after_the_checkpoint(store: Store) -> None:
    sid = store.create_session("/p")
    store.append(sid, {"type": "user", "text": "go"})
    store.append(sid, {"type": "assistant", "text": "", "tool_calls": [call("old")]})  # folded, unanswered
    store.append(sid, {"type": "user", "text": "next"})
    store.append(sid, {"type": "compaction", "summary": "s", "through": 2, "files": []})
    store.append(sid, {"type": "assistant", "text": "", "tool_calls": [call("new")]})
    assert store.repair(sid) == 1
    answers = [m["tool_call_id"] for m in store.messages(sid) if m["type"] == "tool"]
    assert answers == ["new"]
