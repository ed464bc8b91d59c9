"""The UI port (uji.ui.port.Ui): the Lua bridge's uji.keymap, uji.ui and uji.input talk
to whatever frontend the App was given, and to nothing in uji.tui."""

from __future__ import annotations

import ast
import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Awaitable
from pathlib import Path

from uji.app import App
from uji.notices import Notice
from uji.paths import Paths
from uji.ui.keys import Binding, parse_key
from uji.ui.port import Deferred, Ui

SRC = Path(__file__).resolve().parent.parent / "src" / "uji"


class Answering(Ui):
    """A frontend with no terminal that answers every question from a script, as an
    editor protocol would: what it was asked is recorded."""

    def __init__(self, notice: Notice) -> None:
        super().__init__(notice)
        self.asked: list[tuple[object, ...]] = []
        self.text = ""
        self.thinking_calls: list[bool] = []
        self.never = asyncio.Event()  # a confirm nobody answers

    def select(self, title: str, labels: list[str], current: int | None) -> Awaitable[int | None]:
        self.asked.append(("select", title, labels, current))
        return Deferred(self._select)

    async def _select(self) -> int | None:
        return 2

    def prompt(self, title: str, value: str, hidden: bool) -> Awaitable[str | None]:
        self.asked.append(("prompt", title, value, hidden))
        return Deferred(self._prompt)

    async def _prompt(self) -> str | None:
        return "Bob"

    def confirm(self, title: str, body: str, preview: str | None) -> Awaitable[bool]:
        self.asked.append(("confirm", title, body, preview))
        return Deferred(self._confirm, title)

    async def _confirm(self, title: str) -> bool:
        if title == "Slow?":
            await self.never.wait()
        return True

    def input_get(self) -> str:
        return self.text

    def input_set(self, text: str) -> None:
        self.text = text

    def size(self) -> tuple[int, int] | None:
        return (100, 30)

    def set_thinking(self, shown: bool) -> None:
        self.thinking_calls.append(shown)


def _config(tmp_path: Path, lua: str) -> Paths:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "init.lua").write_text(textwrap.dedent(lua))
    return Paths(str(tmp_path / "c"), str(tmp_path / "d"), str(tmp_path / "d" / "uji.db"))


async def test_the_bridge_asks_the_frontend_it_was_given(tmp_path: Path) -> None:
    paths = _config(
        tmp_path,
        """
        uji.keymap.add("normal", "<F5>", "quit")
        uji.keymap.add("normal", "<F6>", { command = "/effort" })
        print("select:", uji.ui.select({ title = "Pick", items = { "a", "b", "c" }, current = "b" }))
        print("prompt:", uji.ui.prompt({ title = "Name?", value = "Al", hidden = true }))
        print("confirm:", uji.ui.confirm({ title = "Sure?", body = "big", preview = "diff" }))
        print("slow:", uji.ui.confirm({ title = "Slow?", timeout = 0.05 }))
        uji.input.set("x")
        uji.input.append("y")
        print("input:", uji.input.get())
        print("size:", uji.ui.size())
        print("thinking:", uji.ui.toggle_thinking())
        """,
    )
    notices: list[str] = []
    port = Answering(notices.append)
    app = App(paths, cwd=str(tmp_path), notice=notices.append, ui=port)
    try:
        await app.load_config()
    finally:
        await app.close()
    assert port.asked == [
        ("select", "Pick", ["a", "b", "c"], 1),
        ("prompt", "Name?", "Al", True),
        ("confirm", "Sure?", "big", "diff"),
        ("confirm", "Slow?", "", None),
    ]
    for line in (
        "select:\tc",
        "prompt:\tBob",
        "confirm:\ttrue",
        "slow:\tnil",
        "input:\txy",
        "size:\t100\t30",
    ):
        assert line in notices, notices
    assert "thinking:\ttrue" in notices and "thinking shown" in notices
    assert port.thinking_calls == [True] and port.show_thinking
    assert port.text == "xy"
    assert not any("no screen" in n for n in notices)
    # The config's bindings are the port's: a screen reads them from there.
    origin = f"{tmp_path / 'c' / 'init.lua'}:2"
    assert port.keymap.lookup("normal", [parse_key("<F5>")]) == Binding("action", "quit", origin)
    found = port.keymap.lookup("normal", [parse_key("<F6>")])
    assert isinstance(found, Binding) and (found.kind, found.value) == ("command", "effort")


def test_a_headless_run_of_the_screen_api_loads_nothing_of_the_tui(tmp_path: Path) -> None:
    paths = _config(
        tmp_path,
        """
        uji.keymap.add("normal", "<C-x>", "quit")
        uji.keymap.add("normal", "<F5>", function() end)
        uji.keymap.remove("normal", "<C-t>")
        print("rows", #uji.keymap.list())
        print("select:", uji.ui.select({ title = "t", items = { "a" } }))
        uji.input.set("draft")
        print("input:", uji.input.get())
        uji.ui.toggle_thinking()
        """,
    )
    code = textwrap.dedent(
        f"""
        import asyncio, sys
        from uji.app import App
        from uji.paths import Paths

        async def main():
            app = App(Paths({paths.config!r}, {paths.data!r}, {paths.db!r}), notice=print)
            try:
                await app.load_config()
            finally:
                await app.close()

        asyncio.run(main())
        print("loaded:", sorted(m for m in sys.modules if m.startswith(("uji.tui", "textual"))))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    lines = out.stdout.splitlines()
    assert "input:\tdraft" in lines and "select:\tnil" in lines, out
    assert "uji.ui.select: no screen to ask on" in lines and "thinking shown" in lines
    assert any(line.startswith("rows\t") and int(line.split("\t")[1]) > 20 for line in lines), lines
    assert lines[-1] == "loaded: []"


def test_the_lua_bridge_imports_nothing_from_the_tui() -> None:
    """Every import in uji/lua, lazy ones inside functions included."""
    found: list[str] = []
    files = sorted((SRC / "lua").rglob("*.py"))
    assert len(files) > 10
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            found += [f"{path.name}: {n}" for n in names if n == "uji.tui" or n.startswith("uji.tui.")]
    assert found == []
