"""The home page's view model: the composer's choice of assistant."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.utils.translation import gettext as _

from chat.core.agents import Agent, agents


@dataclass(frozen=True)
class AgentOption:
    value: str
    label: str
    available: bool  # False: shown, but can't be chosen (with the reason in its label)
    opens: bool  # begins the conversation itself: the message may stay empty
    agent: Agent  # its words (chat/_agent_about.html)


def home_agents(*, user: User) -> list[AgentOption]:
    """The assistants this person may start a conversation with, in the registry's order
    (CHAT_AGENTS); developer agents only for staff (the API still creates them)."""
    options = []
    for agent in agents():
        if agent.developer and not user.is_staff:
            continue
        available = agent.ready()
        label = str(agent.label)
        if not available:
            label = _("%(name)s (not available)") % {"name": label}
        options.append(AgentOption(agent.name, label, available, agent.opens, agent))
    return options
