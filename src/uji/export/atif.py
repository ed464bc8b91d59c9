"""A session as an ATIF trajectory (Agent Trajectory Interchange Format, the one Harbor
records and reads; checked against Harbor's own `Trajectory` model in the tests when a
Python 3.12 environment with `harbor` can be made).

A prompt is a `user` step; an answer is an `agent` step with its reasoning, its tool
calls, and as its observation the result of each call (a diff follows the result).
Notes (errors, `!` commands, summaries) are `system` steps.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from uji import __version__
from uji.export.entries import Call, Entry, Note, Prompt, Reply

if TYPE_CHECKING:
    from typing import NotRequired, TypedDict

    from uji.store.sessions import Session

    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class ToolCallRecord(TypedDict):
        tool_call_id: str
        function_name: str
        arguments: dict[str, Any]  # the model's, as it sent them

    class ObservationResult(TypedDict):
        source_call_id: str
        content: str

    class Observation(TypedDict):
        results: list[ObservationResult]

    class Step(TypedDict):
        step_id: int
        source: Literal["user", "agent", "system"]
        message: str
        reasoning_content: NotRequired[str]
        tool_calls: NotRequired[list[ToolCallRecord]]
        observation: NotRequired[Observation]
        extra: NotRequired[dict[str, object]]

    class Metrics(TypedDict):
        total_steps: int
        total_prompt_tokens: NotRequired[int]
        total_completion_tokens: NotRequired[int]
        total_cached_tokens: NotRequired[int]
        total_cost_usd: NotRequired[float]


SCHEMA_VERSION = "ATIF-v1.5"


def trajectory(session: Session, items: list[Entry], usage: dict[str, float]) -> str:
    steps: list[Step] = []
    open_step: Step | None = None  # the agent step whose calls' results come next

    def add(source: Literal["user", "agent", "system"], message: str) -> Step:
        step: Step = {"step_id": len(steps) + 1, "source": source, "message": message}
        steps.append(step)
        return step

    for item in items:
        match item:
            case Prompt(text=text, images=images):
                open_step = None
                step = add("user", text)
                if images:
                    step["extra"] = {"images": images}
            case Reply(text=text, reasoning=reasoning, calls=calls):
                step = add("agent", text)
                if reasoning:
                    step["reasoning_content"] = reasoning
                if calls:  # their results come next, as this step's observation
                    step["tool_calls"] = []
                    step["observation"] = {"results": []}
                open_step = step if calls else None
            case Call():
                if open_step is None:  # a result with no answer before it (a crash left it)
                    open_step = add("agent", "")
                    open_step["tool_calls"] = []
                    open_step["observation"] = {"results": []}
                open_step.setdefault("tool_calls", []).append(
                    {"tool_call_id": item.id, "function_name": item.name, "arguments": item.argument_object()}
                )
                content = item.result if not item.diff else f"{item.result}\n\n{item.diff}"
                results = open_step.setdefault("observation", {"results": []})["results"]
                results.append({"source_call_id": item.id, "content": content})
            case Note(kind=kind, text=text):
                open_step = None
                add("system", text)["extra"] = {"kind": kind}
    out: dict[str, object] = {
        "schema_version": SCHEMA_VERSION,
        "session_id": session["id"],
        "agent": {"name": "uji", "version": __version__},
        "steps": steps,
        "final_metrics": _metrics(usage, len(steps)),
        "extra": {"title": session["title"], "directory": session["directory"]},
    }
    return json.dumps(out, ensure_ascii=False, indent=2) + "\n"


def _metrics(usage: dict[str, float], n_steps: int) -> Metrics:
    metrics: Metrics = {"total_steps": n_steps}
    if usage:
        metrics["total_prompt_tokens"] = int(
            usage.get("input", 0) + usage.get("cache_read", 0) + usage.get("cache_write", 0)
        )
        metrics["total_completion_tokens"] = int(usage.get("output", 0))
        metrics["total_cached_tokens"] = int(usage.get("cache_read", 0))
        if "cost" in usage:
            metrics["total_cost_usd"] = float(usage["cost"])
    return metrics
