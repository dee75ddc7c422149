"""MCP elicitation schemas (form mode): the supported subset, secret detection, the
fields a card shows, and validation of what a person typed.

Pure (standard library only). The subset is the one of the current MCP revision: a flat
object whose properties are primitives — string (`minLength`, `maxLength`, `pattern`,
`format` email / uri / date / date-time), number / integer (`minimum`, `maximum`),
boolean, single select (`enum` + optional `enumNames`, or titled `oneOf` of
`{const, title}`) and multi select (`type: array` of `items.enum` or titled
`items.anyOf`, `minItems` / `maxItems`); every type may carry `title`, `description`
and `default`. Anything else — nested objects, `$ref`, unknown keywords or formats —
is refused as a whole, never half shown. A field that asks for a secret (format
`password`, or a name/title/description about passwords, tokens, API keys, secrets) is
refused too: MCP forbids asking for secrets in form mode. The words are looked for in the
text as a person reads it (`secret_words`: NFKC, zero-width and other format characters
removed, look-alike Cyrillic and Greek letters read as Latin, accents dropped) in English,
Chinese and the other major languages; a message that asks for a secret is refused when
the form has a field to type it in (`message_secret`).

A `pattern` is a server's regular expression, run on what a person types: it runs in RE2
(google-re2), whose matching time is linear in the text, so no pattern can take
exponential time (so do the `format` checks: `elicitation_guards.format_matches`); one RE2 can't compile (backreferences, lookaround, too large) refuses
the schema. The server's schema is checked once, when its card is created
(`schema_check`); the fields are read back from the stored schema with `schema_fields`,
which trusts that check and runs no pattern (a page view costs no regular expression).

Error codes are stable; `field_message(code, lang, **details)` gives the human text in
English or Simplified Chinese.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any

from . import catalogs
from .elicitation_guards import format_matches, pattern_matches, pattern_problem, secret_words

MAX_FIELDS = 50
MAX_OPTIONS = 100
MAX_TEXT = 10_000  # any typed value; also caps what a `pattern` is run against
MAX_PATTERN = 500
MAX_LABEL = 500
FORMATS = ("email", "uri", "date", "date-time")
ANNOTATIONS = frozenset({"title", "description", "default", "$comment", "examples"})
ALLOWED = {
    "string": frozenset({"type", "minLength", "maxLength", "pattern", "format"}),
    "number": frozenset({"type", "minimum", "maximum"}),
    "integer": frozenset({"type", "minimum", "maximum"}),
    "boolean": frozenset({"type"}),
    "enum": frozenset({"type", "enum", "enumNames"}),
    "oneOf": frozenset({"type", "oneOf"}),
    "array": frozenset({"type", "items", "minItems", "maxItems", "uniqueItems"}),
}
TOP_LEVEL = frozenset({"type", "properties", "required", "$schema", "title", "description"})
TOP_LEVEL |= {"$comment", "additionalProperties"}


@dataclass(frozen=True)
class Option:
    value: str
    label: str


@dataclass(frozen=True)
class FieldSpec:
    """One property of a supported schema. `kind`: string, number, integer, boolean,
    select or multiselect."""

    name: str
    kind: str
    title: str
    description: str = ""
    required: bool = False
    default: Any = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    options: tuple[Option, ...] = ()
    min_items: int | None = None
    max_items: int | None = None


@dataclass(frozen=True)
class Problem:
    """Why a schema can't be shown: `code` (`schema_*` or `secret_field`), the property
    (`path`, "" for the whole schema) and a short English reason."""

    code: str
    path: str
    reason: str


@dataclass(frozen=True)
class SchemaCheck:
    fields: tuple[FieldSpec, ...] = ()
    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def secret(self) -> bool:
        return any(p.code == "secret_field" for p in self.problems)


# --- the subset ------------------------------------------------------------------------


def schema_fields(schema: Any) -> tuple[FieldSpec, ...]:
    """The fields of a schema `schema_check` accepted when its card was created, read
    without checking again: no default is validated, no pattern run."""
    return schema_check(schema, trusted=True).fields


def schema_check(schema: Any, *, trusted: bool = False) -> SchemaCheck:
    """Read a `requestedSchema`: its fields in order, or every reason it is refused."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return SchemaCheck(problems=(Problem("schema_not_object", "", "not a type=object"),))
    problems = [Problem("schema_keyword", "", k) for k in schema if k not in TOP_LEVEL]
    if schema.get("additionalProperties", False) not in (False, True):
        problems.append(Problem("schema_keyword", "", "additionalProperties"))
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or not properties or len(properties) > MAX_FIELDS:
        problems.append(Problem("schema_properties", "", "1 to 50 properties"))
        properties = {}
    if not isinstance(required, list) or any(r not in properties for r in required):
        problems.append(Problem("schema_required", "", "required names unknown properties"))
        required = []
    fields = []
    for name, prop in properties.items():
        spec, own = _field(str(name), prop, required=name in required, trusted=trusted)
        problems.extend(own)
        if spec is not None:
            fields.append(spec)
    return SchemaCheck(fields=tuple(fields), problems=tuple(problems))


def _field(
    name: str, prop: Any, *, required: bool, trusted: bool = False
) -> tuple[FieldSpec | None, list[Problem]]:
    if not isinstance(prop, dict):
        return None, [Problem("schema_type", name, "not an object")]
    shape = _shape(prop)
    if shape is None:
        return None, [Problem("schema_type", name, f"type {prop.get('type')!r} unsupported")]
    extra = [k for k in prop if k not in ALLOWED[shape] and k not in ANNOTATIONS]
    problems = [Problem("schema_keyword", name, k) for k in extra]
    secret = "" if trusted else _secret(name, prop)
    if secret:
        problems.append(Problem("secret_field", name, secret))
    try:
        spec = _build(name, prop, shape, required, trusted)
    except ValueError as error:
        return None, [*problems, Problem("schema_value", name, str(error))]
    return spec, problems


def _shape(prop: dict[str, Any]) -> str | None:
    kind = prop.get("type")
    if kind == "string" and "enum" in prop:
        return "enum"
    if kind == "string" and "oneOf" in prop:
        return "oneOf"
    if kind in ALLOWED and kind not in ("enum", "oneOf"):
        return str(kind)
    return None


def _secret(name: str, prop: dict[str, Any]) -> str:
    """The words that make this field a secret ("" if none)."""
    if prop.get("format") == "password" or prop.get("writeOnly") is True:
        return "format password"
    for text in (name, prop.get("title"), prop.get("description")):
        found = secret_words(text)
        if found:
            return found
    return ""


def message_secret(message: Any, fields: tuple[FieldSpec, ...]) -> str:
    """The secret word of a message that asks for a secret the form lets a person type
    ("Enter your password" above a field named "value"); "" when there is none, or when
    every field is a choice (a message may mention passwords above a yes/no question)."""
    typed = any(f.kind in ("string", "number", "integer") for f in fields)
    return secret_words(message) if typed else ""


def _text(prop: dict[str, Any], key: str, fallback: str = "") -> str:
    value = prop.get(key, fallback)
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise ValueError(f"{key} must be a string")
    return value


def _count(prop: dict[str, Any], key: str) -> int | None:
    value = prop.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key} must be a non-negative integer")
    return value


def _bound(prop: dict[str, Any], key: str) -> float | None:
    value = prop.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{key} must be a number")
    return value


def _build(name: str, prop: dict[str, Any], shape: str, required: bool, trusted: bool) -> FieldSpec:
    base = FieldSpec(
        name=name,
        kind=shape,
        title=_text(prop, "title", name)[:MAX_LABEL] or name,
        description=_text(prop, "description"),
        required=required,
    )
    if shape == "string":
        spec = _string(base, prop, trusted)
    elif shape in ("number", "integer"):
        spec = _number(base, prop)
    elif shape == "boolean":
        spec = base
    elif shape == "array":
        spec = _multi(base, prop)
    else:
        spec = replace(base, kind="select", options=_options(prop, shape))
    if "default" in prop:
        problems = [] if trusted else validate_value(spec, prop["default"])
        if problems:
            raise ValueError("default does not fit the field")
        spec = replace(spec, default=prop["default"])
    return spec


def _string(base: FieldSpec, prop: dict[str, Any], trusted: bool = False) -> FieldSpec:
    fmt = prop.get("format")
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} unsupported")
    pattern = prop.get("pattern")
    if pattern is not None:
        if not isinstance(pattern, str) or len(pattern) > MAX_PATTERN:
            raise ValueError("pattern must be a short string")
        problem = "" if trusted else pattern_problem(pattern)
        if problem:
            raise ValueError(problem)
    low, high = _count(prop, "minLength"), _count(prop, "maxLength")
    if low is not None and high is not None and low > high:
        raise ValueError("minLength is above maxLength")
    return replace(base, min_length=low, max_length=high, pattern=pattern, format=fmt)


def _number(base: FieldSpec, prop: dict[str, Any]) -> FieldSpec:
    low, high = _bound(prop, "minimum"), _bound(prop, "maximum")
    if low is not None and high is not None and low > high:
        raise ValueError("minimum is above maximum")
    return replace(base, minimum=low, maximum=high)


def _options(prop: dict[str, Any], shape: str) -> tuple[Option, ...]:
    if shape == "enum":
        values, names = prop.get("enum"), prop.get("enumNames")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise ValueError("enum must list strings")
        if names is not None and (
            not isinstance(names, list)
            or len(names) != len(values)
            or not all(isinstance(n, str) for n in names)
        ):
            raise ValueError("enumNames must name every enum value")
        options = [Option(v, (names or values)[i]) for i, v in enumerate(values)]
    else:
        items = prop.get(shape)
        if not isinstance(items, list) or not all(_titled(i) for i in items):
            raise ValueError(f"{shape} must list {{const, title}} objects")
        options = [Option(i["const"], i.get("title", i["const"])) for i in items]
    values = [o.value for o in options]
    if not options or len(options) > MAX_OPTIONS or len(set(values)) != len(values):
        raise ValueError("1 to 100 distinct options")
    return tuple(Option(o.value, o.label[:MAX_LABEL] or o.value) for o in options)


def _titled(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("const"), str)
        and isinstance(item.get("title", ""), str)
        and set(item) <= {"const", "title", "description"}
    )


def _multi(base: FieldSpec, prop: dict[str, Any]) -> FieldSpec:
    items = prop.get("items")
    if not isinstance(items, dict):
        raise ValueError("items must be an object")
    if "enum" in items and set(items) <= {"type", "enum", "enumNames"}:
        if items.get("type", "string") != "string":
            raise ValueError("items must be strings")
        options = _options(items, "enum")
    elif "anyOf" in items and set(items) <= {"type", "anyOf"}:
        options = _options(items, "anyOf")
    else:
        raise ValueError("items must be an enum or a titled anyOf")
    low, high = _count(prop, "minItems"), _count(prop, "maxItems")
    if low is not None and high is not None and low > high:
        raise ValueError("minItems is above maxItems")
    return replace(base, kind="multiselect", min_items=low, max_items=high, options=options)


# --- validation ------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldError:
    code: str
    details: Mapping[str, Any] = field(default_factory=dict)

    def message(self, lang: str = "en") -> str:
        return field_message(self.code, lang, **self.details)


def validate_value(spec: FieldSpec, value: Any) -> list[FieldError]:
    """What is wrong with a typed `value` for `spec` (empty: it fits)."""
    if spec.kind == "boolean":
        return [] if isinstance(value, bool) else [FieldError("not_boolean")]
    if spec.kind in ("number", "integer"):
        return _check_number(spec, value)
    if spec.kind == "select":
        ok = isinstance(value, str) and value in {o.value for o in spec.options}
        return [] if ok else [FieldError("not_an_option")]
    if spec.kind == "multiselect":
        return _check_multi(spec, value)
    return _check_string(spec, value)


def _check_number(spec: FieldSpec, value: Any) -> list[FieldError]:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return [FieldError("not_a_number")]
    if spec.kind == "integer" and not float(value).is_integer():
        return [FieldError("not_an_integer")]
    if spec.minimum is not None and value < spec.minimum:
        return [FieldError("below_minimum", {"minimum": fmt_number(spec.minimum)})]
    if spec.maximum is not None and value > spec.maximum:
        return [FieldError("above_maximum", {"maximum": fmt_number(spec.maximum)})]
    return []


def _check_multi(spec: FieldSpec, value: Any) -> list[FieldError]:
    allowed = {o.value for o in spec.options}
    if not isinstance(value, list) or not all(isinstance(v, str) and v in allowed for v in value):
        return [FieldError("not_an_option")]
    if len(set(value)) != len(value):
        return [FieldError("duplicate_items")]
    if spec.min_items is not None and len(value) < spec.min_items:
        return [FieldError("too_few_items", {"min": spec.min_items})]
    if spec.max_items is not None and len(value) > spec.max_items:
        return [FieldError("too_many_items", {"max": spec.max_items})]
    return []


def _check_string(spec: FieldSpec, value: Any) -> list[FieldError]:
    if not isinstance(value, str):
        return [FieldError("not_text")]
    limit = min(spec.max_length if spec.max_length is not None else MAX_TEXT, MAX_TEXT)
    if len(value) > limit:
        return [FieldError("too_long", {"max": limit})]
    if spec.min_length is not None and len(value) < spec.min_length:
        return [FieldError("too_short", {"min": spec.min_length})]
    if spec.format and not _format_ok(spec.format, value):
        return [FieldError(f"invalid_{spec.format.replace('-', '')}")]
    if spec.pattern is not None and not pattern_matches(spec.pattern, value):
        return [FieldError("pattern_mismatch")]
    return []


def _format_ok(fmt: str, value: str) -> bool:
    """Shapes in RE2 (`format_matches`, linear time); dates by the standard library's
    parsers (linear too)."""
    if fmt in ("email", "uri"):
        return format_matches(fmt, value)
    if fmt == "date":
        try:
            return date.fromisoformat(value).isoformat() == value
        except ValueError:
            return False
    if not format_matches("date-time", value):
        return False
    try:
        datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def fmt_number(value: float) -> str:
    """A bound or value as people write it: 3, not 3.0."""
    return str(int(value)) if float(value).is_integer() else repr(value)


# --- messages ---------------------------------------------------------------------------


def field_message(code: str, lang: str = "en", **details: Any) -> str:
    """The human message of a field error code (``catalogs``: ``elicitation.<code>``)."""
    return catalogs.text(f"elicitation.{code}", lang, **{k: str(v) for k, v in details.items()})
