"""An MCP server for the tests, written with the `mcp` SDK's server side.

    python tests/mcp_server.py LOG [--http PORT | --sse PORT] [--auth URL] [--delay SECONDS] [--banner] [--fail]

Serves stdio (or streamable HTTP, or the legacy HTTP+SSE, on 127.0.0.1:PORT). `--banner`
prints a line that is not JSON on stdout first; `--fail` writes two lines on stderr and
exits with status 2. Every tool call appends one JSON line {"tool", "args"} to LOG before it does anything, so a test sees what reached it.
`--delay` sleeps before serving (a slow server); `--odd-names` adds tools whose names
providers refuse or that collide once made safe. Each start appends its pid to LOG.starts.
`--confirm` adds `confirm`, which asks a question whose fields have defaults.
`--auth URL` (with --http): every request needs a bearer token the authorization server at
URL (tests/fakes/oauth_server.py) says is active with scope `mcp` (the SDK's resource-server
side answers 401 and serves the protected resource metadata); the tool `secret` also needs
scope `admin` (403 insufficient_scope, a step-up); `bearer` returns the token it came with.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
from typing import Any

# A 1x1 PNG.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


def started_as() -> int:
    """The pid of the process started as this server, which is the one its client watches
    and a test kills: this one, or the one that had the test worker's zygote fork it
    (tests/zygote.py sets STARTED_AS)."""
    return int(globals().get("STARTED_AS") or os.getpid())


def main() -> None:
    # The SDK is imported here rather than at the top, since the tests import PNG from this
    # file and the SDK costs most of a second. The tools' annotations name these: globals.
    global CallToolResult, Context, ImageContent, TextContent, ToolAnnotations
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.types import CallToolResult, ImageContent, TextContent, ToolAnnotations

    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--http", type=int)
    ap.add_argument("--sse", type=int)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument(
        "--odd-names", action="store_true", help="add `fs.read` and `fs_read` (alike once made safe)"
    )
    ap.add_argument("--auth", help="the authorization server's URL: tokens are required")
    ap.add_argument("--confirm", action="store_true", help="add `confirm`, a question with defaults")
    ap.add_argument("--banner", action="store_true")
    ap.add_argument("--fail", action="store_true")
    opts = ap.parse_args()
    if opts.fail:
        print("starting", file=sys.stderr)
        print("bad config: no token given", file=sys.stderr)
        sys.exit(2)
    if opts.banner:
        print("Welcome to testserver 1.0 (not JSON)", flush=True)
    if opts.delay:
        time.sleep(opts.delay)
    with open(f"{opts.log}.starts", "a") as f:  # each start of the server, one line
        f.write(f"{started_as()}\n")

    def record(tool: str, args: dict[str, Any]) -> None:
        with open(opts.log, "a") as f:
            f.write(json.dumps({"tool": tool, "args": args, "pid": started_as()}) + "\n")

    if opts.auth:
        from mcp.server.auth.settings import AuthSettings

        resource = f"http://127.0.0.1:{opts.http}/mcp"
        server = MCPServer(
            "testserver",
            token_verifier=Introspection(opts.auth),
            auth=AuthSettings(
                issuer_url=opts.auth,
                resource_server_url=resource,
                required_scopes=["mcp"],
                validate_token_resource=False,
            ),
        )
    else:
        server = MCPServer("testserver")

    @server.tool(description="Says the text back.")
    def echo(text: str) -> str:
        record("echo", {"text": text})
        return f"echo: {text}"

    @server.tool(
        description="Reads nothing, changes nothing.", annotations=ToolAnnotations(readOnlyHint=True)
    )
    def peek() -> str:
        record("peek", {})
        return "peeked"

    @server.tool(description="A picture and a line.")
    def look() -> list[TextContent | ImageContent]:
        record("look", {})
        return [
            TextContent(type="text", text="a pixel"),
            ImageContent(type="image", data=PNG, mimeType="image/png"),
            ImageContent(type="image", data=PNG, mimeType="image/bmp"),
        ]

    @server.tool(description="`lines` numbered lines of text.")
    def many(lines: int) -> str:
        record("many", {"lines": lines})
        return "\n".join(f"line {i}" for i in range(1, lines + 1))

    @server.tool(description="One picture, also as structured content.")
    def shot() -> CallToolResult:
        record("shot", {})
        image = ImageContent(type="image", data=PNG, mimeType="image/png")
        return CallToolResult(content=[image, image], structuredContent={"png": PNG * 500})

    @server.tool(description="The client's name and version, as it gave them.")
    def whoami(ctx: Context) -> str:
        record("whoami", {})
        params = ctx.session.client_params
        info = params.client_info if params is not None else None
        return f"{info.name} {info.version}" if info is not None else "?"

    @server.tool(description="Reports progress twice, logs a line, asks the user, lists the roots.")
    async def chatty(ctx: Context) -> str:
        from pydantic import BaseModel

        class Name(BaseModel):
            name: str

        record("chatty", {})
        await ctx.report_progress(1, 2, "halfway")
        await ctx.report_progress(2, 2, "done")
        await ctx.info("a log line")
        answer = await ctx.elicit("What is your name?", Name)
        roots = await ctx.session.list_roots()
        return f"asked: {answer.action}; roots: {' '.join(str(r.uri) for r in roots.roots)}"

    @server.tool(description="Asks the user to fill in a form; says what came back.")
    async def survey(ctx: Context) -> str:
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Your name", "minLength": 2},
                "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
                "ratio": {"type": "number", "title": "Ratio", "default": 0.5},
                "subscribe": {"type": "boolean", "title": "Subscribe", "default": True},
                "color": {
                    "type": "string",
                    "title": "Colour",
                    "enum": ["red", "green", "blue"],
                    "enumNames": ["Red", "Green", "Blue"],
                    "default": "green",
                },
            },
            "required": ["name", "age"],
        }
        answer = await ctx.session.elicit_form(
            "Tell me about you", schema, related_request_id=ctx.request_context.request_id
        )
        record("survey", {"action": answer.action, "content": answer.content})
        return f"survey: {answer.action} {json.dumps(answer.content, sort_keys=True)}"

    @server.resource("file:///notes.txt", name="notes", description="The notes", mime_type="text/plain")
    def notes() -> str:
        record("resource", {"uri": "file:///notes.txt"})
        return "the notes say hello"

    @server.resource("img://pixel", name="pixel", mime_type="image/png")
    def pixel() -> bytes:
        record("resource", {"uri": "img://pixel"})
        return base64.b64decode(PNG)

    @server.prompt(description="Review a file, with a focus.")
    def review(file: str, focus: str = "bugs") -> str:
        record("prompt", {"name": "review", "file": file, "focus": focus})
        return f"Please review {file}, looking for {focus}."

    @server.tool(description="Its process id.")
    def pid() -> str:
        record("pid", {})
        return str(started_as())

    @server.tool(description="Always fails.")
    def broken() -> str:
        record("broken", {})
        raise ValueError("it broke")

    @server.tool(description="The server dies during the call.")
    def crash() -> str:
        record("crash", {})
        sys.stdout.flush()
        os._exit(3)

    @server.tool(description="Adds the tool `extra` and says so.")
    async def grow(ctx: Context) -> str:
        record("grow", {})

        def extra() -> str:
            record("extra", {})
            return "extra ran"

        server.add_tool(extra, name="extra", description="Added at run time.")
        await ctx.session.send_tool_list_changed()
        return "grown"

    if opts.confirm:

        @server.tool(description="Asks a question whose fields have defaults.")
        async def confirm(ctx: Context) -> str:
            from pydantic import BaseModel

            class Choice(BaseModel):
                mode: str = "safe"
                count: int = 3

            record("confirm", {})
            answer = await ctx.elicit("Go ahead?", Choice)
            data = answer.data.model_dump() if answer.action == "accept" else None
            return f"{answer.action}: {json.dumps(data)}"

    if opts.auth:

        @server.tool(description="Needs the scope `admin` (a step-up).")
        def secret() -> str:
            record("secret", {})
            return "the secret"

        @server.tool(description="The bearer token the call came with.")
        def bearer() -> str:
            from mcp.server.auth.middleware.auth_context import get_access_token

            record("bearer", {})
            token = get_access_token()
            return f"token: {token.token if token is not None else 'none'}"

    if opts.odd_names:
        for odd in ("fs.read", "fs_read"):

            def read(path: str, odd: str = odd) -> str:
                record(odd, {"path": path})
                return f"{odd} read {path}"

            server.add_tool(read, name=odd, description=f"The tool named {odd}.")

    if opts.http and opts.auth:
        import uvicorn

        app = step_up(server.streamable_http_app(), opts.auth, f"http://127.0.0.1:{opts.http}")
        uvicorn.run(app, host="127.0.0.1", port=opts.http, log_level="warning")
    elif opts.http:
        server.run("streamable-http", host="127.0.0.1", port=opts.http)
    elif opts.sse:
        server.run("sse", host="127.0.0.1", port=opts.sse)
    else:
        server.run()


class Introspection:
    """The SDK's TokenVerifier: asks the authorization server (RFC 7662) about each token."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def verify_token(self, token: str) -> Any:
        import httpx2
        from mcp.server.auth.provider import AccessToken

        async with httpx2.AsyncClient() as http:
            info = (await http.post(f"{self.url}/introspect", data={"token": token})).json()
        if not info.get("active"):
            return None
        return AccessToken(token=token, client_id=info["client_id"], scopes=info["scope"].split())


def step_up(app: Any, auth: str, base: str) -> Any:
    """ASGI middleware: a `tools/call` of `secret` with a token lacking `admin` gets 403
    insufficient_scope, asking for `mcp admin`."""

    async def middleware(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        try:
            call = json.loads(body)
        except ValueError:
            call = {}
        params = call.get("params") if isinstance(call, dict) else None
        if isinstance(params, dict) and call.get("method") == "tools/call" and params.get("name") == "secret":
            headers = dict(scope["headers"])
            token = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
            found = await Introspection(auth).verify_token(token) if token else None
            if found is not None and "admin" not in found.scopes:
                challenge = (
                    'Bearer error="insufficient_scope", scope="mcp admin", '
                    f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
                )
                await send(
                    {
                        "type": "http.response.start",
                        "status": 403,
                        "headers": [(b"www-authenticate", challenge.encode()), (b"content-length", b"0")],
                    }
                )
                await send({"type": "http.response.body", "body": b""})
                return
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return middleware


if __name__ == "__main__":
    # Forked by the test worker's zygote, which loaded the SDK once (tests/zygote.py), when
    # there is one; else served here.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from tests.zygote import launch

    launch(__file__)
    main()
