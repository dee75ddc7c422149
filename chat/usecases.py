"""Use cases that span ways of asking: a person starts a conversation or sends a message;
an intake begins."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from chat.agent.intake import intake_select
from chat.core.errors import ChatError
from chat.core.models import AgentKind, Conversation, Message, Run
from chat.core.runs import run_create, run_request
from chat.core.services import (
    answer_post,
    conversation_create,
    conversation_name_from,
    conversation_rename,
)
from chat.runs.dispatch import run_dispatch
from questionnaires.asks.definitions import (
    conversation_definition,
    definition_choices,
    definition_ids,
)
from questionnaires.forms.answers import interactive_form_answer
from questionnaires.registry import input_refuse_if_waiting


def intake_choices(language: str) -> list[tuple[str, str]]:
    """The intake topics a person may start with (the home page's menu), in `language`."""
    return definition_choices(language)


def intake_begin(*, conversation: Conversation, definition_id: str = "") -> Run | None:
    """Store the chosen definition (if any) and start the first turn without waiting for a
    user message: the agent opens with its intro and first questions."""
    if conversation.agent != AgentKind.INTAKE:
        return None
    if definition_id:
        if definition_id not in dict(definition_ids()):
            raise ChatError("intake_unknown", _("Unknown intake “%(id)s”.") % {"id": definition_id})
        intake_select(conversation=conversation, definition_id=definition_id)
    run = run_create(conversation=conversation)
    # The intake agent is offline and instant: its first turn runs within the request, so
    # the page (also without JavaScript) opens with the first questions.
    run_dispatch(run_id=run.pk, inline=True)
    return run


def message_post_user(
    *, conversation: Conversation, content: str, form_answer: object = None
) -> Message:
    """A person (or an API client) sends a chat message: store it and start the agent.

    `form_answer` (an `interactive_form_question` answer payload) answers the pending
    form instead; plain text while something is pending is refused (spec 003).
    """
    if form_answer is not None:
        return interactive_form_answer(conversation=conversation, payload=form_answer)
    if not content.strip():
        raise ChatError("message_empty", _("Type a message first."))
    input_refuse_if_waiting(conversation=conversation)
    return answer_post(conversation=conversation, content=content)


# Agents that open the conversation themselves (a greeting and their first question), so
# a conversation with one of them may begin without a message from the person.
OPENING_AGENTS = frozenset({AgentKind.INTAKE, AgentKind.SCRIPTED})

# The scripted agent's other tours a person may start from the home page (script name →
# the conversation's name); without one it plays the protocol tour.
TOUR_SCRIPTS = {"forms": gettext_lazy("Deferred-form tour")}


def conversation_start(
    *,
    owner: User,
    agent: str,
    language: str,
    content: str = "",
    title: str = "",
    definition_id: str = "",
    script: str = "",
) -> Conversation:
    """A conversation begun from the home page's composer, in one step.

    With text, the text is its first message (and names it). Without, an agent that opens
    by itself (`OPENING_AGENTS`) starts at once; any other agent needs the text — or, for
    scripts that only create a conversation, a `title` (refused: `message_empty`, and
    nothing is stored). An intake's topic (`definition_id`) is chosen before it begins;
    so is the tour's script (`script`, one of `TOUR_SCRIPTS`; refused: `script_unknown`).
    """
    if not content.strip() and agent not in OPENING_AGENTS and not title.strip():
        raise ChatError("message_empty", _("Type a message first."))
    if agent == AgentKind.INTAKE and definition_id and definition_id not in dict(definition_ids()):
        raise ChatError("intake_unknown", _("Unknown intake “%(id)s”.") % {"id": definition_id})
    if script and (agent != AgentKind.SCRIPTED or script not in TOUR_SCRIPTS):
        raise ChatError("script_unknown", _("Unknown tour “%(name)s”.") % {"name": script})
    with transaction.atomic():
        conversation = conversation_create(owner=owner, title=title, agent=agent, language=language)
        if script:
            conversation.state = {**(conversation.state or {}), "script": script}
            conversation.save(update_fields=["state"])
        if content.strip():
            if agent == AgentKind.INTAKE and definition_id:
                intake_select(conversation=conversation, definition_id=definition_id)
            message_post_user(conversation=conversation, content=content)
            conversation_name_from(conversation=conversation, text=content)
        elif agent == AgentKind.SCRIPTED:
            run_request(conversation=conversation, message=None)
    if not content.strip() and agent == AgentKind.INTAKE:
        intake_begin(conversation=conversation, definition_id=definition_id)
    if not conversation.title:  # named after its topic, else after its agent
        definition = conversation_definition(conversation)
        name = definition.title if definition is not None else agent_name(agent)
        if script:
            name = str(TOUR_SCRIPTS[script])
        conversation_rename(conversation=conversation, title=name)
    return conversation


def agent_name(agent: str) -> str:
    """An agent's short, human name (titles of conversations it opened, the home's menu)."""
    names = {
        AgentKind.INTAKE: _("Intake"),
        AgentKind.SCRIPTED: _("Protocol tour"),
        AgentKind.OPENAI: _("Assistant"),
        AgentKind.EXTERNAL: _("Your program"),
        AgentKind.ECHO: _("Echo"),
    }
    return str(names.get(AgentKind(agent), agent)) if agent in AgentKind.values else agent
