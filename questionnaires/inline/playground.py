"""The protocol playground: one assistant (or user) message → segments, cards, self-check.

Nothing is stored; cards render in preview mode (never submittable).  Markdown segments
are shown as escaped text: the playground debugs the protocol, not Markdown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from django.utils.safestring import SafeString

from questionnaires.inline.presenter import MessageInput, MessageState
from questionnaires.inline.render import plain_markdown, render_message
from questionnaires.protocol import SelfCheckResult, parse_message, self_check
from questionnaires.protocol.jsontypes import JsonValue

MAX_CHARS = 200_000


@dataclass(frozen=True, slots=True)
class SegmentRow:
    index: int
    kind: str
    name: str
    encoding: str
    questionnaire_id: str
    errors: tuple[Mapping[str, JsonValue], ...]
    raw: str
    json: str


@dataclass(frozen=True, slots=True)
class PlaygroundResult:
    content: str
    role: str
    rows: tuple[SegmentRow, ...]
    cards_html: SafeString | str
    self_check: SelfCheckResult | None
    too_long: bool = False


def playground_result(content: str, *, role: str, lang: str) -> PlaygroundResult:
    role = "user" if role == "user" else "assistant"
    if len(content) > MAX_CHARS:
        return PlaygroundResult(content, role, (), "", None, too_long=True)
    segments = parse_message(content, message_id="playground", role=role, lang=lang)
    rows = []
    for index, segment in enumerate(segments, start=1):
        data = segment.to_dict()
        rows.append(
            SegmentRow(
                index=index,
                kind=segment.kind,
                name=str(data.get("name", "")),
                encoding=str(data.get("encoding", "")),
                questionnaire_id=str(data.get("questionnaire_id", "")),
                errors=tuple(e.to_dict() for e in getattr(segment, "errors", ())),
                raw=segment.raw,
                json=json.dumps(data, ensure_ascii=False, indent=2),
            )
        )
    message = MessageInput(id="playground", role=role, content=content)
    rendered = render_message(
        message, MessageState(preview=True), markdown=lambda: plain_markdown, lang=lang
    )
    check = self_check(content, lang=lang) if role == "assistant" and content.strip() else None
    return PlaygroundResult(content, role, tuple(rows), rendered.html, check)
