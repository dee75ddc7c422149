"""Rendering: segments before Markdown, one template per card kind, state, caching."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache

from chat.rendering import MarkdownBudget
from questionnaires.inline import render as render_module
from questionnaires.inline.presenter import Answer, MessageInput, MessageState, answers_from_form
from questionnaires.inline.render import render_message, render_messages
from questionnaires.protocol import OTHER_VALUE, questionnaire_async
from tests.support.asking import ASYNC_ARGS, TRIP
from tests.support.htmlcheck import assert_inert


def md(text: str) -> str:
    return f"<md>{text.strip()}</md>"


def render(message: MessageInput, state: MessageState | None = None, **kw):
    return render_message(message, state or MessageState(), markdown=lambda: md, lang="en", **kw)


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()


def test_segments_render_in_order_and_only_markdown_goes_through_markdown():
    html = render(MessageInput(id=7, role="assistant", content=TRIP)).html
    intro, card, outro = (
        html.index("<md>Please answer"),
        html.index('class="qcard'),
        html.index("<md>Thanks!"),
    )
    assert intro < card < outro
    assert "title: Trip plan" not in html  # the YAML never reaches Markdown
    assert 'data-questionnaire-id="7_q1"' in html


def test_interactive_card_has_form_defaults_other_and_fieldsets():
    result = render(
        MessageInput(id=7, role="assistant", content=TRIP),
        MessageState(interactive=True, submit_url="/submit"),
    )
    html = result.html
    assert result.card_state.startswith("i.") and len(result.form_ids) == 1
    assert 'hx-post="/submit"' in html and 'action="/submit"' in html
    assert html.count("<fieldset") == 3 and html.count("<legend") == 3
    assert 'type="radio"' in html and 'type="checkbox"' in html and "<textarea" in html
    assert 'value="Paris" checked' in html and 'value="Train" checked' in html
    assert f'value="{OTHER_VALUE}"' in html and 'name="other-1"' in html
    assert " disabled" not in html


def test_card_is_read_only_when_not_interactive():
    result = render(MessageInput(id=7, role="assistant", content=TRIP), MessageState())
    assert result.card_state == "" and result.form_ids == ()
    assert "hx-post" not in result.html and result.html.count(" disabled") == 3
    assert "qcard-closed" in result.html
    assert " checked" not in result.html  # unanswered: nothing looks chosen


def test_answered_card_shows_what_was_chosen_and_is_locked():
    answer = Answer(
        key=1, answers={"q1": OTHER_VALUE, "q2": ["Car"], "q3": "hi"}, other_text={"q1": "Oslo"}
    )
    state = MessageState(interactive=True, answered={"7_q1": answer})
    result = render(MessageInput(id=7, role="assistant", content=TRIP), state)
    html = result.html
    assert "qcard-answered" in html and "hx-post" not in html
    assert f'value="{OTHER_VALUE}" checked' in html and 'value="Oslo"' in html
    assert 'value="Car" checked' in html and 'value="Train" checked' not in html
    assert ">hi</textarea>" in html
    assert result.card_state == ""
    # Folded to its title and an "Answered" chip; the choices inside, shown on demand
    # (the user's turn under it carries the answer: it shows once).
    head, _sep, inside = html.partition("</summary>")
    assert '<details class="qcard-fold">' in head and "Answered" in head and "Oslo" not in head
    assert 'value="Oslo"' in inside


PAUSE = "Paused.\n\n```questionnaire\ntitle: Task paused\nquestions:\n  - type: single_choice\n    text: Continue the current task?\n    options:\n      - Continue\n    default: Continue\n```\n"


def test_a_one_option_question_is_one_button():
    result = render(
        MessageInput(id=7, role="assistant", content=PAUSE),
        MessageState(interactive=True, submit_url="/submit"),
    )
    html = result.html
    assert 'type="radio"' not in html and "<fieldset" not in html
    assert 'name="answer-1" value="Continue"' in html and ">Continue</button>" in html
    assert html.count("qcard-send") == 1  # no second "Send" (only the quiet decline beside it)


def test_response_segment_renders_read_only_answer_card_with_raw_disclosure():
    payload = {
        "type": "questionnaire_response",
        "questionnaire_id": "7_q1",
        "status": "submitted",
        "answers": [
            {  # the envelope carries the value, the card shows the label
                "question_id": "q1",
                "question": "Where to?",
                "type": "single_choice",
                "answer": "rom",
                "value": "rom",
                "label": "Rome",
            },
            {  # stored before issue 25: the label in `answer` too
                "question_id": "q0",
                "question": "Old?",
                "type": "single_choice",
                "answer": "Yes",
                "value": "y",
                "label": "Yes",
            },
            {
                "question_id": "q2",
                "question": "Transport?",
                "type": "multi_choice",
                "answer": ["Car", "Bike"],
                "values": ["Car", OTHER_VALUE],
                "labels": ["Car", "Other"],
                "other_text": "Bike",
            },
        ],
    }
    content = f"<questionnaire-response>{json.dumps(payload)}</questionnaire-response>"
    message = MessageInput(
        id=8, role="user", content=content, display_content="Trip plan\nWhere to?: Rome"
    )
    html = render(message).html
    assert 'class="qanswer"' in html and "Trip plan" in html
    assert "<dd>Rome</dd>" in html and "<dd>Car, Bike</dd>" in html and "<dd>Yes</dd>" in html
    assert "rom<" not in html
    assert "<details" in html and "&lt;questionnaire-response&gt;" in html


def test_plain_user_message_with_display_content_renders_markdown_of_it():
    html = render(MessageInput(id=9, role="user", content="hi", display_content="**shown**")).html
    assert html == "<md>**shown**</md>"


def test_invalid_block_shows_raw_text_and_a_calm_notice():
    content = "Intro\n\n```questionnaire\ntitle: X\nquestions: []\n```\n"
    html = render(MessageInput(id=3, role="assistant", content=content)).html
    assert 'class="qinvalid"' in html and "<pre><code>```questionnaire" in html
    assert 'class="qnotice"' in html and "<li>" in html
    # One line for people; what went wrong and the raw text behind "Details".
    assert "had trouble showing a question" in html and "<details" in html
    assert "qcard-alert" not in html


def _async_message(result: dict | None, *, arguments: dict | None = None) -> MessageInput:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {
            "name": "questionnaire_async",
            "arguments": json.dumps(arguments or ASYNC_ARGS),
        },
    }
    results = {} if result is None else {"call_1": json.dumps(result)}
    return MessageInput(id=5, role="assistant", content="", tool_calls=[call], tool_results=results)


def test_async_card_renders_from_the_tool_result_with_call_id():
    result = questionnaire_async(ASYNC_ARGS, lang="en")
    tampered_args = {"title": "FROM ARGUMENTS", "questions": ASYNC_ARGS["questions"]}
    rendered = render(
        _async_message(result, arguments=tampered_args), MessageState(interactive=True)
    )
    assert 'data-questionnaire-id="call_1"' in rendered.html
    assert "Async trip" in rendered.html and "FROM ARGUMENTS" not in rendered.html
    assert rendered.card_state.startswith("i.")


def test_async_failed_result_renders_parameter_error_card():
    bad = questionnaire_async({"questions": [{"type": "nope", "text": ""}]}, lang="en")
    html = render(_async_message(bad)).html
    assert "qcard-error" in html
    for error in bad["errors"]:
        assert f"<code>{error['path']}</code>" in html


def test_async_without_result_is_pending_and_live():
    rendered = render(_async_message(None))
    assert "qcard-pending" in rendered.html and rendered.card_state == "p"


XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def test_every_field_is_escaped():
    body = {
        "title": XSS,
        "questions": [
            {
                "id": "a",
                "type": "single_choice",
                "text": XSS,
                "options": [XSS, "ok"],
                "default": XSS,
                "allow_other": True,
            },
            {"id": "b", "type": "free_text", "text": XSS, "default": XSS},
        ],
    }
    content = f"Intro\n<questionnaire>{json.dumps(body)}</questionnaire>\n{XSS}"
    answer = Answer(key=1, answers={"a": OTHER_VALUE, "b": XSS}, other_text={"a": XSS})
    for state in (
        MessageState(interactive=True, submit_url="/s"),
        MessageState(answered={"1_q1": answer}),
    ):
        message = MessageInput(id=1, role="assistant", content=content)
        html = render_message(message, state, markdown=MarkdownBudget, lang="en").html
        assert_inert(html, allow_forms=True)
        assert "<img" not in html and "<script" not in html


def test_render_messages_caches_per_message_and_state(monkeypatch):
    # No django_db mark here: any database query during rendering would raise.
    calls = []
    real = render_module.parse_message
    monkeypatch.setattr(
        render_module, "parse_message", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    messages = [MessageInput(id=i, role="assistant", content=TRIP) for i in range(3)]
    states = [MessageState() for _ in messages]
    first = render_messages(messages, states, markdown=lambda: md, lang="en")
    again = render_messages(messages, states, markdown=lambda: md, lang="en")
    assert len(calls) == 3 and [r.html for r in first] == [r.html for r in again]
    render_messages(
        messages[:1],
        [MessageState(interactive=True, submit_url="/s")],
        markdown=lambda: md,
        lang="en",
    )
    render_messages(messages[:1], states[:1], markdown=lambda: md, lang="zh-hans")
    assert len(calls) == 5  # interactive state and language are part of the key


def test_form_fields_map_to_question_ids_and_unknown_fields_are_kept():
    from questionnaires.inline.presenter import message_questionnaires

    (questionnaire,) = message_questionnaires(
        MessageInput(id=7, role="assistant", content=TRIP)
    ).values()
    answers, other = answers_from_form(
        questionnaire,
        {
            "answer-1": ["Rome"],
            "other-1": ["x"],
            "answer-3": ["t"],
            "answer-9": ["?"],
            "csrf": ["z"],
        },
    )
    assert answers == {"q1": "Rome", "q3": "t", "answer-9": ["?"], "q2": []}
    assert other == {"q1": "x"}
