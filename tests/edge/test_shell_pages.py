"""The shell's own pages: not found, server error, login, favicon, the live shell update."""

from __future__ import annotations

import io

import pytest
from django.test import override_settings
from django.urls import reverse
from django.utils import translation

from chat.core.models import Conversation

pytestmark = pytest.mark.django_db


def test_a_deleted_conversation_is_the_branded_404_inside_the_app(client_in, conversation):
    url = reverse("chat:conversation", args=[conversation.pk])
    conversation.delete()
    response = client_in.get(url)
    html = response.content.decode()
    assert response.status_code == 404
    assert 'data-error-page="404"' in html and 'id="sidebar"' in html
    assert "We can’t find that page" in html and 'rel="icon"' in html


def test_the_404_page_speaks_chinese(client_in):
    response = client_in.get("/no-such-page/", headers={"accept-language": "zh-hans"})
    assert response.status_code == 404
    assert "找不到" in response.content.decode()


def test_a_404_without_login_has_no_sidebar(client):
    html = client.get("/no-such-page/").content.decode()
    assert 'data-error-page="404"' in html and 'id="sidebar"' not in html


def test_an_unknown_api_address_is_a_json_404(client):
    response = client.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_the_500_page_needs_no_session_or_database():
    from django.template.loader import render_to_string

    with translation.override("en"):
        html = render_to_string("500.html")  # no request, no user: what a failing server has
    assert 'data-error-page="500"' in html and "Nothing you sent was lost" in html


def test_favicon_ico_is_served(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 302 and response["Location"].endswith("favicon.ico")


def test_login_page_pitches_the_product_and_names_no_demo_login_without_the_account(
    client, settings
):
    html = client.get("/accounts/login/").content.decode()
    assert "asks its questions as simple cards" in html and "data-demo-login" not in html
    with override_settings(DEBUG=True):  # DEBUG alone names nothing: no account exists
        html = client.get("/accounts/login/").content.decode()
    assert "data-demo-login" not in html and settings.DEMO_PASSWORD not in html


def test_login_page_names_the_demo_login_make_run_created_while_its_password_works(
    client, settings
):
    from django.contrib.auth.models import User
    from django.core.management import call_command

    call_command("ensure_demo_user", stdout=io.StringIO())
    with override_settings(DEBUG=True):
        html = client.get("/accounts/login/").content.decode()
    assert "data-demo-login" in html and "data-demo-warning" not in html
    assert f"<kbd>{settings.DEMO_USERNAME}</kbd> / <kbd>{settings.DEMO_PASSWORD}</kbd>" in html
    # What the page shows logs in.
    assert User.objects.get(username=settings.DEMO_USERNAME).check_password(settings.DEMO_PASSWORD)
    # DEBUG off (production): still named, since it really works, with a warning to change it.
    html = client.get("/accounts/login/").content.decode()
    assert "data-demo-login" in html and "data-demo-warning" in html
    # Its password changed (admin, changepassword): the page stops naming it at once…
    user = User.objects.get(username=settings.DEMO_USERNAME)
    user.set_password("something-else-entirely")
    user.save()
    html = client.get("/accounts/login/").content.decode()
    assert "data-demo-login" not in html and settings.DEMO_PASSWORD not in html
    # …even when set back to the same password by hand (no longer ensure_demo_user's marker).
    user.set_password(settings.DEMO_PASSWORD)
    user.save()
    assert "data-demo-login" not in client.get("/accounts/login/").content.decode()
    # `make run` again resets it; a deactivated account is not named.
    call_command("ensure_demo_user", stdout=io.StringIO())
    assert "data-demo-login" in client.get("/accounts/login/").content.decode()
    User.objects.filter(username=settings.DEMO_USERNAME).update(is_active=False)
    assert "data-demo-login" not in client.get("/accounts/login/").content.decode()


def test_login_page_names_the_demo_login_in_chinese(client, settings):
    from django.core.management import call_command

    call_command("ensure_demo_user", stdout=io.StringIO())
    html = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "演示账号：" in html and "请在其他人能访问本站之前" in html


def test_the_shell_update_swaps_title_sidebar_and_a_new_panel(client_in, conversation):
    from questionnaires.asks.services import ask_create

    url = reverse("chat:conversation_shell", args=[conversation.pk])
    html = client_in.get(url, {"panel": "0"}).content.decode()
    assert 'id="chat-title"' in html and 'id="conv-nav"' in html and "hx-swap-oob" in html
    assert 'id="side-panel"' not in html  # nothing to show yet
    options = [{"label": "Red", "value": "red"}, {"label": "Blue", "value": "blue"}]
    payload = {"question": "Colour?", "field": "colour", "options": options}
    ask_create(conversation=conversation, payload=payload, turn_id="t1")
    html = client_in.get(url, {"panel": "0"}).content.decode()
    assert 'id="side-panel"' in html and "0 of 1 answered" in html
    html = client_in.get(url, {"panel": "1"}).content.decode()
    assert 'id="side-panel"' not in html  # a tab that shows it keeps its own


def test_the_shell_update_of_someone_elses_conversation_is_404(client_in, other_user):
    from chat.core.services import conversation_create

    theirs = conversation_create(owner=other_user, title="theirs", agent="echo")
    response = client_in.get(reverse("chat:conversation_shell", args=[theirs.pk]))
    assert response.status_code == 404
    assert Conversation.objects.filter(pk=theirs.pk).exists()


def test_the_sidebar_search_finds_message_text(client_in, user):
    from chat.core.services import conversation_create, message_create

    trip = conversation_create(owner=user, title="Weekend", agent="echo")
    message_create(conversation=trip, role="user", content="Somewhere calm by the sea")
    conversation_create(owner=user, title="Other", agent="echo")
    html = client_in.get(reverse("chat:conversation_search"), {"q": "calm sea"}).content.decode()
    assert 'id="conv-nav"' in html and "Weekend" in html and "Other" not in html
    html = client_in.get(reverse("chat:conversation_list"), {"q": "calm"}).content.decode()
    assert "Weekend" in html and ">Other<" not in html  # the same without JavaScript
    response = client_in.get(reverse("chat:conversation_search"), {"current": "x"})
    assert response.status_code == 400


def test_rename_over_htmx_returns_the_list_and_the_open_title(client_in, conversation):
    url = reverse("chat:conversation_rename", args=[conversation.pk])
    data = {"title": "  Road   trip ", "current": str(conversation.pk)}
    response = client_in.post(url, data, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200 and 'id="conv-nav"' in html
    assert 'id="chat-title"' in html and "Road trip" in html and "autofocus" in html
    conversation.refresh_from_db()
    assert conversation.title == "Road trip"


def test_delete_over_htmx_of_the_open_conversation_goes_home(client_in, conversation):
    url = reverse("chat:conversation_delete", args=[conversation.pk])
    page = reverse("chat:conversation", args=[conversation.pk])
    response = client_in.post(url, {"next": page}, headers={"HX-Request": "true"})
    assert response["HX-Redirect"] == "/"
    assert not Conversation.objects.filter(pk=conversation.pk).exists()
