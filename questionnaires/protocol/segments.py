"""Typed values of the inline questionnaire protocol.

Everything here is a frozen dataclass: a parsed message is a tuple of small values that
remember where they came from (``raw``, ``start``, ``end``), in the spirit of
markdown-it-py tokens.  ``to_dict()`` gives the JSON shape of the lint contract
(DESIGN §6), which the HTTP API reuses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .jsontypes import Json, JsonValue

SegmentKind = Literal["markdown", "questionnaire", "response", "invalid"]
Encoding = Literal["yaml", "json"]


@dataclass(frozen=True, slots=True)
class ProtocolError:
    """One validation failure: a stable machine ``code``, the field ``path`` and a
    localized ``message``.  ``details`` holds facts such as the bad value."""

    code: str
    path: str
    message: str
    details: dict[str, JsonValue] = field(default_factory=dict)

    def to_dict(self) -> dict[str, JsonValue]:
        return {
            "code": self.code,
            "path": self.path,
            "message": self.message,
            "details": dict(self.details),
        }


class ProtocolException(Exception):
    """Root of the exceptions raised by :mod:`questionnaires.protocol`."""

    def __init__(self, errors: tuple[ProtocolError, ...]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{e.path}: {e.message}" for e in errors) or "invalid")


class AnswerInvalid(ProtocolException):
    """Raised by ``build_response`` when the answers don't fit the questionnaire."""


class ToolResultInvalid(ProtocolException):
    """Raised by ``questionnaire_from_tool_result`` for a failed or malformed result."""


@dataclass(frozen=True, slots=True)
class Option:
    """A choice: ``value`` is what the model receives, ``label`` what people see."""

    value: str
    label: str

    def to_dict(self) -> dict[str, str]:
        return {"value": self.value, "label": self.label}


@dataclass(frozen=True, slots=True)
class Question:
    """A normalized question.  ``type`` is ``single_choice``, ``multi_choice`` or
    ``free_text``; a multi-choice ``default`` is a tuple of option values."""

    id: str
    type: str
    text: str
    options: tuple[Option, ...] = ()
    default: str | tuple[str, ...] = ""
    allow_other: bool = False

    def option_values(self) -> tuple[str, ...]:
        return tuple(o.value for o in self.options)

    def to_dict(self) -> dict[str, JsonValue]:
        default: JsonValue = list(self.default) if isinstance(self.default, tuple) else self.default
        return {
            "id": self.id,
            "type": self.type,
            "text": self.text,
            "options": [o.to_dict() for o in self.options],
            "default": default,
            "allow_other": self.allow_other,
        }


@dataclass(frozen=True, slots=True)
class Questionnaire:
    """A normalized questionnaire, whatever encoding it came from."""

    name: str
    questionnaire_id: str
    title: str
    questions: tuple[Question, ...]

    def to_dict(self) -> dict[str, JsonValue]:
        return {
            "name": self.name,
            "questionnaire_id": self.questionnaire_id,
            "title": self.title,
            "questions": [q.to_dict() for q in self.questions],
        }


@dataclass(frozen=True, slots=True)
class MarkdownSegment:
    """Ordinary Markdown (prose, code, unregistered names, blocks inside code)."""

    raw: str
    start: int
    end: int
    kind: SegmentKind = field(default="markdown", init=False)

    def to_dict(self) -> dict[str, JsonValue]:
        return {"kind": self.kind, "raw": self.raw}


@dataclass(frozen=True, slots=True)
class QuestionnaireSegment:
    """A valid questionnaire request block."""

    raw: str
    start: int
    end: int
    encoding: Encoding
    ordinal: int
    questionnaire: Questionnaire
    kind: SegmentKind = field(default="questionnaire", init=False)

    @property
    def name(self) -> str:
        return self.questionnaire.name

    @property
    def questionnaire_id(self) -> str:
        return self.questionnaire.questionnaire_id

    @property
    def title(self) -> str:
        return self.questionnaire.title

    @property
    def questions(self) -> tuple[Question, ...]:
        return self.questionnaire.questions

    def to_dict(self) -> dict[str, JsonValue]:
        data = self.questionnaire.to_dict()
        return {
            "kind": self.kind,
            "raw": self.raw,
            "name": self.name,
            "encoding": self.encoding,
            "questionnaire_id": self.questionnaire_id,
            "title": self.title,
            "questions": data["questions"],
        }


@dataclass(frozen=True, slots=True)
class ResponseSegment:
    """A well-formed ``<name-response>{json}</name-response>`` block in a user message.
    ``name`` is the response tag name, e.g. ``questionnaire-response``."""

    raw: str
    start: int
    end: int
    name: str
    payload: dict[str, Json]
    ordinal: int = 0
    kind: SegmentKind = field(default="response", init=False)

    def to_dict(self) -> dict[str, JsonValue]:
        return {"kind": self.kind, "raw": self.raw, "name": self.name, "payload": self.payload}


@dataclass(frozen=True, slots=True)
class InvalidSegment:
    """A protocol block that failed to parse or validate.  It keeps its raw text so
    it can be shown in place; nothing is dropped."""

    raw: str
    start: int
    end: int
    name: str
    encoding: Encoding
    errors: tuple[ProtocolError, ...]
    ordinal: int
    kind: SegmentKind = field(default="invalid", init=False)

    def to_dict(self) -> dict[str, JsonValue]:
        return {
            "kind": self.kind,
            "raw": self.raw,
            "name": self.name,
            "encoding": self.encoding,
            "errors": [e.to_dict() for e in self.errors],
        }


Segment = MarkdownSegment | QuestionnaireSegment | ResponseSegment | InvalidSegment


@dataclass(frozen=True, slots=True)
class BuiltResponse:
    """What ``build_response`` returns: the envelope the model reads, the readable
    text people see, and the payload dict inside the envelope."""

    envelope: str
    display: str
    payload: dict[str, Json]


@dataclass(frozen=True, slots=True)
class SelfCheckIssue:
    """One problem self-check found in the inspected reply."""

    name: str
    encoding: str | None
    code: str
    path: str
    message: str

    def to_dict(self) -> dict[str, JsonValue]:
        return {
            "name": self.name,
            "encoding": self.encoding,
            "code": self.code,
            "path": self.path,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class SelfCheckResult:
    """Outcome of ``self_check``.  ``diagnostic`` is the hidden repair request (None
    when passed); ``failed_names`` feed ``required_names`` of the next attempt."""

    passed: bool
    issues: tuple[SelfCheckIssue, ...] = ()
    inspected: str | None = None
    diagnostic: str | None = None
    failed_names: frozenset[str] = frozenset()

    def to_dict(self) -> dict[str, JsonValue]:
        return {"passed": self.passed, "issues": [i.to_dict() for i in self.issues]}
