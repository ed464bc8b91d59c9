"""read_file: a page of numbered lines, or an image attached for the model to see.

Also home to the argument helpers the other built-in tools share, so their error texts
cannot drift apart."""

from __future__ import annotations

import asyncio
import os
import stat
import struct
from typing import TYPE_CHECKING, Any, BinaryIO

from uji.tools.base import ToolContext, ToolResult
from uji.tools.builtin.tool import BuiltinTool
from uji.tools.confine import OutsideRoots, Sandbox

if TYPE_CHECKING:
    from uji.tools.builtin.tool import BuiltinSpec
    from uji.wires.base import Image

DEFAULT_LIMIT = 2000
MAX_LINE_BYTES = 2000
MAX_PAGE_BYTES = 50 * 1024
SNIFF_BYTES = 8192
MAX_IMAGE_BASE64 = 5_242_880
MAX_IMAGE_RAW = MAX_IMAGE_BASE64 // 4 * 3  # 3,932,160 raw bytes encode to exactly 5 MB
IMAGE_EXTENSIONS = {".png", ".jpg", ".jpeg", ".gif", ".webp"}
TRUNCATED = " …[line truncated]"

SPEC: BuiltinSpec = {
    "name": "read_file",
    "description": (
        "Read a text file as numbered rows `<line number>| <text>`, up to 2000 lines per call "
        "(page with offset and limit), or attach an image (png, jpg, gif, webp). The number "
        "prefixes are not part of the file: never copy them into edit_file."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Relative to the working directory, absolute, or ~/…"},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to show (default 1)"},
            "limit": {"type": "integer", "minimum": 1, "description": "Most lines to show (default 2000)"},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    "policy": "allow",
    "verb": "Read",
    "question": None,
    "path_subject": True,
    "subject_key": "path",
}


# -- argument helpers shared by the built-in tools --------------------------------------


def error(text: str) -> ToolResult:
    return ToolResult(text=f"error: {text}")


def required_str(args: dict[str, Any], key: str) -> str | ToolResult:
    """A non-empty string argument, or the error result the model gets without one."""
    value = args.get(key)
    if isinstance(value, str) and value:
        return value
    return error(f"`{key}` is required and must be a non-empty string")


def path_arg(args: dict[str, Any]) -> str | ToolResult:
    """The `path` argument, or the error result for one that cannot name a file."""
    path = required_str(args, "path")
    if isinstance(path, ToolResult):
        return path
    from uji.tools.path_forms import path_problem

    problem = path_problem(path)
    return path if problem is None else error(problem)


def int_arg(args: dict[str, Any], key: str, default: int) -> int:
    """An integer argument raised to at least 1; anything that is not an integer is ignored."""
    value = args.get(key)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        return default
    return max(1, value)


def os_error(action: str, path: str, exc: OSError) -> ToolResult:
    """`error: read foo: No such file or directory`."""
    return error(f"{action} {path}: {exc.strerror or exc}")


# -- the tool ----------------------------------------------------------------------------


async def run(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    path = path_arg(args)
    if isinstance(path, ToolResult):
        return path
    offset = int_arg(args, "offset", 1)
    limit = int_arg(args, "limit", DEFAULT_LIMIT)
    if os.path.splitext(path)[1].lower() in IMAGE_EXTENSIONS:
        if ctx.images is False:
            return error(f"{path} is an image, and the current model does not take images")
        return await asyncio.to_thread(read_image, ctx.sandbox, path)
    return await asyncio.to_thread(read_text, ctx.sandbox, path, offset, limit)


def _open(sandbox: Sandbox, path: str) -> BinaryIO | ToolResult:
    """Open a regular file, or the error result for anything else."""
    try:
        f = sandbox.open_read(path)
    except OutsideRoots as e:
        return error(str(e))
    except IsADirectoryError:
        return error(f"{path} is a directory, not a file; list it with run_command (`ls`)")
    except OSError as e:
        return os_error("read", path, e)
    if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
        return f
    f.close()  # a FIFO or a device could block or never end
    return error(f"{path} is not a regular file")


def read_text(sandbox: Sandbox, path: str, offset: int, limit: int) -> ToolResult:
    f = _open(sandbox, path)
    if isinstance(f, ToolResult):
        return f
    with f:
        try:
            if b"\0" in f.read(SNIFF_BYTES):
                return error(f"{path} looks like a binary file")
            f.seek(0)
            rows, total = _page(f, offset, limit)
        except OSError as e:
            return os_error("read", path, e)
    if total == 0:
        return ToolResult(text=f"{path} is empty", summary="Read 0 lines")
    if offset > total:
        return error(f"offset {offset} is past the end of {path}, which has {total} lines")
    text = "\n".join(rows)
    last = offset + len(rows) - 1
    if last < total:
        text += f"\n\n[showed lines {offset}-{last} of {total}; continue with offset {last + 1}]"
    return ToolResult(text=text, summary=f"Read {len(rows)} lines")


def _page(f: BinaryIO, offset: int, limit: int) -> tuple[list[str], int]:
    """The rows from line `offset` on, and the file's line count.

    The page stops at `limit` lines or before 50 KB, keeping at least one row; the rest of
    the file is only counted, one line at a time, so a huge file costs no memory."""
    rows: list[str] = []
    size = 0
    full = False
    total = 0
    for total, raw in enumerate(f, start=1):
        if total < offset or full:
            continue
        row = f"{total:5d}| {_line_text(raw)}"
        row_bytes = len(row.encode()) + 1
        if rows and (len(rows) >= limit or size + row_bytes > MAX_PAGE_BYTES):
            full = True
            continue
        rows.append(row)
        size += row_bytes
    return rows, total


def _line_text(raw: bytes) -> str:
    """A line without its ending, cut at 2000 bytes on a UTF-8 boundary, decoded lossily."""
    line = raw.rstrip(b"\n").rstrip(b"\r")
    if len(line) <= MAX_LINE_BYTES:
        return line.decode("utf-8", "replace")
    cut = MAX_LINE_BYTES
    while cut > 0 and line[cut] & 0xC0 == 0x80:  # don't split a multi-byte character
        cut -= 1
    return line[:cut].decode("utf-8", "replace") + TRUNCATED


# -- images ------------------------------------------------------------------------------


def read_image(sandbox: Sandbox, path: str) -> ToolResult:
    f = _open(sandbox, path)
    if isinstance(f, ToolResult):
        return f
    with f:
        try:
            data = f.read(MAX_IMAGE_RAW + 1)
        except OSError as e:
            return os_error("read", path, e)
    if len(data) > MAX_IMAGE_RAW:
        return error(f"{path} is too large to attach (over 5 MB once encoded)")
    found = image_info(data)
    if found is None:
        return error(f"{path} is not a png, jpeg, gif or webp image uji can read")
    media_type, width, height = found
    import base64  # with the first image, not with every start

    image: Image = {"media_type": media_type, "data": base64.b64encode(data).decode("ascii")}
    return ToolResult(
        text=f"{path} is a {width}x{height} {media_type} image, attached here.",
        images=[image],
        summary=f"Read a {width}x{height} image",
    )


def image_info(data: bytes) -> tuple[str, int, int] | None:
    """(media type, width, height) from the file's header, by content rather than name."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return "image/png", width, height
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return "image/gif", width, height
    if data.startswith(b"\xff\xd8"):
        size = _jpeg_size(data)
        return ("image/jpeg", *size) if size else None
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        size = _webp_size(data)
        return ("image/webp", *size) if size else None
    return None


# Start-of-frame markers carry the size; C4 (DHT), C8 (JPG) and CC (DAC) share the range.
_SOF_MARKERS = set(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# Markers that stand alone, without a length field.
_BARE_MARKERS = {0x01, 0xD8, *range(0xD0, 0xD8)}


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte before a marker
            i += 1
            continue
        if marker in _BARE_MARKERS:
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if marker in _SOF_MARKERS and i + 9 <= len(data):
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return width, height
        if marker == 0xDA:  # start of scan: no frame header came first
            return None
        i += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        (bits,) = struct.unpack("<I", data[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    return None


class ReadFile(BuiltinTool):
    SPEC = SPEC

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await run(args, ctx)
