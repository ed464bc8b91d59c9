"""The screen tests' apps parse each piece of Textual CSS once per test process.

A Textual app parses its CSS (its own, and each widget class's DEFAULT_CSS as the class
is first mounted) into rule sets, and keeps them in a cache of its own stylesheet. A uji
process runs one app, so it parses each piece once; a test process runs one app per test
and parsed the same pieces again in each: about 15 % of the CPU of an app's start (19
pieces, 7.5 of 48 ms).

`install` keeps the rule sets in one cache for the whole process, under the key the
stylesheet's own cache uses plus the CSS variables the parse substituted (a theme's
colours), so a stylesheet with other variables parses again. Textual already hands the
same cached rule sets to each parse of one stylesheet: a rule set is not changed once
parsed. Invalid CSS still fails as before: a parse that raises caches nothing, and rule
sets with errors are still refused by the stylesheet that reads them.

The patched method is Textual's private one; `tests/test_shared_stylesheet.py` fails if
it no longer applies (an app parses again) or if a change of variables went unseen.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet

ParseRules = Callable[..., list[RuleSet]]

_parsed: dict[tuple[Any, ...], list[RuleSet]] = {}


@cache
def install() -> None:
    """Patch Textual's stylesheet, once per process (every screen test imports this)."""
    Stylesheet._parse_rules = _shared(Stylesheet._parse_rules)  # type: ignore[method-assign]


def _shared(parse_rules: ParseRules) -> ParseRules:
    def parse_rules_once(
        self: Stylesheet,
        css: str,
        read_from: Any,
        is_default_rules: bool = False,
        tie_breaker: int = 0,
        scope: str = "",
    ) -> list[RuleSet]:
        key = (css, read_from, is_default_rules, tie_breaker, scope, tuple(self._variables.items()))
        rules = _parsed.get(key)
        if rules is None:
            rules = parse_rules(self, css, read_from, is_default_rules, tie_breaker, scope)
            _parsed[key] = rules
        return rules

    return parse_rules_once
