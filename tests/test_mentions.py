"""`@path` mentions through `uji run`: the file's content goes to the model in the user
message, as read_file would show it; a mention the gate refuses attaches nothing and
says why; `@` words that name no file stay text."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import text
from tests.test_wires_e2e import APIS, KEY, configure
from uji.tools.builtin.read_file import MAX_PAGE_BYTES


def sent_user(home: Home) -> str:
    """The text of the last user message the model received."""
    assert home.fake is not None
    messages = home.fake.turn_requests[0].body["messages"]
    users = [m for m in messages if m["role"] == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def test_a_mentioned_file_goes_with_the_message_numbered_as_read_file_shows_it(home: Home) -> None:
    (home.work / "src").mkdir()
    (home.work / "src" / "a.py").write_text("def f():\n    return 1\n")
    home.init("")
    home.fake.script(text("ok"))
    run = home.run("explain @src/a.py, please")
    assert run.rc == 0, run.stderr
    sent = sent_user(home)
    assert sent == (
        'explain @src/a.py, please\n\n<file path="src/a.py">\n    1| def f():\n    2|     return 1\n</file>'
    )
    rows = [m for m in run.messages if m["type"] == "file"]
    assert rows == [
        {
            "type": "file",
            "path": "src/a.py",
            "content": "    1| def f():\n    2|     return 1",
            "summary": "Read 2 lines",
            "seq": rows[0]["seq"],
        }
    ]
    assert [m["type"] for m in home.db_messages(run.session_id)] == ["user", "file", "assistant"]


def test_words_with_at_that_name_no_file_stay_plain_text(home: Home) -> None:
    (home.work / "notes.txt").write_text("n\n")
    home.init("")
    home.fake.script(text("ok"))
    prompt = "mail me@example.com about @decorator and @missing.py; also x@notes.txt"
    run = home.run(prompt)
    assert run.rc == 0, run.stderr
    assert sent_user(home) == prompt
    assert not [m for m in run.messages if m["type"] == "file"]


def test_quoted_paths_with_spaces_and_each_file_once(home: Home) -> None:
    (home.work / "my notes.txt").write_text("spaced\n")
    (home.work / "b.txt").write_text("bee\n")
    home.init("")
    home.fake.script(text("ok"))
    run = home.run('read @"my notes.txt" and (@b.txt) then @b.txt again')
    assert run.rc == 0, run.stderr
    sent = sent_user(home)
    assert '<file path="my notes.txt">\n    1| spaced\n</file>' in sent
    assert sent.count('<file path="b.txt">\n    1| bee\n</file>') == 1


def test_a_huge_file_is_cut_as_read_file_cuts_it(home: Home) -> None:
    line = "x" * 3000
    (home.work / "big.txt").write_text("\n".join([line] * 100) + "\n")
    home.init("")
    home.fake.script(text("ok"))
    run = home.run("look at @big.txt")
    assert run.rc == 0, run.stderr
    sent = sent_user(home)
    assert "[line truncated]" in sent and "x" * 2001 not in sent
    assert len(sent.encode()) < MAX_PAGE_BYTES + 1000
    assert "continue with offset" in sent


def test_a_policy_deny_rule_refuses_the_mention_and_nothing_is_attached(home: Home) -> None:
    (home.work / "secret.txt").write_text("TOPSECRET\n")
    home.init('uji.tool.policy({ read_file = { deny = { "secret.txt" } } })\n')
    home.fake.script(text("ok"))
    run = home.run("what is in @./secret.txt")
    assert run.rc == 0, run.stderr
    assert sent_user(home) == "what is in @./secret.txt"
    assert "TOPSECRET" not in str(home.fake.turn_requests[0].body)
    rows = [m for m in run.messages if m["type"] == "file"]
    assert len(rows) == 1 and "content" not in rows[0]
    assert "blocked by the policy rule `secret.txt`" in rows[0]["denied"]


def test_paths_outside_confinement_are_refused(home: Home, tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.write_text("OUTSIDE\n")
    os.symlink(outside, home.work / "link.txt")
    home.init("")
    home.fake.script(text("ok"))
    prompt = f"see @../secret @{outside} @link.txt"
    run = home.run(prompt)
    assert run.rc == 0, run.stderr
    assert sent_user(home) == prompt
    assert "OUTSIDE" not in str(home.fake.turn_requests[0].body)
    rows = [m for m in run.messages if m["type"] == "file"]
    assert [r["path"] for r in rows] == ["../secret", str(outside), "link.txt"]
    assert all("denied" in r and "content" not in r for r in rows) and len(rows) == 3


def test_plain_mode_says_a_mention_was_refused(home: Home) -> None:
    home.init("")
    home.fake.script(text("ok"))
    run = home.uji("run", "read @/etc/passwd")
    assert run.rc == 0 and run.stdout == "ok\n"
    assert "not attached: @/etc/passwd:" in run.stderr
    assert "root:" not in str(home.fake.turn_requests[0].body)


def test_an_ask_rule_follows_on_ask_and_hooks_decide_as_for_read_file(home: Home) -> None:
    (home.work / "asked.txt").write_text("ASKED\n")
    (home.work / "hooked.txt").write_text("HOOKED\n")
    (home.work / "shown.txt").write_text("SHOWN\n")
    home.init(
        """
        uji.tool.policy({ read_file = { ask = { "asked.txt" } } })
        uji.on("before_tool", function(e)
          if e.name == "read_file" and e.arguments.path == "hooked.txt" then return { deny = "not that one" } end
        end)
        uji.on("after_tool", function(e) return e.content .. "\\n(seen by a hook)" end)
        """
    )
    home.fake.script(text("ok"), text("ok"))
    prompt = "@asked.txt @hooked.txt @shown.txt"
    run = home.run(prompt, "--on-ask", "deny")
    assert run.rc == 0, run.stderr
    body = str(home.fake.turn_requests[0].body)
    assert "ASKED" not in body and "HOOKED" not in body
    assert sent_user(home) == f'{prompt}\n\n<file path="shown.txt">\n    1| SHOWN\n(seen by a hook)\n</file>'
    denied = {m["path"]: m["denied"] for m in run.messages if m["type"] == "file" and "denied" in m}
    assert denied == {
        "asked.txt": "nobody is here to approve this call (uji run --on-ask deny)",
        "hooked.txt": "not that one",
    }
    run = home.run("@asked.txt")  # uji run's default: what would ask is allowed
    assert run.rc == 0, run.stderr
    assert "1| ASKED" in str(home.fake.turn_requests[1].body)


def test_a_disabled_read_file_and_a_binary_file_attach_nothing(home: Home) -> None:
    (home.work / "a.txt").write_text("AAA\n")
    (home.work / "blob.bin").write_bytes(b"\0\1\2BINARY")
    home.init('uji.tool.disable({ "read_file" })\n')
    home.fake.script(text("ok"), text("ok"))
    run = home.run("@a.txt")
    assert run.rc == 0, run.stderr
    assert [m.get("denied") for m in run.messages if m["type"] == "file"] == ["read_file is disabled"]
    home.init("")
    run = home.run("@blob.bin")
    assert [m.get("error") for m in run.messages if m["type"] == "file"] == [
        "blob.bin looks like a binary file"
    ]
    assert (
        all("<file" not in str(r.body) for r in home.fake.turn_requests) and len(home.fake.turn_requests) == 2
    )


def user_text_sent(wire: str, body: dict[str, Any]) -> str:
    """All the user text of a request, read in the API's own shape."""
    if wire == "openai-chat":
        return "".join(str(m["content"]) for m in body["messages"] if m["role"] == "user")
    if wire == "anthropic":
        return "".join(
            b["text"] if isinstance(b, dict) else str(b)
            for m in body["messages"]
            if m["role"] == "user"
            for b in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}])
        )
    if wire == "responses":
        return "".join(
            p.get("text", "") if isinstance(p, dict) else str(p)
            for i in body["input"]
            if i.get("role") == "user"
            for p in (i["content"] if isinstance(i["content"], list) else [{"text": i["content"]}])
        )
    return "".join(p.get("text", "") for c in body["contents"] if c["role"] == "user" for p in c["parts"])


@pytest.mark.parametrize("wire", list(APIS))
def test_every_wire_carries_the_file_in_the_user_message(home: Home, wire: str) -> None:
    api = APIS[wire]
    (home.work / "a.py").write_text("ALPHA = 1\n")
    (home.work / "secret.txt").write_text("SECRET\n")
    with api.server() as server:
        server.script(api.fakes.text("ok"))
        configure(home, api, server)
        with (home.config / "init.lua").open("a") as f:
            f.write('uji.tool.policy({ read_file = { deny = { "secret.txt" } } })\n')
        run = home.run("explain @a.py, not @secret.txt", env={"UJI_E2E_KEY": KEY})
        assert run.rc == 0, run.stderr
        sent = user_text_sent(wire, server.turn_requests[0].body)
    assert sent == 'explain @a.py, not @secret.txt\n\n<file path="a.py">\n    1| ALPHA = 1\n</file>'


def test_a_mentioned_image_goes_as_an_image_of_the_user_message(home: Home) -> None:
    from tests.test_builtin_tools import png

    data = png(3, 2)
    (home.work / "shot.png").write_bytes(data)
    home.init("")
    home.fake.script(text("a red picture"))
    run = home.run("what is @shot.png")
    assert run.rc == 0, run.stderr
    content = home.fake.turn_requests[0].body["messages"][-1]["content"]
    assert isinstance(content, list)
    texts = [p["text"] for p in content if p["type"] == "text"]
    urls = [p["image_url"]["url"] for p in content if p["type"] == "image_url"]
    assert "".join(texts).endswith(
        '<file path="shot.png">\nshot.png is a 3x2 image/png image, attached here.\n</file>'
    )
    assert urls == ["data:image/png;base64," + base64.b64encode(data).decode()]
