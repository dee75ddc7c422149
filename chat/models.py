"""The chat app's models, defined where they belong (Django loads them from here)."""

from __future__ import annotations

from chat.core.models import (
    ApiToken,
    Conversation,
    Event,
    Message,
    ModelUsage,
    QuestionBudget,
    Role,
    Run,
    RunAttempt,
    RunStatus,
    StopReason,
    UsageByUser,
    UserPreferences,
    Wait,
)
from chat.inbox.models import AnswerLink, Presence
from chat.mcphost.models import McpServer
from chat.mcphost.records import McpCall, McpHostLease, McpServerState
from chat.skills.models import Skill

__all__ = [
    "AnswerLink",
    "ApiToken",
    "Conversation",
    "Event",
    "McpCall",
    "McpHostLease",
    "McpServer",
    "McpServerState",
    "Message",
    "ModelUsage",
    "Presence",
    "QuestionBudget",
    "Role",
    "Run",
    "RunAttempt",
    "RunStatus",
    "Skill",
    "StopReason",
    "UsageByUser",
    "UserPreferences",
    "Wait",
]
