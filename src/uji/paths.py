"""Where uji keeps its files: flag, then UJI_*, then XDG_*, then the default (SPEC §2)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from uji.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value else None  # an empty variable counts as unset


def _pick(flag: str | None, uji_var: str, xdg_var: str, default: str) -> str:
    if flag:
        return os.path.abspath(os.path.expanduser(flag))
    if value := _env(uji_var):
        return os.path.abspath(os.path.expanduser(value))
    if value := _env(xdg_var):
        return os.path.join(os.path.abspath(value), "uji")
    return os.path.join(os.path.expanduser("~"), default, "uji")


class Paths(Record):
    config: str
    data: str
    db: str

    @property
    def init_lua(self) -> str:
        return os.path.join(self.config, "init.lua")

    @property
    def plugin_dir(self) -> str:
        return os.path.join(self.config, "plugin")

    @property
    def lua_dir(self) -> str:
        return os.path.join(self.config, "lua")

    @property
    def native_dir(self) -> str:
        """Lua C modules (`name.so`, `name.dylib` on macOS) for `require`."""
        return os.path.join(self.config, "native")

    @property
    def auth_file(self) -> str:
        return os.path.join(self.data, "auth.toml")

    @property
    def rules_lua(self) -> str:
        """The approvals the user chose to "always allow" (loaded after the config)."""
        return os.path.join(self.data, "rules.lua")


def resolve(config_dir: str | None = None, data_dir: str | None = None, db: str | None = None) -> Paths:
    config = _pick(config_dir, "UJI_CONFIG_DIR", "XDG_CONFIG_HOME", ".config")
    data = _pick(data_dir, "UJI_DATA_DIR", "XDG_DATA_HOME", os.path.join(".local", "share"))
    if db:
        db_path = os.path.abspath(os.path.expanduser(db))
    elif value := _env("UJI_DB"):
        db_path = os.path.abspath(os.path.expanduser(value))
    else:
        db_path = os.path.join(data, "uji.db")
    return Paths(config=config, data=data, db=db_path)


def nearest(start: str, has: Callable[[str], bool]) -> str | None:
    """`start` or its nearest ancestor for which `has(directory)` holds, or None."""
    here = start
    for _ in range(256):  # bounded: no path is that deep
        if has(here):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    return None
