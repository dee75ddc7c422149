"""View models: answers after their questions, skips, the sidebar's relative dates."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from chat.core.services import message_create
from chat.edge.page import _relative, message_items
from chat.models import Message

pytestmark = pytest.mark.django_db


def _ask(conversation, field: str, turn: str = "turn_1") -> Message:
    ask = {
        "question": f"{field}?",
        "field": field,
        "type": "options",
        "allow_free_text": False,
        "options": [{"label": "A", "value": "a"}, {"label": "B", "value": "b"}],
    }
    return message_create(
        conversation=conversation,
        role="assistant",
        content=f"{field}?",
        metadata={"ask_user_options": ask, "turn_id": turn},
    )


def _answer(conversation, field: str, source: str = "user_option_click", turn: str = "turn_1"):
    envelope = {"field": field, "turn_id": turn, "source": source, "value": "a"}
    return message_create(
        conversation=conversation,
        role="user",
        content="{}",
        display_content="A" if source != "user_skipped" else f"Skipped: {field}?",
        metadata={"structured_answer": envelope},
    )


def test_each_answer_follows_its_question(conversation):
    q1, q2 = _ask(conversation, "one"), _ask(conversation, "two")
    a1, a2 = _answer(conversation, "one"), _answer(conversation, "two", source="user_skipped")
    items = message_items(conversation=conversation)
    assert [i.message.pk for i in items] == [q1.pk, a1.pk, q2.pk, a2.pk]
    assert items[1].answers_key == "turn_1:one"
    assert "Skipped" in items[3].html and "two?" not in items[3].html


def test_live_answers_keep_their_key_for_the_page_to_place(conversation):
    _ask(conversation, "one")
    _ask(conversation, "two")
    answer = _answer(conversation, "one")
    (item,) = message_items(conversation=conversation, after_seq=answer.seq - 1)
    assert item.answers_key == "turn_1:one"


def test_relative_dates():
    now = timezone.now()
    assert _relative(now - timedelta(seconds=5), now) == "just now"
    assert _relative(now - timedelta(minutes=5), now) == "5\xa0minutes ago"
    assert _relative(now - timedelta(days=3, hours=5), now) == "3\xa0days ago"


def test_a_reply_committed_while_the_page_is_read_is_never_lost(conversation, monkeypatch):
    """The page reads the stream position and the run before the messages: a reply that
    commits while the messages are read is either on the page or after `last_event_id`
    (replayed by the stream), and the run still looks active (a page without JavaScript
    refreshes). Read the other way round, it was on neither path."""
    from chat.core.models import Run
    from chat.edge import page as page_module
    from chat.edge.forms import MessageForm

    message_create(conversation=conversation, role="user", content="hi")
    run = Run.objects.create(conversation=conversation, status="running")
    real_items = page_module.message_items

    def items_then_reply(**kwargs):
        items = real_items(**kwargs)
        message_create(conversation=conversation, role="assistant", content="Echo: hi")
        Run.objects.filter(pk=run.pk).update(status="finished")
        return items

    monkeypatch.setattr(page_module, "message_items", items_then_reply)
    context = page_module.conversation_page(conversation=conversation, form=MessageForm())
    assert [item.message.content for item in context["items"]] == ["hi"]
    assert context["run"].status == "running"
    reply_events = conversation.events.filter(id__gt=context["last_event_id"])
    assert reply_events.filter(name="message_done").exists()
