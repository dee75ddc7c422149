"""Reads for inline cards: their answered submissions, the questionnaire a card shows, and
whether a card is open.

Each function that serves a page is one query for a whole conversation (or page), so
rendering never queries per message. (Tool results of any way of asking:
`chat.core.selectors`.)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace

from django.utils.translation import gettext as _

from chat.core import selectors as core_selectors
from chat.core.errors import ChatError
from chat.core.models import Conversation, Message, Role
from questionnaires.inline.models import Submission
from questionnaires.inline.presenter import Answer, MessageInput, message_questionnaires
from questionnaires.protocol import Questionnaire
from questionnaires.repair.selectors import carried_refs


def answers_by_message(
    *, conversation_id: int, message_ids: Iterable[int] | None = None
) -> dict[int, dict[str, Answer]]:
    """message id -> {questionnaire id -> its latest Answer, with the earlier versions}."""
    rows = Submission.objects.filter(conversation_id=conversation_id)
    if message_ids is not None:
        rows = rows.filter(message_id__in=list(message_ids))
    versions: dict[tuple[int, str], list[Answer]] = defaultdict(list)
    for (
        pk,
        message_id,
        qid,
        answers,
        other_text,
        skipped,
        status,
        version,
        payload,
        user_id,
    ) in rows.order_by("version").values_list(
        "pk",
        "message_id",
        "questionnaire_id",
        "answers",
        "other_text",
        "skipped",
        "status",
        "version",
        "payload",
        "user_message_id",
    ):
        versions[(message_id, qid)].append(
            Answer(
                key=pk,
                answers=answers or {},
                other_text=other_text or {},
                skipped=tuple(skipped or ()),
                declined=status == Submission.Status.DECLINED,
                version=version,
                payload=payload or {},
                user_message_id=user_id,
            )
        )
    found: dict[int, dict[str, Answer]] = defaultdict(dict)
    for (message_id, qid), listed in versions.items():
        found[message_id][qid] = replace(listed[-1], earlier=tuple(listed[:-1]))
    return dict(found)


def submission_latest(*, conversation_id: int, questionnaire_id: str) -> Submission | None:
    """The latest answer version of a card (None while unanswered)."""
    return (
        Submission.objects.filter(
            conversation_id=conversation_id, questionnaire_id=questionnaire_id
        )
        .order_by("-version")
        .first()
    )


def submission_exists(*, conversation_id: int, questionnaire_id: str) -> bool:
    return Submission.objects.filter(
        conversation_id=conversation_id, questionnaire_id=questionnaire_id
    ).exists()


def not_found() -> ChatError:
    return ChatError("questionnaire_not_found", _("This questionnaire was not found."), status=404)


def questionnaire_find(
    *, conversation_id: int, message: Message | None, questionnaire_id: str, lang: str
) -> Questionnaire:
    """The questionnaire ``questionnaire_id`` of an assistant message, or 404."""
    if message is None or message.role != Role.ASSISTANT or message.hidden:
        raise not_found()
    questionnaire = questionnaires_of(
        conversation_id=conversation_id, message=message, lang=lang
    ).get(questionnaire_id)
    if questionnaire is None:
        raise not_found()
    return questionnaire


def questionnaires_of(
    *, conversation_id: int, message: Message, lang: str
) -> dict[str, Questionnaire]:
    """Every answerable questionnaire of an assistant message, by id, in order."""
    call_ids = [c.get("id", "") for c in message.tool_calls or () if isinstance(c, Mapping)]
    message_input = MessageInput(
        id=message.pk,
        role=message.role,
        content=message.content,
        display_content=message.display_content,
        tool_calls=message.tool_calls or (),
        tool_results=core_selectors.tool_results(
            conversation_id=conversation_id, call_ids=call_ids
        ),
        readonly=message.readonly,
    )
    return message_questionnaires(message_input, lang=lang)


def questionnaire_open(conversation: Conversation, questionnaire_id: str) -> bool:
    """Whether the card can be answered now: on the latest answerable message, which is not
    read-only, and not answered yet (the registry's draft check)."""
    seq = core_selectors.message_latest_visible_assistant_seq(conversation=conversation)
    message = conversation.messages.filter(seq=seq).first() if seq is not None else None
    carried = carried_message(conversation, questionnaire_id)
    message = carried or message
    if message is None or message.readonly:
        return False
    try:
        questionnaire_find(
            conversation_id=conversation.pk,
            message=message,
            questionnaire_id=questionnaire_id,
            lang=conversation.language,
        )
    except ChatError:
        return False
    return not submission_exists(conversation_id=conversation.pk, questionnaire_id=questionnaire_id)


def questions_asked(conversation: Conversation) -> int:
    """Questions of every card the agent showed (blocks in its visible replies and
    `questionnaire_async` results): the inline part of its question budget."""
    messages = list(
        conversation.messages.filter(role=Role.ASSISTANT, hidden=False).only(
            "pk", "role", "content", "display_content", "tool_calls", "readonly"
        )
    )
    call_ids = [
        c.get("id", "") for m in messages for c in m.tool_calls or () if isinstance(c, Mapping)
    ]
    results = core_selectors.tool_results(conversation_id=conversation.pk, call_ids=call_ids)
    total = 0
    for m in messages:
        if "questionnaire" not in (m.display_content or m.content) and not m.tool_calls:
            continue  # no block can be in it: skip parsing
        found = message_questionnaires(
            MessageInput(
                id=m.pk,
                role=m.role,
                content=m.display_content or m.content,
                tool_calls=m.tool_calls or (),
                tool_results=results,
                readonly=m.readonly,
            ),
            lang=conversation.language,
        )
        total += sum(len(q.questions) for q in found.values())
    return total


def carried_message(conversation: Conversation, questionnaire_id: str) -> Message | None:
    """An earlier card still waiting after the person digressed (conversation repair,
    issue 36, keeps its wait open): it stays answerable below the reply."""
    refs = carried_refs(conversation_id=conversation.pk, kind="inline")
    ids = [int(r.partition(":")[2]) for r in refs if r.partition(":")[2].isdigit()]
    for message in conversation.messages.filter(pk__in=ids, role=Role.ASSISTANT):
        try:
            questionnaire_find(
                conversation_id=conversation.pk,
                message=message,
                questionnaire_id=questionnaire_id,
                lang=conversation.language,
            )
        except ChatError:
            continue
        return message
    return None
