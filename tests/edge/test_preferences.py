"""The "developer details" switch (issue 23): machinery only for people who turn it on."""

from __future__ import annotations

from django.urls import reverse

from chat.core.models import UserPreferences
from chat.core.services import message_create
from questionnaires.inline.services import questionnaire_answer
from tests.support.asking import TRIP


def _page(client, conversation) -> str:
    return client.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()


def test_machinery_is_hidden_until_the_switch_is_on_and_the_choice_is_kept_per_user(
    client_in, user, other_user, conversation
):
    ask = message_create(conversation=conversation, role="assistant", content=TRIP)
    questionnaire_answer(
        conversation=conversation,
        message_id=ask.pk,
        questionnaire_id=f"{ask.pk}_q1",
        answers={"q1": "Rome", "q2": [], "q3": ""},
        other_text={},
        user=user,
        lang="en",
    )
    html = _page(client_in, conversation)
    # what the assistant receives is in the page, but only as developer machinery
    assert 'class="qanswer-raw dev-only"' in html and "dev-details" not in html
    assert 'role="switch" aria-checked="false"' in html
    toggle = reverse("chat:developer_details")
    here = reverse("chat:conversation", args=[conversation.pk])
    response = client_in.post(toggle, {"on": "1", "next": here})
    assert response.status_code == 302 and response["Location"] == here
    html = _page(client_in, conversation)
    assert 'class="dev-details"' in html or " dev-details" in html.split("<body", 1)[1][:200]
    assert 'aria-checked="true"' in html
    assert UserPreferences.objects.get(user=user).developer_details is True
    assert not UserPreferences.objects.filter(user=other_user).exists()
    client_in.post(toggle, {"on": "0", "next": here})
    assert UserPreferences.objects.get(user=user).developer_details is False


def test_the_switch_never_redirects_off_site_and_needs_a_login(client, client_in):
    toggle = reverse("chat:developer_details")
    response = client_in.post(toggle, {"on": "1", "next": "https://evil.example/"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert client_in.get(toggle).status_code == 405
    client.logout()
    assert client.post(toggle, {"on": "1"}).status_code == 302  # to the login page
