"""Issue 32 on the submit view: "kept the default" only for untouched questions (2), and
text typed into "Other" without JavaScript is never lost (4)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from chat.core.models import Message
from questionnaires.models import Submission
from questionnaires.protocol import OTHER_VALUE

pytestmark = pytest.mark.django_db


def url(card):
    return reverse("chat:questionnaire_submit", args=[card.conversation_id, card.pk])


def sent(client, card, **fields):
    data = {"questionnaire_id": f"{card.pk}_q1", "answer-1": "Paris", "answer-2": ["Train"]}
    data.update(fields)
    return client.post(url(card), data)


def envelope() -> dict:
    message = Message.objects.get(role="user", content__startswith="<questionnaire-response>")
    return json.loads(message.content.split(">", 1)[1].rsplit("</", 1)[0])


def provenances() -> list[str]:
    return [a["provenance"] for a in envelope()["answers"]]


def test_untouched_defaults_are_kept_the_default(client_in, card_message):
    assert sent(client_in, card_message).status_code == 302
    assert provenances() == ["default", "default", "default"]


def test_touched_questions_on_their_default_are_chosen(client_in, card_message):
    response = sent(client_in, card_message, **{"touched-1": "1", "touched-2": "1"})
    assert response.status_code == 302
    assert provenances() == ["chosen", "chosen", "default"]
    answer = Message.objects.get(role="user", content__startswith="<questionnaire-response>")
    assert "kept the default" not in answer.display_content.splitlines()[1]


def test_a_client_cannot_claim_a_default_it_did_not_send(client_in, card_message):
    """No touched marks, but values other than the defaults: never "default"."""
    sent(client_in, card_message, **{"answer-1": "Rome", "answer-2": ["Car"], "answer-3": "x"})
    assert provenances() == ["chosen", "chosen", "free_text"]


def test_json_touched_is_checked(client_in, card_message):
    body = {
        "questionnaire_id": f"{card_message.pk}_q1",
        "answers": {"q1": "Paris", "q2": ["Train"], "q3": ""},
        "touched": ["q1"],
    }
    response = client_in.post(url(card_message), body, content_type="application/json")
    assert response.status_code == 201
    assert provenances() == ["chosen", "default", "default"]


@pytest.mark.parametrize("touched", ["q1", [1], ["q9"]])
def test_bad_json_touched_is_400_and_nothing_is_stored(client_in, card_message, touched):
    body = {
        "questionnaire_id": f"{card_message.pk}_q1",
        "answers": {"q1": "Paris", "q2": [], "q3": ""},
        "touched": touched,
    }
    response = client_in.post(url(card_message), body, content_type="application/json")
    assert response.status_code == 400 and response.json()["error"] == "answer_invalid"
    assert not Submission.objects.exists()


def test_no_js_other_text_without_other_ticked_is_other(client_in, card_message):
    """The default "Paris" is still ticked: the typed text wins, nothing typed is lost."""
    assert sent(client_in, card_message, **{"other-1": " Oslo "}).status_code == 302
    first = envelope()["answers"][0]
    assert first["value"] == OTHER_VALUE and first["other_text"] == "Oslo"
    assert first["provenance"] == "free_text"
    answer = Message.objects.get(role="user", content__startswith="<questionnaire-response>")
    assert answer.display_content.splitlines()[1] == "Where to?: Other: Oslo"


def test_no_js_other_text_on_a_multi_choice_adds_other(client_in, card_message):
    from chat.core.services import message_create

    extra = card_message.content.replace(
        "      - Car\n    default:", "      - Car\n    allow_other: true\n    default:"
    )
    card = message_create(conversation=card_message.conversation, role="assistant", content=extra)
    assert sent(client_in, card, **{"other-2": "Ferry"}).status_code == 302
    second = envelope()["answers"][1]
    assert second["values"] == ["Train", OTHER_VALUE] and second["other_text"] == "Ferry"


def test_an_empty_other_box_changes_nothing(client_in, card_message):
    sent(client_in, card_message, **{"other-1": "   "})
    assert envelope()["answers"][0]["value"] == "Paris"


# --- (8) a submit that lost the race to another tab ---------------------------------------


def test_a_refused_submit_says_what_it_chose_that_was_not_sent(client_in, card_message):
    sent(client_in, card_message)  # the other tab: Paris
    response = client_in.post(
        url(card_message),
        {"questionnaire_id": f"{card_message.pk}_q1", "answer-1": "Rome", "answer-2": ["Train"]},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 409
    html = response.content.decode()
    assert 'data-error-code="questionnaire_already_submitted"' in html
    assert "What you chose here was not sent: Rome (for “Where to?”)." in html
    assert "use Change answer" in html
    assert Submission.objects.count() == 1


def test_a_refused_submit_that_chose_the_same_says_only_that_it_was_answered(
    client_in, card_message
):
    sent(client_in, card_message)
    response = client_in.post(
        url(card_message),
        {"questionnaire_id": f"{card_message.pk}_q1", "answer-1": "Paris", "answer-2": ["Train"]},
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert response.status_code == 409 and "already answered" in html
    assert "was not sent" not in html


def test_the_notice_reads_naturally_in_chinese(client_in, card_message):
    """Full-width punctuation and no space between the two sentences."""
    from django.utils import translation

    sent(client_in, card_message)
    with translation.override("zh-hans"):
        response = client_in.post(
            url(card_message),
            {
                "questionnaire_id": f"{card_message.pk}_q1",
                "answer-1": "Rome",
                "answer-2": ["Train"],
            },
            HTTP_HX_REQUEST="true",
            HTTP_ACCEPT_LANGUAGE="zh-hans",
        )
    html = response.content.decode()
    assert "以下是生效的答案。你在这里的选择没有发送：Rome（“Where to?”）。" in html
