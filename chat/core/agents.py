"""The agent registry: who answers a conversation, and all the rest of the product needs to
know of it.

An agent is one `Agent` value, named once in `settings.CHAT_AGENTS` (like `INSTALLED_APPS`;
the list's order is the home page's menu order). Whatever used to name every agent asks
this registry instead:

- the runs (`chat.runs.runner`): an agent's turn function, and whether its turn is instant
  database work (one transaction); an agent without a turn has none of ours (an external
  runtime answers), so a message asks for no run (`chat.core.runs.run_request`);
- the one list of model-calling agents (`model_agents`): the daily token budget
  (`chat.core.usage`) and the MCP servers whose tools their turns may use (`chat.mcphost`);
- starting a conversation (`chat.usecases`, the home page, the API, admin): the names that
  are valid, which agent opens the conversation itself, which are there now
  (`Agent.ready`), which only staff are offered;
- the templates: an agent's words (greeting, what it does, why it can't work here) and its
  own notice above the composer.

The registry imports no agent: agents are loaded by their dotted path on first use (their
turn functions live in the runs layer, above this one), and an agent that is not listed is
not loaded at all. A wrong list fails at start-up (`chat.E001`, the system check in
`chat.apps`); a conversation whose stored agent is no longer listed is refused clearly
(`agent_unknown`), never answered by another agent. Tests register more agents by
overriding the setting.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.functional import Promise
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import AGENT_NAME_MAX, Conversation, Run

# A run's turn: does the agent's work for the run and returns its stop reason.
TurnFunction = Callable[[Run], str]
NAME_RE = re.compile(rf"^[a-z][a-z0-9_-]{{0,{AGENT_NAME_MAX - 1}}}$")


@dataclass(frozen=True, kw_only=True)
class Agent:
    """Who answers a conversation. Only `name` and `label` are required."""

    name: str  # stable: Conversation.agent, the API's "agent", metrics, MCP servers' agents
    label: str | Promise  # its short name for people: the menu, a new conversation's title
    # The turn: None when no agent of ours answers (an external runtime posts the replies).
    # `instant`: the whole turn is quick database work, run in one transaction (a dead
    # worker leaves all of it or nothing) and, when it opens a conversation, in the request.
    turn: TurnFunction | None = None
    instant: bool = False
    calls_model: bool = False  # its turns call a model: token budget, MCP servers' tools
    opens: bool = False  # begins the conversation itself: it may start without a message
    developer: bool = False  # only staff are offered it on the home page (the API has all)
    collects_state: bool = False  # its conversations show the collected-state panel at once
    # Whether it can work on this server now (e.g. a model endpoint is configured); None:
    # always. When it can't, `unavailable` says so to everyone (`unavailable_code` names it
    # for machines and tests), `setup` tells staff what to set.
    available: Callable[[], bool] | None = None
    unavailable: str | Promise = ""
    unavailable_code: str = "agent_unavailable"
    setup: str | Promise = ""
    # Its words: what it does (the home page, an empty conversation), its greeting, a hint.
    about: str | Promise = ""
    hello: str | Promise = ""
    hint: str | Promise = ""
    # Its templates ("" for none): above the composer of its conversations (context:
    # conversation, agent, user, developer_details); its own choices beside the home
    # composer's agent menu, shown while it is chosen (an element with
    # `data-agent-only="<name>"`; context: form, agent); its quick starts on the home page
    # (`<li>` items; context: form, agent).
    notice_template: str = ""
    composer_template: str = ""
    starts_template: str = ""

    def ready(self) -> bool:
        """Whether it can work here now (templates call it as `agent.ready`)."""
        return self.available is None or bool(self.available())


class AgentUnknown(ChatError):
    """A name that is not a registered agent (a request's, or a conversation's stored one)."""

    def __init__(self, name: str, *, stored: bool = False) -> None:
        if stored:
            message = _(
                "This conversation’s assistant (“%(agent)s”) is no longer on this server, "
                "so nothing here can be answered. Start a new conversation."
            ) % {"agent": name}
            super().__init__("agent_unknown", message, status=409, details={"agent": name})
            return
        message = _("Unknown agent “%(agent)s”. Choose one of: %(choices)s.") % {
            "agent": name,
            "choices": ", ".join(agent_names()),
        }
        super().__init__("agent_invalid", message, details={"agent": name})


@functools.cache
def agents() -> tuple[Agent, ...]:
    """Every registered agent, in `settings.CHAT_AGENTS` order (the home page's menu)."""
    loaded: list[Agent] = []
    for path in settings.CHAT_AGENTS:
        agent = import_string(path)
        if not isinstance(agent, Agent):
            raise ImproperlyConfigured(f"CHAT_AGENTS: {path} is not an Agent")
        if not NAME_RE.match(agent.name):
            raise ImproperlyConfigured(
                f"CHAT_AGENTS: {path} is named {agent.name!r}; a name is 1 to "
                f"{AGENT_NAME_MAX} of a-z, 0-9, _ and -, starting with a letter"
            )
        loaded.append(agent)
    names = [agent.name for agent in loaded]
    if len(names) != len(set(names)):
        raise ImproperlyConfigured("CHAT_AGENTS: two agents share a name")
    if settings.CHAT_DEFAULT_AGENT not in names:
        raise ImproperlyConfigured(
            f"CHAT_DEFAULT_AGENT is {settings.CHAT_DEFAULT_AGENT!r}, not one of CHAT_AGENTS "
            f"({', '.join(names)})"
        )
    return tuple(loaded)


@receiver(setting_changed)
def _agents_changed(*, setting: str, **_kwargs: object) -> None:
    if setting in {"CHAT_AGENTS", "CHAT_DEFAULT_AGENT"}:
        agents.cache_clear()


def agent_names() -> tuple[str, ...]:
    return tuple(agent.name for agent in agents())


def agent_get(name: str) -> Agent | None:
    """The registered agent called `name`, or None (pages of a conversation whose agent
    was taken out of CHAT_AGENTS still show; nothing runs there)."""
    return next((agent for agent in agents() if agent.name == name), None)


def agent_named(name: str) -> Agent:
    """The registered agent called `name`; `AgentUnknown` (400 `agent_invalid`) if none."""
    agent = agent_get(name)
    if agent is None:
        raise AgentUnknown(name)
    return agent


def agent_of(conversation: Conversation) -> Agent:
    """The conversation's agent; `AgentUnknown` (409 `agent_unknown`) when the stored name
    is no longer registered (it was taken out of CHAT_AGENTS): never another agent."""
    agent = agent_get(conversation.agent)
    if agent is None:
        raise AgentUnknown(conversation.agent, stored=True)
    return agent


def agent_label(name: str) -> str:
    """An agent's short name for people; an unregistered name as it is."""
    agent = agent_get(name)
    return str(agent.label) if agent is not None else name


def agent_choices() -> list[tuple[str, str]]:
    """(name, label) of every agent: form and admin choices."""
    return [(agent.name, str(agent.label)) for agent in agents()]


def model_agents() -> tuple[Agent, ...]:
    """The one list of agents whose turns call a model (token budget, MCP servers' tools)."""
    return tuple(agent for agent in agents() if agent.calls_model)


def model_agent_names() -> tuple[str, ...]:
    return tuple(agent.name for agent in model_agents())
