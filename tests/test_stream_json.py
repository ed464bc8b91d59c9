"""`uji run --input-format stream-json`: user messages on stdin in Claude Code's format, a
turn each in one session, each ending with its own `done`, through the real command."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from typing import Any

from tests.conftest import Home
from tests.fakes.openai_server import text
from tests.test_images import _data_url, png


def user(content: Any) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}})


def test_each_message_is_a_turn_of_one_session_with_its_own_done(home: Home) -> None:
    home.init("")
    home.fake.script(text("first answer"), text("second answer"))
    stdin = "\n".join([user("hello"), "", user([{"type": "text", "text": "and then?"}])]) + "\n"
    run = home.uji("run", "--json", "--input-format", "stream-json", stdin=stdin)
    assert run.rc == 0, run.stderr
    kinds = [e["type"] for e in run.events if e["type"] in ("session", "done")]
    assert kinds == ["session", "done", "done"]
    assert [d["text"] for d in run.of("done")] == ["first answer", "second answer"]
    # One session: the second turn's request carries the first.
    second = home.fake.turn_requests[1].body["messages"]
    assert [(m["role"], m["content"]) for m in second[1:]] == [
        ("user", "hello"),
        ("assistant", "first answer"),
        ("user", "and then?"),
    ]
    saved = [m["type"] for m in home.db_messages(run.session_id)]
    assert saved == ["user", "assistant", "user", "assistant"]


def test_a_bad_line_is_named_by_its_number_and_the_others_still_run(home: Home) -> None:
    home.init("")
    home.fake.script(text("one"), text("three"))
    lines = [user("one"), '{"type": "user", "message": ', user("three"), '{"type": "control"}']
    run = home.uji("run", "--json", "--input-format", "stream-json", stdin="\n".join(lines) + "\n")
    assert run.rc == 1
    assert "uji: error: stdin line 2: not JSON" in run.stderr
    assert (
        'uji: error: stdin line 4: expected {"type": "user", "message": ...}, got type \'control\''
        in run.stderr
    )
    assert [n for n in run.notices if n.startswith("stdin line")] == [
        next(line.removeprefix("uji: error: ") for line in run.stderr.splitlines() if "line 2" in line),
        next(line.removeprefix("uji: error: ") for line in run.stderr.splitlines() if "line 4" in line),
    ]
    assert [d["text"] for d in run.of("done")] == ["one", "three"]
    users = [m["text"] for m in home.db_messages(run.session_id) if m["type"] == "user"]
    assert users == ["one", "three"]


def test_an_image_part_reaches_the_model(home: Home) -> None:
    home.init("")
    home.fake.script(text("a red box"))
    image = {"type": "base64", "media_type": "image/png", "data": base64.b64encode(png(20, 10)).decode()}
    content = [{"type": "text", "text": "what is this?"}, {"type": "image", "source": image}]
    run = home.uji("run", "--json", "--input-format", "stream-json", stdin=user(content) + "\n")
    assert run.rc == 0, run.stderr
    sent = home.fake.turn_requests[0].body["messages"][-1]["content"]
    assert sent[0] == {"type": "text", "text": "what is this?"}
    assert _data_url(sent[1]["image_url"]["url"]) == ("image/png", png(20, 10))


def test_plain_output_and_usage_errors(home: Home) -> None:
    home.init("")
    home.fake.script(text("A"), text("B"))
    run = home.uji("run", "--input-format", "stream-json", stdin=user("a") + "\n" + user("b") + "\n")
    assert (run.rc, run.stdout) == (0, "A\nB\n")
    bad = home.uji("run", "--input-format", "stream-json", "a prompt")
    assert bad.rc == 2 and "give no PROMPT" in bad.stderr
    empty = home.uji("run", "--json", "--input-format", "stream-json", stdin="")
    assert (empty.rc, empty.events) == (0, [])


def test_uji_run_imports_none_of_acp_export_or_stream_input(home: Home) -> None:
    home.init("")
    home.fake.script(text("hi"))
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "uji", "run", "hello"],
        cwd=home.work,
        env=home.env(),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0 and proc.stdout == "hi\n", proc.stderr[-2000:]
    imported = {
        line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")
    }
    assert "uji.headless" in imported
    assert not {
        m
        for m in imported
        if m.split(".")[0] == "acp" or m.startswith(("uji.acp", "uji.export", "uji.stream_input"))
    }
