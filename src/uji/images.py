"""Images from the user (`uji run --image`, Ctrl+V, a pasted or typed path): read, checked
by their content, and fitted to what the provider takes, in the stored image shape
{media_type, data (base64), name, width, height} that user and tool messages share.

The media type comes from the file's first bytes, never from its name. Pillow is
imported only here and only once an image is attached, so start-up and text-only
turns never load it. An image that already fits keeps its bytes as they were.
"""

from __future__ import annotations

import base64
import os
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from uji.record import Record
from uji.tools.builtin.read_file import image_info

if TYPE_CHECKING:
    from uji.providers.selection import ModelSelection
    from uji.wires.base import Image

MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".webp")
MAX_BASE64 = 5 * 1024 * 1024  # the 5 MB of uji.tool.txt, counted on the base64 text
MAX_RAW = MAX_BASE64 // 4 * 3  # 3,932,160 raw bytes encode to exactly 5 MB
MAX_FILE = 64 * 1024 * 1024  # a bigger file is refused before it is read
MAX_PIXELS = 100_000_000  # a bigger image (a decompression bomb) is refused
JPEG_QUALITIES = (85, 70, 50)
KINDS = "a png, jpeg, gif or webp image"
ORIENTATION = 0x0112  # the EXIF tag


class Limits(Record):
    """What one provider takes: the long edge in pixels, the raw bytes, the media types."""

    edge: int
    bytes: int = MAX_RAW
    types: frozenset[str] = MEDIA_TYPES


# One table, by wire. Bigger images cost more and gain nothing: each API scales them
# down to these sizes itself.
# - anthropic: images over 1568 px on the long edge are scaled down by the API (and
#   refused over 8000 px, or 2000 px in a request with many images); 5 MB each.
# - openai-chat, responses: `detail: high` fits an image into 2048×2048 first.
# - gemini: inline images over 3072×3072 are scaled down; the API takes png, jpeg and
#   webp (with heic/heif), not gif, so a gif goes as a png of its first frame.
# Every wire keeps the 5 MB limit of uji.tool.txt. A wire not listed (a Lua wire) gets
# the most careful entry.
LIMITS: dict[str, Limits] = {
    "anthropic": Limits(1568),
    "openai-chat": Limits(2048),
    "responses": Limits(2048),
    "gemini": Limits(3072, types=frozenset({"image/png", "image/jpeg", "image/webp"})),
}
DEFAULT_LIMITS = Limits(1568)


def limits_for(wire: str | None) -> Limits:
    return LIMITS.get(wire or "", DEFAULT_LIMITS)


def current_limits(models: ModelSelection) -> Limits:
    """The limits of the wire the current model is called through."""
    provider = models.provider()
    return limits_for(provider.wire_for(models.model_id) if provider else None)


def refusal(models: ModelSelection) -> str | None:
    """Why the current model cannot be sent images, before any request: the catalog says
    it takes none, or a refused request taught uji so. None when it does or nobody knows."""
    if models.model_images() is not False:
        return None
    return f"{models.provider_id}/{models.model_id} does not take images"


class ImageError(Exception):
    """An image that cannot be attached; the text names it and says why."""


# -- reading --------------------------------------------------------------------------


def load(path: str, limits: Limits, cwd: str | None = None) -> Image:
    """The image at `path` (relative to `cwd`), fitted to `limits`; ImageError names the
    path and what is wrong with it."""
    full = os.path.join(cwd or os.getcwd(), os.path.expanduser(path))
    try:
        size = os.stat(full).st_size
        if os.path.isdir(full):
            raise ImageError(f"{path}: is a directory, not an image")
        if size > MAX_FILE:
            raise ImageError(f"{path}: {size / 1024 / 1024:.0f} MB is too large to attach (at most 64 MB)")
        with open(full, "rb") as f:
            data = f.read(MAX_FILE + 1)
    except FileNotFoundError:
        raise ImageError(f"{path}: no such file") from None
    except OSError as e:
        raise ImageError(f"{path}: {e.strerror or e}") from None
    return from_bytes(data, os.path.basename(full), limits, where=path)


def from_bytes(data: bytes, name: str, limits: Limits, where: str | None = None) -> Image:
    """Raw image bytes → the stored image, fitted to `limits`."""
    where = where or name
    info = image_info(data)
    if info is None:
        raise ImageError(f"{where}: not {KINDS} (by its content)")
    media_type, width, height = info
    if width * height > MAX_PIXELS:
        raise ImageError(f"{where}: {width}x{height} is too many pixels to attach")
    return _fit(data, media_type, name, limits, where)


def stored(data: bytes, media_type: str, name: str, width: int, height: int) -> Image:
    return {
        "media_type": media_type,
        "data": base64.b64encode(data).decode("ascii"),
        "name": name,
        "width": width,
        "height": height,
    }


def _fit(data: bytes, media_type: str, name: str, limits: Limits, where: str) -> Image:
    """Decode the image (which checks it whole), turn it upright by its EXIF orientation,
    scale its long edge down to the limit, and encode it again only if something changed;
    then JPEG at falling quality, then halving, until it fits the bytes."""
    import io

    from PIL import Image, ImageOps

    try:
        with Image.open(io.BytesIO(data)) as opened:
            opened.load()
            changed = opened.getexif().get(ORIENTATION, 1) not in (None, 1)
            img = ImageOps.exif_transpose(opened)  # a copy, upright
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as e:
        raise ImageError(f"{where}: the {media_type} image could not be read ({e})") from None
    width, height = img.size
    scale = min(1.0, limits.edge / max(width, height))
    if scale < 1.0:
        img = img.resize(
            (max(1, round(width * scale)), max(1, round(height * scale))), Image.Resampling.LANCZOS
        )
        changed = True
    kind = media_type if media_type in limits.types else "image/png"
    changed = changed or kind != media_type
    if not changed and len(data) <= limits.bytes:
        return stored(data, media_type, name, width, height)
    out = _encode(img, kind)
    if len(out) > limits.bytes:
        rgb = _flat(img)
        for quality in JPEG_QUALITIES:
            kind, out = "image/jpeg", _encode(rgb, "image/jpeg", quality)
            if len(out) <= limits.bytes:
                break
        while len(out) > limits.bytes and min(rgb.size) > 1:  # at most ~30 halvings
            rgb = rgb.resize((max(1, rgb.width // 2), max(1, rgb.height // 2)), Image.Resampling.LANCZOS)
            out = _encode(rgb, "image/jpeg", JPEG_QUALITIES[-1])
        img = rgb
    if len(out) > limits.bytes:
        raise ImageError(f"{where}: could not be made small enough to attach")
    return stored(out, kind, name, img.width, img.height)


def _encode(img: Any, media_type: str, quality: int = 90) -> bytes:
    import io

    buf = io.BytesIO()
    if media_type == "image/jpeg":
        _flat(img).save(buf, "JPEG", quality=quality, optimize=True)
    elif media_type == "image/webp":
        img.save(buf, "WEBP", quality=quality)
    elif media_type == "image/gif":
        img.save(buf, "GIF")  # the first frame
    else:
        if img.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
            img = img.convert("RGBA")
        img.save(buf, "PNG", optimize=True)
    return buf.getvalue()


def _flat(img: Any) -> Any:
    """RGB, any transparency laid on white (JPEG has none)."""
    from PIL import Image

    if img.mode == "RGB":
        return img
    if img.mode in ("RGBA", "LA", "P", "PA") or "transparency" in img.info:
        rgba = img.convert("RGBA")
        back = Image.new("RGB", rgba.size, (255, 255, 255))
        back.paste(rgba, mask=rgba.getchannel("A"))
        return back
    return img.convert("RGB")


# -- paths in text ----------------------------------------------------------------------

_TOKEN = re.compile(r"""'[^'\n]+'|"[^"\n]+"|(?:\\ |\S)+""")


def image_path(text: str, cwd: str) -> str | None:
    """The file a pasted or typed text names, if it is one path to a file with an image's
    extension: plain, ~/, quoted, with backslash-escaped spaces, or a file:// URL (as
    terminals and file managers paste a dropped file). None for anything else."""
    t = text.strip()
    if not t or "\n" in t:
        return None
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        t = t[1:-1]
    if t.startswith("file://"):
        t = unquote(urlsplit(t).path)
    t = t.replace("\\ ", " ")
    if not t.lower().endswith(EXTENSIONS):
        return None
    full = os.path.join(cwd, os.path.expanduser(t))
    return full if os.path.isfile(full) else None


def path_tokens(text: str, cwd: str) -> list[tuple[int, int, str]]:
    """(start, end, file) of each word in `text` naming an existing image file (see
    `image_path`). Words starting with `@` are mentions, left to them."""
    found = []
    for m in _TOKEN.finditer(text):
        word = m.group(0)
        if word.startswith("@"):
            continue
        path = image_path(word, cwd)
        if path is not None:
            found.append((m.start(), m.end(), path))
    return found
