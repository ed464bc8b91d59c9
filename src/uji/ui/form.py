"""A form a frontend shows (an MCP server's question, `elicitation/create`): a message,
fields, and the user's answer. What the fields mean and how the answer is checked is
the asker's (uji.mcp.elicit); a frontend only shows them and gathers what was typed."""

from __future__ import annotations

from typing import Literal

from uji.record import Record, field

# What a field takes: a line of text, a number, a whole number, yes/no, or one of `options`.
FieldKind = Literal["string", "number", "integer", "boolean", "enum"]
# accept: the user filled it in and sent it; decline: said no; cancel: dismissed it.
FormAction = Literal["accept", "decline", "cancel"]
Value = str | int | float | bool


class FormField(Record):
    name: str  # the key the answer has for it
    kind: FieldKind
    title: str  # the label shown (the schema's title, else the name)
    description: str = ""
    required: bool = False
    default: Value | None = None
    options: list[str] = field(default_factory=list)  # enum: the values, in order
    labels: list[str] = field(default_factory=list)  # enum: what is shown for each (its title)
    # Not one the form can show (an array, an object): the form can only be declined.
    unsupported: str | None = None


class Form(Record):
    title: str  # who asks (the server)
    message: str
    fields: list[FormField] = field(default_factory=list)
    url: str | None = None  # URL mode: the address the user is asked to open, not fields


class FormAnswer(Record):
    action: FormAction
    values: dict[str, Value] = field(default_factory=dict)  # accept: the checked values


def convert(fields: list[FormField], typed: dict[str, str | bool]) -> tuple[dict[str, Value], str | None]:
    """The values of what was typed, each as its field's kind (an empty optional field is
    left out), or the first problem, naming the field."""
    values: dict[str, Value] = {}
    for f in fields:
        raw = typed.get(f.name)
        if isinstance(raw, bool):
            values[f.name] = raw
            continue
        text = (raw or "").strip() if f.kind != "string" else raw or ""
        if text == "":
            if f.required:
                return values, f"{f.title}: required"
            continue
        if f.kind == "integer":
            try:
                values[f.name] = int(text)
            except ValueError:
                return values, f"{f.title}: a whole number, please"
        elif f.kind == "number":
            try:
                number = float(text)
            except ValueError:
                return values, f"{f.title}: a number, please"
            values[f.name] = int(number) if number.is_integer() and "." not in text else number
        elif f.kind == "boolean":
            values[f.name] = text.lower() in ("y", "yes", "true", "1", "on")
        elif f.kind == "enum" and text not in f.options:
            return values, f"{f.title}: one of {', '.join(f.options)}"
        else:
            values[f.name] = text
    return values, None
