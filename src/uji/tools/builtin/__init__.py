"""The four built-in tools, registered like any other tool."""

from __future__ import annotations

from uji.tools.registry import Tool


def builtin_tools() -> list[Tool]:
    from uji.tools.builtin import edit_file, read_file, run_command, write_file

    tools = []
    for module in (read_file, edit_file, write_file, run_command):
        spec = module.SPEC
        tools.append(
            Tool(
                name=spec["name"],
                run=module.run,
                description=spec["description"],
                parameters=spec["parameters"],
                subject_key=spec["subject_key"],
                path_subject=spec["path_subject"],
                policy=spec["policy"],
                verb=spec["verb"],
                question=spec.get("question"),
                builtin=True,
                confined=spec["path_subject"],
                preview=getattr(module, "preview", None),
            )
        )
    return tools
