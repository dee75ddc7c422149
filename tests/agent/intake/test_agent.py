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


def _answer(conversation, questionnaire, answers=None, *, declined=False, previous=None):
    """Post the person's answer to a card, as the chat does."""
    from questionnaires.protocol import build_decline

    if declined:
        built = build_decline(questionnaire, previous=previous)
    else:
        built = build_response(questionnaire, answers, previous=previous)
    message_post_user(conversation=conversation, content=built.envelope)
    return built


def test_summary_with_inline_questionnaire_then_confirm(intake):
    _finish(intake)
    message, questionnaire = _summary(intake)
    assert "**Which knee**: Right knee" in message.content
    assert "**Swelling**: (skipped)" in message.content
    assert "worse on stairs" in message.content
    assert _state(intake)["intake"]["status"] == "confirming"
    _answer(intake, questionnaire, {"confirm": "yes"})
    assert _state(intake)["intake"]["status"] == "confirmed"
    assert intake.messages.order_by("-seq").first().content.startswith("Thank you")


def test_the_summary_card_asks_one_question_with_nothing_chosen(intake):
    """Issue 32 #3: the card holds only what the person is shown (no "Which answers should
    change?" answered "(no answer)" behind their back), and confirming is their act: no
    option is preselected, so an empty send is refused."""
    from questionnaires.protocol import AnswerInvalid

    _finish(intake)
    _message, questionnaire = _summary(intake)
    (confirm,) = questionnaire.questions
    assert confirm.type == "single_choice" and confirm.default == ""
    assert [o.value for o in confirm.options] == ["yes", "change"]
    with pytest.raises(AnswerInvalid):
        build_response(questionnaire, {})
    built = build_response(questionnaire, {"confirm": "yes"})
    assert [a["question_id"] for a in built.payload["answers"]] == ["confirm"]
    assert "Which answers should change" not in built.display


def test_correcting_reopens_the_chosen_slots(intake):
    _finish(intake)
    _message, questionnaire = _summary(intake)
    _answer(intake, questionnaire, {"confirm": "change"})
    card_message, which = _summary(intake)  # "Which answers should change?", a card of its own
    assert which.title == "Change your answers" and card_message.content.startswith("Tick")
    (change,) = which.questions
    assert change.type == "multi_choice" and change.default == ()
    assert "duration" in [o.value for o in change.options]
    _answer(intake, which, {"change": ["duration"]})
    state = _state(intake)
    assert state["intake"]["status"] == "collecting"
    assert "duration" not in state["consultation_state"]
    assert list(_pending(intake)) == ["duration"]
    _click(intake, "duration", "gt_1y")
    _message, again = _summary(intake)
    assert again.title == "Confirm your answers"


def test_declining_the_summary_ends_the_intake_with_a_way_back(intake):
    """Issue 32 #1: a declined summary is not posted again (confirming was the only way
    out); the intake ends unconfirmed and says how to confirm later. Changing the declined
    card to "yes" then confirms it."""
    _finish(intake)
    message, questionnaire = _summary(intake)
    declined = _answer(intake, questionnaire, declined=True)
    assert _state(intake)["intake"]["status"] == "declined"
    last = intake.messages.order_by("-seq").first()
    assert last.role == "assistant" and "not confirmed" in last.content
    summaries = intake.messages.filter(role="assistant", content__contains="<questionnaire>")
    assert list(summaries) == [message]
    _answer(intake, questionnaire, {"confirm": "yes"}, previous=declined.payload)
    assert _state(intake)["intake"]["status"] == "confirmed"


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


def test_correcting_a_slot_after_the_summary_updates_that_summary_in_place(intake):
    """Issue 32 #9: a slot edited in the panel while the summary waits for confirmation:
    the same summary message now says the new value (no second summary, no closed copy),
    its card keeps its id, and confirming it records the edited value."""
    from questionnaires.asks.services import slot_edit

    _finish(intake)
    old, questionnaire = _summary(intake)
    assert "**Duration**: 1–3 months" in old.content
    slot_edit(conversation=intake, field="duration", value="gt_1y")
    slot_edit(conversation=intake, field="knee_side", value="left")
    new, _questionnaire = _summary(intake)
    assert new.pk == old.pk
    assert "**Duration**: More than a year" in new.content and "Left knee" in new.content
    assert intake.messages.filter(content__contains="<questionnaire>").count() == 1
    state = _state(intake)
    assert state["intake"] == {**state["intake"], "status": "confirming"}
    assert state["intake"]["summary_questionnaire_id"] == f"{old.pk}_q1"
    # open tabs hear of it (each re-renders the message: its card state changed)
    assert (
        Event.objects.filter(
            conversation=intake, name="message_done", data__message_id=old.pk
        ).count()
        == 3
    )  # posted, then brought up to date twice
    _answer(intake, questionnaire, {"confirm": "yes"})
    state = _state(intake)
    assert state["intake"]["status"] == "confirmed"
    assert state["consultation_state"]["duration"] == "gt_1y"


def test_the_panel_counts_every_slot_from_the_start(intake):
    """Issue 32 (design): the panel's total doesn't grow as questions are asked ("0 of 5"
    then "2 of 6"): every slot has its row from the first turn, "Not answered yet"; only a
    slot an answer rules out leaves (no pain: no pain score)."""
    from django.template.loader import render_to_string

    from questionnaires.asks.presenter import state_panel, state_panel_for

    def summary():
        panel = state_panel_for(intake)
        assert panel is not None
        return panel.summary

    assert summary() == "0 of 7 answered"
    html = render_to_string(
        "chat/asks/state_panel.html", {"panel": state_panel(conversation=intake)}
    )
    assert html.count("Not answered yet") == 7 and "Missing" not in html
    _click(intake, "knee_side", "left")
    assert summary() == "1 of 7 answered"
    _click(intake, "pain_level", "none")
    assert summary() == "2 of 6 answered"  # ruled out by the answer, not added by a question


def test_a_chinese_summary_uses_full_width_punctuation(user):
    conversation = conversation_create(owner=user, agent="intake", language="zh-hans")
    intake_begin(conversation=conversation, definition_id="knee")
    _finish(conversation)
    message, questionnaire = _summary(conversation)
    assert "**哪侧膝盖**：右膝" in message.content and "**: " not in message.content
    assert questionnaire.title == "确认问诊信息" and questionnaire.questions[0].default == ""


def test_an_answer_bubble_names_its_slot(intake):
    """Issue 32 (design): "Which knee: Right knee", not a bare "Right knee" — in the
    bubble, the stored record and what the agent reads alike."""
    from questionnaires.asks.presenter import model_text

    _click(intake, "knee_side", "right")
    _click(intake, "pain_level", None, source="user_free_text", raw_text="only a little")
    answers = list(intake.messages.filter(role="user").order_by("seq"))
    assert [m.display_content for m in answers] == [
        "Which knee: Right knee",
        "Pain level: only a little",
    ]
    assert model_text(answers[0]).startswith("Which knee: Right knee\n<structured_answer>")


def test_skipping_the_summary_question_is_not_a_request_to_change(intake):
    """Skipping the summary's only question says nothing: not confirmed, no "which answers
    should change?" card the person never asked for."""
    _finish(intake)
    message, questionnaire = _summary(intake)
    built = build_response(questionnaire, {}, skipped=["confirm"])
    message_post_user(conversation=intake, content=built.envelope)
    assert _state(intake)["intake"]["status"] == "declined"
    assert intake.messages.filter(content__contains="<questionnaire>").count() == 1
