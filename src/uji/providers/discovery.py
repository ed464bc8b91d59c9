"""Ask a server which models it serves: `GET {base}/models` (OpenAI-compatible; its
`base` ends in `/v1`) and, for Ollama, `GET /api/tags` as well.

Both answers are read leniently: `{"data": [{"id": ...}]}` and Ollama's
`{"models": [{"name"|"model": ..., "details": {...}}]}`. Ids found by both are listed once,
in the order the server gave them (Ollama lists the most recently used first). Neither
endpoint says a model's context window, so discovered models carry no limits.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from uji.wires.http import Http

TIMEOUT = 5.0  # seconds for one listing; a refused local connection fails at once
MAX_BODY = 4 * 1024 * 1024
MAX_MODELS = 1000


class DiscoveryError(Exception):
    pass


def server_root(base_url: str) -> str:
    """`http://host:port/v1` → `http://host:port`."""
    base = base_url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


async def get_json(
    http: Http, url: str, headers: dict[str, str] | None = None, timeout: float = TIMEOUT
) -> Any:
    """GET a JSON document; raises DiscoveryError with the URL in the message."""
    from uji.wires.transport import ConnectError, HTTPError

    try:
        async with asyncio.timeout(timeout):
            async with http.client().stream("GET", url, headers=headers or {}) as response:
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_BODY:
                        raise DiscoveryError(f"{url}: the answer is larger than {MAX_BODY} bytes")
                status = response.status_code
    except TimeoutError:
        raise DiscoveryError(f"{url}: no answer within {timeout:g}s") from None
    except ConnectError as e:
        raise DiscoveryError(f"could not connect to {url}: {e or 'connection refused'}") from None
    except HTTPError as e:
        raise DiscoveryError(f"{url}: {e or type(e).__name__}") from None
    if not 200 <= status <= 299:
        raise DiscoveryError(f"{url}: http {status}: {bytes(body[:200]).decode('utf-8', 'replace')}")
    try:
        return json.loads(body)
    except ValueError:
        raise DiscoveryError(f"{url}: the answer is not JSON") from None


if TYPE_CHECKING:
    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class Listed(TypedDict):
        """A model a server lists: its id (all a listing says that uji uses)."""

        id: str


def openai_models(doc: Any) -> list[Listed]:
    data = doc.get("data") if isinstance(doc, dict) else None
    out: list[Listed] = []
    for item in data if isinstance(data, list) else []:
        if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"]:
            out.append({"id": item["id"]})
    return out[:MAX_MODELS]


def ollama_models(doc: Any) -> list[Listed]:
    data = doc.get("models") if isinstance(doc, dict) else None
    out: list[Listed] = []
    for item in data if isinstance(data, list) else []:
        if not isinstance(item, dict):
            continue
        mid = item.get("model") or item.get("name")
        if isinstance(mid, str) and mid:
            out.append({"id": mid})
    return out[:MAX_MODELS]


def _union(*lists: list[Listed]) -> list[Listed]:
    seen: set[str] = set()
    out: list[Listed] = []
    for models in lists:
        for m in models:
            if m["id"] not in seen:
                seen.add(m["id"])
                out.append(m)
    return out


async def discover(
    http: Http, base_url: str, kind: str, key: str | None = None, timeout: float = TIMEOUT
) -> list[Listed]:
    """The models the server at `base_url` serves. `kind` is "ollama" (asks /api/tags
    too) or "openai". Raises DiscoveryError when no listing could be read."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    base = base_url.rstrip("/")
    urls = [f"{base}/models"]
    if kind == "ollama":  # its own listing first: most recently used first
        urls.insert(0, f"{server_root(base)}/api/tags")
    results = await asyncio.gather(
        *(get_json(http, u, headers, timeout) for u in urls), return_exceptions=True
    )
    lists: list[list[Listed]] = []
    errors: list[str] = []
    for url, result in zip(urls, results, strict=True):
        if isinstance(result, BaseException):
            if not isinstance(result, Exception):
                raise result
            errors.append(str(result))
        else:
            lists.append(ollama_models(result) if url.endswith("/api/tags") else openai_models(result))
    if not lists:
        raise DiscoveryError(errors[0])
    return _union(*lists)
