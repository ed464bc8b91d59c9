"""A server's question (`elicitation/create`) as a form, and the answer checked against
the schema it asked with. No SDK import: uji.mcp.client hands the request's parts in.

The spec restricts the requested schema to a flat object of primitive properties:
strings (minLength, maxLength, format), numbers and integers (minimum, maximum),
booleans, and single-choice enums (`enum` with `enumNames`, or `oneOf` of
`{const, title}`). A property of another shape is shown as one the form cannot take:
the user can then only decline.
"""

from __future__ import annotations

from typing import Any

from uji.ui.form import FieldKind, Form, FormField, Value

__all__ = ["Form", "check", "form"]


def form(server: str, message: str, schema: dict[str, Any]) -> Form:
    props = schema.get("properties")
    required = schema.get("required")
    needed = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    fields: list[FormField] = []
    for name, prop in props.items() if isinstance(props, dict) else ():
        fields.append(_field(str(name), prop if isinstance(prop, dict) else {}, name in needed))
    return Form(f"MCP server {server} asks", message, fields)


def _field(name: str, prop: dict[str, Any], required: bool) -> FormField:
    title = str(prop.get("title") or name)
    description = str(prop.get("description") or "")
    default = prop.get("default")
    kept = default if isinstance(default, str | int | float | bool) else None
    kind: FieldKind
    options: list[str] = []
    labels: list[str] = []
    unsupported = None
    if isinstance(prop.get("enum"), list):
        kind = "enum"
        options = [str(v) for v in prop["enum"]]
        names = prop.get("enumNames")
        labels = (
            [str(n) for n in names] if isinstance(names, list) and len(names) == len(options) else options
        )
    elif isinstance(prop.get("oneOf"), list):
        kind = "enum"
        for choice in prop["oneOf"]:
            if isinstance(choice, dict) and "const" in choice:
                options.append(str(choice["const"]))
                labels.append(str(choice.get("title") or choice["const"]))
    elif prop.get("type") in ("string", "number", "integer", "boolean"):
        kind = prop["type"]
    else:
        kind = "string"
        unsupported = f"a {prop.get('type') or 'value'} of a shape uji's forms do not take"
    return FormField(name, kind, title, description, required, kept, options, labels, unsupported)


def check(schema: dict[str, Any], values: dict[str, Value]) -> str | None:
    """The first way `values` breaks the requested schema (jsonschema, formats checked),
    or None. A schema jsonschema cannot read is not held against the user's answer."""
    import jsonschema

    try:
        validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
        error = jsonschema.exceptions.best_match(validator.iter_errors(values))
    except jsonschema.exceptions.SchemaError:
        return None
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path)
    title = where
    prop = schema.get("properties", {}).get(where) if where else None
    if isinstance(prop, dict) and prop.get("title"):
        title = str(prop["title"])
    return f"{title}: {error.message}" if title else error.message
