"""The home page's view model: the composer's choice of assistant."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.utils.translation import gettext as _

from chat.core.models import AgentKind
from chat.edge.page import llm_configured
from chat.usecases import OPENING_AGENTS, agent_name

# Agents only developers need (no assistant of ours answers, or one that only repeats):
# left out of the home page's menu for everyone but staff. The API still creates them.
DEVELOPER_AGENTS = frozenset({AgentKind.EXTERNAL, AgentKind.ECHO})
# The menu's order: the default first.
ORDER = (AgentKind.INTAKE, AgentKind.SCRIPTED, AgentKind.OPENAI, AgentKind.ECHO, AgentKind.EXTERNAL)


@dataclass(frozen=True)
class AgentOption:
    value: str
    label: str
    available: bool  # False: shown, but can't be chosen (with the reason in its label)
    opens: bool  # begins the conversation itself: the message may stay empty


def home_agents(*, user: User) -> list[AgentOption]:
    """The assistants this person may start a conversation with, in menu order."""
    options = []
    for agent in ORDER:
        if agent in DEVELOPER_AGENTS and not user.is_staff:
            continue
        available = agent != AgentKind.OPENAI or llm_configured()
        label = agent_name(agent)
        if not available:
            label = _("%(name)s (not available)") % {"name": label}
        options.append(AgentOption(agent, label, available, agent in OPENING_AGENTS))
    return options
