"""Images in the composer: Ctrl+V through a real `wl-paste` or `xclip` process (a script
first on PATH that prints a PNG), a pasted or typed image path, `[image #N]` markers that
drop their image when deleted, what the model is sent, a text-only model refused before
the request, and a resumed session showing its images."""

from __future__ import annotations

import base64
import io
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from textual import events

from tests.fakes.openai_server import FakeOpenAI
from tests.test_tui_support import SIZE, entries, idle, make_app, ready, shows, type_text, until
from uji.clipboard import NO_IMAGE, NO_TOOL, TYPES
from uji.store.sessions import Store


def png(width: int = 24, height: int = 16) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (0, 160, 80)).save(buf, "PNG")
    return buf.getvalue()


def script(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# What each tool is asked, answered as the real one does: the types on offer, then the data.
WL_PASTE = """echo "$@" >> {log}
case "$1" in
  --list-types) printf 'text/plain;charset=utf-8\\nimage/png\\n' ;;
  --no-newline) cat {image} ;;
  *) exit 2 ;;
esac
"""
XCLIP = """echo "$@" >> {log}
case "$*" in
  *TARGETS*) printf 'TARGETS\\nUTF8_STRING\\nimage/png\\n' ;;
  *image/png*) cat {image} ;;
  *) exit 2 ;;
esac
"""


def user_parts(fake: FakeOpenAI) -> list[dict[str, Any]]:
    content = fake.turn_requests[-1].body["messages"][-1]["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def image_bytes(part: dict[str, Any]) -> bytes:
    head, _, data = part["image_url"]["url"].partition(",")
    assert head == "data:image/png;base64"
    return base64.b64decode(data)


@pytest.mark.parametrize(
    ("tool", "body", "session"),
    [("wl-paste", WL_PASTE, "WAYLAND_DISPLAY"), ("xclip", XCLIP, "DISPLAY")],
)
async def test_ctrl_v_pastes_the_clipboard_image_and_it_goes_with_the_message(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, tool: str, body: str, session: str
) -> None:
    image, log = tmp_path / "clip.png", tmp_path / "calls.log"
    image.write_bytes(png())
    script(tmp_path / "bin", tool, body.format(log=log, image=image))
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    for name in ("WAYLAND_DISPLAY", "DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(session, ":0" if session == "DISPLAY" else "wayland-0")
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "what is this? ")
        await pilot.press("ctrl+v")
        await until(pilot, lambda: app.composer.text == "what is this? [image #1]")
        await pilot.press("enter")
        await until(pilot, lambda: fake.turn_requests)
        await idle(pilot)
        parts = user_parts(fake)
        assert [p["type"] for p in parts] == ["text", "image_url"]
        assert parts[0]["text"] == "what is this? [image #1]"
        assert image_bytes(parts[1]) == png()
        assert entries(app, "user")[-1]["text"] == "what is this? [image #1]"
        await shows(pilot, "what is this? [image #1]")
        assert app.composer.text == "" and len(app.attachments) == 0
    calls = log.read_text().splitlines()
    if tool == "wl-paste":
        assert calls == ["--list-types", "--no-newline --type image/png"]
    else:
        assert calls == ["-selection clipboard -t TARGETS -o", "-selection clipboard -o -t image/png"]


async def test_ctrl_v_says_why_when_there_is_no_image_to_paste(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        monkeypatch.setenv("PATH", str(empty))  # neither wl-paste nor xclip
        await pilot.press("ctrl+v")
        await until(pilot, lambda: any(e["text"] == NO_TOOL for e in entries(app, "notice")))
        # A clipboard that holds text only.
        script(tmp_path / "bin", "wl-paste", '[ "$1" = --list-types ] && echo text/plain && exit 0\nexit 1\n')
        monkeypatch.setenv("PATH", str(tmp_path / "bin"))
        monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
        await pilot.press("ctrl+v")
        await until(pilot, lambda: any(e["text"] == NO_IMAGE for e in entries(app, "notice")))
        # An empty clipboard: the tool's own words.
        script(tmp_path / "bin", "wl-paste", "echo 'No selection' >&2\nexit 1\n")
        await pilot.press("ctrl+v")
        said = f"{NO_IMAGE} (wl-paste: No selection)"
        await until(pilot, lambda: any(e["text"] == said for e in entries(app, "notice")))
        assert app.composer.text == "" and len(app.attachments) == 0
        assert fake.requests == []


async def test_a_typed_image_path_is_attached_on_send(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake)
    (tmp_path / "work" / "shot.png").write_bytes(png())
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "compare shot.png with notes.png")  # notes.png does not exist
        await pilot.press("enter")
        await until(pilot, lambda: fake.turn_requests)
        await idle(pilot)
        parts = user_parts(fake)
        assert parts[0]["text"] == "compare [image #1] with notes.png"
        assert image_bytes(parts[1]) == png() and len(parts) == 2
        await shows(pilot, "compare [image #1] with notes.png")


async def test_a_pasted_path_becomes_a_marker_and_deleting_it_drops_the_image(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    app = make_app(tmp_path, fake)
    shot = tmp_path / "work" / "my shot.png"
    shot.write_bytes(png())
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.post_message(events.Paste(f"'{shot}'"))  # quoted, as terminals paste a dropped file
        await until(pilot, lambda: app.composer.text == "[image #1]")
        app.post_message(events.Paste(f"file://{str(shot).replace(' ', '%20')}"))
        await until(pilot, lambda: app.composer.text == "[image #1][image #2]")
        assert len(app.attachments) == 2
        await pilot.press("backspace")  # one character of the second marker: its image goes
        await until(pilot, lambda: len(app.attachments) == 1)
        await pilot.press("ctrl+u")
        await type_text(pilot, "plain text")
        app.post_message(events.Paste(" and pasted words"))  # not a path: pasted as is
        await until(pilot, lambda: app.composer.text == "plain text and pasted words")
        assert len(app.attachments) == 0
        await pilot.press("enter")
        await until(pilot, lambda: fake.turn_requests)
        await idle(pilot)
        assert user_parts(fake) == [{"type": "text", "text": "plain text and pasted words"}]


async def test_a_text_only_model_is_refused_before_the_request(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = f"""
    uji.provider.add({{ id = "t", name = "T", wire = "openai-chat", base_url = "{fake.base_url}",
      models = {{ {{ id = "text-only", images = false }} }} }})
    uji.model.use({{ provider = "t", model = "text-only" }})
    """
    app = make_app(tmp_path, fake, lua)
    shot = tmp_path / "work" / "shot.png"
    shot.write_bytes(png())
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.post_message(events.Paste(str(shot)))
        await until(pilot, lambda: app.composer.text == "[image #1]")
        await type_text(pilot, " what is it?")
        await pilot.press("enter")
        await shows(pilot, "t/text-only does not take images")
        assert app.composer.text == "[image #1] what is it?" and len(app.attachments) == 1
        assert fake.requests == [] and entries(app, "user") == []


async def test_a_resumed_session_shows_and_sends_its_images(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake)
    store = Store(str(tmp_path / "data" / "uji.db"))
    sid = store.create_session(str(tmp_path / "work"), "with images")
    data = base64.b64encode(png()).decode()
    shot = {"media_type": "image/png", "data": data, "name": "a.png", "width": 24, "height": 16}
    store.append(sid, {"type": "user", "text": "from uji run", "images": [shot, shot]})  # no markers
    store.append(sid, {"type": "assistant", "text": "two green boxes"})
    store.close()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.conversation.resume(sid) is None
        await shows(pilot, "from uji run [image #1] [image #2]")
        await type_text(pilot, "and now?")
        await pilot.press("enter")
        await until(pilot, lambda: fake.turn_requests)
        await idle(pilot)
        first = fake.turn_requests[-1].body["messages"][1]
        assert [p["type"] for p in first["content"]] == ["text", "image_url", "image_url"]
        assert image_bytes(first["content"][2]) == png()


def test_the_clipboard_takes_exactly_the_image_types_uji_accepts() -> None:
    from uji.images import MEDIA_TYPES

    assert len(TYPES) == len(set(TYPES)) and set(TYPES) == MEDIA_TYPES


async def test_uji_input_attach_puts_an_image_in_the_draft(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(
        tmp_path,
        fake,
        """
        uji.command.add("pic", function(name)
          local ok, err = uji.input.attach(name)
          if not ok then uji.notify("attach: " .. err) end
        end)
        """,
    )
    (tmp_path / "work" / "shot.png").write_bytes(png())
    (tmp_path / "work" / "notes.txt").write_text("not an image")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "/pic notes.txt")
        await pilot.press("enter")
        await shows(pilot, "attach: notes.txt: not a png")
        await type_text(pilot, "/pic shot.png")
        await pilot.press("enter")
        await until(pilot, lambda: app.composer.text == "[image #1]")
        await type_text(pilot, " what is it?")
        await pilot.press("enter")
        await until(pilot, lambda: fake.turn_requests)
        parts = user_parts(fake)
        assert [p["type"] for p in parts] == ["text", "image_url"]
        assert image_bytes(parts[1]) == png()
