"""The four built-in tools, asserting exactly what the model would see."""

from __future__ import annotations

import asyncio
import base64
import errno
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from uji.tools.base import ToolContext, ToolResult
from uji.tools.builtin import edit_file, read_file, run_command, write_file
from uji.tools.confine import Sandbox

# -- fixtures ------------------------------------------------------------------------------


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d


@pytest.fixture
def progress() -> list[str]:
    return []


@pytest.fixture
def ctx(cwd: Path, progress: list[str]) -> ToolContext:
    return ToolContext(cwd=str(cwd), sandbox=Sandbox(str(cwd), []), progress=progress.append)


async def read(ctx: ToolContext, **args: Any) -> ToolResult:
    return await read_file.run(args, ctx)


def gone(pid: int, wait: float = 3.0) -> bool:
    """True once `pid` no longer runs (a zombie nobody reaps counts as gone)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


async def wait_for_file(path: Path, wait: float = 5.0) -> str:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


# -- specs ---------------------------------------------------------------------------------


TOOLS = (read_file, edit_file, write_file, run_command)


def test_specs_are_complete_and_small() -> None:
    for module in TOOLS:
        spec = module.SPEC
        assert spec["parameters"]["additionalProperties"] is False
        assert spec["policy"] in ("allow", "ask")
        assert spec["subject_key"] in ("path", "command")
        assert spec["path_subject"] is (spec["subject_key"] == "path")
    assert [m.SPEC["verb"] for m in TOOLS] == ["Read", "Update", "Write", "Ran"]
    assert [m.SPEC["policy"] for m in TOOLS] == ["allow", "ask", "ask", "ask"]
    assert edit_file.SPEC["question"] == "Make the following edit?"
    assert "never copy" in read_file.SPEC["description"]
    assert "Prefer edit_file" in write_file.SPEC["description"]
    # About 4 characters a token: the four specs stay well under 1,500 tokens.
    size = sum(len(json.dumps({k: m.SPEC[k] for k in ("name", "description", "parameters")})) for m in TOOLS)
    assert size < 3600, size


# -- read_file: text -----------------------------------------------------------------------


async def test_read_small_file(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.txt").write_text("alpha\nbeta\n")
    result = await read(ctx, path="f.txt")
    assert result.text == "    1| alpha\n    2| beta"
    assert result.summary == "Read 2 lines"


async def test_read_pages_a_long_file(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "seq.txt").write_text("".join(f"{i}\n" for i in range(1, 8001)))
    first = await read(ctx, path="seq.txt")
    rows = first.text.split("\n")
    assert rows[0] == "    1| 1"
    assert rows[1999] == " 2000| 2000"
    assert rows[2000:] == ["", "[showed lines 1-2000 of 8000; continue with offset 2001]"]
    assert first.summary == "Read 2000 lines"

    middle = await read(ctx, path="seq.txt", offset=2001, limit=10)
    assert middle.text.split("\n")[0] == " 2001| 2001"
    assert middle.text.endswith(
        "\n 2010| 2010\n\n[showed lines 2001-2010 of 8000; continue with offset 2011]"
    )

    last = await read(ctx, path="seq.txt", offset=7001)
    assert last.text.startswith(" 7001| 7001\n")
    assert last.text.endswith(" 8000| 8000")  # nothing remains: no footer


async def test_read_offset_and_limit_are_forgiving(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.txt").write_text("a\nb\nc\n")
    assert (await read(ctx, path="f.txt", offset=0, limit=-5)).text.startswith(
        "    1| a\n\n[showed lines 1-1 of 3"
    )
    assert (await read(ctx, path="f.txt", offset="2", limit="x")).text.startswith(
        "    1| a\n    2| b\n    3| c"
    )
    assert (await read(ctx, path="f.txt", offset=2.0, limit=True)).text.startswith("    2| b\n    3| c")


async def test_read_offset_past_the_end(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.txt").write_text("a\nb\nc")
    result = await read(ctx, path="f.txt", offset=10)
    assert result.text == "error: offset 10 is past the end of f.txt, which has 3 lines"


async def test_read_cuts_long_lines(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "long.txt").write_text("x" * 3000 + "\n" + "a" + "é" * 1500 + "\nshort\n")
    rows = (await read(ctx, path="long.txt")).text.split("\n")
    assert rows[0] == "    1| " + "x" * 2000 + " …[line truncated]"
    # 2000 bytes would split an "é": the cut backs off to the character boundary.
    assert rows[1] == "    2| a" + "é" * 999 + " …[line truncated]"
    assert rows[2] == "    3| short"


async def test_read_page_stops_before_50_kb(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "wide.txt").write_text(("y" * 200 + "\n") * 1000)
    result = await read(ctx, path="wide.txt")
    body, footer = result.text.split("\n\n")
    rows = body.split("\n")
    assert len(rows) == 51200 // 208  # each row: 7 bytes of prefix, 200 of text, a newline
    assert len(body.encode()) < 50 * 1024
    assert footer == f"[showed lines 1-{len(rows)} of 1000; continue with offset {len(rows) + 1}]"


async def test_read_empty_binary_directory_missing(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "empty.txt").write_bytes(b"")
    (cwd / "blob.bin").write_bytes(b"abc\0def\n")
    (cwd / "late.txt").write_bytes(b"a" * 9000 + b"\0\n")
    (cwd / "dir").mkdir()
    assert (await read(ctx, path="empty.txt")).text == "empty.txt is empty"
    assert (await read(ctx, path="blob.bin")).text == "error: blob.bin looks like a binary file"
    assert (await read(ctx, path="late.txt")).text.startswith("    1| aaa")  # NUL after 8192 bytes
    assert (await read(ctx, path="dir")).text.startswith("error: dir is a directory")
    assert (await read(ctx, path="nope.txt")).text == "error: read nope.txt: No such file or directory"


async def test_read_invalid_utf8_and_crlf(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "mixed.txt").write_bytes(b"a\xffb\r\nc\r\n")
    assert (await read(ctx, path="mixed.txt")).text == "    1| a\ufffdb\n    2| c"


async def test_read_argument_errors(ctx: ToolContext) -> None:
    expected = "error: `path` is required and must be a non-empty string"
    assert (await read(ctx)).text == expected
    assert (await read(ctx, path="")).text == expected
    assert (await read(ctx, path=3)).text == expected


async def test_read_outside_is_refused_by_the_open(ctx: ToolContext, cwd: Path) -> None:
    (cwd.parent / "secret").write_text("s")
    result = await read(ctx, path="../secret")
    assert result.text == (
        f"error: ../secret is outside the working directory ({cwd}); tools can only reach files under it"
    )


# -- read_file: images -----------------------------------------------------------------------


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"".join(b"\0" + b"\xff\x00\x00" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00;"


def jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    dht = b"\xff\xc4" + struct.pack(">H", 3) + b"\x00"  # C4 sits among the SOF codes: skipped
    sof2 = b"\xff\xff\xc2" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + dht + sof2 + b"\xff\xda\x00\x02\xff\xd9"


def webp(chunk: bytes, body: bytes) -> bytes:
    data = chunk + struct.pack("<I", len(body)) + body
    return b"RIFF" + struct.pack("<I", 4 + len(data)) + b"WEBP" + data


def webp_lossy(width: int, height: int) -> bytes:
    return webp(b"VP8 ", b"\x10\x02\x00\x9d\x01\x2a" + struct.pack("<HH", width, height))


def webp_lossless(width: int, height: int) -> bytes:
    return webp(b"VP8L", b"\x2f" + struct.pack("<I", (width - 1) | ((height - 1) << 14)))


def webp_extended(width: int, height: int) -> bytes:
    size = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return webp(b"VP8X", b"\x00\x00\x00\x00" + size)


@pytest.mark.parametrize(
    ("name", "data", "media_type", "size"),
    [
        ("pic.png", png(3, 2), "image/png", "3x2"),
        ("PIC.PNG", png(1, 5), "image/png", "1x5"),
        ("anim.gif", gif(640, 480), "image/gif", "640x480"),
        ("photo.jpg", jpeg(1920, 1080), "image/jpeg", "1920x1080"),
        ("photo.JPEG", jpeg(7, 9), "image/jpeg", "7x9"),
        ("lossy.webp", webp_lossy(300, 200), "image/webp", "300x200"),
        ("lossless.webp", webp_lossless(16000, 3), "image/webp", "16000x3"),
        ("extended.webp", webp_extended(20000, 10000), "image/webp", "20000x10000"),
    ],
)
async def test_read_image(
    ctx: ToolContext, cwd: Path, name: str, data: bytes, media_type: str, size: str
) -> None:
    (cwd / name).write_bytes(data)
    result = await read(ctx, path=name)
    assert result.text == f"{name} is a {size} {media_type} image, attached here."
    assert result.images == [{"media_type": media_type, "data": base64.b64encode(data).decode()}]


async def test_read_image_refusals(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "pic.png").write_bytes(png(2, 2))
    (cwd / "fake.png").write_text("not an image")
    with (cwd / "huge.png").open("wb") as f:
        f.write(png(2, 2))
        f.truncate(read_file.MAX_IMAGE_RAW + 1)
    (cwd / "edge.png").write_bytes(png(2, 2).ljust(read_file.MAX_IMAGE_RAW, b"\0"))

    huge = await read(ctx, path="huge.png")
    assert huge.text == "error: huge.png is too large to attach (over 5 MB once encoded)"
    assert huge.images == []
    edge = await read(ctx, path="edge.png")  # exactly 5,242,880 bytes of base64 still fits
    assert len(edge.images[0]["data"]) == 5_242_880
    assert (await read(ctx, path="fake.png")).text.startswith(
        "error: fake.png is not a png, jpeg, gif or webp"
    )
    assert (await read(ctx, path="gone.png")).text == "error: read gone.png: No such file or directory"

    ctx.images = False
    blind = await read(ctx, path="pic.png")
    assert blind.text == "error: pic.png is an image, and the current model does not take images"
    assert blind.images == []


# -- edit_file ---------------------------------------------------------------------------------


async def edit(ctx: ToolContext, **args: Any) -> ToolResult:
    return await edit_file.run(args, ctx)


async def test_edit_replaces_one_match(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    result = await edit(ctx, path="f.py", old_string="b = 2", new_string="b = 20")
    assert result.text == "edited f.py at line 2"
    assert (cwd / "f.py").read_text() == "a = 1\nb = 20\nc = 3\n"
    assert result.diff is not None
    assert result.diff.splitlines()[:3] == ["--- a/f.py", "+++ b/f.py", "@@ -1,3 +1,3 @@"]
    assert "-b = 2\n+b = 20\n" in result.diff
    assert result.summary == "Added 1 line, removed 1 line"


async def test_edit_replace_all_and_delete(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.txt").write_text("x\nTODO\ny\nTODO\nTODO\n")
    result = await edit(ctx, path="f.txt", old_string="TODO\n", new_string="", replace_all=True)
    assert result.text == "edited f.txt: replaced 3 occurrences"
    assert (cwd / "f.txt").read_text() == "x\ny\n"
    single = await edit(ctx, path="f.txt", old_string="y", new_string="z", replace_all=True)
    assert single.text == "edited f.txt at line 2"


async def test_edit_errors(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.txt").write_text("one\ntwo\ntwo\n  indented\n")
    cases = {
        "identical": (
            {"path": "f.txt", "old_string": "one", "new_string": "one"},
            "error: old_string and new_string are identical; there is nothing to change",
        ),
        "not found": (
            {"path": "f.txt", "old_string": "three", "new_string": "3"},
            "error: old_string was not found in f.txt. Read the file again and copy the text exactly, "
            "without the line-number prefixes.",
        ),
        "many": (
            {"path": "f.txt", "old_string": "two", "new_string": "2"},
            "error: old_string matches 2 times in f.txt. Add surrounding lines to make it unique, "
            "or pass replace_all: true.",
        ),
        "no path": (
            {"old_string": "a", "new_string": "b"},
            "error: `path` is required and must be a non-empty string",
        ),
        "empty old": (
            {"path": "f.txt", "old_string": "", "new_string": "b"},
            "error: `old_string` is required and must be a non-empty string",
        ),
        "no new": (
            {"path": "f.txt", "old_string": "one"},
            "error: `new_string` is required and must be a string (empty deletes)",
        ),
        "bad replace_all": (
            {"path": "f.txt", "old_string": "one", "new_string": "1", "replace_all": "yes"},
            "error: `replace_all` must be true or false",
        ),
        "missing file": (
            {"path": "nope.txt", "old_string": "a", "new_string": "b"},
            "error: read nope.txt: No such file or directory",
        ),
        "directory": (
            {"path": ".", "old_string": "a", "new_string": "b"},
            "error: read .: Is a directory",
        ),
    }
    for label, (args, expected) in cases.items():
        assert (await edit(ctx, **args)).text == expected, label
    assert (cwd / "f.txt").read_text() == "one\ntwo\ntwo\n  indented\n"


async def test_edit_matches_exact_bytes_only(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.txt").write_text("  indented\n")
    for old in ("indented  ", " indented\n\n", "    1|   indented", "\tindented"):
        assert (await edit(ctx, path="f.txt", old_string=old, new_string="x")).text.startswith(
            "error: old_string was not found"
        )


async def test_edit_keeps_the_mode(ctx: ToolContext, cwd: Path) -> None:
    script = cwd / "run.sh"
    script.write_text("echo hi\n")
    script.chmod(0o755)
    await edit(ctx, path="run.sh", old_string="hi", new_string="ho")
    assert script.stat().st_mode & 0o777 == 0o755


async def test_edit_failed_write_keeps_the_old_file(
    ctx: ToolContext, cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (cwd / "f.txt").write_text("keep me\n")

    def broken(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken)
    result = await edit(ctx, path="f.txt", old_string="keep", new_string="lose")
    monkeypatch.undo()
    assert result.text == "error: write f.txt: No space left on device"
    assert (cwd / "f.txt").read_text() == "keep me\n"
    assert sorted(p.name for p in cwd.iterdir()) == ["f.txt"]


async def test_edit_preview(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.txt").write_text("old\n")
    diff = edit_file.preview({"path": "f.txt", "old_string": "old", "new_string": "new"}, ctx.sandbox)
    assert diff == "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-old\n+new\n"
    assert (cwd / "f.txt").read_text() == "old\n"  # a preview writes nothing
    assert edit_file.preview({"path": "f.txt", "old_string": "zzz", "new_string": "y"}, ctx.sandbox) is None
    assert edit_file.preview({"path": "../x", "old_string": "a", "new_string": "b"}, ctx.sandbox) is None


# -- write_file --------------------------------------------------------------------------------


async def write(ctx: ToolContext, **args: Any) -> ToolResult:
    return await write_file.run(args, ctx)


@pytest.mark.parametrize(
    ("content", "lines"), [("a\nb\n", 2), ("a\nb", 2), ("", 0), ("\n", 1), ("solo", 1), ("\n\n\n", 3)]
)
async def test_write_counts_lines(ctx: ToolContext, cwd: Path, content: str, lines: int) -> None:
    result = await write(ctx, path="f.txt", content=content)
    assert result.text == f"created f.txt ({lines} lines)"
    assert result.summary == f"Wrote {lines} lines"
    assert result.diff is None
    assert (cwd / "f.txt").read_text() == content


async def test_write_overwrites_with_a_diff_and_keeps_the_mode(ctx: ToolContext, cwd: Path) -> None:
    target = cwd / "f.txt"
    target.write_text("one\ntwo\n")
    target.chmod(0o600)
    result = await write(ctx, path="f.txt", content="one\nthree\n")
    assert result.text == "overwrote f.txt (2 lines)"
    assert result.diff is not None and "-two\n+three\n" in result.diff
    assert target.read_text() == "one\nthree\n"
    assert target.stat().st_mode & 0o777 == 0o600


async def test_write_creates_parents(ctx: ToolContext, cwd: Path) -> None:
    result = await write(ctx, path="deep/er/new.md", content="# hi\n")
    assert result.text == "created deep/er/new.md (1 lines)"
    assert (cwd / "deep" / "er" / "new.md").read_text() == "# hi\n"


async def test_write_errors(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "sub").mkdir()
    assert (await write(ctx, content="x")).text == "error: `path` is required and must be a non-empty string"
    assert (await write(ctx, path="f.txt")).text == "error: `content` is required and must be a string"
    assert (await write(ctx, path="sub", content="x")).text == "error: write sub: Is a directory"
    outside = await write(ctx, path="../escape.txt", content="x")
    assert outside.text.startswith("error: ../escape.txt is outside the working directory")
    assert not (cwd.parent / "escape.txt").exists()


async def test_write_preview(ctx: ToolContext, cwd: Path) -> None:
    assert write_file.preview({"path": "n.txt", "content": "a\n"}, ctx.sandbox) == (
        "--- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1 @@\n+a\n"
    )
    (cwd / "n.txt").write_text("a\n")
    assert write_file.preview({"path": "n.txt", "content": "b"}, ctx.sandbox) == (
        "--- a/n.txt\n+++ b/n.txt\n@@ -1 +1 @@\n-a\n+b\n"
    )
    assert write_file.preview({"path": "n.txt"}, ctx.sandbox) is None
    assert not (cwd / "b").exists()


# -- run_command -------------------------------------------------------------------------------


async def sh(ctx: ToolContext, command: str, **args: Any) -> ToolResult:
    return await run_command.run({"command": command, **args}, ctx)


FULL = "Full output (its last 50.0MB, kept until uji exits): "


def spill_of(text: str) -> Path:
    path = Path(text.rsplit(FULL, 1)[1].rstrip("]"))
    assert path.exists()
    return path


async def test_run_exit_codes_and_no_output(ctx: ToolContext) -> None:
    assert (await sh(ctx, "echo hi")).text == "hi"
    assert (await sh(ctx, "true")).text == "(no output, exit code 0)"
    assert (await sh(ctx, "exit 5")).text == "(exit code 5)"
    assert (await sh(ctx, "echo out; echo err >&2; exit 3")).text == "out\nerr\n\n(exit code 3)"
    assert (await sh(ctx, "kill -9 $$")).text == "(killed by signal 9)"


async def test_run_merges_stderr_in_order_and_strips_crlf(ctx: ToolContext) -> None:
    result = await sh(ctx, "echo 1; echo 2 >&2; echo 3; echo 4 >&2; printf 'a\\r\\nb\\r\\n'")
    assert result.text == "1\n2\n3\n4\na\nb"


async def test_run_environment(ctx: ToolContext, cwd: Path) -> None:
    assert (await sh(ctx, "pwd")).text == str(cwd)
    assert (await sh(ctx, "echo $GIT_TERMINAL_PROMPT")).text == "0"
    assert (await sh(ctx, "readlink /proc/self/fd/0")).text == "/dev/null"
    assert (await sh(ctx, "cat")).text == "(no output, exit code 0)"  # stdin is /dev/null


async def test_run_argument_errors(ctx: ToolContext) -> None:
    expected = "error: `command` is required and must be a non-empty string"
    assert (await run_command.run({}, ctx)).text == expected
    assert (await run_command.run({"command": ""}, ctx)).text == expected
    assert (await sh(ctx, "echo ok", timeout="soon")).text == "ok"  # a non-integer is ignored


async def test_run_keeps_the_last_2000_lines(ctx: ToolContext) -> None:
    result = await sh(ctx, "seq 1 8000")
    body, note = result.text.split("\n\n")
    assert body.split("\n") == [str(i) for i in range(6001, 8001)]
    assert note.startswith("[Showing lines 6001-8000 of 8000 (50.0KB limit). " + FULL)
    assert spill_of(note).read_text() == "".join(f"{i}\n" for i in range(1, 8001))


async def test_run_keeps_the_last_50_kb(ctx: ToolContext) -> None:
    result = await sh(ctx, f"{sys.executable} -c \"print(('z' * 100 + chr(10)) * 1000, end='')\"")
    body, note = result.text.split("\n\n")
    kept = body.split("\n")
    assert len(kept) == 506  # 506 lines of 101 bytes fit in 51,200 bytes, 507 do not
    assert len(body.encode()) <= 50 * 1024
    assert note.startswith("[Showing lines 495-1000 of 1000 (50.0KB limit). " + FULL)
    assert len(spill_of(note).read_bytes()) == 101_000


async def test_run_a_10_mb_single_line(ctx: ToolContext) -> None:
    result = await sh(ctx, "head -c 10485760 /dev/zero | tr '\\0' a")
    body, note = result.text.split("\n\n")
    assert body == "a" * 51200
    assert note.startswith("[Showing last 50.0KB of line 1 (line is 10.0MB). " + FULL)
    assert spill_of(note).stat().st_size == 10485760


async def test_the_overflow_file_keeps_only_the_tail_up_to_the_cap(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    cap = 256 * 1024
    monkeypatch.setattr(run_command, "SPILL_CAP", cap)
    result = await sh(ctx, "seq 1 400000")  # 2.6 MB, ten times the cap
    body, note = result.text.split("\n\n")
    assert body.split("\n") == [str(i) for i in range(398001, 400001)]  # the model's tail is unchanged
    assert "Full output (its last 256.0KB, kept until uji exits): " in note
    spill = spill_of(note.replace("256.0KB", "50.0MB"))
    data = spill.read_bytes()
    assert cap // 2 <= len(data) <= cap
    header, rest = data.split(b"\n", 1)
    numbers = [int(n) for n in rest.split()]
    first = numbers[0]
    assert numbers == list(range(first, 400001))  # a whole-line, gap-free tail
    dropped = sum(len(f"{i}\n") for i in range(1, first))
    assert (
        header == f"[uji: the first {dropped} bytes of output were dropped to keep this file small]".encode()
    )


async def test_an_endless_line_never_grows_the_file_past_the_cap(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    cap = 1024 * 1024
    monkeypatch.setattr(run_command, "SPILL_CAP", cap)
    result = await sh(ctx, "head -c 20000000 /dev/zero | tr '\\0' a; echo; echo end")
    spill = spill_of(result.text.rsplit("\n\n", 1)[1].replace("1.0MB", "50.0MB"))
    data = spill.read_bytes()
    assert len(data) <= cap and data.endswith(b"a\nend\n")
    run_command.remove_spills()  # what App.close does
    assert not spill.exists() and not spill.parent.exists()


async def test_overflow_dirs_left_by_a_killed_uji_are_removed(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    run_command.remove_spills()
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan = tmp / f"uji-output-{dead.pid}-abc"
    living = tmp / f"uji-output-{os.getppid()}-def"
    for d in (orphan, living):
        d.mkdir()
        (d / "command-1.txt").write_text("old output")
    note = (await sh(ctx, "seq 1 3000")).text.rsplit("\n\n", 1)[1]
    assert spill_of(note).parent.parent == tmp
    assert not orphan.exists() and living.exists()
    run_command.remove_spills()
    assert sorted(p.name for p in tmp.iterdir()) == [living.name]


async def test_run_cuts_a_huge_line_on_a_utf8_boundary(ctx: ToolContext) -> None:
    result = await sh(ctx, f"{sys.executable} -c \"print('é' * 40000 + 'x', end='')\"")
    body, note = result.text.split("\n\n")
    assert body == "é" * 25599 + "x"  # the last 51,200 bytes start inside an "é": it is dropped
    assert note.startswith("[Showing last 50.0KB of line 1 (line is 78.1KB). " + FULL)


async def test_run_timeout_kills_the_group(ctx: ToolContext) -> None:
    # How soon it returns is a figure in bench/reactions.py; here, that it was stopped.
    result = await sh(ctx, "sleep 30 & echo $!; wait", timeout=1)
    head, pid = result.text.split("\n")
    assert head == "error: command timed out after 1s"
    assert gone(int(pid))


async def test_run_cancel_kills_the_group_and_reaps(ctx: ToolContext, cwd: Path) -> None:
    task = asyncio.create_task(sh(ctx, "echo $$ > shell.pid; sleep 30 & echo $! > child.pid; wait"))
    child = int(await wait_for_file(cwd / "child.pid"))
    shell = int(await wait_for_file(cwd / "shell.pid"))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gone(child)
    assert not Path(f"/proc/{shell}").exists()  # reaped, not a zombie


async def test_run_background_child_does_not_hang_the_call(ctx: ToolContext) -> None:
    result = await sh(ctx, "sleep 30 & echo $!")
    pid = int(result.text)
    try:
        # The call is back while its background child still runs: it did not wait for it.
        assert not gone(pid, wait=0)  # a normal exit kills nothing
    finally:
        os.kill(pid, signal.SIGKILL)


async def test_run_reports_progress(ctx: ToolContext, progress: list[str]) -> None:
    result = await sh(ctx, "for i in 1 2 3; do echo line$i; sleep 0.15; done")
    assert result.text == "line1\nline2\nline3"
    assert progress and progress[0] == "line1"
    assert set(progress) <= {"line1", "line2", "line3"}


async def test_run_progress_is_throttled(ctx: ToolContext, progress: list[str]) -> None:
    await sh(ctx, "i=0; while [ $i -lt 3000 ]; do echo $i; i=$((i+1)); done")
    assert 1 <= len(progress) <= 20


async def test_run_in_a_missing_directory(tmp_path: Path) -> None:
    missing = str(tmp_path / "gone")
    ctx = ToolContext(cwd=missing, sandbox=Sandbox(missing, []))
    result = await sh(ctx, "true")
    assert result.text == "error: could not start the command: No such file or directory"
