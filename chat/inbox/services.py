"""The inbox's writes: an answer given in place, and the tabs saying they are open."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import Conversation, Wait
from chat.inbox.models import Presence
from chat.inbox.selectors import InboxItem, inbox_item
from questionnaires.registry import kind_named


def inbox_answer(
    *, user: User, ref: str, choice: str, shown: str, lang: str
) -> tuple[InboxItem, str]:
    """Answer the short question `ref` in place with its choice number `choice`, through
    its kind's own answer path (`Kind.resolve`: the same record, checks and 409s as the
    card). `shown` is the fingerprint of the choices the person saw: if they changed, the
    answer is refused (409) rather than recorded against something else. Returns the item
    and the label of the choice recorded."""
    item = inbox_item(user=user, ref=ref)
    if item is None:
        if Wait.objects.filter(ref=ref, owner_id=user.pk).exists():
            raise ChatError(
                "question_not_waiting",
                _("This question is no longer waiting for an answer."),
                status=409,
            )
        raise ChatError("question_unknown", _("No such question is waiting for you."), status=404)
    if not item.choices:
        raise ChatError(
            "inbox_answer_in_card",
            _("This question is answered on its card in the conversation."),
            status=409,
        )
    if shown != item.shown:
        raise ChatError(
            "inbox_choices_changed",
            _("This question changed since you saw it; look at it again."),
            status=409,
        )
    if not choice.isdigit() or not 0 <= int(choice) < len(item.choices):
        raise ChatError("inbox_choice_invalid", _("Pick one of the answers shown."))
    picked = item.choices[int(choice)]
    conversation = Conversation.objects.get(pk=item.conversation_id, owner_id=user.pk)
    resolve = kind_named(item.kind).resolve
    if resolve is None:  # (items only offer choices when their kind resolves)
        raise ChatError("inbox_answer_in_card", _("Answer this question on its card."), status=409)
    resolve(conversation=conversation, ref=ref, payload=dict(picked.payload), user=user, lang=lang)
    return item, picked.label


def presence_note(*, user: User, conversation_id: int | None) -> None:
    """A tab of `user` is open (on `conversation_id`'s page, when given)."""
    now = timezone.now()
    where = {0, conversation_id or 0}
    mine = Presence.objects.filter(user_id=user.pk, conversation_id__in=where)
    if mine.update(seen_at=now) < len(where):  # one UPDATE per poll, an INSERT the first time
        Presence.objects.bulk_create(
            [Presence(user_id=user.pk, conversation_id=w, seen_at=now) for w in where],
            ignore_conflicts=True,
        )


def presence_on(*, user_id: int, conversation_id: int = 0) -> bool:
    """Whether a tab of the person is open (on that conversation's page; 0: any page)."""
    since = timezone.now() - timedelta(seconds=settings.INBOX_PRESENCE_SECONDS)
    return Presence.objects.filter(
        user_id=user_id, conversation_id=conversation_id, seen_at__gte=since
    ).exists()
