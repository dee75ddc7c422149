"""A card definition's stable fingerprint (pure: the standard library only).

Two cards are the same definition when their kind, title and fields are the same: the
title (an MCP server's tool for an elicitation, whose message varies per call), and per
question its id, type, text and options (values and labels, in order). Left out, because
they change from one showing to the next without making it another question: message and
questionnaire ids, defaults, placeholders, help texts, an elicitation's message. Text is
compared after NFC normalization with runs of white space made one space, so a model
re-wrapping a line doesn't split a definition; anything else (a reworded question, a new
option) makes a new definition — its numbers are its own.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from dataclasses import dataclass, field


def norm(text: object) -> str:
    return " ".join(unicodedata.normalize("NFC", str(text or "")).split())


@dataclass(frozen=True)
class QuestionSpec:
    id: str
    text: str
    type: str
    options: tuple[tuple[str, str], ...] = ()
    # "Other" / free text possible beside the options.
    free_text: bool = False

    def key(self) -> list[object]:
        return [
            norm(self.id),
            self.type,
            norm(self.text),
            [[norm(v), norm(lab)] for v, lab in self.options],
            self.free_text,
        ]


@dataclass(frozen=True)
class DefinitionSpec:
    kind: str
    title: str
    questions: tuple[QuestionSpec, ...] = ()
    # More identity where the title isn't enough (an elicitation: server, tool, mode).
    extra: tuple[str, ...] = field(default=())
    # What admin shows, when the identity has no readable title (an elicitation's first
    # message, a form's first question), and where it comes from: not part of the identity.
    label: str = ""
    source: str = ""

    def fingerprint(self) -> str:
        """SHA-256 (hex) of the canonical JSON of kind, title, extra and questions."""
        canonical = json.dumps(
            [
                self.kind,
                norm(self.title),
                [norm(e) for e in self.extra],
                [q.key() for q in self.questions],
            ],
            ensure_ascii=False,
            separators=(",", ":"),
        )
        return hashlib.sha256(canonical.encode()).hexdigest()
