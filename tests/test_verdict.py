"""The gate's vocabulary: which layer each basis of a verdict belongs to (the `by` a call event
carries), and the words a deny gives the model for every basis ("blocked by policy (…)").
Every Basis is listed here by hand, so a new one without its sentence fails the first test."""

from __future__ import annotations

from typing import get_args

import pytest

from uji.tools.verdict import Basis, Verdict

pytestmark = pytest.mark.timeout(10)

LAYERS = {
    "disabled": "disabled",
    "confine": "confine",
    "hook": "hook",
    "rule": "policy",
    "tool-default": "policy",
    "declared": "policy",
    "default": "policy",
    "fallback": "policy",
    "unfixed": "policy",
    "write-flag": "policy",
    "redirect": "policy",
    "remembered": "policy",
    "mode": "policy",
}


def test_every_basis_belongs_to_its_layer() -> None:
    assert set(LAYERS) == set(get_args(Basis))
    for by, layer in LAYERS.items():
        assert Verdict(decision="deny", by=by).layer == layer, by  # type: ignore[arg-type]


FULL = {
    "rule": "deny rule `rm *` (init.lua:3) for `rm -rf x`",
    "tool-default": "run_command's default `deny` (init.lua:3) for `rm -rf x`",
    "declared": "run_command's declared policy `deny` for `rm -rf x`",
    "default": "the top-level default `deny` (init.lua:3) for `rm -rf x`",
    "fallback": "no rule or default for `rm -rf x`, so ask",
    "write-flag": "`rm *` can write files or run programs (init.lua:3): `rm -rf x` asks",
    "redirect": "the line writes a file outside the working directory and the roots (why), so ask",
    "unfixed": "`rm -rf x` is not a fixed command (why), so ask",
    "remembered": "the remembered approval of `rm *` (init.lua:3)",
    "mode": "the rm * mode's `deny`",
    "hook": "the before_tool hook guard (init.lua:3)",
    "disabled": "the tool is off",
    "confine": "the tool is off",
}


def test_every_basis_explains_itself() -> None:
    assert set(FULL) == set(get_args(Basis))
    for by, words in FULL.items():
        verdict = Verdict(
            decision="deny",
            by=by,  # type: ignore[arg-type]
            rule="rm *",
            origin="init.lua:3",
            subject="rm -rf x",
            note="why",
            hook="guard",
            reason="the tool is off",
        )
        assert verdict.explain("run_command") == words, by


def test_the_bare_forms() -> None:
    """Without origin, subject, hook name or reason: no empty brackets, no 'None'."""
    assert Verdict(decision="ask", by="hook").explain("t") == "the before_tool hook"
    assert Verdict(decision="deny", by="disabled").explain("t") == "disabled"
    assert Verdict(decision="deny", by="confine").explain("t") == "confine"
    assert Verdict(decision="ask", by="fallback").explain("t") == "no rule or default, so ask"
    assert Verdict(decision="allow", by="rule", rule="ls").explain("t") == "allow rule `ls`"
