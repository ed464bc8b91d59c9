"""The checkout's `./uji` script: it runs .venv/bin/uji at once while .venv/ was installed
from pyproject.toml as it is, and installs again when pyproject.toml's content changed
(not when only its time did). Run on a copy of the script beside a stand-in .venv/ whose
`uji` and `pip` say what they were asked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def checkout(tmp: Path) -> Path:
    shutil.copy(ROOT / "uji", tmp / "uji")
    (tmp / "pyproject.toml").write_text('[project]\nname = "uji"\n')
    bin_dir = tmp / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("uji", "pip", "python"):
        stub = bin_dir / name
        stub.write_text(f'#!/bin/sh\necho "{name} $*" >> "{tmp}/ran"\n')
        stub.chmod(0o755)
    return tmp / "uji"


def run(script: Path) -> list[str]:
    ran = script.parent / "ran"
    ran.unlink(missing_ok=True)
    subprocess.run([str(script), "--version"], check=True, capture_output=True, timeout=60)
    return ran.read_text().splitlines()


def stamp_of(tmp: Path) -> str:
    cksum = subprocess.run(
        ["cksum"], input=(tmp / "pyproject.toml").read_bytes(), capture_output=True, check=True
    )
    return cksum.stdout.decode()


def test_the_script_installs_only_when_pyproject_toml_changed(tmp_path: Path) -> None:
    script = checkout(tmp_path)
    stamp = tmp_path / ".venv" / ".installed-run"
    # No stamp: installs, then runs.
    assert run(script) == ["pip install -q --upgrade pip", f"pip install -q -e {tmp_path}", "uji --version"]
    assert stamp.read_text() == stamp_of(tmp_path)
    # Installed from this pyproject.toml: runs at once.
    assert run(script) == ["uji --version"]
    # pyproject.toml rewritten with the same content (newer than the stamp): still no
    # install, and the stamp is touched so the next start need not read it.
    now = stamp.stat().st_mtime
    os.utime(stamp, (now - 100, now - 100))
    os.utime(tmp_path / "pyproject.toml", (now - 50, now - 50))
    assert run(script) == ["uji --version"]
    assert stamp.stat().st_mtime > now - 50
    # A stamp ./test wrote counts too.
    stamp.rename(tmp_path / ".venv" / ".installed-test")
    assert run(script) == ["uji --version"]
    # Another content: installs again.
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "uji"\nversion = "2"\n')
    assert run(script) == ["pip install -q --upgrade pip", f"pip install -q -e {tmp_path}", "uji --version"]
    assert run(script) == ["uji --version"]


def stub(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def fastest(path: str, tools: Path, **env: str) -> str:
    """What setup/fastest-python prints with only `path` (and awk and sort) on PATH."""
    for tool in ("awk", "sort"):
        if not (tools / tool).exists():
            tools.mkdir(exist_ok=True)
            (tools / tool).symlink_to(shutil.which(tool) or tool)
    out = subprocess.run(
        [str(ROOT / "setup" / "fastest-python")],
        env={"PATH": f"{path}:{tools}", **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return out.stdout.strip()


def test_the_venv_is_made_with_the_fastest_supported_python_on_path(tmp_path: Path) -> None:
    # Each stand-in interpreter answers the probe as a real one would: its best time and
    # its real path, or a failure (too old, or no venv module).
    a, b, tools = tmp_path / "a", tmp_path / "b", tmp_path / "tools"
    stub(a / "python3.11", 'echo "0.020000 /opt/slow/python3.11"')
    stub(a / "python3.12", "exit 1")  # older than 3.11, or cannot make a venv
    stub(b / "python3.11", 'echo "0.010000 /opt/fast/python3.11"')
    stub(b / "python3", 'echo "0.010000 /opt/fast/python3.11"')  # the same one, by its real path
    stub(b / "python3.13", 'echo "0.001000"')  # no path: not a probe's answer
    assert fastest(f"{a}:{b}", tools) == "/opt/fast/python3.11"
    assert fastest(str(a), tools) == "/opt/slow/python3.11"
    assert fastest(str(tmp_path / "none"), tools) == ""  # nothing qualifies: the caller's python3
    # $UJI_PYTHON chooses, unprobed.
    assert fastest(f"{a}:{b}", tools, UJI_PYTHON="/somewhere/python") == "/somewhere/python"
    # A real interpreter answers the real probe with its real path.
    real = tmp_path / "real"
    real.mkdir()
    (real / "python3").symlink_to(sys.executable)
    assert fastest(str(real), tools) == os.path.realpath(sys.executable)


def test_the_script_makes_the_venv_with_the_interpreter_chosen(tmp_path: Path) -> None:
    script = checkout(tmp_path)
    (tmp_path / ".venv" / "bin" / "python").unlink()
    shutil.copytree(ROOT / "setup", tmp_path / "setup")
    chosen = tmp_path / "chosen-python"
    stub(chosen, f'echo "chosen $*" >> "{tmp_path}/ran"')
    ran = tmp_path / "ran"
    subprocess.run(
        [str(script), "--version"],
        env={**os.environ, "UJI_PYTHON": str(chosen)},
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert ran.read_text().splitlines()[0] == f"chosen -m venv {tmp_path}/.venv"
