from __future__ import annotations

import json

import pytest

from chat.core.errors import ChatError
from chat.core.models import Event, Message
from chat.core.services import message_create
from questionnaires.asks.models import StructuredAnswer
from questionnaires.asks.services import ask_answer, slot_edit

pytestmark = pytest.mark.django_db


def _events(conversation, name=None):
    rows = Event.objects.filter(conversation=conversation).order_by("id")
    return [e for e in rows if name is None or e.name == name]


def _answer(conversation, **kw):
    body = {"type": "structured_answer", "field": "pain_level", "turn_id": "turn_1", **kw}
    return ask_answer(conversation=conversation, answer=body)


def test_ask_is_persisted_and_emitted(external, make_ask):
    message = make_ask()
    assert message.role == "assistant" and message.content == "你的膝盖下坠感是否伴随疼痛？"
    assert message.metadata["turn_id"] == "turn_1"
    assert message.metadata["ask_user_options"]["field"] == "pain_level"
    event = _events(external, "ask_user_options")[0]
    assert event.data["type"] == "ask_user_options"
    assert event.data["payload"]["options"][0]["label"] == "没有疼痛"
    assert event.data["message_id"] == message.pk
    external.refresh_from_db()
    assert external.state["missing_slots"] == ["pain_level"]


def test_invalid_payload_is_an_error_event_not_a_widget(external, make_ask):
    assert make_ask({"question": "q", "field": "f", "options": [{"label": "only"}]}) is None
    assert not Message.objects.filter(conversation=external).exists()
    error = _events(external, "error")[0]
    assert error.data["code"] == "ask_invalid"
    assert {e["code"] for e in error.data["errors"]} >= {"ask.options_too_few"}


def test_click_writes_state_with_full_confidence(external, make_ask):
    make_ask()
    row, created = _answer(
        external, value="mild", display_text="轻微疼痛", source="user_option_click"
    )
    assert created and row.source == "user_option_click" and row.confidence == 1.0
    external.refresh_from_db()
    assert external.state["consultation_state"] == {"pain_level": "mild"}
    assert external.state["missing_slots"] == []
    assert external.state["confidence"] == {"pain_level": 1.0}
    user_message = row.user_message
    assert user_message.role == "user" and user_message.display_content == "轻微疼痛"
    envelope = json.loads(user_message.content)
    assert envelope == {
        "type": "structured_answer",
        "field": "pain_level",
        "value": "mild",
        "display_text": "轻微疼痛",
        "source": "user_option_click",
        "turn_id": "turn_1",
        "provenance": "chosen",  # issue 27, additive
    }
    patch = _events(external, "consultation_state_patch")[-1].data
    assert {"op": "add", "path": "/consultation_state/pain_level", "value": "mild"} in patch[
        "patch"
    ]
    assert {"op": "remove", "path": "/missing_slots/0"} in patch["patch"]
    assert not _events(external, "extracted_info")


def test_free_text_parsed_keeps_raw_text_and_lower_confidence(external, make_ask):
    make_ask()
    row, _ = _answer(external, source="user_free_text", raw_text="有点轻微疼痛吧")
    assert (row.value, row.source) == ("mild", "user_free_text")
    assert row.confidence < 1.0 and row.raw_text == "有点轻微疼痛吧"
    external.refresh_from_db()
    assert external.state["raw_text"] == {"pain_level": "有点轻微疼痛吧"}
    assert external.state["confidence"]["pain_level"] == row.confidence
    assert row.user_message.display_content == "有点轻微疼痛吧"
    info = _events(external, "extracted_info")[0].data
    assert info["field"] == "pain_level" and info["value"] == "mild"


def test_unparsed_free_text_is_kept_verbatim_when_allowed(external, make_ask):
    make_ask()
    row, _ = _answer(external, source="user_free_text", raw_text="只在爬楼梯时")
    assert row.value == "只在爬楼梯时" and row.confidence == 0.5
    assert not _events(external, "extracted_info")


def test_skip_is_recorded_but_not_written(external, make_ask):
    make_ask()
    row, _ = _answer(external, source="user_skipped")
    assert row.source == "user_skipped" and row.value is None
    external.refresh_from_db()
    assert external.state["consultation_state"] == {}
    assert external.state["missing_slots"] == ["pain_level"]
    assert external.state["skipped_slots"] == ["pain_level"]
    assert row.user_message.display_content.startswith("Skipped")


def test_double_submit_is_a_noop(external, make_ask):
    make_ask()
    first, created = _answer(external, value="mild", source="user_option_click")
    again, created_again = _answer(external, value="mild", source="user_option_click")
    assert created and not created_again and again.pk == first.pk
    with pytest.raises(ChatError) as info:  # a different second answer: 409, as cards
        _answer(external, value="severe", source="user_option_click")
    assert info.value.status == 409 and info.value.code == "questionnaire_already_submitted"
    assert StructuredAnswer.objects.count() == 1
    assert Message.objects.filter(role="user").count() == 1


def test_value_outside_options_refused_unless_free_text(external, make_ask):
    strict = {
        "question": "q",
        "field": "f",
        "options": [{"label": "A", "value": "a"}] + [{"label": "B", "value": "b"}],
        "allow_free_text": False,  # free input is offered unless turned off explicitly
    }
    make_ask(strict, turn_id="t2")
    with pytest.raises(ChatError) as info:
        ask_answer(
            conversation=external,
            answer={"field": "f", "turn_id": "t2", "value": "zzz", "source": "user_option_click"},
        )
    assert info.value.code == "answer_value_invalid" and info.value.status == 400
    # free text allowed: an unknown value is taken as typed text
    make_ask(turn_id="t3")
    row, _ = ask_answer(
        conversation=external,
        answer={
            "field": "pain_level",
            "turn_id": "t3",
            "value": "zzz",
            "source": "user_option_click",
        },
    )
    assert row.source == "user_free_text" and row.value == "zzz"


def test_latest_ask_only(external, make_ask):
    make_ask(turn_id="old")
    make_ask({"question": "q2", "field": "other", "type": "boolean"}, turn_id="new")
    with pytest.raises(ChatError) as info:
        _answer(external, turn_id="old", value="mild", source="user_option_click")
    assert (info.value.code, info.value.status) == ("ask_not_latest", 409)


def test_sibling_asks_of_one_turn_stay_open(external, make_ask):
    make_ask(turn_id="t")
    make_ask({"question": "q2", "field": "swelling", "type": "boolean"}, turn_id="t")
    _answer(external, turn_id="t", value="mild", source="user_option_click")
    row, created = ask_answer(
        conversation=external,
        answer={
            "field": "swelling",
            "turn_id": "t",
            "value": "false",
            "source": "user_option_click",
        },
    )
    assert created and row.value is False


def test_a_typed_message_supersedes_the_ask(external, make_ask):
    make_ask()
    message_create(conversation=external, role="user", content="hello")
    with pytest.raises(ChatError) as info:
        _answer(external, value="mild", source="user_option_click")
    assert info.value.code == "ask_not_latest"


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ({"type": "other", "field": "pain_level", "turn_id": "turn_1"}, "answer_type_invalid"),
        ({"field": "pain_level", "turn_id": "turn_1", "source": "mind"}, "answer_source_invalid"),
        ({"turn_id": "turn_1"}, "answer_field_required"),
        ({"field": "pain_level", "turn_id": "nope"}, "ask_not_found"),
        (
            {"field": "pain_level", "turn_id": "turn_1", "source": "user_free_text"},
            "answer_text_required",
        ),
    ],
)
def test_bad_answers_have_codes(external, make_ask, answer, code):
    make_ask()
    with pytest.raises(ChatError) as info:
        ask_answer(conversation=external, answer=answer)
    assert info.value.code == code


def test_scale_click_and_bounds(external, make_ask):
    make_ask({"question": "q", "field": "score", "type": "scale", "min": 0, "max": 10}, turn_id="s")
    with pytest.raises(ChatError):
        ask_answer(
            conversation=external,
            answer={"field": "score", "turn_id": "s", "value": 11, "source": "user_option_click"},
        )
    row, _ = ask_answer(
        conversation=external,
        answer={"field": "score", "turn_id": "s", "value": "6", "source": "user_option_click"},
    )
    assert row.value == 6 and row.confidence == 1.0


def test_slot_edit_is_a_new_answer(external, make_ask):
    make_ask()
    _answer(external, value="mild", source="user_option_click")
    row = slot_edit(conversation=external, field="pain_level", value="severe")
    assert row.source == "user_edit" and row.ask_message is None and row.confidence == 1.0
    external.refresh_from_db()
    assert external.state["consultation_state"]["pain_level"] == "severe"
    patch = _events(external, "consultation_state_patch")[-1].data
    assert patch["source"] == "user_edit"
    assert {"op": "replace", "path": "/consultation_state/pain_level", "value": "severe"} in patch[
        "patch"
    ]
    with pytest.raises(ChatError) as info:
        slot_edit(conversation=external, field="nope", value="x")
    assert info.value.code == "slot_unknown"
    edited, _ = _answer(external, source="user_edit", value="none")
    assert edited.source == "user_edit"
