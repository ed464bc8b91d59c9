"""Subscription sign-in (`uji.auth.login`, a provider's `oauth` settings): the browser
flow with PKCE and a loopback redirect, the token exchange, refreshing an expired token,
and what a request carries (reference docs §2 uji.auth, internals §6).

The settings are the original's: `client_id`, `authorize_url`, `token_url`, `scopes`,
`redirect_port` (0: any free port) and `redirect_path`, `token_body` (`form` or `json`),
`state` (`verifier`: the PKCE verifier is the state), `authorize_params` (extra query
parameters), `request_headers` and `identity_prompt` (what requests signed in this way
carry), and `exchange` (the signed-in token traded for an API key, as OpenAI's is). The
credential is saved as `{type = "oauth", access, refresh, expires_at}` (or, with
`exchange`, as an API key) wherever the API keys are (auth.toml 0600, or the keychain).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qs, quote, urlsplit

from uji.record import Record, field

if TYPE_CHECKING:
    from typing import NotRequired, TypedDict

    from uji.keychain import Credential

    class Session(TypedDict):
        """What a request signed in this way carries (`request.auth.oauth`)."""

        token: str
        headers: dict[str, str]
        identity_prompt: NotRequired[str]


CALLBACK_SECONDS = 300.0  # for the browser to come back
HTTP_SECONDS = 30.0
EXPIRY_SKEW = 300  # a token this close to its end counts as expired
MAX_ERROR_BODY = 500
NO_OAUTH = "this provider does not support subscription sign-in"


class LoginError(Exception):
    pass


class Exchange(Record):
    """The signed-in token traded for an API key (RFC 8693 token exchange)."""

    grant_type: str
    requested_token: str
    subject_token_type: str
    subject: Literal["id_token", "access_token"] = "id_token"


class OAuthSettings(Record):
    client_id: str
    authorize_url: str
    token_url: str
    scopes: str = ""
    redirect_port: int = 0
    redirect_path: str = "/callback"
    token_body: Literal["form", "json"] = "form"
    state: Literal["random", "verifier"] = "random"
    authorize_params: dict[str, str] = field(default_factory=dict)
    request_headers: dict[str, str] = field(default_factory=dict)
    identity_prompt: str | None = None
    exchange: Exchange | None = None


TEXT_FIELDS = ("client_id", "authorize_url", "token_url", "scopes", "redirect_path", "identity_prompt")
FIELDS = (
    *TEXT_FIELDS,
    "redirect_port",
    "token_body",
    "state",
    "authorize_params",
    "request_headers",
    "exchange",
)


def _strings(value: Any, what: str) -> dict[str, str]:
    if isinstance(value, list) and not value:
        return {}  # an empty Lua table
    if not isinstance(value, dict) or any(not isinstance(v, str) for v in value.values()):
        raise ValueError(f"`oauth.{what}` must be a table of strings")
    return {str(k): v for k, v in value.items()}


def _choice(spec: dict[str, Any], name: str, allowed: tuple[str, ...]) -> Any:
    value = spec.get(name, allowed[0])
    if value not in allowed:
        raise ValueError(f"`oauth.{name}` must be " + " or ".join(f'"{a}"' for a in allowed))
    return value


def _port(spec: dict[str, Any]) -> int:
    port = spec.get("redirect_port", 0)
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise ValueError("`oauth.redirect_port` must be a port number (0: any free one)")
    return port


def _exchange(ex: Any) -> Exchange | None:
    if ex is None:
        return None
    known = ("grant_type", "requested_token", "subject_token_type", "subject")
    if (
        not isinstance(ex, dict)
        or set(ex) - set(known)
        or any(not isinstance(ex.get(k), str) for k in known[:3])
    ):
        raise ValueError(f"`oauth.exchange` must be a table of strings {{{', '.join(known)}}}")
    subject = _choice(ex, "subject", ("id_token", "access_token"))
    return Exchange(ex["grant_type"], ex["requested_token"], ex["subject_token_type"], subject)


def _texts(spec: dict[str, Any]) -> None:
    for name in ("client_id", "authorize_url", "token_url"):
        if not isinstance(spec.get(name), str) or not spec[name]:
            raise ValueError(f"`oauth.{name}` is required (a string)")
    for name in TEXT_FIELDS:
        if spec.get(name) is not None and not isinstance(spec[name], str):
            raise ValueError(f"`oauth.{name}` must be a string")
    if not (spec.get("redirect_path") or "/").startswith("/"):
        raise ValueError("`oauth.redirect_path` must start with /")


def parse_settings(spec: Any) -> OAuthSettings:
    """A provider's `oauth` table, checked; ValueError says which field is wrong."""
    if not isinstance(spec, dict):
        raise ValueError("`oauth` must be a table of sign-in settings")
    unknown = sorted(set(spec) - set(FIELDS))
    if unknown:
        raise ValueError(f"unknown oauth field(s) {', '.join(unknown)} (known: {', '.join(FIELDS)})")
    _texts(spec)
    return OAuthSettings(
        client_id=spec["client_id"],
        authorize_url=spec["authorize_url"],
        token_url=spec["token_url"],
        scopes=spec.get("scopes") or "",
        redirect_port=_port(spec),
        redirect_path=spec.get("redirect_path") or "/callback",
        token_body=_choice(spec, "token_body", ("form", "json")),
        state=_choice(spec, "state", ("random", "verifier")),
        authorize_params=_strings(spec.get("authorize_params") or {}, "authorize_params"),
        request_headers=_strings(spec.get("request_headers") or {}, "request_headers"),
        identity_prompt=spec.get("identity_prompt"),
        exchange=_exchange(spec.get("exchange")),
    )


# The flow ------------------------------------------------------------------------------


def _token() -> str:
    return base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()


def _form(pairs: list[tuple[str, str]]) -> str:
    return "&".join(f"{quote(k, safe='-._~')}={quote(v, safe='-._~')}" for k, v in pairs)


def authorize_url(settings: OAuthSettings, redirect_uri: str, challenge: str, state: str) -> str:
    pairs = [
        ("client_id", settings.client_id),
        ("response_type", "code"),
        ("redirect_uri", redirect_uri),
        ("scope", settings.scopes),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("state", state),
        *sorted(settings.authorize_params.items()),
    ]
    return f"{settings.authorize_url}?{_form(pairs)}"


PAGE = (
    "<!doctype html><meta charset=utf-8><title>uji</title>"
    '<body style="font:16px system-ui;padding:3rem">{}</body>'
)


class Callback:
    """The loopback listener the authorization server redirects the browser to."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.server: asyncio.Server | None = None
        self.port = 0
        self.params: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()

    async def listen(self, port: int) -> None:
        try:
            self.server = await asyncio.start_server(self._serve, "127.0.0.1", port)
        except OSError as e:
            raise LoginError(
                f"cannot listen on 127.0.0.1:{port} for the sign-in's redirect: {e.strerror or e}"
            ) from None
        self.port = int(self.server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(5):
                line = (await reader.readline()).decode("latin-1")
                while (await reader.readline()).strip():
                    pass  # the headers
            parts = line.split()
            target = urlsplit(parts[1]) if len(parts) >= 2 else None
            if target is None or target.path != self.path:
                self._answer(writer, "404 Not Found", "Unknown callback path.")
                return
            params = {k: v[0] for k, v in parse_qs(target.query).items()}
            if "error" in params:
                self._answer(writer, "400 Bad Request", f"Sign-in failed: {params['error']}")
                self._settle(LoginError(f"the sign-in was refused: {params['error']}"))
            elif not params.get("code"):
                self._answer(writer, "400 Bad Request", "Missing authorization code.")
            else:
                self._answer(writer, "200 OK", "Signed in. You can close this tab and return to uji.")
                self._settle(params)
        except (TimeoutError, OSError, UnicodeError):
            pass
        finally:
            writer.close()

    def _settle(self, outcome: dict[str, str] | Exception) -> None:
        if self.params.done():
            return
        if isinstance(outcome, Exception):
            self.params.set_exception(outcome)
        else:
            self.params.set_result(outcome)

    @staticmethod
    def _answer(writer: asyncio.StreamWriter, status: str, message: str) -> None:
        import html

        body = PAGE.format(html.escape(message)).encode()
        head = f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        writer.write(head.encode() + body)

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


async def _post(settings: OAuthSettings, what: str, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    from uji.wires.http import new_client

    if settings.token_body == "json":
        content, kind = json.dumps(dict(pairs)), "application/json"
    else:
        content, kind = _form(pairs), "application/x-www-form-urlencoded"
    client = new_client()
    try:
        async with asyncio.timeout(HTTP_SECONDS):
            async with client.stream(
                "POST",
                settings.token_url,
                content=content.encode(),
                headers={"Content-Type": kind, "Accept": "application/json"},
            ) as response:
                raw = (await response.aread()).decode("utf-8", "replace")
                status = response.status_code
    except TimeoutError:
        raise LoginError(f"{what}: no answer from {settings.token_url} within {HTTP_SECONDS:g}s") from None
    except Exception as e:
        raise LoginError(f"{what}: {e}") from None
    finally:
        await client.aclose()
    if not 200 <= status < 300:
        raise LoginError(f"{what} returned {status}: {raw.strip()[:MAX_ERROR_BODY]}")
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("access_token"), str):
        raise LoginError(f"{what} returned an unexpected body: {raw.strip()[:MAX_ERROR_BODY]}")
    return parsed


def _tokens(parsed: Mapping[str, Any]) -> Credential:
    expires = parsed.get("expires_in")
    lifetime = int(expires) if isinstance(expires, (int, float)) and expires > 0 else 0
    return {
        "type": "oauth",
        "access": str(parsed["access_token"]),
        "refresh": str(parsed.get("refresh_token") or ""),
        "expires_at": int(time.time()) + lifetime - EXPIRY_SKEW if lifetime else 0,
    }


async def login(
    settings: OAuthSettings, open_browser: Callable[[str], None], say: Callable[[str], None]
) -> Credential:
    """The whole sign-in: the browser to the authorization URL, its code back on the
    loopback, exchanged for tokens (and those for an API key with `exchange`)."""
    verifier = _token()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state = verifier if settings.state == "verifier" else _token()
    callback = Callback(settings.redirect_path)
    await callback.listen(settings.redirect_port)
    try:
        redirect_uri = f"http://localhost:{callback.port}{settings.redirect_path}"
        url = authorize_url(settings, redirect_uri, challenge, state)
        say(f"opened your browser to sign in - {url}")
        open_browser(url)
        try:
            async with asyncio.timeout(CALLBACK_SECONDS):
                params = await callback.params
        except TimeoutError:
            raise LoginError("timed out waiting for the browser to complete sign-in") from None
    finally:
        callback.close()
    if params.get("state") and params["state"] != state:
        raise LoginError("oauth state mismatch; the sign-in was not completed in this session")
    pairs = [
        ("grant_type", "authorization_code"),
        ("client_id", settings.client_id),
        ("code", params.get("code", "")),
        ("redirect_uri", redirect_uri),
        ("code_verifier", verifier),
    ]
    if settings.state == "verifier":
        pairs.append(("state", state))
    parsed = await _post(settings, "token exchange", pairs)
    exchange = settings.exchange
    if exchange is None:
        return _tokens(parsed)
    subject = parsed.get("access_token") if exchange.subject == "access_token" else parsed.get("id_token")
    traded = await _post(
        settings,
        "api key exchange",
        [
            ("grant_type", exchange.grant_type),
            ("client_id", settings.client_id),
            ("requested_token", exchange.requested_token),
            ("subject_token", str(subject or "")),
            ("subject_token_type", exchange.subject_token_type),
        ],
    )
    return {"type": "api_key", "key": str(traded["access_token"])}


def expired(credential: Mapping[str, Any]) -> bool:
    at = credential.get("expires_at") or 0
    return isinstance(at, int) and at != 0 and time.time() >= at


async def refresh(settings: OAuthSettings, refresh_token: str) -> Credential:
    fresh = _tokens(
        await _post(
            settings,
            "token refresh",
            [
                ("grant_type", "refresh_token"),
                ("client_id", settings.client_id),
                ("refresh_token", refresh_token),
            ],
        )
    )
    if not fresh.get("refresh"):
        fresh["refresh"] = refresh_token
    return fresh


def session(settings: OAuthSettings, credential: Mapping[str, Any]) -> Session:
    out: Session = {"token": str(credential.get("access") or ""), "headers": dict(settings.request_headers)}
    if settings.identity_prompt:
        out["identity_prompt"] = settings.identity_prompt
    return out


def open_browser(url: str) -> None:
    """The browser on `url` through `webbrowser` ($BROWSER honoured), in a thread: its
    command is waited for, and the redirect it follows is answered on the event loop."""
    import threading

    def browse() -> None:
        import webbrowser

        try:
            webbrowser.open(url)
        except Exception:
            pass

    threading.Thread(target=browse, name="uji-login-browser", daemon=True).start()
