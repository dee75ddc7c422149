"""Strict, safe YAML for fenced questionnaires (DESIGN §4.3).

PyYAML speaks YAML 1.1, where ``yes``/``no``/``on``/``off`` are booleans and
``2024-01-01`` is a date.  We build Python values ourselves from the parser's events
(libyaml's C parser when available), resolving plain scalars with the YAML 1.2 core
schema only.  Anchors, aliases and explicit tags are rejected outright, so there is no
alias bomb and no custom type; duplicate keys and non-string keys are errors; the
payload is capped at 64 KiB before parsing and collections may nest ``MAX_DEPTH``
levels (the builder is iterative, and nothing deep reaches the validator).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from .limits import MAX_BODY_BYTES, MAX_DEPTH

_Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_NULL_RE = re.compile(r"(?:~|null|Null|NULL|)\Z")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT_RE = re.compile(r"[-+]?[0-9]+\Z")
_OCT_RE = re.compile(r"0o[0-7]+\Z")
_HEX_RE = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT_RE = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_INF_RE = re.compile(r"[-+]?\.(?:inf|Inf|INF)\Z")
_NAN_RE = re.compile(r"\.(?:nan|NaN|NAN)\Z")

_UNSET: Any = object()


class YamlProblem(Exception):
    """A YAML-level failure: ``code`` plus details (``line`` is 1-based in the body)."""

    def __init__(self, code: str, **details: Any) -> None:
        super().__init__(code)
        self.code = code
        self.details = details


def resolve_plain(value: str) -> Any:
    """Resolve a plain (unquoted) scalar with the YAML 1.2 core schema."""
    if _NULL_RE.match(value):
        return None
    if value in _BOOL:
        return _BOOL[value]
    if _INT_RE.match(value):
        try:
            return int(value)
        except ValueError:  # more digits than int() converts: still a number
            return float(value)
    if _OCT_RE.match(value):
        return int(value[2:], 8)
    if _HEX_RE.match(value):
        return int(value[2:], 16)
    if _FLOAT_RE.match(value):
        return float(value)
    if _INF_RE.match(value):
        return float("-inf") if value.startswith("-") else float("inf")
    if _NAN_RE.match(value):
        return float("nan")
    return value


def _line(event: Any) -> int:
    mark = getattr(event, "start_mark", None)
    return int(mark.line) + 1 if mark is not None else 0


class _Builder:
    """Turns a stream of parser events into plain dicts, lists and scalars."""

    def __init__(self) -> None:
        self.stack: list[list[Any]] = []  # [container, pending key]
        self.root: Any = _UNSET
        self.documents = 0

    def feed(self, event: Any) -> None:
        if isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise YamlProblem("questionnaire.yaml.multiple_documents", line=_line(event))
        elif isinstance(event, yaml.AliasEvent):
            raise YamlProblem("questionnaire.yaml.alias_forbidden", line=_line(event))
        elif isinstance(event, yaml.NodeEvent):
            self._node(event)
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            container = self.stack.pop()[0]
            self._attach(container, event)

    def _node(self, event: Any) -> None:
        if event.anchor is not None:
            raise YamlProblem("questionnaire.yaml.alias_forbidden", line=_line(event))
        if event.tag is not None:
            raise YamlProblem("questionnaire.yaml.tag_forbidden", tag=event.tag, line=_line(event))
        if isinstance(event, yaml.ScalarEvent):
            plain = not event.style and event.implicit[0]
            self._attach(resolve_plain(event.value) if plain else event.value, event)
            return
        if not self.stack and event.flow_style:
            raise YamlProblem("questionnaire.yaml.not_block", line=_line(event))
        if self.stack and self.stack[-1][1] is _UNSET and isinstance(self.stack[-1][0], dict):
            raise YamlProblem("questionnaire.yaml.key_invalid", line=_line(event))
        if len(self.stack) >= MAX_DEPTH:
            raise YamlProblem("questionnaire.yaml.too_deep", line=_line(event), limit=MAX_DEPTH)
        container: Any = {} if isinstance(event, yaml.MappingStartEvent) else []
        self.stack.append([container, _UNSET])

    def _attach(self, value: Any, event: Any) -> None:
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        container = frame[0]
        if isinstance(container, list):
            container.append(value)
        elif frame[1] is _UNSET:
            if not isinstance(value, str):
                raise YamlProblem("questionnaire.yaml.key_invalid", line=_line(event))
            if value in container:
                raise YamlProblem("questionnaire.yaml.duplicate_key", key=value, line=_line(event))
            frame[1] = value
        else:
            container[frame[1]] = value
            frame[1] = _UNSET


def load_strict(text: str) -> Any:
    """Parse one block-YAML document strictly; raise :class:`YamlProblem` on failure.

    An empty document gives ``None``.
    """
    size = len(text.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        raise YamlProblem("questionnaire.yaml.too_large", size=size, limit=MAX_BODY_BYTES)
    if text.lstrip()[:1] in ("{", "["):
        raise YamlProblem("questionnaire.yaml.not_block")
    builder = _Builder()
    try:
        for event in yaml.parse(text, Loader=_Loader):
            builder.feed(event)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        column = mark.column + 1 if mark is not None else 0
        problem = exc.problem or exc.context or "syntax error"
        raise YamlProblem(
            "questionnaire.yaml.syntax", line=line, column=column, problem=problem
        ) from None
    except yaml.YAMLError as exc:
        raise YamlProblem("questionnaire.yaml.syntax", line=0, column=0, problem=str(exc)) from None
    return None if builder.root is _UNSET else builder.root
