"""Segments of a stored message in the lint JSON shape (DESIGN §6)."""

from __future__ import annotations

from typing import Any

from chat.models import Message


def message_segments_json(message: Message) -> list[dict[str, Any]]:
    if message.role not in ("assistant", "user") or not message.content:
        return []
    try:
        from questionnaires.protocol import parse_message
    except ImportError:  # protocol core not installed yet
        return [{"kind": "markdown", "raw": message.content}]
    segments = parse_message(message.content, message_id=message.pk, role=message.role)
    return [segment.to_dict() for segment in segments]
