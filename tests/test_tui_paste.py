"""Pasting into the composer. A long paste (more than one line or 80 characters, as the
original) goes in as a `[paste #N +L lines]` marker and reaches the model whole; a short
one is text. A big message recalled into the composer lands whole, shows its end wrapped
at the screen's width (and wrapped again when the terminal narrows), and goes whole to
the model."""

from __future__ import annotations

from pathlib import Path

from textual import events

from tests.fakes.openai_server import FakeOpenAI, text
from tests.test_tui_support import SIZE, idle, make_app, ready, screen_text, shows, type_text, until


def user_texts(fake: FakeOpenAI) -> list[str]:
    messages = fake.turn_requests[-1].body["messages"]
    return [m["content"] for m in messages if m.get("role") == "user"]


async def test_a_long_paste_is_a_marker_in_the_composer_and_whole_for_the_model(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    traceback = 'Traceback (most recent call last):\r\n  File "x.py", line 1\r\nValueError: bad\r\n'
    url = "https://example.com/" + "a" * 70  # one line of 90 characters
    fake.script(text("got it"))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "see ")
        app.post_message(events.Paste(traceback))  # as the terminal driver sends it
        await until(pilot, lambda: app.composer.text == "see [paste #1 +3 lines]", what="the marker")
        await type_text(pilot, " and ")
        app.post_message(events.Paste(url))
        await until(pilot, lambda: app.composer.text.endswith(" and [paste #2 90 chars]"))
        app.post_message(events.Paste(" short words"))  # 1 line, 12 characters: text
        await until(pilot, lambda: app.composer.text.endswith("[paste #2 90 chars] short words"))
        await shows(pilot, "see [paste #1 +3 lines] and [paste #2 90 chars] short words")
        await type_text(pilot, " [paste #7 +2 lines]")  # typed by hand: no paste, stays as typed
        await pilot.press("enter")
        await until(pilot, lambda: fake.turn_requests, what="the request")
        await idle(pilot)
        # The transcript keeps the markers; the model got the pastes whole (below).
        screen = await shows(pilot, "see [paste #1 +3 lines] and [paste #2 90 chars] short words [paste #7")
        assert "ValueError: bad" not in screen
        assert app.composer.text == "" and len(app.pastes) == 0
        # And so does the session opened again.
        assert app.conversation.session_id is not None
        assert app.conversation.resume(app.conversation.session_id) is None
        screen = await shows(pilot, "see [paste #1 +3 lines] and [paste #2 90 chars]")
        assert "ValueError: bad" not in screen
    want = (
        'see Traceback (most recent call last):\n  File "x.py", line 1\nValueError: bad\n'
        f" and {url} short words [paste #7 +2 lines]"
    )
    assert user_texts(fake) == [want]


async def test_deleting_a_marker_drops_its_paste_and_the_draft_keeps_its_pastes_through_history(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(text("one"), text("two"))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "first")
        await pilot.press("enter")
        await until(pilot, lambda: len(fake.turn_requests) == 1)
        await idle(pilot)
        app.post_message(events.Paste("line a\nline b"))
        await until(pilot, lambda: app.composer.text == "[paste #1 +2 lines]")
        await pilot.press("backspace")  # one character of the marker: its paste goes
        await until(pilot, lambda: len(app.pastes) == 0, what="the paste dropped")
        await pilot.press("ctrl+u")
        app.post_message(events.Paste("kept 1\nkept 2\nkept 3"))
        await until(pilot, lambda: app.composer.text == "[paste #1 +3 lines]")
        await pilot.press("ctrl+p")  # the message sent before, then back to the draft
        await until(pilot, lambda: app.composer.text == "first")
        await pilot.press("ctrl+n")
        await until(pilot, lambda: app.composer.text == "[paste #1 +3 lines]")
        await pilot.press("enter")
        await until(pilot, lambda: len(fake.turn_requests) == 2)
        await idle(pilot)
    assert user_texts(fake) == ["first", "kept 1\nkept 2\nkept 3"]


async def test_a_100_kb_paste_is_sent_whole_and_recalled_whole_wrapped_to_the_width(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    line = "def load(path: str) -> bytes: return open(path, 'rb').read()  # " + "x" * 40 + "\n"
    pasted = line * (100_000 // len(line)) + "tail " * 30 + "END-OF-PASTE"
    fake.script(text("got it"))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.post_message(events.Paste(pasted))  # as the terminal driver sends it
        lines = pasted.count("\n") + 1
        await until(pilot, lambda: app.composer.text == f"[paste #1 +{lines} lines]", what="the marker")
        await pilot.press("enter")
        await idle(pilot)
        assert user_texts(fake) == [pasted]
        await pilot.press("ctrl+p")  # the message sent, whole in the composer
        await until(pilot, lambda: app.composer.text == pasted, what="the message recalled")
        # The last line (155 characters) is wider than the screen: wrapped, its end in view.
        await until(pilot, lambda: "END-OF-PASTE" in screen_text(app), what="the paste's end on screen")
        await pilot.resize_terminal(60, SIZE[1])
        await pilot.press("ctrl+e")  # the end of the line: back in view
        await until(pilot, lambda: "END-OF-PASTE" in screen_text(app), what="the end at 60 columns")
        rows = [r for r in screen_text(app).splitlines() if "tail" in r or "END-OF-PASTE" in r]
        assert rows and all(len(r.rstrip()) <= 60 for r in rows), rows


async def test_a_5_mb_paste_is_sent_whole_and_recalled_whole(tmp_path: Path, fake: FakeOpenAI) -> None:
    """The original's input torture case. Lines with a tab and with wide characters
    (wider on screen than their length) are wrapped by their cells like any other."""
    block = "def load(path: str) -> bytes:\n\twith open(path, 'rb') as f:\n        return f.read()\n\n"
    wide = "漢字" * 40  # 80 characters, 160 cells: two rows at 100 columns
    pasted = block * (5_000_000 // len(block)) + wide + "\nEND-OF-PASTE"
    fake.script(text("got it"))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.post_message(events.Paste(pasted))
        await until(pilot, lambda: app.composer.text.startswith("[paste #1 +"), 60, "the marker")
        await pilot.press("enter")
        await idle(pilot, timeout=120)
        # The transcript shows the paste's marker, not 238,094 lines.
        screen = await shows(pilot, f"> [paste #1 +{pasted.count(chr(10)) + 1} lines]")
        assert "got it" in screen and "def load" not in screen
        assert user_texts(fake) == [pasted]
        await pilot.press("ctrl+p")
        await until(pilot, lambda: app.composer.text == pasted, 120, "the message recalled")
        screen = await until(pilot, lambda: "END-OF-PASTE" in (s := screen_text(app)) and s, 60)
        rows = [r.strip() for r in screen.splitlines() if "漢" in r]
        assert len(rows) == 2 and "".join(rows) == wide, rows


async def test_a_draft_cleared_with_ctrl_c_comes_back_with_its_paste(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(text("ok"))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "look: ")
        app.post_message(events.Paste("one\ntwo\nthree"))
        await until(pilot, lambda: app.composer.text == "look: [paste #1 +3 lines]")
        await pilot.press("ctrl+c")  # the draft goes to the history, the composer empties
        await until(pilot, lambda: app.composer.text == "" and len(app.pastes) == 0)
        await pilot.press("up")
        await until(pilot, lambda: app.composer.text == "look: one\ntwo\nthree", what="the draft back whole")
        await pilot.press("enter")
        await until(pilot, lambda: fake.turn_requests, what="the request")
        await idle(pilot)
    assert user_texts(fake) == ["look: one\ntwo\nthree"]
