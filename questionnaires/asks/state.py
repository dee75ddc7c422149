"""The consultation state kept in `Conversation.state`, and its JSON-patch-like deltas.

Layout (keys of `Conversation.state`):
    consultation_state  {field: value}
    missing_slots       [field, …]      fields still to collect, in asking order
    confidence          {field: 0..1}   1.0 for a click, lower for parsed free text
    raw_text            {field: text}   what the user typed, kept beside the parsed value
    display             {field: text}   the readable value (an option's label)
    skipped_slots       [field, …]      skipped asks: not written to the state
Each mutation returns RFC 6902-style operations (`add`/`replace`/`remove` with a JSON
pointer `path`), which the `consultation_state_patch` event carries.
"""

from __future__ import annotations

import copy
from typing import Any

KEYS = ("consultation_state", "missing_slots", "confidence", "raw_text", "display", "skipped_slots")
LIST_KEYS = {"missing_slots", "skipped_slots"}

Op = dict[str, Any]


def pointer(*parts: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def state_view(state: dict[str, Any]) -> dict[str, Any]:
    """The consultation part of a conversation's state, every key present."""
    return {key: copy.deepcopy(state.get(key, [] if key in LIST_KEYS else {})) for key in KEYS}


class StatePatch:
    """Apply changes to a state dict in place, recording the operations."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.state = state
        for key in KEYS:
            self.state.setdefault(key, [] if key in LIST_KEYS else {})
        self.ops: list[Op] = []

    def set(self, key: str, field: str, value: Any) -> None:
        mapping = self.state[key]
        if field in mapping and mapping[field] == value:
            return
        op = "replace" if field in mapping else "add"
        mapping[field] = value
        self.ops.append({"op": op, "path": pointer(key, field), "value": value})

    def unset(self, key: str, field: str) -> None:
        if field in self.state[key]:
            del self.state[key][field]
            self.ops.append({"op": "remove", "path": pointer(key, field)})

    def list_add(self, key: str, field: str) -> None:
        if field not in self.state[key]:
            self.state[key].append(field)
            self.ops.append({"op": "add", "path": pointer(key, "-"), "value": field})

    def list_remove(self, key: str, field: str) -> None:
        items = self.state[key]
        if field in items:
            index = items.index(field)
            items.pop(index)
            self.ops.append({"op": "remove", "path": pointer(key, index)})

    def fill(
        self, field: str, value: Any, *, display: str, confidence: float, raw_text: str = ""
    ) -> None:
        """A slot got a value: written, no longer missing or skipped."""
        self.set("consultation_state", field, value)
        self.set("confidence", field, confidence)
        self.set("display", field, display)
        if raw_text:
            self.set("raw_text", field, raw_text)
        else:
            self.unset("raw_text", field)
        self.list_remove("missing_slots", field)
        self.list_remove("skipped_slots", field)

    def clear(self, field: str) -> None:
        """A slot is to be collected again (the user asked to correct it)."""
        for key in ("consultation_state", "confidence", "display", "raw_text"):
            self.unset(key, field)
        self.list_remove("skipped_slots", field)
        self.list_add("missing_slots", field)
