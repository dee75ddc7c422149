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


# --- the sidebar: rename, delete, search, names ---------------------------------------------


def test_rename_own_conversation(client_in, conversation):
    url = reverse("chat:conversation_rename", args=[conversation.pk])
    response = client_in.post(url, {"title": "  Trip   to Oslo ", "next": "/"})
    assert response.status_code == 302 and response["Location"] == "/"
    conversation.refresh_from_db()
    assert conversation.title == "Trip to Oslo"
    client_in.post(url, {"title": "   "})  # blank: the old name stays
    conversation.refresh_from_db()
    assert conversation.title == "Trip to Oslo"


def test_rename_refuses_an_outside_next(client_in, conversation):
    url = reverse("chat:conversation_rename", args=[conversation.pk])
    response = client_in.post(url, {"title": "x", "next": "https://evil.example/"})
    assert response["Location"] == reverse("chat:conversation", args=[conversation.pk])


def test_delete_own_conversation(client_in, conversation):
    Message.objects.create(conversation=conversation, seq=1, role="user", content="hi")
    here = reverse("chat:conversation", args=[conversation.pk])
    url = reverse("chat:conversation_delete", args=[conversation.pk])
    response = client_in.post(url, {"next": here})
    assert response.status_code == 302 and response["Location"] == "/"  # not the deleted page
    assert not Conversation.objects.filter(pk=conversation.pk).exists()
    assert not Message.objects.filter(conversation_id=conversation.pk).exists()


@pytest.mark.parametrize("action", ["conversation_rename", "conversation_delete"])
def test_another_users_conversation_cannot_be_renamed_or_deleted(
    client, other_user, conversation, action
):
    client.force_login(other_user)
    response = client.post(reverse(f"chat:{action}", args=[conversation.pk]), {"title": "mine"})
    assert response.status_code == 404
    conversation.refresh_from_db()
    assert conversation.title == "Test"


@pytest.mark.parametrize("action", ["conversation_rename", "conversation_delete"])
def test_rename_and_delete_need_post(client_in, conversation, action):
    response = client_in.get(reverse(f"chat:{action}", args=[conversation.pk]))
    assert response.status_code == 405


def test_sidebar_groups_searches_and_marks_the_open_conversation(client_in, user):
    from datetime import timedelta

    from django.utils import timezone

    from chat.core.services import conversation_create

    old = conversation_create(owner=user, title="Old trip", agent="echo")
    Conversation.objects.filter(pk=old.pk).update(updated_at=timezone.now() - timedelta(days=30))
    new = conversation_create(owner=user, title="Fresh idea", agent="echo")
    html = client_in.get(reverse("chat:conversation", args=[new.pk])).content.decode()
    html = html[html.index('class="conv-nav"') :]
    assert html.index("Today") < html.index("Fresh idea") < html.index("Earlier")
    assert html.index("Earlier") < html.index("Old trip")
    assert "ago" in html and 'aria-current="page"' in html
    html = client_in.get("/?q=trip").content.decode()
    nav = html[html.index('class="conv-nav"') :]
    assert "Old trip" in nav and "Fresh idea" not in nav


def test_untitled_conversation_is_named_from_its_first_message(client_in, user):
    from chat.core.services import conversation_create

    conversation = conversation_create(owner=user, agent="echo")
    url = reverse("chat:message_send", args=[conversation.pk])
    client_in.post(
        url,
        {
            "content": "\n  Plan a weekend in Oslo with two kids and a dog, on a budget please\nthanks"
        },
    )
    conversation.refresh_from_db()
    assert conversation.title.startswith("Plan a weekend in Oslo") and conversation.title.endswith(
        "…"
    )
    assert len(conversation.title) <= 60
    client_in.post(url, {"content": "something else"})
    conversation.refresh_from_db()
    assert conversation.title.startswith("Plan a weekend")


def test_model_agent_is_refused_without_an_endpoint(client_in, user, settings):
    settings.LLM_BASE_URL = settings.LLM_API_KEY = ""
    html = client_in.get("/").content.decode()
    assert '<option value="openai" disabled' in html and "LLM_BASE_URL" not in html
    assert "Not available on this server yet." in html  # humane words, not settings' names
    response = client_in.post(
        reverse("chat:conversation_create"), {"agent": "openai", "content": "hi"}
    )
    assert response.status_code == 400
    assert not Conversation.objects.filter(owner=user).exists()
    user.is_staff = True
    user.save()
    assert "LLM_BASE_URL" in client_in.get("/").content.decode()  # staff see what's missing
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    response = client_in.post(
        reverse("chat:conversation_create"), {"agent": "openai", "content": "hi"}
    )
    assert response.status_code == 302


def test_every_agent_greets_in_an_empty_conversation(client_in, user):
    from chat.core.services import conversation_create

    for agent in ("echo", "scripted", "openai", "external"):
        conversation = conversation_create(owner=user, agent=agent)
        html = client_in.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()
        assert 'class="agent-intro"' in html and 'class="agent-intro-about"' in html
    assert 'data-agent-notice="external"' in html


def test_a_working_turn_refreshes_full_pages_only(client_in, conversation):
    from chat.models import Run

    page = reverse("chat:conversation", args=[conversation.pk])
    assert 'http-equiv="refresh"' not in client_in.get(page).content.decode()
    Run.objects.create(conversation=conversation, status="running")
    html = client_in.get(page).content.decode()
    assert f'<meta http-equiv="refresh" content="2;url={page}">' in html
    status = client_in.get(
        reverse("chat:run_status", args=[conversation.pk]), headers={"HX-Request": "true"}
    )
    assert "working" in status.content.decode() and "refresh" not in status.content.decode()
