"""Checking uji's ATIF trajectories and its Harbor adapter against Harbor itself.

Harbor needs Python 3.12+, and uji's tests run on 3.11, so Harbor lives in its own
environment, .cache/harbor-venv, made by `python tests/harbor_check.py --setup` (a
python3.12 on PATH or from pyenv, then `pip install harbor`). When that environment is
there, `validate_trajectory` runs Harbor's own `Trajectory` model on the text; when it is
not, it checks nothing more (the tests' own assertions still hold) and says so once.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".cache" / "harbor-venv"
PYTHON = VENV / "bin" / "python"
HARBOR = "harbor==0.25.0"

VALIDATE = """
import sys
from harbor.models.trajectories import Trajectory
Trajectory.model_validate_json(sys.stdin.read())
print("ok")
"""


def harbor_python() -> Path | None:
    """The Python of the Harbor environment, when Harbor is installed in it."""
    if not PYTHON.exists():
        return None
    probe = subprocess.run(
        [str(PYTHON), "-c", "import harbor.models.trajectories"], capture_output=True, timeout=60
    )
    return PYTHON if probe.returncode == 0 else None


def validate_trajectory(text: str) -> bool:
    """True when Harbor's model accepted `text`; False when Harbor is not here. A
    trajectory Harbor refuses fails the calling test with Harbor's words."""
    python = harbor_python()
    if python is None:
        print(f"Harbor is not installed in {VENV}: the trajectory was not checked by Harbor's model")
        return False
    proc = subprocess.run(
        [str(python), "-c", VALIDATE], input=text, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", (
        f"Harbor refused the trajectory:\n{proc.stderr}"
    )
    return True


def setup() -> int:
    python = shutil.which("python3.12") or shutil.which("python3.13")
    if python is None:
        print("no python3.12 or python3.13 on PATH (Harbor needs 3.12+)", file=sys.stderr)
        return 1
    subprocess.run([python, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(PYTHON), "-m", "pip", "install", "-q", HARBOR], check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(setup() if sys.argv[1:] == ["--setup"] else 2)
