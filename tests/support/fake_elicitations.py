"""A tiny fake of the elicitation card services (`questionnaires.elicitations.services`,
built on another branch) and the `elicitations` fixture that installs it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from chat.mcphost import elicit


@dataclass(frozen=True)
class Outcome:
    action: str
    content: dict | None = None


class ElicitationRefused(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class FakeElicitations:
    """Answers every elicitation with `answer` after `delay` seconds (or refuses)."""

    answer: Outcome = field(default_factory=lambda: Outcome("accept", {"size": 4}))
    delay: float = 0.0
    refuse: bool = False
    opened: list[dict[str, Any]] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)
    abandoned: list[tuple[int, str]] = field(default_factory=list)
    waits: list[dict[str, Any]] = field(default_factory=list)
    ElicitationRefused: type[Exception] = ElicitationRefused
    on_open: Any = None

    def elicitation_open(self, **kwargs: Any) -> Any:
        if self.refuse:
            raise ElicitationRefused("elicitation_schema_unsupported", "Not a flat schema.")
        self.opened.append(kwargs)
        if self.on_open is not None:
            self.on_open()
        return SimpleNamespace(pk=len(self.opened))

    def elicitation_wait(self, elicitation_id, *, timeout=None, poll=0.25, cancelled=None):
        self.waits.append({"id": elicitation_id, "timeout": timeout})
        end = time.monotonic() + self.delay
        while time.monotonic() < end:
            if cancelled is not None and cancelled():
                return Outcome("cancel")
            time.sleep(0.02)
        return self.answer

    def elicitation_complete(self, *, conversation_id: int, remote_id: str) -> bool:
        self.completed.append(remote_id)
        return True

    def elicitation_abandon(self, elicitation_id: int, reason: str) -> None:
        self.abandoned.append((elicitation_id, reason))


def install(monkeypatch) -> FakeElicitations:
    fake = FakeElicitations()
    monkeypatch.setattr(elicit, "backend", lambda: fake)
    return fake


@pytest.fixture
def elicitations(monkeypatch):
    return install(monkeypatch)
