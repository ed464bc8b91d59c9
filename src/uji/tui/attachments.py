"""What the composer's draft holds besides what was typed, each as a marker in its text.

Images, `[image #N]`: pasted from the clipboard (Ctrl+V, through `wl-paste` or `xclip`),
or a pasted or typed path to an image file. On send the images whose markers remain go
with the message, numbered again from 1 in the order they stand.

Long pastes, `[paste #N +L lines]` or `[paste #N C chars]` (as the original: a paste of
more than one line or more than 80 characters): on send each marker becomes the text
pasted, so the model (and the transcript) get it whole while the composer stays short.

Deleting a marker drops what it stands for."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from typing import Any, ClassVar, Generic, TypeVar

MARKER = re.compile(r"\[image #(\d+)\]")
CLIPBOARD_SECONDS = 5.0  # a clipboard tool that has not answered by then is stopped
NO_TOOL = "pasting an image needs wl-paste (Wayland, from wl-clipboard) or xclip (X11); neither was found"
NO_IMAGE = "the clipboard holds no image"
# The clipboard's image types in the order they are taken: uji.images.MEDIA_TYPES (a test
# checks they are the same; uji.images loads with the first image, not before the first frame).
TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
T = TypeVar("T")


def marker(n: int) -> str:
    return f"[image #{n}]"


class Marked(Generic[T]):
    """What a draft's markers stand for, by number (`MARKER`'s first group): kept from
    `keep` until its marker is deleted (`prune`) or the draft is sent (`clear`)."""

    MARKER: ClassVar[re.Pattern[str]]

    def __init__(self) -> None:
        self.by_number: dict[int, T] = {}
        self._next = 1

    def __len__(self) -> int:
        return len(self.by_number)

    def keep(self, value: T) -> int:
        n = self._next
        self._next += 1
        self.by_number[n] = value
        return n

    def prune(self, text: str) -> None:
        """Drop what no marker in the text stands for any more."""
        if not self.by_number:
            return
        present = {int(m) for m in self.MARKER.findall(text)}
        for n in [n for n in self.by_number if n not in present]:
            del self.by_number[n]
        if not self.by_number:
            self._next = 1

    def clear(self) -> None:
        self.by_number.clear()
        self._next = 1


class Attachments(Marked[dict[str, Any]]):
    MARKER = MARKER

    def add(self, image: dict[str, Any]) -> str:
        """Keep an image; returns the marker to put in the text."""
        return marker(self.keep(image))

    def take(self, text: str) -> tuple[str, list[dict[str, Any]]]:
        """The text with its markers numbered again from 1, and the images in that order.
        Markers of no image stay as they are."""
        order: dict[int, int] = {}
        for m in MARKER.finditer(text):
            n = int(m.group(1))
            if n in self.by_number and n not in order:
                order[n] = len(order) + 1

        def renumber(m: re.Match[str]) -> str:
            n = int(m.group(1))
            return marker(order[n]) if n in order else m.group(0)

        return MARKER.sub(renumber, text), [self.by_number[n] for n in order]


PASTE_MARKER = re.compile(r"\[paste #(\d+) (?:\+\d+ lines|\d+ chars)\]")
PASTE_LINES = 1  # a paste of more lines than this, or
PASTE_CHARS = 80  # of more characters than this, becomes a marker


def is_long_paste(text: str) -> bool:
    return len(text) > PASTE_CHARS or len(text.splitlines()) > PASTE_LINES


class Pastes(Marked[str]):
    """The draft's long pastes."""

    MARKER = PASTE_MARKER

    def add(self, text: str) -> str:
        """Keep a paste (its line ends made LF, as the composer would); returns its marker."""
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        n = self.keep(text)
        lines = len(text.splitlines())
        return f"[paste #{n} +{lines} lines]" if lines > PASTE_LINES else f"[paste #{n} {len(text)} chars]"

    def expand(self, text: str) -> str:
        """The text with each marker of a kept paste replaced by what was pasted (a marker
        typed by hand, of no paste, stays as it is)."""
        if not self.by_number:
            return text
        return PASTE_MARKER.sub(lambda m: self.by_number.get(int(m.group(1)), m.group(0)), text)


def shown(text: str, images: int) -> str:
    """A user message as the transcript shows it: markers for images its text does not
    mark (those from `uji run --image`) after the text."""
    missing = images - len(set(MARKER.findall(text)))
    if missing <= 0:
        return text
    markers = " ".join(marker(n) for n in range(images - missing + 1, images + 1))
    return f"{text} {markers}" if text else markers


# -- the clipboard ------------------------------------------------------------------------


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


async def _output(argv: list[str], limit: int) -> bytes:
    """What a command prints, at most `limit` bytes, within CLIPBOARD_SECONDS."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as e:
        raise ClipboardError(f"{argv[0]}: {e.strerror or e}") from None
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
