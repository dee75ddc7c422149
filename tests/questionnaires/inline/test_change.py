"""Issue 27 on inline cards: change an answer, decline a card, skip questions."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from chat.core.errors import ChatError
from chat.core.models import Event, Message
from questionnaires.inline.services import questionnaire_answer
from questionnaires.models import Submission

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}
FIRST = {"q1": "Rome", "q2": ["Train"], "q3": "window seat"}


def answer(conversation, card, answers=None, **kwargs):
    return questionnaire_answer(
        conversation=conversation,
        message_id=card.pk,
        questionnaire_id=f"{card.pk}_q1",
        answers=FIRST if answers is None else answers,
        other_text={},
        user=None,
        lang="en",
        **kwargs,
    )


def envelope(message: Message) -> dict:
    return json.loads(message.content.split(">", 1)[1].rsplit("</", 1)[0])


def test_a_change_posts_what_changed_with_amends_and_keeps_earlier_versions(
    conversation, card_message
):
    first = answer(conversation, card_message)
    assert [a["provenance"] for a in envelope(first.user_message)["answers"]] == [
        "chosen",
        "default",
        "free_text",
    ]
    # the agent answered meanwhile: a change is still allowed on the older card
    change = answer(conversation, card_message, {**FIRST, "q1": "Paris"}, version=1)
    body = envelope(change.user_message)
    assert body["amends"] == first.user_message.pk and body["version"] == 2
    assert [a["provenance"] for a in body["answers"]] == ["amended", "default", "free_text"]
    assert change.user_message.display_content.splitlines() == [
        "Changed my answer to “Trip plan”:",
        "Where to?: Paris (was: Rome)",
    ]
    assert list(Submission.objects.values_list("version", flat=True)) == [1, 2]
    locked = Event.objects.filter(name="card_locked").order_by("id").last()
    assert locked is not None and locked.data["version"] == 2


def test_a_stale_version_is_409_and_changes_nothing(conversation, card_message):
    answer(conversation, card_message)
    answer(conversation, card_message, {**FIRST, "q3": "aisle"}, version=1)
    before = Message.objects.count()
    with pytest.raises(ChatError) as refused:
        answer(conversation, card_message, {**FIRST, "q3": "front"}, version=1)
    assert refused.value.code == "questionnaire_version_stale" and refused.value.status == 409
    assert Message.objects.count() == before and Submission.objects.count() == 2


def test_a_change_that_changes_nothing_or_of_an_unanswered_card_is_refused(
    conversation, card_message
):
    with pytest.raises(ChatError) as refused:
        answer(conversation, card_message, version=1)
    assert refused.value.code == "questionnaire_not_answered"
    answer(conversation, card_message)
    with pytest.raises(ChatError) as refused:
        answer(conversation, card_message, version=1)
    assert refused.value.code == "answer_invalid" and refused.value.status == 400
    assert [e.code for e in refused.value.errors] == ["answer.unchanged"]
    assert Submission.objects.count() == 1


def test_decline_locks_the_card_and_says_declined(conversation, card_message):
    result = answer(conversation, card_message, {}, declined=True)
    assert envelope(result.user_message)["status"] == "declined"
    assert envelope(result.user_message)["answers"] == []
    assert result.user_message.display_content == "Trip plan\nI’d rather not answer."
    with pytest.raises(ChatError) as refused:
        answer(conversation, card_message)
    assert refused.value.code == "questionnaire_already_submitted"
    # the person may still answer later: a change of the declined version
    later = answer(conversation, card_message, version=1)
    assert envelope(later.user_message)["status"] == "submitted"


def test_skipped_questions(conversation, card_message):
    result = answer(conversation, card_message, {"q1": "", "q2": ["Car"]}, skipped=["q1", "q3"])
    items = envelope(result.user_message)["answers"]
    assert [i["provenance"] for i in items] == ["skipped", "chosen", "skipped"]
    assert Submission.objects.get().skipped == ["q1", "q3"]


# --- views -------------------------------------------------------------------------------


def submit_url(card):
    return reverse("chat:questionnaire_submit", args=[card.conversation_id, card.pk])


def change_url(card):
    return reverse("chat:questionnaire_change", args=[card.conversation_id, card.pk])


def test_change_answer_reopens_the_card_with_the_latest_answer(
    client_in, conversation, card_message
):
    page = client_in.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()
    assert ">Change answer</a>" not in page and "Skip this question" in page
    assert "rather not answer" in page
    answer(conversation, card_message)
    page = client_in.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()
    assert "Change answer" in page and 'data-card-state="v1"' in page
    qid = f"{card_message.pk}_q1"
    reopened = client_in.get(change_url(card_message), {"questionnaire_id": qid}, **HX)
    html = reopened.content.decode()
    assert reopened.status_code == 200
    assert 'name="version" value="1"' in html and 'value="Rome" checked' in html
    assert "Send the change" in html and "window seat" in html
    no_js = client_in.get(change_url(card_message), {"questionnaire_id": qid})
    assert no_js.status_code == 200 and 'name="version" value="1"' in no_js.content.decode()


def test_posting_a_change_and_a_stale_one_over_http(client_in, conversation, card_message):
    answer(conversation, card_message)
    data = {
        "questionnaire_id": f"{card_message.pk}_q1",
        "version": "1",
        "answer-1": "Paris",
        "answer-2": ["Train"],
        "answer-3": "window seat",
    }
    assert client_in.post(submit_url(card_message), data, **HX).status_code == 200
    stale = client_in.post(submit_url(card_message), {**data, "answer-1": "Rome"}, **HX)
    html = stale.content.decode()
    assert stale.status_code == 409 and "questionnaire_version_stale" in html
    assert "Earlier answer" in html and 'data-card-state="v2"' in html
    body = {"questionnaire_id": f"{card_message.pk}_q1", "answers": FIRST, "version": 2}
    ok = client_in.post(submit_url(card_message), body, content_type="application/json")
    assert ok.status_code == 201 and ok.json()["version"] == 3


@pytest.mark.parametrize(
    "extra",
    [{"version": "0"}, {"version": "x"}, {"version": "99999999999"}, {"version": True}],
)
def test_bad_versions_are_refused_with_a_code(client_in, conversation, card_message, extra):
    answer(conversation, card_message)
    body = {"questionnaire_id": f"{card_message.pk}_q1", "answers": FIRST, **extra}
    response = client_in.post(submit_url(card_message), body, content_type="application/json")
    assert response.status_code == 400 and response.json()["error"] == "answer_invalid"
    assert Submission.objects.count() == 1


def test_decline_and_skip_over_the_form(client_in, conversation, card_message):
    data = {"questionnaire_id": f"{card_message.pk}_q1", "answer-1": "Rome", "skip-3": "1"}
    response = client_in.post(submit_url(card_message), data, **HX)
    assert response.status_code == 200
    items = envelope(Message.objects.filter(role="user").last())["answers"]
    assert items[2]["provenance"] == "skipped"
    assert "Skipped" in response.content.decode()


def test_decline_over_the_form(client_in, conversation, card_message):
    data = {"questionnaire_id": f"{card_message.pk}_q1", "action": "decline"}
    response = client_in.post(submit_url(card_message), data, **HX)
    html = response.content.decode()
    assert response.status_code == 200 and "Declined" in html
    assert envelope(Message.objects.filter(role="user").last())["status"] == "declined"


def test_only_the_owner_can_change_an_answer(conversation, card_message, other_user):
    answer(conversation, card_message)
    mallory = Client()
    mallory.force_login(other_user)
    qid = f"{card_message.pk}_q1"
    assert mallory.get(change_url(card_message), {"questionnaire_id": qid}).status_code == 404
    data = {"questionnaire_id": qid, "version": "1", "answer-1": "Paris"}
    assert mallory.post(submit_url(card_message), data).status_code == 404
    assert Submission.objects.count() == 1


def test_reopening_an_unanswered_or_unknown_card_is_404(client_in, card_message):
    assert client_in.get(change_url(card_message), {"questionnaire_id": "nope"}).status_code == 404


def test_a_declined_card_bubble_says_declined_after_a_reload(client_in, conversation, card_message):
    """Issue 32 #1: the person's bubble says they declined (not just the card's title)."""
    data = {"questionnaire_id": f"{card_message.pk}_q1", "action": "decline"}
    response = client_in.post(submit_url(card_message), data)  # no JavaScript
    assert response.status_code == 302
    html = client_in.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()
    bubble = html[html.index('class="qanswer"') :]
    bubble = bubble[: bubble.index("</section>")]
    assert "Trip plan" in bubble and "data-declined" in bubble and "I’d rather not answer" in bubble


def test_a_reopened_declined_card_offers_an_answer_not_a_second_decline(
    client_in, conversation, card_message
):
    """Issue 32 #14: "Change answer" on a declined card reopens it answerable; it offers no
    "I'd rather not answer" (the server refuses a second decline), with and without htmx,
    and an answer sent from it is accepted."""
    answer(conversation, card_message, {}, declined=True)
    qid = f"{card_message.pk}_q1"
    for headers in ({}, HX):
        html = client_in.get(change_url(card_message), {"questionnaire_id": qid}, **headers)
        page = html.content.decode()
        assert "Send the change" in page and 'value="decline"' not in page
    data = {"questionnaire_id": qid, "version": "1", "answer-1": "Rome", "answer-2": "Train"}
    assert client_in.post(submit_url(card_message), data).status_code == 302
    assert envelope(Message.objects.filter(role="user").last())["status"] == "submitted"
