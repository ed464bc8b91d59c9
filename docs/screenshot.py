"""Makes docs/screenshot.svg: the real app, headless, against the fake server, with a
tool call, a diff and an approval on screen. Run: python docs/screenshot.py"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeOpenAI, text, tool_call  # noqa: E402
from tests.test_tui_support import answerable, idle, make_app, ready, send, shows  # noqa: E402

GREETER = '''def greet(name):
    return "Hello " + name


if __name__ == "__main__":
    print(greet("world"))
'''

ANSWER = """`greet.py` builds the greeting by **string concatenation**. An f-string reads better
and also copes with non-string names:

```python
def greet(name: str) -> str:
    return f"Hello, {name}!"
```

Shall I make that change?"""


async def main(out: Path) -> None:
    with FakeOpenAI() as fake, tempfile.TemporaryDirectory() as tmp:
        fake.script(
            tool_call("read_file", {"path": "greet.py"}, id="r"),
            text(ANSWER, piece=6),
            tool_call(
                "edit_file",
                {
                    "path": "greet.py",
                    "old_string": 'def greet(name):\n    return "Hello " + name',
                    "new_string": 'def greet(name: str) -> str:\n    return f"Hello, {name}!"',
                },
                id="e",
            ),
        )
        app = make_app(Path(tmp), fake, 'uji.tool.policy({ read_file = { default = "allow" } })\n')
        (Path(tmp) / "work" / "greet.py").write_text(GREETER)
        os.environ["HOME"] = tmp  # the footer shows the directory under ~
        async with app.run_test(size=(110, 38)) as pilot:
            await ready(pilot)
            await send(pilot, "how does greet.py build its greeting?")
            await idle(pilot)
            await send(pilot, "yes, please")
            await shows(pilot, "Make the following edit?")
            await answerable(pilot)  # past its guard time: the key hints are shown
            await pilot.pause(0.1)
            app.save_screenshot(filename=out.name, path=str(out.parent))
            await pilot.press("n")
            await pilot.press("ctrl+c")
    print(f"wrote {out}")


if __name__ == "__main__":
    asyncio.run(main(ROOT / "docs" / "screenshot.svg"))
