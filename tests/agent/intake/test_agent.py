from __future__ import annotations

import pytest

from chat.core.models import Event, Message
from chat.core.services import conversation_create
from chat.usecases import intake_begin, message_post_user
from questionnaires.asks.models import StructuredAnswer
from questionnaires.asks.selectors import ask_pending
from questionnaires.asks.services import ask_answer
from questionnaires.protocol import build_response, parse_message

pytestmark = pytest.mark.django_db


def _pending(conversation):
    return {
        m.metadata["ask_user_options"]["field"]: m for m in ask_pending(conversation=conversation)
    }


def _click(conversation, field, value, source="user_option_click", **kw):
    ask = _pending(conversation)[field]
    ask_answer(
        conversation=conversation,
        answer={
            "field": field,
            "value": value,
            "source": source,
            "turn_id": ask.metadata["turn_id"],
            **kw,
        },
    )
    conversation.refresh_from_db()


def _state(conversation):
    conversation.refresh_from_db()
    return conversation.state


def test_first_turn_intro_and_two_asks(intake):
    messages = list(intake.messages.order_by("seq"))
    assert messages[0].content.startswith("Hello")
    assert list(_pending(intake)) == ["knee_side", "pain_level"]
    assert intake.state["intake"] == {"definition": "knee", "status": "collecting"}
    assert intake.state["missing_slots"][:2] == ["knee_side", "pain_level"]


def test_sibling_answer_waits_then_next_asks(intake):
    _click(intake, "knee_side", "left")
    assert list(_pending(intake)) == ["pain_level"]  # nothing new while a sibling is open
    _click(intake, "pain_level", "mild")
    # pain_score only applies once pain_level is known and isn't "none"
    assert list(_pending(intake)) == ["pain_score", "duration"]
    _click(intake, "pain_score", "6")
    _click(intake, "duration", "1_4w")
    assert list(_pending(intake)) == ["swelling", "injury"]
    assert _state(intake)["consultation_state"] == {
        "knee_side": "left",
        "pain_level": "mild",
        "pain_score": 6,
        "duration": "1_4w",
    }


def test_dependency_skips_inapplicable_slot(intake):
    _click(intake, "knee_side", "both")
    _click(intake, "pain_level", "none")
    assert list(_pending(intake)) == ["duration", "swelling"]
    assert "pain_score" not in _state(intake)["missing_slots"]


def test_typed_reply_is_read_against_open_asks(intake):
    message_post_user(conversation=intake, content="the left one, and only a little")
    state = _state(intake)
    assert state["consultation_state"] == {"knee_side": "left", "pain_level": "mild"}
    assert state["raw_text"]["knee_side"] == "the left one, and only a little"
    assert state["confidence"]["pain_level"] < 1.0
    names = [e.name for e in Event.objects.filter(conversation=intake)]
    assert names.count("extracted_info") == 2
    assert StructuredAnswer.objects.filter(source="user_free_text").count() == 2
    assert list(_pending(intake)) == ["pain_score", "duration"]


def test_unreadable_reply_says_so_and_asks_again(intake):
    message_post_user(conversation=intake, content="hmm, what?")
    texts = [m.content for m in intake.messages.order_by("seq")]
    assert any(t.startswith("I couldn't read an answer") for t in texts)
    assert list(_pending(intake)) == ["knee_side", "pain_level"]


def _finish(conversation):
    _click(conversation, "knee_side", "right")
    _click(conversation, "pain_level", "none")
    _click(conversation, "duration", "1_3m")
    _click(conversation, "swelling", None, source="user_skipped")
    _click(conversation, "injury", "false")
    _click(conversation, "notes", None, source="user_free_text", raw_text="worse on stairs")


def _summary(conversation):
    message = conversation.messages.filter(role="assistant").order_by("-seq").first()
    segments = parse_message(message.content, message_id=str(message.pk))
    cards = [s for s in segments if s.kind == "questionnaire"]
    assert len(cards) == 1, [s.kind for s in segments]
    return message, cards[0].questionnaire


def test_summary_with_inline_questionnaire_then_confirm(intake):
    _finish(intake)
    message, questionnaire = _summary(intake)
    assert "**Which knee**: Right knee" in message.content
    assert "**Swelling**: (skipped)" in message.content
    assert "worse on stairs" in message.content
    assert _state(intake)["intake"]["status"] == "confirming"
    q1, q2 = questionnaire.questions
    built = build_response(questionnaire, {q1.id: q1.options[0].value, q2.id: []})
    message_post_user(conversation=intake, content=built.envelope)
    assert _state(intake)["intake"]["status"] == "confirmed"
    assert intake.messages.order_by("-seq").first().content.startswith("Thank you")


def test_correcting_reopens_the_chosen_slots(intake):
    _finish(intake)
    _message, questionnaire = _summary(intake)
    q1, q2 = questionnaire.questions
    pick = [o.value for o in q2.options if o.label == "Duration"]
    built = build_response(questionnaire, {q1.id: q1.options[1].value, q2.id: pick})
    message_post_user(conversation=intake, content=built.envelope)
    state = _state(intake)
    assert state["intake"]["status"] == "collecting"
    assert "duration" not in state["consultation_state"]
    assert list(_pending(intake)) == ["duration"]
    _click(intake, "duration", "gt_1y")
    _message, again = _summary(intake)
    assert again.title == "Confirm your answers"


def test_chinese_definition_and_words(user):
    conversation = conversation_create(owner=user, agent="intake", language="zh-hans")
    intake_begin(conversation=conversation, definition_id="knee")
    assert set(_pending(conversation)) == {"knee_side", "pain_level"}
    message_post_user(conversation=conversation, content="左边，不疼")
    state = _state(conversation)
    assert state["consultation_state"] == {"knee_side": "left", "pain_level": "none"}
    assert state["display"]["pain_level"] == "没有疼痛"


def test_project_kickoff_boolean_dependency(user):
    conversation = conversation_create(owner=user, agent="intake", language="en")
    intake_begin(conversation=conversation, definition_id="project_kickoff")
    _click(conversation, "project_type", "website")
    _click(conversation, "team_size", "4")
    assert list(_pending(conversation)) == ["has_deadline", "budget"]
    _click(conversation, "has_deadline", "true")
    _click(conversation, "budget", "unknown")
    # a slot that depends on an answer is never paired with the question it depends on
    assert list(_pending(conversation)) == ["deadline", "goal"]


def test_api_conversation_asks_which_intake_first(api, user):
    response = api.post("/api/v1/conversations/", {"agent": "intake"})
    cid = response.json()["id"]
    api.post(f"/api/v1/conversations/{cid}/messages", {"role": "user", "content": "hi"})
    from chat.core.models import Conversation

    conversation = Conversation.objects.get(pk=cid)
    assert list(_pending(conversation)) == ["intake_definition"]
    ask = _pending(conversation)["intake_definition"]
    answer = {
        "type": "structured_answer",
        "field": "intake_definition",
        "value": "project_kickoff",
        "source": "user_option_click",
        "turn_id": ask.metadata["turn_id"],
    }
    assert api.post(f"/api/v1/conversations/{cid}/answers", answer).status_code == 201
    conversation.refresh_from_db()
    assert conversation.state["intake"]["definition"] == "project_kickoff"
    assert "project_type" in _pending(conversation)
    # Bug 6: the routing question is not one of the topic's answers (nor in its panel)
    for key in ("consultation_state", "missing_slots", "skipped_slots"):
        assert "intake_definition" not in conversation.state.get(key, [])


def test_new_conversation_form_starts_the_intake(client_in):
    response = client_in.post(
        "/conversations/new", {"title": "K", "agent": "intake", "intake": "knee"}
    )
    assert response.status_code == 302
    page = client_in.get(response["Location"]).content.decode()
    assert 'data-widget="buttons"' in page and 'id="state-panel"' in page
    assert Message.objects.filter(role="assistant").count() == 3


def test_words_that_hold_a_later_scale_only_set_where_it_starts(intake):
    """Issue 32, defect 12: "it hurts a bit, maybe 4 out of 10" typed for "does it come
    with pain?" is *Mild pain* (to be checked), not the sentence verbatim; the 0–10 score
    is not answered for the person (nor does a slot appear from reading words): its
    slider opens at 4, with their words beside it, for them to send or move."""
    from django.template.loader import render_to_string

    from questionnaires.asks.presenter import ask_view_single

    _click(intake, "knee_side", "left")
    said = "it hurts a bit, maybe 4 out of 10"
    _click(intake, "pain_level", None, source="user_free_text", raw_text=said)
    state = _state(intake)
    assert state["consultation_state"]["pain_level"] == "mild"
    assert state["confidence"]["pain_level"] <= 0.7  # the panel says "Please check"
    assert "pain_score" not in state["consultation_state"]
    assert "pain_score" not in state.get("confidence", {})
    score = _pending(intake)["pain_score"]
    assert score.metadata["ask_start"] == {"value": 4, "said": said}
    view = ask_view_single(conversation=intake, message=score)
    widget = render_to_string(view.template, {"ask": view, "card": view})
    assert 'value="4"' in widget and said in widget
    # sent as it stands, it is the person's own answer (a click on the value shown)
    _click(intake, "pain_score", 4)
    state = _state(intake)
    assert state["consultation_state"]["pain_score"] == 4
    answer = StructuredAnswer.objects.get(field="pain_score")
    assert answer.source == "user_option_click"


def test_a_number_in_a_sentence_answers_a_scale(intake):
    """Typed to the scale itself, the number in a sentence is the value; the scale's own
    maximum ("out of 10") is not."""
    _click(intake, "knee_side", "left")
    _click(intake, "pain_level", "moderate")
    _click(intake, "pain_score", None, source="user_free_text", raw_text="I'd say 6 out of 10")
    assert _state(intake)["consultation_state"]["pain_score"] == 6


def test_correcting_a_slot_after_the_summary_shows_the_summary_again(intake):
    """Bug 6: a slot edited in the panel while the summary waits for confirmation: a new
    summary (and confirm card) with the new value; the old one is no longer the latest."""
    from questionnaires.asks.services import slot_edit

    _finish(intake)
    old, _questionnaire = _summary(intake)
    assert "**Duration**: 1–3 months" in old.content
    slot_edit(conversation=intake, field="duration", value="gt_1y")
    new, _questionnaire = _summary(intake)
    assert new.pk != old.pk and "**Duration**: More than a year" in new.content
    intake_state = _state(intake)["intake"]
    assert intake_state["status"] == "confirming"
    assert intake_state["summary_questionnaire_id"] == f"{new.pk}_q1"
