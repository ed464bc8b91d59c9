"""`python -m tests.precompile`: write the bytecode of what the test processes import, in
one process. ./test runs it after it made the venv: uv compiles nothing when it installs,
and without this each of pytest's workers and each worker's zygote, all starting at
once, compiled the same modules (uji's, Textual's, the SDKs' the zygote loads, the test
files as pytest rewrites them): about 19 s of CPU on a fresh clone, against 5 here."""

from __future__ import annotations

import os
import sys

import pytest


def main() -> int:
    os.environ["UJI_TEST_FORK"] = "0"  # collecting needs no zygote (tests/zygote.py)
    from tests import zygote

    zygote.warm()  # what a zygote loads
    import uji.tui.app  # noqa: F401  (the screen: the in-process apps and the tmux tests' uji)

    return pytest.main(["--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider"])


if __name__ == "__main__":
    sys.exit(main())
