"""The system clipboard through its command-line tools: the image Ctrl+V pastes, and the
text and images of uji.clipboard.*. `wl-paste`/`wl-copy` on Wayland, `xclip` on X11,
`pbpaste`/`pbcopy` on macOS (text only)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys

CLIPBOARD_SECONDS = 5.0  # a clipboard tool that has not answered by then is stopped
NO_TOOL = "pasting an image needs wl-paste (Wayland, from wl-clipboard) or xclip (X11); neither was found"
NO_IMAGE = "the clipboard holds no image"
# The clipboard's image types in the order they are taken: uji.images.MEDIA_TYPES (a test
# checks they are the same; uji.images loads with the first image, not before the first frame).
TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")


class ClipboardError(Exception):
    pass


def clipboard_tool() -> str | None:
    """`wl-paste` or `xclip`, whichever is on PATH; the one of the running session first."""
    order = ("wl-paste", "xclip") if os.environ.get("WAYLAND_DISPLAY") else ("xclip", "wl-paste")
    return next((tool for tool in order if shutil.which(tool) is not None), None)


async def clipboard_image() -> bytes:
    """The clipboard's image as the tool gives it; ClipboardError says why there is none."""
    from uji.images import MAX_FILE

    tool = clipboard_tool()
    if tool is None:
        raise ClipboardError(NO_TOOL)
    if tool == "wl-paste":
        listing, fetch = ["wl-paste", "--list-types"], ["wl-paste", "--no-newline", "--type"]
    else:
        listing = ["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"]
        fetch = ["xclip", "-selection", "clipboard", "-o", "-t"]
    offered = (await _output(listing, 64 * 1024)).decode("utf-8", "replace").split()
    kind = next((t for t in TYPES if t in offered), None)
    if kind is None:
        raise ClipboardError(NO_IMAGE)
    data = await _output([*fetch, kind], MAX_FILE)
    if not data:
        raise ClipboardError(NO_IMAGE)
    return data


async def _start(argv: list[str], stdin: int, out: int) -> asyncio.subprocess.Process:
    try:
        return await asyncio.create_subprocess_exec(*argv, stdin=stdin, stdout=out, stderr=out)
    except OSError as e:
        raise ClipboardError(f"{argv[0]}: {e.strerror or e}") from None


async def _output(argv: list[str], limit: int) -> bytes:
    """What a command prints, at most `limit` bytes, within CLIPBOARD_SECONDS."""
    proc = await _start(argv, asyncio.subprocess.DEVNULL, asyncio.subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    try:
        async with asyncio.timeout(CLIPBOARD_SECONDS):
            out, err = await asyncio.gather(_read(proc.stdout, limit), _read(proc.stderr, 4096))
            if len(out) > limit:
                raise ClipboardError(f"{argv[0]}: the clipboard holds more than {limit // 2**20} MB")
            code = await proc.wait()
    except TimeoutError:
        raise ClipboardError(f"{argv[0]} did not answer within {CLIPBOARD_SECONDS:.0f} s") from None
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    if code != 0:
        said = err.decode("utf-8", "replace").strip().splitlines()
        raise ClipboardError(f"{NO_IMAGE} ({argv[0]}: {said[0] if said else f'exit status {code}'})")
    return out


async def _read(stream: asyncio.StreamReader, limit: int) -> bytes:
    """Up to the end of the stream, or just past `limit` bytes."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = await stream.read(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


NO_TEXT_TOOL = (
    "the clipboard needs wl-clipboard (Wayland), xclip (X11) or pbcopy/pbpaste (macOS); none was found"
)


def _text_tools() -> tuple[list[str], list[str]] | None:
    """The commands that read and write the clipboard's text here, or None."""
    if sys.platform == "darwin" and shutil.which("pbpaste"):
        return ["pbpaste"], ["pbcopy"]
    tool = clipboard_tool()
    if tool == "wl-paste" and shutil.which("wl-copy"):
        return ["wl-paste", "--no-newline"], ["wl-copy"]
    if tool == "xclip":
        return ["xclip", "-selection", "clipboard", "-o"], ["xclip", "-selection", "clipboard", "-i"]
    return None


async def clipboard_text() -> str:
    tools = _text_tools()
    if tools is None:
        raise ClipboardError(NO_TEXT_TOOL)
    return (await _output(tools[0], 16 * 1024 * 1024)).decode("utf-8", "replace")


async def set_clipboard_text(text: str) -> None:
    tools = _text_tools()
    if tools is None:
        raise ClipboardError(NO_TEXT_TOOL)
    argv = tools[1]
    proc = await _start(argv, asyncio.subprocess.PIPE, asyncio.subprocess.DEVNULL)
    try:
        async with asyncio.timeout(CLIPBOARD_SECONDS):
            await proc.communicate(text.encode())
    except TimeoutError:
        proc.kill()
        raise ClipboardError(f"{argv[0]} did not answer within {CLIPBOARD_SECONDS:.0f} s") from None
    if proc.returncode != 0:
        raise ClipboardError(f"{argv[0]}: exit status {proc.returncode}")
