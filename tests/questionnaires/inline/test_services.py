"""questionnaire_answer: the rules."""

from __future__ import annotations

import pytest

from chat.core.errors import ChatError
from chat.core.models import Event, Message
from chat.core.services import message_create
from questionnaires.inline.services import questionnaire_answer
from questionnaires.models import Submission
from questionnaires.protocol import OTHER_VALUE
from tests.support.asking import post_async_card

pytestmark = pytest.mark.django_db

GOOD = {"q1": "Rome", "q2": ["Train", "Car"], "q3": "window seat"}


def submit(conversation, message, qid=None, answers=None, other_text=None, user=None):
    return questionnaire_answer(
        conversation=conversation,
        message_id=message.pk,
        questionnaire_id=qid or f"{message.pk}_q1",
        answers=GOOD if answers is None else answers,
        other_text=other_text or {},
        user=user,
        lang="en",
    )


def refusal(**kw) -> ChatError:
    with pytest.raises(ChatError) as info:
        submit(**kw)
    return info.value


def test_submit_posts_envelope_and_readable_answer_locks_and_starts_the_agent(
    conversation, card_message, user
):
    result = submit(conversation, card_message, user=user)
    answer = result.user_message
    assert answer.role == "user"
    assert answer.content.startswith("<questionnaire-response>{")
    assert f'"questionnaire_id":"{card_message.pk}_q1"' in answer.content
    assert answer.display_content.splitlines() == [
        "Trip plan",
        "Where to?: Rome",
        "Transport?: Train, Car",
        "Anything else?: window seat",
    ]
    submission = Submission.objects.get()
    assert submission.user_message == answer and submission.answers == GOOD
    locked = Event.objects.get(name="card_locked")
    assert locked.data == {
        "message_id": card_message.pk,
        "questionnaire_id": f"{card_message.pk}_q1",
        "version": 1,
    }
    # the echo agent answered the envelope: the next turn started
    assert Message.objects.filter(
        role="assistant", content__startswith="Echo: <questionnaire-response>"
    ).exists()


def test_other_answer_carries_other_text(conversation, card_message):
    result = submit(
        conversation, card_message, answers={**GOOD, "q1": OTHER_VALUE}, other_text={"q1": "Oslo"}
    )
    assert '"other_text":"Oslo"' in result.user_message.content
    assert "Where to?: Other: Oslo" in result.user_message.display_content


def test_already_submitted(conversation, card_message):
    submit(conversation, card_message)
    error = refusal(conversation=conversation, message=card_message)
    assert (error.code, error.status) == ("questionnaire_already_submitted", 409)
    assert Message.objects.filter(role="user").count() == 2  # the prompt + one answer


def test_not_latest(conversation, card_message):
    message_create(conversation=conversation, role="assistant", content="Something newer")
    error = refusal(conversation=conversation, message=card_message)
    assert (error.code, error.status) == ("questionnaire_not_latest", 409)


def test_tool_results_and_hidden_messages_do_not_make_a_card_stale(conversation, card_message):
    message_create(conversation=conversation, role="tool", content="{}", tool_call_id="x")
    message_create(conversation=conversation, role="assistant", content="diag", hidden=True)
    assert submit(conversation, card_message).user_message


def test_readonly(conversation, card_message):
    Message.objects.filter(pk=card_message.pk).update(readonly=True)
    card_message.refresh_from_db()
    error = refusal(conversation=conversation, message=card_message)
    assert (error.code, error.status) == ("message_readonly", 409)


@pytest.mark.parametrize(
    ("answers", "other_text", "codes"),
    [
        ({**GOOD, "q1": "Berlin"}, {}, ["answer.option_invalid"]),
        ({**GOOD, "zz": "x"}, {}, ["answer.question_unknown"]),
        ({**GOOD, "q1": OTHER_VALUE}, {}, ["answer.other_text_required"]),
        ({**GOOD, "q2": ["Boat"]}, {}, ["answer.option_invalid"]),
        ({**GOOD, "q2": [OTHER_VALUE]}, {"q2": "x"}, ["answer.other_not_allowed"]),
        ({"q2": [], "q3": ""}, {}, ["answer.required"]),
    ],
)
def test_answer_invalid(conversation, card_message, answers, other_text, codes):
    error = refusal(
        conversation=conversation, message=card_message, answers=answers, other_text=other_text
    )
    assert (error.code, error.status) == ("answer_invalid", 400)
    assert [e.code for e in error.errors] == codes
    assert not Submission.objects.exists()


def test_unknown_questionnaire_or_non_assistant_message_is_not_found(conversation, card_message):
    error = refusal(conversation=conversation, message=card_message, qid="nope")
    assert (error.code, error.status) == ("questionnaire_not_found", 404)
    user_message = Message.objects.filter(role="user").first()
    error = refusal(conversation=conversation, message=user_message, qid=f"{user_message.pk}_q1")
    assert error.status == 404


def test_async_card_submit_uses_the_tool_result_and_call_id(conversation):
    card = post_async_card(conversation)
    result = submit(conversation, card, qid="call_trip", answers={"dest": "Bergen"})
    assert '"questionnaire_id":"call_trip"' in result.user_message.content
    assert result.user_message.display_content == "Async trip\nWhere?: Bergen"


def test_the_envelope_carries_option_values_and_people_read_labels(conversation):
    """Sage's behaviour (issue 25 item 3): the model gets the values, in option order."""
    arguments = {
        "title": "Async trip",
        "questions": [
            {
                "id": "dest",
                "type": "single_choice",
                "text": "Where?",
                "options": [{"value": "osl", "label": "Oslo"}, {"value": "bgo", "label": "Bergen"}],
            },
            {
                "id": "how",
                "type": "multi_choice",
                "text": "How?",
                "options": [{"value": "train", "label": "Train"}, {"value": "car", "label": "Car"}],
            },
        ],
    }
    card = post_async_card(conversation, arguments=arguments)
    answers = {"dest": "bgo", "how": ["car", "train"]}
    result = submit(conversation, card, qid="call_trip", answers=answers)
    payload = Submission.objects.get().payload
    dest, how = payload["answers"]
    assert (dest["answer"], dest["value"], dest["label"]) == ("bgo", "bgo", "Bergen")
    assert how["answer"] == how["values"] == ["train", "car"]
    assert how["labels"] == ["Train", "Car"]
    assert '"answer":"bgo"' in result.user_message.content
    assert result.user_message.display_content == "Async trip\nWhere?: Bergen\nHow?: Train, Car"
