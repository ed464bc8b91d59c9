"""File rules match the file, not its spelling (SPEC §3).

A path a file tool receives is checked against the rules in every form that names the same
file: as written, relative to the working directory (or to the root that holds it), absolute
and normalised, and the resolved target once symlinks are followed. A deny on any form wins.

Resolving never fails: a missing file resolves its parent and keeps the name, a symlink loop
or an unreadable directory stops the resolution where it is, and a path that cannot name a
file at all (a NUL byte, a newline, thousands of bytes) is refused before anything looks at
it, with `path_problem`'s message.
"""

from __future__ import annotations

import os

from uji.tools.confine import Sandbox, expand_user

MAX_PATH_BYTES = 4096  # Linux's PATH_MAX: no longer path can be opened


def path_problem(path: str) -> str | None:
    """Why `path` cannot be a file path, or None."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError as e:
        return f"path is not valid text (an unpaired surrogate at character {e.start + 1})"
    size = len(path.encode("utf-8"))
    if size > MAX_PATH_BYTES:
        return f"path is too long ({size} bytes; the limit is {MAX_PATH_BYTES})"
    for char, name in (("\0", "a NUL byte"), ("\n", "a newline"), ("\r", "a carriage return")):
        if char in path:
            return f"path contains {name} at character {path.index(char) + 1}"
    return None


def _bases(sandbox: Sandbox) -> list[str]:
    """The working directory and the roots, each as written and as resolved."""
    out: list[str] = []
    for base in (sandbox.cwd, *sandbox.expanded_roots):
        for form in (base, _resolve(base)):
            if form not in out:
                out.append(form)
    return out


def _relative(path: str, bases: list[str]) -> list[str]:
    """`path` relative to each base that holds it (the base itself is `.`)."""
    out: list[str] = []
    for base in bases:
        if path == base:
            out.append(".")
        elif path.startswith(base.rstrip("/") + "/"):
            out.append(path[len(base.rstrip("/")) + 1 :])
    return out


def _resolve(path: str) -> str:
    """The path with every symlink followed; what does not exist is kept as written."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError, RuntimeError):
        return os.path.normpath(path)


def real_forms(sandbox: Sandbox, real: str) -> list[str]:
    """The forms of an already resolved absolute path: itself and relative to each base."""
    forms = [real]
    for form in _relative(real, _bases(sandbox)):
        if form not in forms:
            forms.append(form)
    return forms


def path_forms(sandbox: Sandbox, path: str) -> list[str]:
    """Every form of `path` the rules are matched against, the written one first."""
    forms = [path]

    def add(form: str) -> None:
        if form and form not in forms:
            forms.append(form)

    full = os.path.join(sandbox.cwd, expand_user(path))
    absolute = os.path.normpath(full)
    bases = _bases(sandbox)
    add(absolute)
    for form in _relative(absolute, bases):
        add(form)
    # Resolved from the unfolded path: `link/../x` climbs from where `link` points.
    resolved = _resolve(full)
    add(resolved)
    for form in _relative(resolved, bases):
        add(form)
    return forms
