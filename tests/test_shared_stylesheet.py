"""The screen tests' apps parse each piece of Textual CSS once per process
(tests/shared_stylesheet.py): a second app parses nothing again, other CSS variables
parse again, and invalid CSS still fails."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.color import Color
from textual.css import stylesheet
from textual.css.stylesheet import Stylesheet, StylesheetParseError
from textual.widgets import Static

from tests import shared_stylesheet

pytestmark = pytest.mark.timeout(120)

shared_stylesheet.install()


class Tinted(Static):
    DEFAULT_CSS = "Tinted { height: 1; border: none; color: #102030; }"


class Shown(App[None]):
    CSS = "Screen { background: #010203; }"

    def compose(self) -> ComposeResult:
        yield Tinted("tinted")


async def test_a_second_app_parses_no_css_again(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    parse = stylesheet.parse

    def counted(scope: str, css: str, *args: Any, **kwargs: Any) -> Any:
        parsed.append(css)
        return parse(scope, css, *args, **kwargs)

    monkeypatch.setattr(stylesheet, "parse", counted)
    after: list[int] = []
    for _ in range(2):
        app = Shown()
        async with app.run_test(size=(40, 5)):
            assert app.query_one(Tinted).styles.color == Color.parse("#102030")
            assert app.screen.styles.background == Color.parse("#010203")
        after.append(len(parsed))
    assert Tinted.DEFAULT_CSS in parsed
    assert after[1] == after[0]


def _color(variables: dict[str, str]) -> Color:
    sheet = Stylesheet(variables=variables)
    sheet.add_source("Tinted { color: $ink; }", ("test", "ink"))
    sheet.parse()
    (rules,) = sheet.rules
    color = rules.styles.color
    assert isinstance(color, Color)
    return color


def test_other_variables_parse_again() -> None:
    assert _color({"ink": "#ff0000"}) == Color.parse("#ff0000")
    assert _color({"ink": "#0000ff"}) == Color.parse("#0000ff")
    assert _color({"ink": "#ff0000"}) == Color.parse("#ff0000")


def test_invalid_css_fails_each_time() -> None:
    for _ in range(2):
        sheet = Stylesheet()
        sheet.add_source("Tinted { colour: red; }", ("test", "invalid"))
        with pytest.raises(StylesheetParseError):
            sheet.parse()
