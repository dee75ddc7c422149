"""MCP elicitation forms: read a posted card against the fields of a supported schema
(`elicitation_schema`), check typed content, and build the inputs a card shows.

Pure (standard library only).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo

from .elicitation_guards import format_matches
from .elicitation_schema import (
    MAX_OPTIONS,
    MAX_TEXT,
    FieldError,
    FieldSpec,
    fmt_number,
    validate_value,
)

# A value of MCP elicitation content: the schema subset's primitives.
Primitive = str | int | float | bool | list[str] | None


@dataclass(frozen=True)
class Validated:
    """A form post read against the fields: `content` (typed, what the server gets) when
    `ok`; otherwise `errors` by field name. `values` is what the person typed, to show
    again."""

    content: dict[str, Primitive]
    errors: dict[str, FieldError]
    values: dict[str, list[str]]

    @property
    def ok(self) -> bool:
        return not self.errors


def form_read(
    fields: Sequence[FieldSpec], data: Mapping[str, Sequence[str]], *, zone: tzinfo = UTC
) -> Validated:
    """Read a form post (`answer-<name>` → values) into content and check it.

    Empty optional fields are left out; an unchecked checkbox is `false`. A `date-time`
    typed without an offset (`datetime-local`) is a time on the person's clock: it gets
    `zone`'s offset on that date (so daylight saving time is right).
    """
    content: dict[str, Primitive] = {}
    errors: dict[str, FieldError] = {}
    values: dict[str, list[str]] = {}
    for spec in fields:
        raw = [str(v) for v in data.get(f"answer-{spec.name}", [])][: MAX_OPTIONS + 1]
        values[spec.name] = raw
        present, value, error = _typed(spec, raw, zone)
        if error is None and not present and spec.required:
            error = FieldError("required")
        if error is None and present:
            error = next(iter(validate_value(spec, value)), None)
        if error is not None:
            errors[spec.name] = error
        elif present:
            content[spec.name] = value
    return Validated(content=content, errors=errors, values=values)


def _typed(
    spec: FieldSpec, raw: list[str], zone: tzinfo
) -> tuple[bool, Primitive, FieldError | None]:
    """(present, typed value, parse error) of one field's posted values."""
    if spec.kind == "boolean":
        return True, bool(raw) and raw[-1] in ("true", "on", "1"), None
    if spec.kind == "multiselect":
        return bool(raw), raw, None
    text = raw[-1] if raw else ""
    if len(text) > MAX_TEXT:
        return True, text, FieldError("too_long", {"max": MAX_TEXT})
    if spec.kind in ("number", "integer"):
        text = text.strip()
        if not text:
            return False, None, None
        try:
            number = float(text)
        except ValueError:
            return True, text, FieldError("not_a_number")
        if spec.kind == "integer" and number.is_integer() and abs(number) < 2**53:
            return True, int(number), None
        return True, number, None
    if text == "":
        return False, None, None
    if spec.format == "date-time" and format_matches("local-date-time", text):
        # 2026-02-30T…: left as typed, and the format check says why
        with contextlib.suppress(ValueError):
            text = datetime.fromisoformat(text).replace(tzinfo=zone).isoformat()
    return True, text, None


def validate_content(fields: Sequence[FieldSpec], content: object) -> dict[str, FieldError]:
    """Check typed content (e.g. stored or sent by an API client) against the fields."""
    if not isinstance(content, dict):
        return {"": FieldError("not_an_object")}
    known = {spec.name for spec in fields}
    errors = {name: FieldError("unknown_field") for name in content if name not in known}
    for spec in fields:
        if spec.name not in content:
            if spec.required:
                errors[spec.name] = FieldError("required")
            continue
        problem = next(iter(validate_value(spec, content[spec.name])), None)
        if problem is not None:
            errors[spec.name] = problem
    return errors


# --- what a card shows -----------------------------------------------------------------


@dataclass(frozen=True)
class OptionView:
    value: str
    label: str
    checked: bool
    dom_id: str


@dataclass(frozen=True)
class FieldView:
    """One input of a card. `input_type`: text, email, url, date, datetime-local, number,
    checkbox (boolean), radio, select or checkboxes (multi select)."""

    name: str
    dom_id: str
    label: str
    help: str
    required: bool
    input_type: str
    value: str = ""
    checked: bool = False
    options: tuple[OptionView, ...] = ()
    min: str = ""
    max: str = ""
    step: str = ""
    min_length: int | None = None
    max_length: int | None = None
    error: str = ""


INPUTS = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local"}
RADIO_LIMIT = 6  # up to this many options show as radios; more as a select


def field_views(
    fields: Sequence[FieldSpec],
    *,
    prefix: str,
    values: Mapping[str, Sequence[str]] | None = None,
    errors: Mapping[str, FieldError] | None = None,
    lang: str = "en",
) -> tuple[FieldView, ...]:
    """The inputs of a card: the person's `values` (a draft or a refused post) where
    given, else the schema defaults."""
    views = []
    for n, spec in enumerate(fields, start=1):
        dom_id = f"{prefix}-f{n}"
        shown = list(values[spec.name]) if values and spec.name in values else _default(spec)
        error = errors.get(spec.name) if errors else None
        views.append(_view(spec, dom_id, shown, error.message(lang) if error else ""))
    return tuple(views)


def _default(spec: FieldSpec) -> list[str]:
    value = spec.default
    if value is None:
        return []
    if isinstance(value, bool):
        return ["true"] if value else []
    if isinstance(value, list):
        return [str(v) for v in value]
    if spec.format == "date-time" and isinstance(value, str):
        return [value[:16]]  # datetime-local shows minutes, without the offset
    return [fmt_number(value) if isinstance(value, (int, float)) else str(value)]


def humanise(text: str) -> str:
    """A raw name or enum value as people read it ("outdoor_terrace" → "Outdoor terrace"):
    shown when the schema gives no title (`title`, `enumNames`, `oneOf` titles win)."""
    words = " ".join(text.replace("_", " ").replace("-", " ").split())
    if not words or words != words.lower():
        return text  # already written for people (or mixed case on purpose): as it is
    return words[0].upper() + words[1:]


def _label(label: str, value: str) -> str:
    return humanise(label) if label == value else label


def _view(spec: FieldSpec, dom_id: str, shown: list[str], error: str) -> FieldView:
    base = FieldView(
        name=f"answer-{spec.name}",
        dom_id=dom_id,
        label=_label(spec.title, spec.name),
        help=spec.description,
        required=spec.required,
        input_type="text",
        error=error,
    )
    last = shown[-1] if shown else ""
    if spec.kind == "boolean":
        return replace(base, input_type="checkbox", checked=last == "true")
    if spec.kind in ("select", "multiselect"):
        chosen = set(shown)
        options = tuple(
            OptionView(o.value, _label(o.label, o.value), o.value in chosen, f"{dom_id}-o{k}")
            for k, o in enumerate(spec.options, start=1)
        )
        kind = "checkboxes" if spec.kind == "multiselect" else "radio"
        if kind == "radio" and len(options) > RADIO_LIMIT:
            kind = "select"
        return replace(base, input_type=kind, options=options)
    if spec.kind in ("number", "integer"):
        return replace(
            base,
            input_type="number",
            value=last,
            min="" if spec.minimum is None else fmt_number(spec.minimum),
            max="" if spec.maximum is None else fmt_number(spec.maximum),
            step="1" if spec.kind == "integer" else "any",
        )
    return replace(
        base,
        input_type=INPUTS.get(spec.format or "", "text"),
        value=last,
        min_length=spec.min_length,
        max_length=spec.max_length,
    )


def answer_rows(
    fields: Sequence[FieldSpec], content: Mapping[str, object], *, yes: str, no: str
) -> tuple[tuple[str, str], ...]:
    """(label, readable value) of every answered field, in schema order: option labels
    for selects, `yes` / `no` for booleans."""
    rows = []
    for spec in fields:
        if spec.name not in content:
            continue
        value = content[spec.name]
        labels = {o.value: _label(o.label, o.value) for o in spec.options}
        if isinstance(value, bool):
            text = yes if value else no
        elif isinstance(value, list):
            text = ", ".join(labels.get(str(v), str(v)) for v in value)
        elif isinstance(value, (int, float)):
            text = fmt_number(value)
        else:
            text = labels.get(str(value), str(value))
        rows.append((_label(spec.title, spec.name), text))
    return tuple(rows)
