"""Admin smoke test: a superuser can find a conversation by its text, read its messages
in order (hidden ones marked, each with its rendered preview), and open every changelist."""

from __future__ import annotations

import pytest

from chat.core.models import Run
from chat.core.services import conversation_create, event_emit, message_create
from chat.skills.models import Skill
from questionnaires.asks.models import StructuredAnswer
from questionnaires.models import InteractiveForm, Submission

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw-root-1")
    client.force_login(admin)
    return client


@pytest.fixture
def talk(user):
    conversation = conversation_create(owner=user, title="Knee talk", agent="echo")
    message_create(conversation=conversation, role="user", content="first: **bold first**")
    message_create(
        conversation=conversation, role="assistant", content="second: hidden note", hidden=True
    )
    message_create(conversation=conversation, role="assistant", content="third: zebra-needle")
    return conversation


def test_conversation_changelist_and_search_by_message_text(admin_client, talk, user):
    other = conversation_create(owner=user, title="Unrelated chat", agent="echo")
    message_create(conversation=other, role="user", content="nothing to see")
    response = admin_client.get("/admin/chat/conversation/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Knee talk" in html and "Unrelated chat" in html
    found = admin_client.get("/admin/chat/conversation/", {"q": "zebra-needle"})
    assert found.status_code == 200
    html = found.content.decode()
    assert "Knee talk" in html and "Unrelated chat" not in html


def test_conversation_change_page_shows_messages_in_order(admin_client, talk):
    response = admin_client.get(f"/admin/chat/conversation/{talk.pk}/change/")
    assert response.status_code == 200
    html = response.content.decode()
    positions = [html.index(text) for text in ("first: ", "second: hidden", "third: zebra")]
    assert positions == sorted(positions)
    # the hidden message (and only it) is marked in its preview
    assert html.count("<strong>HIDDEN</strong>") == 1
    marker = html.index("<strong>HIDDEN</strong>")
    assert positions[0] < marker < positions[1]  # heading the second message's preview
    assert 'name="messages-0-content"' not in html  # read-only: no 5,800 px of forms
    # the rendered preview is Markdown rendered to HTML
    assert '<div class="qc-admin-preview">' in html
    assert "<strong>bold first</strong>" in html


def _fill_other_models(conversation, user):
    message = conversation.messages.order_by("seq").first()
    run = Run.objects.create(conversation=conversation)
    event_emit(conversation_id=conversation.pk, name="run_started", data={"run_id": run.pk})
    StructuredAnswer.objects.create(
        conversation=conversation,
        turn_id="turn_1",
        field="knee_side",
        value="left",
        display_text="Left knee",
        source=StructuredAnswer.Source.OPTION_CLICK,
        confidence=1.0,
    )
    Skill.objects.create(owner=user, name="triage", description="Triage helper")
    Submission.objects.create(
        conversation=conversation, message=message, questionnaire_id="q_admin", answers={}
    )
    InteractiveForm.objects.create(
        conversation=conversation, message=message, tool_use_id="call_1", ask_id="ask_admin"
    )


@pytest.mark.parametrize(
    ("url", "shows"),
    [
        ("/admin/chat/message/", "zebra-needle"),
        ("/admin/chat/run/", "Knee talk"),
        ("/admin/chat/event/", "run_started"),
        ("/admin/questionnaires/structuredanswer/", "knee_side"),
        ("/admin/chat/apitoken/", "alice"),
        ("/admin/chat/skill/", "triage"),
        ("/admin/questionnaires/submission/", "q_admin"),
        ("/admin/questionnaires/interactiveform/", "ask_admin"),
    ],
)
def test_changelists_open(admin_client, talk, user, api_token, url, shows):
    _fill_other_models(talk, user)
    response = admin_client.get(url)
    assert response.status_code == 200
    assert shows in response.content.decode()


def test_run_page_lists_its_attempts_and_workers(admin_client, talk):
    from chat.models import RunAttempt
    from chat.runs.heartbeat import run_claim

    run = Run.objects.create(conversation=talk)
    run_claim(run_id=run.pk, task_id="msg-1", worker="runs0@web-1:4242")
    run_claim(run_id=run.pk, task_id="msg-1", worker="runs0@web-2:77")  # redelivered
    assert list(run.attempt_log.values_list("outcome", flat=True)) == [
        RunAttempt.Outcome.LOST,
        RunAttempt.Outcome.RUNNING,
    ]
    html = admin_client.get(f"/admin/chat/run/{run.pk}/change/").content.decode()
    assert "runs0@web-1:4242" in html and "runs0@web-2:77" in html
    assert "Worker lost" in html and "msg-1" in html
    listing = admin_client.get("/admin/chat/run/").content.decode()
    assert "runs0@web-2:77" in listing


def test_a_long_conversation_shows_its_latest_messages_and_links_the_rest(admin_client, talk):
    from chat import admin as chat_admin

    for n in range(chat_admin.TRANSCRIPT_LIMIT):
        message_create(conversation=talk, role="user", content=f"later {n}")
    html = admin_client.get(f"/admin/chat/conversation/{talk.pk}/change/").content.decode()
    assert "first: " not in html and f"later {chat_admin.TRANSCRIPT_LIMIT - 1}" in html
    assert f"/admin/chat/message/?conversation__id__exact={talk.pk}" in html
    listed = admin_client.get("/admin/chat/message/", {"conversation__id__exact": talk.pk})
    assert listed.status_code == 200


def test_the_admin_is_branded(admin_client):
    assert "Questionnaire chat" in admin_client.get("/admin/").content.decode()


def test_the_admin_index_names_every_app_and_model_in_chinese(admin_client):
    from django.contrib import admin
    from django.utils import translation

    html = admin_client.get("/admin/", headers={"accept-language": "zh-hans"}).content.decode()
    assert "聊天" in html and "问卷" in html and "对话" in html and "结构化回答" in html
    with translation.override("zh-hans"):
        for model in admin.site._registry:
            names = (str(model._meta.verbose_name_plural), str(model._meta.app_config.verbose_name))
            assert all(not name.isascii() for name in names), (model, names)


def test_the_admin_wears_the_products_colours_and_logo(admin_client):
    from django.test import Client

    for page in ("/admin/", "/admin/chat/conversation/", "/admin/login/"):
        who = admin_client if page != "/admin/login/" else Client()
        html = who.get(page).content.decode()
        assert '<link rel="stylesheet" href="/static/css/admin.css">' in html, page
        # after admin's own sheets, so its custom properties win
        assert html.index("/static/css/admin.css") > html.index("admin/css/base.css"), page
        assert 'class="logo" src="/static/img/favicon.svg"' in html, page
    from django.contrib.staticfiles import finders

    with open(finders.find("css/admin.css"), encoding="utf-8") as handle:
        css = handle.read()
    for prop in ("--primary:", "--secondary:", "--link-fg:", "--header-bg:", "--button-bg:"):
        assert css.count(prop) == 3, prop  # light, dark (OS), dark (admin's toggle)
    assert "#2456d3" in css and "#8aabff" in css  # app.css's accent, light and dark
    assert "--font-family-primary: system-ui" in css and ":focus-visible" in css
