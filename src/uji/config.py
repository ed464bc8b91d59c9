"""Loading the Lua config: uji's defaults, then `init.lua`, then `plugin/*.lua` by name,
then `<data>/rules.lua` (the approvals the user chose to "always allow").

An error in any file is reported with its file and line, and uji goes on with what
loaded before it. Nothing in the working directory is ever run as config.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from uji.lua.runtime import LuaError, LuaInterrupt

if TYPE_CHECKING:
    from uji.app import App

DEFAULTS_MODULE = "uji.builtin.defaults"


def config_files(app: App) -> list[str]:
    files = []
    if os.path.isfile(app.paths.init_lua):
        files.append(app.paths.init_lua)
    try:
        plugins = sorted(n for n in os.listdir(app.paths.plugin_dir) if n.endswith(".lua"))
    except OSError:
        plugins = []
    files.extend(os.path.join(app.paths.plugin_dir, n) for n in plugins)
    if os.path.isfile(app.paths.rules_lua):
        files.append(app.paths.rules_lua)
    return files


async def load_config(app: App) -> list[str]:
    """Run every config file; returns the errors (each also given as a notice)."""
    rt = app.lua
    errors: list[str] = []
    require = rt.lua.globals().require
    try:
        await rt.call(require, DEFAULTS_MODULE)
    except LuaError as e:
        errors.append(f"uji's defaults failed to load: {e}")
    for path in config_files(app):
        try:
            chunk = rt.load_file(path)
            await rt.call(chunk)
        except LuaInterrupt:
            # Esc or SIGINT while a file ran (a loop that never ends): it stops there,
            # and the files after it do not run.
            app.config_interrupted = path
            errors.append(f"config interrupted: {path} did not finish; the files after it were not loaded")
            break
        except LuaError as e:
            errors.append(f"config error: {e}")
        except OSError as e:
            errors.append(f"config error: cannot read {path}: {e.strerror}")
    for error in errors:
        app.notice(error)
    return errors
