"""A big paste into the composer: it lands whole, shows its end wrapped at the screen's
width (and wrapped again when the terminal narrows), and goes whole to the model."""

from __future__ import annotations

from pathlib import Path

from textual import events

from tests.fakes.openai_server import FakeOpenAI, text
from tests.test_tui_support import SIZE, idle, make_app, ready, screen_text, shows, until


async def test_a_100_kb_paste_lands_whole_wraps_to_the_width_and_is_sent(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    line = "def load(path: str) -> bytes: return open(path, 'rb').read()  # " + "x" * 40 + "\n"
    pasted = line * (100_000 // len(line)) + "tail " * 30 + "END-OF-PASTE"
    fake.script(text("got it"))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.post_message(events.Paste(pasted))  # as the terminal driver sends it
        await until(pilot, lambda: app.composer.text == pasted, what="the paste in the composer")
        # The last line (155 characters) is wider than the screen: wrapped, its end in view.
        await until(pilot, lambda: "END-OF-PASTE" in screen_text(app), what="the paste's end on screen")
        await pilot.resize_terminal(60, SIZE[1])
        await pilot.press("ctrl+e")  # the end of the line: back in view
        await until(pilot, lambda: "END-OF-PASTE" in screen_text(app), what="the end at 60 columns")
        rows = [r for r in screen_text(app).splitlines() if "tail" in r or "END-OF-PASTE" in r]
        assert rows and all(len(r.rstrip()) <= 60 for r in rows), rows
        await pilot.press("enter")
        await idle(pilot)
    sent = fake.turn_requests[-1].body["messages"]
    assert any(m.get("role") == "user" and m.get("content") == pasted for m in sent)


async def test_a_5_mb_paste_lands_whole_and_is_sent_whole(tmp_path: Path, fake: FakeOpenAI) -> None:
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
        await until(pilot, lambda: app.composer.text == pasted, 120, "the paste in the composer")
        screen = await until(pilot, lambda: "END-OF-PASTE" in (s := screen_text(app)) and s, 60)
        rows = [r.strip() for r in screen.splitlines() if "漢" in r]
        assert len(rows) == 2 and "".join(rows) == wide, rows
        await pilot.press("enter")
        await idle(pilot, timeout=120)
        # The transcript shows the message's first 100 lines and how many more it has.
        screen = await shows(pilot, f"+{pasted.count(chr(10)) + 1 - 100} lines")
        assert "got it" in screen
    sent = fake.turn_requests[-1].body["messages"]
    assert any(m.get("role") == "user" and m.get("content") == pasted for m in sent)
