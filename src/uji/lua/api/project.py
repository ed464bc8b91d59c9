"""uji.project: the project's root, and per-project trust for what a plugin takes from
the repository (uji.trust: the same decisions `.mcp.json` uses)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import Api, Pending

if TYPE_CHECKING:
    from uji.lua.host import LuaHost
    from uji.trust import ProjectTrust


def install(host: LuaHost, trust: Callable[[], ProjectTrust]) -> Api:
    def files_of(files: Any) -> list[str]:
        root = trust().root
        return [os.path.join(root, str(f)) for f in host.lua.convert.to_python(files) or []]

    def project_root() -> str:
        return trust().root

    def project_trusted(kind: str, files: Any) -> bool | None:
        t = trust()
        return t.remembered(kind, t.hash(files_of(files)))

    def project_trust(kind: str, files: Any, title: str, body: str) -> bool | Pending:
        t = trust()
        paths = files_of(files)
        there = [p for p in paths if os.path.lexists(p)]
        if not there:  # nothing to approve
            return False
        body = "\n".join([body, *(shown(t.root, p) for p in there)]).strip()
        decision = t.decide(kind, t.hash(paths), title, body)
        return decision if isinstance(decision, bool) else Pending(decision)

    return {"project_root": project_root, "project_trusted": project_trusted, "project_trust": project_trust}


MAX_SHOWN = 20


def shown(root: str, path: str) -> str:
    """A line for the question: the path, and for a folder what is in it."""
    rel = os.path.relpath(path, root)
    if not os.path.isdir(path):
        return f"  {rel}"
    try:
        names = sorted(os.listdir(path))
    except OSError as e:
        return f"  {rel}/ ({e.strerror})"
    more = f", … ({len(names) - MAX_SHOWN} more)" if len(names) > MAX_SHOWN else ""
    return f"  {rel}/: {', '.join(names[:MAX_SHOWN])}{more}"
