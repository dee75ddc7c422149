"""Use cases that span ways of asking: a person starts a conversation or sends a message;
an intake begins."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from chat.agent.intake import intake_select
from chat.core.agents import agent_label, agent_named, agent_of
from chat.core.errors import ChatError
from chat.core.models import Conversation, Message, Run
from chat.core.runs import run_create, run_start
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


def agent_open(*, conversation: Conversation) -> Run | None:
    """Start the first turn of an agent that opens the conversation itself (`Agent.opens`)
    without a message: it greets and asks its first questions. An instant agent's turn
    runs within the request, so the page (also without JavaScript) opens with them; any
    other's starts after the caller's commit. Agents that don't open: None."""
    agent = agent_of(conversation)
    if not agent.opens or agent.turn is None:
        return None
    run = run_create(conversation=conversation)
    if agent.instant:
        run_dispatch(run_id=run.pk, inline=True)
    else:
        run_start(run_id=run.pk)
    return run


def intake_choices(language: str) -> list[tuple[str, str]]:
    """The intake topics a person may start with (the home page's menu), in `language`."""
    return definition_choices(language)


def intake_begin(*, conversation: Conversation, definition_id: str = "") -> Run | None:
    """Store the intake's chosen topic (if any) and let it open the conversation."""
    if conversation.agent != INTAKE_AGENT:
        return None
    if definition_id:
        if definition_id not in dict(definition_ids()):
            raise ChatError("intake_unknown", _("Unknown intake “%(id)s”.") % {"id": definition_id})
        intake_select(conversation=conversation, definition_id=definition_id)
    return agent_open(conversation=conversation)


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


# The intake agent's topic (`definition_id`) and the tour's scripts are start options of
# those two agents: they are named here, where a conversation is begun with them.
INTAKE_AGENT = "intake"
TOUR_AGENT = "scripted"
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
    by itself (`Agent.opens`) starts at once; any other agent needs the text — or, for
    scripts that only create a conversation, a `title` (refused: `message_empty`, and
    nothing is stored). An unknown agent: `agent_invalid`. An intake's topic
    (`definition_id`) is chosen before it begins; so is the tour's script (`script`, one
    of `TOUR_SCRIPTS`; refused: `script_unknown`).
    """
    chosen = agent_named(agent)
    opens = chosen.opens and not content.strip()
    if not content.strip() and not chosen.opens and not title.strip():
        raise ChatError("message_empty", _("Type a message first."))
    topic = definition_id if agent == INTAKE_AGENT else ""
    if topic and topic not in dict(definition_ids()):
        raise ChatError("intake_unknown", _("Unknown intake “%(id)s”.") % {"id": topic})
    if script and (agent != TOUR_AGENT or script not in TOUR_SCRIPTS):
        raise ChatError("script_unknown", _("Unknown tour “%(name)s”.") % {"name": script})
    with transaction.atomic():
        conversation = conversation_create(owner=owner, title=title, agent=agent, language=language)
        if script:
            conversation.state = {**(conversation.state or {}), "script": script}
            conversation.save(update_fields=["state"])
        if topic:
            intake_select(conversation=conversation, definition_id=topic)
        if content.strip():
            message_post_user(conversation=conversation, content=content)
            conversation_name_from(conversation=conversation, text=content)
        elif opens and not chosen.instant:  # its run row is written with the conversation
            agent_open(conversation=conversation)
    if opens and chosen.instant:  # its first turn runs now, in its own transaction
        agent_open(conversation=conversation)
    if not conversation.title:  # named after its topic, else after its agent
        definition = conversation_definition(conversation)
        name = definition.title if definition is not None else agent_label(agent)
        if script:
            name = str(TOUR_SCRIPTS[script])
        conversation_rename(conversation=conversation, title=name)
    return conversation
