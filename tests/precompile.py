"""`python -m tests.precompile`: write the bytecode of what the test processes import. ./test
runs it after it made the venv: uv compiles nothing when it installs, and without this each
of pytest's workers and each worker's zygote, all starting at once, compiled the same
modules (uji's, Textual's, the SDKs' the zygote loads, the test files as pytest rewrites
them): about 19 s of CPU on a fresh clone, against 5 here.

Two processes, one per core: one imports what a zygote and the screen load, the other
collects the tests (which imports the test files and the uji modules they name). In one
process it took 5.4 s; the linters and mypy, which run beside it, leave a core free."""

from __future__ import annotations

import os
import sys

import pytest


def main() -> int:
    os.environ["UJI_TEST_FORK"] = "0"  # collecting needs no zygote (tests/zygote.py)
    loading = os.fork()
    if loading == 0:
        _load()
        os._exit(0)
    collected = pytest.main(["--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider"])
    os.waitpid(loading, 0)
    return collected


def _load() -> None:
    from tests import zygote

    # The libraries first: meanwhile, the collecting process compiles uji's own modules.
    zygote.warm_libraries()
    zygote.warm()  # what a zygote loads
    import uji.tui.app  # noqa: F401  (the screen: the in-process apps and the tmux tests' uji)


if __name__ == "__main__":
    sys.exit(main())
