"""`python tests/forked_uji.py ARGS` runs `python -m uji ARGS`, forked by the test worker's
zygote when there is one (tests/zygote.py `launch`): for the uji processes that a program a
test starts runs itself (the ACP client's agent), as `Home.uji` forks those it runs. The
zygote imported uji and what it loads lazily once; a fresh `uji acp` costs ~0.9 s of CPU.
Typed in a test's terminal (tests/test_tui_e2e.py `uji_command`), the screen's zygote named
in the environment forks it, Textual loaded."""

from __future__ import annotations

import os
import runpy
import sys


def main() -> None:
    # As `python -m uji ARGS` started in the working directory.
    import uji

    sys.argv[0] = os.path.join(os.path.dirname(uji.__file__), "__main__.py")
    sys.path[0] = os.getcwd()
    runpy.run_module("uji", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from tests.zygote import launch

    launch(__file__)
    main()
