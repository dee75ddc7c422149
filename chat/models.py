"""The chat app's models, defined where they belong (Django loads them from here)."""

from __future__ import annotations

from chat.core.models import (
    AgentKind,
    ApiToken,
    Conversation,
    Event,
    Message,
    Role,
    Run,
    RunAttempt,
    RunStatus,
    StopReason,
)
from chat.mcphost.models import McpServer
from chat.skills.models import Skill

__all__ = [
    "AgentKind",
    "ApiToken",
    "Conversation",
    "Event",
    "McpServer",
    "Message",
    "Role",
    "Run",
    "RunAttempt",
    "RunStatus",
    "Skill",
    "StopReason",
]
