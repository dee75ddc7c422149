from __future__ import annotations

import pytest
from django.urls import reverse

from chat.core.models import Conversation, Message

pytestmark = pytest.mark.django_db


def test_pages_require_login(client, conversation):
    for url in (
        reverse("chat:conversation_list"),
        reverse("chat:conversation", args=[conversation.pk]),
    ):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


def test_login_page_has_standard_fields(client):
    html = client.get("/accounts/login/").content.decode()
    assert 'name="username"' in html and 'name="password"' in html


def test_create_conversation_and_send_without_js(client_in, user):
    response = client_in.post(
        reverse("chat:conversation_create"), {"title": "Trip", "agent": "echo"}
    )
    conversation = Conversation.objects.get(owner=user)
    assert response.status_code == 302
    assert response["Location"] == reverse("chat:conversation", args=[conversation.pk])
    response = client_in.post(
        reverse("chat:message_send", args=[conversation.pk]), {"content": "**hello**"}
    )
    assert response.status_code == 302  # post/redirect/get without JavaScript
    page = client_in.get(response["Location"]).content.decode()
    assert "<strong>hello</strong>" in page
    assert "Echo: " in page  # the placeholder agent answered


def test_send_with_htmx_returns_cleared_composer(client_in, conversation):
    response = client_in.post(
        reverse("chat:message_send", args=[conversation.pk]),
        {"content": "hi"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="composer"' in html and "<html" not in html
    assert conversation.messages.filter(role="user", content="hi").exists()


@pytest.mark.parametrize("htmx", [True, False])
def test_too_long_message_is_refused_and_text_kept(client_in, conversation, settings, htmx):
    settings.CHAT_MAX_MESSAGE_CHARS = 10
    headers = {"HX-Request": "true"} if htmx else {}
    response = client_in.post(
        reverse("chat:message_send", args=[conversation.pk]),
        {"content": "x" * 11},
        headers=headers,
    )
    assert response.status_code == 413  # as documented, like the API
    html = response.content.decode()
    assert "the limit is 10" in html
    assert "x" * 11 in html  # nothing the user typed is lost
    assert not Message.objects.exists()


def test_blank_message_is_refused(client_in, conversation):
    response = client_in.post(
        reverse("chat:message_send", args=[conversation.pk]), {"content": "   "}
    )
    assert response.status_code == 400
    assert "Type a message first." in response.content.decode()


def test_other_users_conversation_is_404(client, other_user, conversation):
    client.force_login(other_user)
    assert client.get(reverse("chat:conversation", args=[conversation.pk])).status_code == 404
    response = client.post(reverse("chat:message_send", args=[conversation.pk]), {"content": "x"})
    assert response.status_code == 404
    response = client.get(reverse("chat:message_list", args=[conversation.pk]))
    assert response.status_code == 404
    assert not conversation.messages.exists()


def test_csrf_is_enforced(user, conversation):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    response = strict.post(reverse("chat:message_send", args=[conversation.pk]), {"content": "x"})
    assert response.status_code == 403


def test_fragment_returns_messages_after_seq(client_in, conversation):
    from chat.core.services import message_create

    message_create(conversation=conversation, role="assistant", content="first")
    message_create(conversation=conversation, role="assistant", content="second")
    message_create(conversation=conversation, role="assistant", content="diag", hidden=True)
    html = client_in.get(
        reverse("chat:message_list", args=[conversation.pk]), {"after": 1}
    ).content.decode()
    assert "second" in html and "first" not in html and "diag" not in html


def test_language_follows_browser_and_can_be_switched(client_in):
    html = client_in.get("/", headers={"Accept-Language": "zh-Hans"}).content.decode()
    assert 'lang="zh-hans"' in html
    assert "新对话" in html
    client_in.post("/i18n/setlang/", {"language": "en", "next": "/"})
    html = client_in.get("/", headers={"Accept-Language": "zh-Hans"}).content.decode()
    assert 'lang="en"' in html


def test_list_shows_only_own_conversations(client_in, other_user):
    from chat.core.services import conversation_create

    conversation_create(owner=other_user, title="secret-plans", agent="echo")
    assert "secret-plans" not in client_in.get("/").content.decode()
