"""The consultation state kept in `Conversation.state`, and its JSON-patch-like deltas.

Layout (keys of `Conversation.state`):
    consultation_state  {field: value}
    missing_slots       [field, …]      fields still to collect, in asking order
    confidence          {field: 0..1}   1.0 for a click, lower for parsed free text
    raw_text            {field: text}   what the user typed, kept beside the parsed value
    display             {field: text}   the readable value (an option's label)
    skipped_slots       [field, …]      skipped asks: not written to the state
    history             {field: [{value, display, source, provenance}, …]}  every answer a
                        slot got, oldest first (a change from a card or the panel is
                        `source: user_edit`, issue 27)
Each mutation returns RFC 6902-style operations (`add`/`replace`/`remove` with a JSON
pointer `path`), which the `consultation_state_patch` event carries.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import cast

from chat.core.metadata import ConversationState
from questionnaires.protocol.jsontypes import Json

KEYS = (
    "consultation_state",
    "missing_slots",
    "confidence",
    "raw_text",
    "display",
    "skipped_slots",
    "history",
)
LIST_KEYS = {"missing_slots", "skipped_slots"}

Op = dict[str, Json]  # {"op": "add" | "replace" | "remove", "path": pointer, "value"?: …}


def pointer(*parts: str | int) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def state_view(state: Mapping[str, object]) -> ConversationState:
    """The consultation part of a conversation's state (chat.core.metadata lists its keys),
    every one of them present: a copy."""
    view = {key: copy.deepcopy(state.get(key, [] if key in LIST_KEYS else {})) for key in KEYS}
    return cast(ConversationState, view)  # written only by StatePatch, below


class StatePatch:
    """Apply changes to a state dict in place, recording the operations."""

    def __init__(self, state: dict[str, Json]) -> None:
        self.state = state
        for key in KEYS:
            current = self.state.get(key)
            expected = list if key in LIST_KEYS else dict
            if not isinstance(current, expected):  # absent (or broken): start it afresh
                self.state[key] = expected()
        self.ops: list[Op] = []

    def _mapping(self, key: str) -> dict[str, Json]:
        return cast(dict[str, Json], self.state[key])  # a dict, see __init__

    def _list(self, key: str) -> list[Json]:
        return cast(list[Json], self.state[key])  # a list, see __init__

    def set(self, key: str, field: str, value: Json) -> None:
        mapping = self._mapping(key)
        if field in mapping and mapping[field] == value:
            return
        op = "replace" if field in mapping else "add"
        mapping[field] = value
        self.ops.append({"op": op, "path": pointer(key, field), "value": value})

    def unset(self, key: str, field: str) -> None:
        mapping = self._mapping(key)
        if field in mapping:
            del mapping[field]
            self.ops.append({"op": "remove", "path": pointer(key, field)})

    def list_add(self, key: str, field: str) -> None:
        items = self._list(key)
        if field not in items:
            items.append(field)
            self.ops.append({"op": "add", "path": pointer(key, "-"), "value": field})

    def list_remove(self, key: str, field: str) -> None:
        items = self._list(key)
        if field in items:
            index = items.index(field)
            items.pop(index)
            self.ops.append({"op": "remove", "path": pointer(key, index)})

    def history_add(self, field: str, entry: dict[str, Json]) -> None:
        """One more answer in a slot's history (a list per field, oldest first)."""
        history = self._mapping("history")
        current = history.get(field)
        if isinstance(current, list):
            current.append(entry)
            self.ops.append({"op": "add", "path": pointer("history", field, "-"), "value": entry})
        else:
            history[field] = [entry]
            self.ops.append({"op": "add", "path": pointer("history", field), "value": [entry]})

    def fill(
        self, field: str, value: Json, *, display: str, confidence: float, raw_text: str = ""
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

    def has_value(self, field: str) -> bool:
        return field in self._mapping("consultation_state")

    def missing_set(self, fields: list[str]) -> None:
        """Declare which fields are still to be collected (in asking order)."""
        for field in list(self._list("missing_slots")):
            if isinstance(field, str) and field not in fields:
                self.list_remove("missing_slots", field)
        for field in fields:
            if not self.has_value(field):
                self.list_add("missing_slots", field)

    def section_merge(self, key: str, values: Mapping[str, Json]) -> None:
        """Merge `values` into the section `key` (an agent's own bookkeeping)."""
        section = self.state.get(key)
        if not isinstance(section, dict):
            section = self.state[key] = {}
        for name, value in values.items():
            if section.get(name) != value:
                op = "replace" if name in section else "add"
                section[name] = value
                self.ops.append({"op": op, "path": pointer(key, name), "value": value})
