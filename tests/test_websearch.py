"""The websearch plugin (reference §5: `web_search` and `web_fetch`, backends exa and
searxng) through `uji run`, against a loopback fake of the search service and the pages:
what the model is sent, what the fake was asked, and how the gate judged each fetch."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import call, text, tool_call, tool_calls

pytestmark = pytest.mark.timeout(120)

PAGE = """<!doctype html><html><head><title>Lua &amp; patterns</title>
<style>body { color: red }</style><script>var secret = "SCRIPT-TEXT";</script></head>
<body><h1>Patterns</h1><p>Use <b>%d</b> for digits&nbsp;&mdash; and <a href="/x">more</a>.</p>
<ul><li>one</li><li>two</li></ul><!-- HIDDEN-COMMENT --></body></html>"""


class Web:
    """What the fake web was asked: (method, path, query, headers, body)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str, dict[str, list[str]], dict[str, str], Any]] = []
        self.url = ""

    def paths(self) -> list[str]:
        return [path for _, path, _, _, _ in self.asked]


@pytest.fixture
def web() -> Iterator[Web]:
    seen = Web()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self, status: int, body: str, kind: str) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _record(self) -> Any:
            parts = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            headers = {k.lower(): v for k, v in self.headers.items()}
            seen.asked.append((self.command, parts.path, parse_qs(parts.query), headers, body))
            return parts, body

        def do_GET(self) -> None:
            parts, _ = self._record()
            if parts.path == "/search":
                q = parse_qs(parts.query)["q"][0]
                results = [
                    {"title": f"Result {i} for {q}", "url": f"{seen.url}/r{i}", "content": f"snippet {i}"}
                    for i in range(1, 8)
                ]
                self._answer(200, json.dumps({"query": q, "results": results}), "application/json")
            elif parts.path == "/page.html":
                self._answer(200, PAGE, "text/html; charset=utf-8")
            elif parts.path == "/big.txt":
                self._answer(200, "x" * 500, "text/plain")
            else:
                self._answer(404, "no", "text/plain")

        def do_POST(self) -> None:
            parts, body = self._record()
            if parts.path == "/search":
                results = [{"title": "Exa hit", "url": f"{seen.url}/e1", "text": "exa snippet"}]
                self._answer(200, json.dumps({"results": results[: body["numResults"]]}), "application/json")
            elif parts.path == "/contents":
                results = [{"url": body["urls"][0], "title": "Exa page", "text": "the page as Exa reads it"}]
                self._answer(200, json.dumps({"results": results}), "application/json")
            else:
                self._answer(404, "{}", "application/json")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    seen.url = f"http://127.0.0.1:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        server.shutdown()
        server.server_close()


def _answers(run: Any) -> list[str]:
    return [m["content"] for m in run.tool_results()]


def test_searxng_search_gives_the_model_titles_addresses_and_snippets(home: Home, web: Web) -> None:
    home.init(
        f'require("uji.plugins.websearch").setup{{ backend = "searxng", url = "{web.url}", count = 3 }}\n'
    )
    home.fake.script(tool_call("web_search", {"query": "lua patterns"}), text("found"))
    run = home.run("search")
    assert run.rc == 0, run.stderr
    tools = {t["function"]["name"] for t in home.fake.turn_requests[0].body["tools"]}
    assert {"web_search", "web_fetch"} <= tools
    (answer,) = _answers(run)
    assert answer.startswith(f"1. Result 1 for lua patterns\n   {web.url}/r1\n   snippet 1\n\n2. ")
    assert "3. Result 3" in answer and "4. Result" not in answer  # count = 3
    ((method, path, query, _, _),) = web.asked
    assert (method, path, query["q"], query["format"]) == ("GET", "/search", ["lua patterns"], ["json"])
    assert run.calls[0]["by"] == "policy" and run.calls[0]["decision"] == "allow"  # policy = "allow"


def test_web_fetch_turns_html_into_text_and_url_rules_judge_it(home: Home, web: Web) -> None:
    home.init(
        f'require("uji.plugins.websearch").setup{{ backend = "searxng", url = "{web.url}", chars = 100 }}\n'
        'uji.tool.policy({ web_fetch = { deny = { "*/private/*" } } })\n'
    )
    home.fake.script(
        tool_calls(
            call("web_fetch", {"url": f"{web.url}/page.html"}),
            call("web_fetch", {"url": f"{web.url}/private/keys"}),
            call("web_fetch", {"url": f"{web.url}/big.txt"}),
            call("web_fetch", {"url": "file:///etc/passwd"}),
        ),
        text("read"),
    )
    run = home.run("fetch")
    assert run.rc == 0, run.stderr
    page, private, big, local = _answers(run)
    assert page == "Lua & patterns\n\nPatterns\nUse %d for digits — and more.\none\ntwo"
    assert private.startswith("denied") and "/private/keys" not in web.paths()
    assert big == "x" * 100 + "\n[page cut at 100 characters]"
    assert local == "error: `url` must be an http or https address"
    decided = [(c["subject"], c["decision"], c["by"], c.get("rule")) for c in run.calls]
    assert decided[1] == (f"{web.url}/private/keys", "deny", "policy", "*/private/*")
    assert decided[0][1:3] == ("allow", "policy")


def test_exa_sends_the_key_and_reads_pages_through_its_contents(home: Home, web: Web) -> None:
    home.init(f'require("uji.plugins.websearch").setup{{ url = "{web.url}" }}\n')
    home.fake.script(
        tool_calls(
            call("web_search", {"query": "uji", "count": 1}),
            call("web_fetch", {"url": "https://example.org/a"}),
        ),
        text("ok"),
    )
    run = home.run("search", env={"EXA_API_KEY": "exa-key-1"})
    assert run.rc == 0, run.stderr
    search, page = _answers(run)
    assert search == f"1. Exa hit\n   {web.url}/e1\n   exa snippet"
    assert page == "Exa page\n\nthe page as Exa reads it"
    (_, _, _, headers, body), (_, path, _, _, contents) = web.asked
    assert headers["x-api-key"] == "exa-key-1" and body["query"] == "uji" and body["numResults"] == 1
    assert path == "/contents" and contents["urls"] == ["https://example.org/a"]


def test_a_backend_module_of_the_config_and_bad_options(home: Home, web: Web) -> None:
    backend = home.config / "lua" / "uji" / "plugins" / "websearch" / "backend"
    backend.mkdir(parents=True)
    (backend / "mine.lua").write_text(
        "return { search = function(q, opts) return { { title = 'mine: ' .. q, url = 'https://m/' .. opts.count } } end }\n"
    )
    home.init(
        'require("uji.plugins.websearch").setup{ backend = "mine" }\n'
        'local ok, err = pcall(require("uji.plugins.websearch").setup, { colour = "red" })\n'
        "uji.notify(err)\n"
    )
    home.fake.script(tool_call("web_search", {"query": "q"}), text("ok"))
    run = home.run("search")
    assert run.rc == 0, run.stderr
    assert _answers(run) == ["1. mine: q\n   https://m/5"]
    assert any("websearch.setup: unknown option `colour`" in n for n in run.notices)
