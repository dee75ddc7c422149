"""The intake agent attaches each slot's knowledge reference to its ask."""

from __future__ import annotations

import pytest

from chat.core.models import Event
from questionnaires.asks.definitions import definitions_all
from questionnaires.asks.selectors import ask_pending
from questionnaires.asks.services import ask_answer

pytestmark = pytest.mark.django_db


def _references(conversation):
    return [
        e.data
        for e in Event.objects.filter(
            conversation=conversation, name="knowledge_reference"
        ).order_by("id")
    ]


def test_asked_slots_emit_their_reference(intake):
    knee = definitions_all()["knee.en"]
    asks = {m.metadata["ask_user_options"]["field"]: m for m in ask_pending(conversation=intake)}
    assert list(asks) == ["knee_side", "pain_level"]
    assert _references(intake) == [
        {
            "turn_id": asks[name].metadata["turn_id"],
            "message_id": asks[name].pk,
            "field": name,
            "title": knee.slot(name).reference["title"],
            "snippet": knee.slot(name).reference["snippet"],
            "source": "Clinic intake guide (written for this app)",
            "url": "",
        }
        for name in ("knee_side", "pain_level")
    ]
    for name, message in asks.items():
        assert message.metadata["knowledge_reference"] == knee.slot(name).reference


def test_reference_follows_the_slot_when_it_is_asked(intake):
    for message in ask_pending(conversation=intake):
        field = message.metadata["ask_user_options"]["field"]
        ask_answer(
            conversation=intake,
            answer={
                "field": field,
                "value": "left" if field == "knee_side" else "mild",
                "turn_id": message.metadata["turn_id"],
            },
        )
    fields = [d["field"] for d in _references(intake)]
    assert fields == ["knee_side", "pain_level", "pain_score", "duration"]


def test_chinese_intake_references_are_chinese(user):
    from chat.core.services import conversation_create
    from chat.usecases import intake_begin

    conversation = conversation_create(owner=user, title="膝盖", agent="intake", language="zh-hans")
    intake_begin(conversation=conversation, definition_id="knee")
    first = _references(conversation)[0]
    assert first["field"] == "knee_side"
    assert first["title"] == "为什么要问是哪一侧"
    assert first["source"] == "门诊问诊指南（本应用编写）"
