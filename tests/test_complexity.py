"""No function of uji above cyclomatic complexity 20 as radon counts it (#24). ruff's C901
(in ./test's lint) bounds the same 20 as mccabe counts it, with nested functions inside
their parent; radon counts boolean operators and comprehensions too, and scores a method
on its own: between them, a function that grows past 20 either way is split."""

from __future__ import annotations

from pathlib import Path

import pytest

MAX = 20
SRC = Path(__file__).resolve().parent.parent / "src" / "uji"


def over(src: Path, limit: int = MAX) -> list[str]:
    """`path:line name complexity` of each function or method of `src` over `limit`."""
    from radon.complexity import cc_visit
    from radon.visitors import Function

    found = []
    for path in sorted(src.rglob("*.py")):
        for block in cc_visit(path.read_text()):  # functions, classes, and their methods
            if isinstance(block, Function) and block.complexity > limit:
                found.append(f"{path.relative_to(src)}:{block.lineno} {block.fullname} {block.complexity}")
    return found


@pytest.mark.timeout(120)
def test_no_function_is_above_complexity_20_as_radon_counts_it() -> None:
    assert over(SRC) == []


def test_the_count_sees_a_method_and_a_function_over_the_bound(tmp_path: Path) -> None:
    def body(indent: str) -> str:
        return "".join(f"{indent}if x == {i}:\n{indent}    return {i}\n" for i in range(21))

    (tmp_path / "m.py").write_text(
        f"def f(x):\n{body('    ')}    return -1\n\n\nclass C:\n    def g(self, x):\n{body('        ')}"
        "        return -1\n\n    def h(self):\n        return 0\n"
    )
    assert sorted(line.split()[1:] for line in over(tmp_path)) == [["C.g", "22"], ["f", "22"]]
