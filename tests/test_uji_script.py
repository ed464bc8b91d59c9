"""The checkout's `./uji` script: it runs .venv/bin/uji at once while .venv/ was installed
from pyproject.toml as it is, and installs again when pyproject.toml's content changed
(not when only its time did). Run on a copy of the script beside a stand-in .venv/ whose
`uji` and `pip` say what they were asked."""

from __future__ import annotations

import os
import shutil
import subprocess
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
