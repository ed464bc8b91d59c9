"""uji.config (the config dir, config.files), uji.data (read/write) and uji.pack (add,
list, update) — the paths, the packs and the working directory are all they use."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import ApiError, Pending

if TYPE_CHECKING:
    from typing import NotRequired, TypedDict

    from uji.lua.runtime import Runtime
    from uji.notices import Notice
    from uji.packs import Packs
    from uji.paths import Paths

    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class ConfigFile(TypedDict):
        """A file of `uji.config.files`."""

        name: str
        path: str
        text: str
        project: NotRequired[bool]  # under the project's .uji


MAX_FILE = 4 * 1024 * 1024  # config.files and data.read read no larger file


def install(
    paths: Paths,
    packs: Packs,
    cwd: str,
    lua: Callable[[], Runtime],
    notice: Notice,
    pack_added: Callable[[str], None],
) -> dict[str, Callable[..., Any]]:
    def config_dir() -> str:
        return paths.config

    def data_dir() -> str:
        return paths.data

    def config_files(folder: str, project: bool) -> Any:
        fname = "uji.config.files"
        parts = folder.replace("\\", "/").split("/")
        if not folder or os.path.isabs(folder) or ".." in parts:
            raise ApiError(
                f"{fname}: {folder!r} must be a folder name inside the config dir, not empty, absolute or with .."
            )
        rows: list[ConfigFile] = []
        for root in packs.all_roots():
            rows += _files(os.path.join(root, folder), False)
        if project:
            found = _project_dir(cwd)
            if found is not None:
                rows += _files(os.path.join(found, folder), True)
        return lua().convert.to_lua(rows)

    def data_read(name: str) -> str | None:
        path = _data_path(paths, name, "uji.data.read")
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read(MAX_FILE)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise ApiError(f"uji.data.read: cannot read {name}: {e.strerror}") from None

    def data_write(name: str, text: str) -> None:
        path = _data_path(paths, name, "uji.data.write")
        try:
            os.makedirs(paths.data, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise ApiError(f"uji.data.write: cannot write {name}: {e.strerror}") from None

    def pack_add(raw: Any, index: int) -> Pending:
        from uji.packs import PackError, spec_from

        async def add() -> str | None:
            try:
                spec = spec_from(lua().convert.to_python(raw), index)
            except PackError as e:
                notice(f"uji.pack.add: {e}")
                return None
            try:
                root = await packs.add(spec)
            except PackError as e:
                notice(f"uji.pack.add: pack {spec.name}: {e}")
                return None
            pack_added(root)
            return root

        return Pending(add())

    def pack_list() -> Any:
        return lua().convert.to_lua(packs.all_roots())

    def pack_update() -> Pending:
        async def update() -> Any:
            return lua().convert.to_lua(await packs.update())

        return Pending(update())

    return {
        "config_dir": config_dir,
        "data_dir": data_dir,
        "config_files": config_files,
        "data_read": data_read,
        "data_write": data_write,
        "pack_add": pack_add,
        "pack_list": pack_list,
        "pack_update": pack_update,
    }


def _data_path(paths: Paths, name: str, fname: str) -> str:
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise ApiError(f"{fname}: {name!r} must be a plain file name (no folders)")
    return os.path.join(paths.data, name)


def _files(folder: str, project: bool) -> list[ConfigFile]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    rows = []
    for name in names:
        path = os.path.join(folder, name)
        if not os.path.isfile(path):  # subfolders are skipped
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read(MAX_FILE)
        except OSError:
            continue
        row: ConfigFile = {"name": name, "path": path, "text": text}
        if project:
            row["project"] = True
        rows.append(row)
    return rows


def _project_dir(cwd: str) -> str | None:
    """.uji of the working directory or its nearest ancestor that has one."""
    from uji.paths import nearest

    found = nearest(cwd, lambda d: os.path.isdir(os.path.join(d, ".uji")))
    return os.path.join(found, ".uji") if found else None
