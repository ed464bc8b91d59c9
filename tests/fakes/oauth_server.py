"""A fake OAuth authorization server on 127.0.0.1 (a stdlib HTTP server in a thread), for
MCP servers that want a token (tests/mcp_server.py --auth URL asks it about each token).

    with FakeAuthServer() as auth:      # auth.url: "http://127.0.0.1:PORT"
        ...
        auth.seen("/authorize")[0].params["scope"]   # every request, recorded
        auth.expire(token)                            # introspection calls it inactive

Token requests may be a form or JSON (a provider's `oauth.token_body = "json"`). It serves RFC 8414 metadata, dynamic client registration, an authorization endpoint that
approves at once (a 302 to the redirect URI with a code and the state), a token endpoint
(authorization_code with the PKCE S256 check, refresh_token) and RFC 7662 introspection.
Each access token carries the scope the authorization asked for.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from uji.record import Record


class Seen(Record):
    method: str
    path: str
    params: dict[str, str]  # the query string's, or the form's
    authorization: str | None


class Grant(Record):
    scope: str
    resource: str | None
    client_id: str


class FakeAuthServer:
    def __init__(self, lifetime: int = 3600) -> None:
        self.lifetime = lifetime  # expires_in of each access token
        self.requests: list[Seen] = []
        self.codes: dict[str, tuple[Grant, str]] = {}  # code -> grant, PKCE challenge
        self.access: dict[str, Grant] = {}  # active access tokens
        self.refresh: dict[str, Grant] = {}
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeAuthServer:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def seen(self, path: str) -> list[Seen]:
        with self.lock:
            return [r for r in self.requests if r.path == path]

    def expire(self, token: str) -> None:
        with self.lock:
            self.access.pop(token, None)

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "registration_endpoint": f"{self.url}/register",
            "introspection_endpoint": f"{self.url}/introspect",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
        }

    def _issue(self, grant: Grant) -> dict[str, Any]:
        access, refresh = f"at-{secrets.token_hex(12)}", f"rt-{secrets.token_hex(12)}"
        self.access[access] = grant
        self.refresh[refresh] = grant
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.lifetime,
            "refresh_token": refresh,
            "scope": grant.scope,
        }

    def _token(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if form.get("grant_type") == "authorization_code":
            found = self.codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
            if found is None or digest.decode() != found[1]:
                return 400, {"error": "invalid_grant"}
            return 200, self._issue(found[0])
        if form.get("grant_type") == "refresh_token":
            grant = self.refresh.pop(form.get("refresh_token", ""), None)
            return (200, self._issue(grant)) if grant is not None else (400, {"error": "invalid_grant"})
        return 400, {"error": "unsupported_grant_type"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self, params: dict[str, str]) -> str:
                path = urlsplit(self.path).path
                with fake.lock:
                    fake.requests.append(Seen(self.command, path, params, self.headers.get("Authorization")))
                return path

            def _json(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
                path = self._record(query)
                if path == "/.well-known/oauth-authorization-server":
                    self._json(200, fake.metadata())
                elif path == "/authorize":
                    code = secrets.token_hex(8)
                    grant = Grant(query.get("scope", ""), query.get("resource"), query.get("client_id", ""))
                    with fake.lock:
                        fake.codes[code] = (grant, query.get("code_challenge", ""))
                    back = urlencode({"code": code, "state": query.get("state", "")})
                    self.send_response(302)
                    self.send_header("Location", f"{query['redirect_uri']}?{back}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                else:
                    self._json(404, {"error": "not_found"})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                form: dict[str, str]  # what the token endpoint reads: the values as sent
                if self.headers.get("Content-Type", "").startswith("application/json"):
                    sent = json.loads(raw or "{}")
                    params = {k: json.dumps(v) for k, v in sent.items()}
                    form = {k: v for k, v in sent.items() if isinstance(v, str)}
                else:
                    params = form = {k: v[0] for k, v in parse_qs(raw).items()}
                path = self._record(params)
                with fake.lock:
                    if path == "/register":
                        body = json.loads(raw)
                        client_id = f"client-{len(fake.seen_unlocked('/register'))}"
                        self._json(201, {**body, "client_id": client_id})
                    elif path == "/token":
                        self._json(*fake._token(form))
                    elif path == "/introspect":
                        grant = fake.access.get(params.get("token", ""))
                        if grant is None:
                            self._json(200, {"active": False})
                        else:
                            self._json(
                                200,
                                {
                                    "active": True,
                                    "scope": grant.scope,
                                    "client_id": grant.client_id,
                                    "aud": grant.resource,
                                },
                            )
                    else:
                        self._json(404, {"error": "not_found"})

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def seen_unlocked(self, path: str) -> list[Seen]:
        return [r for r in self.requests if r.path == path]
