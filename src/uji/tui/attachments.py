"""What the composer's draft holds besides what was typed, each as a marker in its text.

Images, `[image #N]`: pasted from the clipboard (Ctrl+V, through `wl-paste` or `xclip`),
or a pasted or typed path to an image file. On send the images whose markers remain go
with the message, numbered again from 1 in the order they stand.

Long pastes, `[paste #N +L lines]` or `[paste #N C chars]` (as the original: a paste of
more than one line or more than 80 characters): on send each marker becomes the text
pasted for the model, while the transcript keeps the marker (the user message's `shown`).

Deleting a marker drops what it stands for."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

if TYPE_CHECKING:
    from uji.wires.base import Image

IMAGE = "[image #{}]"  # the theme's text.image
MARKER = re.compile(r"\[image #(\d+)\]")
T = TypeVar("T")


def marker(n: int) -> str:
    return IMAGE.format(n)


def use_image_format(form: str) -> None:
    """A theme's marker for images ("[image #{}]"): new markers read so, and so are found."""
    global IMAGE, MARKER
    IMAGE = form
    MARKER = re.compile(re.escape(form).replace(re.escape("{}"), r"(\d+)"))
    Attachments.MARKER = MARKER


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


class Attachments(Marked["Image"]):
    MARKER = MARKER

    def add(self, image: Image) -> str:
        """Keep an image; returns the marker to put in the text."""
        return marker(self.keep(image))

    def take(self, text: str) -> tuple[str, list[Image]]:
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
