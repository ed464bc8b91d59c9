"""Images from the user through `uji run --image`: in the user message of each wire's
request, in the provider's own format (checked against the official SDKs' types), fitted
to the provider's limit, kept in the session; refused before any request for a model that
takes no images and for paths that are not images; and Pillow never loaded without them."""

from __future__ import annotations

import base64
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests import sdks
from tests.conftest import Home, unmeasured
from tests.sdk_check import check_typed
from tests.test_sdk_bodies import check_anthropic, check_gemini, check_openai_chat
from tests.test_wires_e2e import APIS, KEY, Api, configure
from uji import images
from uji.wires import openai_chat

# The long edge each provider takes (uji.images.LIMITS, from the providers' docs).
EDGE = {"anthropic": 1568, "openai-chat": 2048, "responses": 2048, "gemini": 3072}


def png(width: int, height: int, color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buf, "PNG")
    return buf.getvalue()


def jpeg(width: int, height: int, exif: Image.Exif | None = None) -> bytes:
    img = Image.new("RGB", (width, height), (20, 90, 200))
    img.paste((250, 250, 0), (0, 0, width // 2, height // 2))  # a corner to tell a turn by
    buf = io.BytesIO()
    img.save(buf, "JPEG", exif=exif or Image.Exif())
    return buf.getvalue()


def sent(api: Api, body: dict[str, Any]) -> tuple[str, list[tuple[str, bytes]]]:
    """The last user message's text and its images (media type, bytes) as the API reads
    them: each wire's own image part."""
    out: list[tuple[str, bytes]] = []
    texts: list[str] = []
    if api.wire == "anthropic":
        user = [m for m in body["messages"] if m["role"] == "user"][-1]
        for block in user["content"]:
            if block["type"] == "image":
                source = block["source"]
                assert source["type"] == "base64"
                out.append((source["media_type"], base64.b64decode(source["data"])))
            elif block["type"] == "text":
                texts.append(block["text"])
        return "".join(texts), out
    if api.wire == "gemini":
        user = [c for c in body["contents"] if c["role"] == "user"][-1]
        for part in user["parts"]:
            if "inlineData" in part:
                out.append((part["inlineData"]["mimeType"], base64.b64decode(part["inlineData"]["data"])))
            elif "text" in part:
                texts.append(part["text"])
        return "".join(texts), out
    if api.wire == "responses":
        user = [i for i in body["input"] if i.get("role") == "user"][-1]
        for part in user["content"]:
            if part["type"] == "input_image":
                out.append(_data_url(part["image_url"]))
            elif part["type"] == "input_text":
                texts.append(part["text"])
        return "".join(texts), out
    user = [m for m in body["messages"] if m["role"] == "user"][-1]
    for part in user["content"] if isinstance(user["content"], list) else [user["content"]]:
        if isinstance(part, str):
            texts.append(part)
        elif part["type"] == "image_url":
            out.append(_data_url(part["image_url"]["url"]))
        elif part["type"] == "text":
            texts.append(part["text"])
    return "".join(texts), out


def _data_url(url: str) -> tuple[str, bytes]:
    head, _, data = url.partition(",")
    assert head.startswith("data:") and head.endswith(";base64"), head
    return head[len("data:") : -len(";base64")], base64.b64decode(data)


def sdk_errors(api: Api, body: dict[str, Any]) -> list[str]:
    if api.wire == "anthropic":
        return check_anthropic(body)
    if api.wire == "gemini":
        return check_gemini(body)
    if api.wire == "responses":
        return check_typed(body, sdks.ResponseCreateParamsStreaming)
    return check_openai_chat(body, openai_chat.Dialect())


@pytest.fixture(params=list(APIS))
def api(request: pytest.FixtureRequest) -> Api:
    return APIS[request.param]


@pytest.fixture
def server(api: Api) -> Any:
    with api.server() as fake:
        yield fake


@sdks.ON_ONE_WORKER
def test_images_from_the_command_line_reach_each_wire_fitted_to_its_limit(
    home: Home, api: Api, server: Any
) -> None:
    small = png(64, 48)
    (home.work / "small.png").write_bytes(small)
    # A JPEG under a .png name: the type is read from the content.
    (home.work / "wide.png").write_bytes(jpeg(4000, 1000))
    server.script(api.fakes.text("A red box and a blue strip."))
    configure(home, api, server)
    run = home.run("what are these?", "--image", "small.png", "--image", "wide.png", env={"UJI_E2E_KEY": KEY})
    assert run.rc == 0, run.stderr
    assert run.done["text"] == "A red box and a blue strip."
    [request] = server.turn_requests
    assert not sdk_errors(api, request.body), sdk_errors(api, request.body)
    text, found = sent(api, request.body)
    assert text == "what are these?"
    assert [kind for kind, _ in found] == ["image/png", "image/jpeg"]
    assert found[0][1] == small  # an image that fits goes as it was
    scaled = Image.open(io.BytesIO(found[1][1]))
    edge = EDGE[api.wire]
    assert (scaled.format, scaled.size) == ("JPEG", (edge, edge // 4))
    # Saved with the message, sizes included (the context estimate reads them).
    [user] = [m for m in home.db_messages(run.session_id) if m["type"] == "user"]
    shapes = [(i["media_type"], i["name"], i["width"], i["height"]) for i in user["images"]]
    assert shapes == [("image/png", "small.png", 64, 48), ("image/jpeg", "wide.png", edge, edge // 4)]


def test_a_continued_session_sends_its_images_again(home: Home, fake: Any) -> None:
    (home.work / "shot.png").write_bytes(png(30, 20))
    home.init("")
    first = home.run("look", "--image", "shot.png")
    assert first.rc == 0, first.stderr
    second = home.run("and now?", "--session", first.session_id)
    assert second.rc == 0, second.stderr
    api = APIS["openai-chat"]
    bodies = [r.body for r in fake.turn_requests]
    assert len(bodies) == 2
    earlier = next(m for m in bodies[1]["messages"] if m["role"] == "user")
    assert [p["type"] for p in earlier["content"]] == ["text", "image_url"]
    assert _data_url(earlier["content"][1]["image_url"]["url"]) == ("image/png", png(30, 20))
    assert sent(api, bodies[1]) == ("and now?", [])


def test_a_model_without_images_is_refused_before_any_request(home: Home, fake: Any) -> None:
    (home.work / "shot.png").write_bytes(png(10, 10))
    home.init(
        f"""
        uji.provider.add({{ id = "t", name = "T", wire = "openai-chat", base_url = "{fake.base_url}",
          models = {{ {{ id = "text-only", images = false }} }} }})
        uji.model.use({{ provider = "t", model = "text-only" }})
        """,
        provider=False,
    )
    run = home.run("what is this?", "--image", "shot.png")
    assert run.rc == 1
    why = "--image: t/text-only does not take images; choose a model that does with --model PROVIDER/MODEL"
    assert run.done["error"] == why
    assert f"uji: error: {why}" in run.stderr
    assert fake.requests == [] and not run.of("session")


@pytest.mark.parametrize(
    ("name", "make", "said"),
    [
        ("missing.png", None, "--image missing.png: no such file"),
        (
            "notes.png",
            b"just some text\n",
            "--image notes.png: not a png, jpeg, gif or webp image (by its content)",
        ),
        ("shot.bmp", "bmp", "--image shot.bmp: not a png, jpeg, gif or webp image (by its content)"),
        ("cut.png", "cut", "--image cut.png: the image/png image could not be read"),
        ("folder.png", "dir", "--image folder.png: is a directory, not an image"),
    ],
)
def test_a_bad_image_path_is_refused_by_name_before_any_request(
    home: Home, fake: Any, name: str, make: Any, said: str
) -> None:
    path = home.work / name
    if make == "dir":
        path.mkdir()
    elif make == "bmp":
        Image.new("RGB", (4, 4)).save(path, "BMP")
    elif make == "cut":
        path.write_bytes(png(300, 300)[:60])  # a whole header, then nothing
    elif make is not None:
        path.write_bytes(make)
    (home.work / "good.png").write_bytes(png(4, 4))
    home.init("")
    run = home.run("look", "--image", "good.png", "--image", name)
    assert run.rc == 2
    assert run.stderr.startswith(f"uji: error: {said}"), run.stderr
    assert fake.requests == [] and not run.of("session")


def test_pillow_is_loaded_only_when_an_image_is_attached(home: Home, fake: Any) -> None:
    (home.work / "shot.png").write_bytes(png(8, 8))
    home.init("")

    def imported(*argv: str) -> set[str]:
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "uji", *argv],
            cwd=home.work,
            env=unmeasured(home.env()),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        names = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
        assert "uji.cli" in names  # the timing lines are there and name modules
        return {n for n in names if n.split(".")[0] == "PIL"}

    assert imported("--version") == set()
    assert imported("run", "--json", "hi") == set()
    assert "PIL.Image" in imported("run", "--json", "--image", "shot.png", "hi")
    assert len(fake.turn_requests) == 2


# -- fitting, in process ----------------------------------------------------------------


def test_exif_orientation_is_applied() -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # the camera was turned: show it rotated 90° clockwise
    got = images.from_bytes(jpeg(40, 20, exif), "turned.jpg", images.limits_for("anthropic"))
    img = Image.open(io.BytesIO(base64.b64decode(got["data"])))
    assert (got["width"], got["height"]) == img.size == (20, 40)
    assert img.getexif().get(0x0112, 1) == 1


def test_a_gif_goes_to_gemini_as_png_and_to_others_as_it_is() -> None:
    buf = io.BytesIO()
    Image.new("P", (12, 10)).save(buf, "GIF")
    gif = buf.getvalue()
    assert images.from_bytes(gif, "a.gif", images.limits_for("gemini"))["media_type"] == "image/png"
    kept = images.from_bytes(gif, "a.gif", images.limits_for("anthropic"))
    assert (kept["media_type"], base64.b64decode(kept["data"])) == ("image/gif", gif)


def test_an_image_too_heavy_for_5_mb_is_made_smaller() -> None:
    noise = Image.frombytes("RGB", (1500, 1500), os.urandom(1500 * 1500 * 3))
    buf = io.BytesIO()
    noise.save(buf, "PNG")
    assert len(buf.getvalue()) > images.MAX_RAW  # incompressible: about 6.7 MB
    got = images.from_bytes(buf.getvalue(), "noise.png", images.limits_for("anthropic"))
    assert got["media_type"] == "image/jpeg"
    assert len(got["data"]) <= images.MAX_BASE64
    assert Image.open(io.BytesIO(base64.b64decode(got["data"]))).size == (got["width"], got["height"])


def test_image_paths_as_terminals_paste_them(tmp_path: Path) -> None:
    (tmp_path / "my shot.png").write_bytes(png(2, 2))
    (tmp_path / "a.PNG").write_bytes(png(2, 2))
    full = str(tmp_path / "my shot.png")
    for text in (
        full,
        f"'{full}'",
        f'"{full}"',
        full.replace(" ", "\\ "),
        f"file://{full.replace(' ', '%20')}",
    ):
        assert images.image_path(text, "/") == full, text
    assert images.image_path("a.PNG", str(tmp_path)) == str(tmp_path / "a.PNG")
    for text in ("missing.png", "notes.txt", f"{full}\n{full}", ""):
        assert images.image_path(text, str(tmp_path)) is None, text
    text = "compare a.PNG with @a.PNG and 'my shot.png' or b.png"
    words = images.path_tokens(text, str(tmp_path))
    assert [(text[s:e], path) for s, e, path in words] == [
        ("a.PNG", str(tmp_path / "a.PNG")),
        ("'my shot.png'", full),  # a mention (@) is left to mentions; b.png does not exist
    ]
