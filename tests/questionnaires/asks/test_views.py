from __future__ import annotations

import pytest

from questionnaires.asks.models import StructuredAnswer
from tests.support.asking import options as _options
from tests.support.htmlcheck import assert_inert

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


@pytest.fixture
def page(client_in, external):
    def get():
        response = client_in.get(f"/conversations/{external.pk}/")
        assert response.status_code == 200
        return response.content.decode()

    return get


@pytest.mark.parametrize(
    ("payload", "widget", "marker"),
    [
        (
            {"options": _options(3)},
            "buttons",
            'class="qcard-opt ask-option" name="value" value="v2"',
        ),
        ({"options": _options(7)}, "dropdown", '<option value="v6">L6</option>'),
        ({"type": "scale", "min": 1, "max": 9, "min_label": "low"}, "slider", 'type="range"'),
        ({"type": "boolean"}, "boolean", 'name="value" value="false"'),
        ({"type": "free_text_only"}, "free_text", 'name="text"'),
    ],
)
def test_widget_per_shape(page, make_ask, payload, widget, marker):
    make_ask({"question": "Q?", "field": "f", **payload})
    html = page()
    assert f'data-widget="{widget}"' in html and marker in html
    assert 'value="skip"' in html  # Skip on every ask
    assert "<legend" in html
    assert_inert(html[html.index('<section id="ask-') :], allow_forms=True)


def test_one_question_of_a_turn_is_open_at_a_time(client_in, external, page, make_ask):
    """Two asks in one turn: the second waits, hidden, until the first is answered; its
    refresh then brings it open (a tab that showed it queued gets it again)."""
    first = make_ask({"question": "First?", "field": "a", "options": _options(2)})
    second = make_ask({"question": "Second?", "field": "b", "options": _options(2)})
    html = page()
    assert f'id="ask-{second.pk}"' in html and 'data-state="waiting"' in html
    assert html.count("<form") - html.count('id="composer"') >= 1
    refresh = f"/conversations/{external.pk}/asks/{second.pk}?queued=1"
    assert client_in.get(refresh, headers=HX).status_code == 204  # still waiting
    client_in.post(f"/conversations/{external.pk}/asks/{first.pk}/answer", {"value": "v1"})
    opened = client_in.get(refresh, headers=HX)
    assert opened.status_code == 200 and 'data-state="open"' in opened.content.decode()
    assert client_in.get(refresh.split("?")[0], headers=HX).status_code == 204


def test_free_text_entry_unless_turned_off(page, make_ask):
    make_ask({"question": "Q?", "field": "f", "options": _options(2), "allow_free_text": False})
    assert "Or in your own words" not in page()
    make_ask({"question": "Q?", "field": "g", "options": _options(2)}, turn_id="turn_2")  # default
    assert "Or in your own words" in page()


def test_slider_shows_current_value(page, make_ask):
    make_ask({"question": "Q?", "field": "s", "type": "scale", "min": 0, "max": 10})
    html = page()
    assert 'value="5"' in html and '<output id="ask-' in html and ">5</output>" in html


def test_htmx_answer_returns_locked_widget(client_in, external, make_ask):
    ask = make_ask()
    url = f"/conversations/{external.pk}/asks/{ask.pk}/answer"
    response = client_in.post(url, {"action": "option", "value": "mild"}, headers=HX)
    assert response.status_code == 200
    widget, _sep, panel = response.content.decode().partition('<div id="state-panel-body"')
    # Folded to its question with an "Answered" chip; inside, the chosen option marked.
    assert 'data-state="answered"' in widget and "<details" in widget
    assert 'class="qcard-opt is-chosen"' in widget and "轻微疼痛" in widget
    # locked: the only form left is "Change answer" (issue 27), behind a disclosure
    assert widget.count("<form") == 1 and "/change" in widget
    # The state panel's body comes along out of band: this tab never misses the slot.
    assert 'hx-swap-oob="innerHTML"' in panel and 'data-field="pain_level"' in panel
    assert StructuredAnswer.objects.get().source == "user_option_click"


def test_no_js_answer_redirects_and_errors_keep_text(client_in, external, make_ask):
    ask = make_ask({"question": "Q?", "field": "f", "type": "free_text_only"})
    url = f"/conversations/{external.pk}/asks/{ask.pk}/answer"
    response = client_in.post(url, {"action": "free_text", "text": "   "})
    assert response.status_code == 400
    assert "Type an answer first." in response.content.decode()
    long = "x" * 2001
    response = client_in.post(url, {"action": "free_text", "text": long}, headers=HX)
    assert response.status_code == 413 and long in response.content.decode()
    response = client_in.post(url, {"action": "free_text", "text": "stairs hurt"})
    assert response.status_code == 302
    row = StructuredAnswer.objects.get()
    assert (row.source, row.value, row.raw_text) == ("user_free_text", "stairs hurt", "stairs hurt")


def test_a_stale_page_answering_an_answered_ask_without_js_is_redirected_with_why(
    client_in, external, make_ask
):
    """Bug 1/2 without JavaScript: post, redirect, get — a reload never posts again, and
    the page says (once, under the question) that it was already answered."""
    ask = make_ask()
    url = f"/conversations/{external.pk}/asks/{ask.pk}/answer"
    assert client_in.post(url, {"action": "option", "value": "mild"}).status_code == 302
    response = client_in.post(url, {"action": "option", "value": "severe"})
    assert response.status_code == 302 and response["Location"].endswith(f"#msg-{ask.pk}")
    page = client_in.get(response["Location"]).content.decode()
    assert "already been answered" in page and 'class="msg-notice"' in page
    assert "already been answered" not in client_in.get(response["Location"]).content.decode()
    assert StructuredAnswer.objects.get().value == "mild"


def test_skip_and_superseded(client_in, external, make_ask):
    first = make_ask(turn_id="a")
    make_ask({"question": "Q2", "field": "g", "type": "boolean"}, turn_id="b")
    url = f"/conversations/{external.pk}/asks/{first.pk}/answer"
    response = client_in.post(url, {"action": "skip"}, headers=HX)
    assert response.status_code == 409
    assert "no longer open" in response.content.decode()


def test_fragment_and_ownership(client, other_user, client_in, external, make_ask):
    ask = make_ask()
    assert client_in.get(f"/conversations/{external.pk}/asks/{ask.pk}").status_code == 204
    client.force_login(other_user)
    assert client.get(f"/conversations/{external.pk}/asks/{ask.pk}").status_code == 404
    url = f"/conversations/{external.pk}/asks/{ask.pk}/answer"
    assert client.post(url, {"value": "mild"}).status_code == 404


def test_api_structured_answer(api, external, make_ask):
    make_ask()
    body = {
        "type": "structured_answer",
        "field": "pain_level",
        "value": "mild",
        "display_text": "轻微疼痛",
        "source": "user_option_click",
        "turn_id": "turn_1",
    }
    url = f"/api/v1/conversations/{external.pk}/answers"
    response = api.post(url, body)
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["answer"]["value"] == "mild" and data["consultation_state"] == {
        "pain_level": "mild"
    }
    assert data["missing_slots"] == [] and data["confidence"] == {"pain_level": 1.0}
    again = api.post(url, body)
    assert again.status_code == 200 and again.json()["created"] is False
    different = api.post(url, {**body, "value": "none"})
    assert different.status_code == 409  # as a card answers a second submit
    assert different.json()["error"] == "questionnaire_already_submitted"
    assert StructuredAnswer.objects.get().value == "mild"
    bad = api.post(url, {**body, "turn_id": "x"})
    assert bad.status_code == 404 and bad.json()["error"] == "ask_not_found"


def test_api_refuses_values_outside_options(api, external, make_ask):
    ask = {"question": "Q", "field": "f", "options": _options(2), "allow_free_text": False}
    make_ask(ask, turn_id="t")
    url = f"/api/v1/conversations/{external.pk}/answers"
    response = api.post(url, {"field": "f", "turn_id": "t", "value": "zz"})
    assert response.status_code == 400 and response.json()["error"] == "answer_value_invalid"


def test_state_panel_and_edit(client_in, external, make_ask):
    ask = make_ask()
    client_in.post(
        f"/conversations/{external.pk}/asks/{ask.pk}/answer",
        {"action": "free_text", "text": "有点轻微疼痛"},
        headers=HX,
    )
    html = client_in.get(f"/conversations/{external.pk}/state").content.decode()
    assert "轻微疼痛" in html and "70% sure" in html and "有点轻微疼痛" in html
    assert "<aside" not in html  # the body only: the aside (and its stream trigger) stays
    page = client_in.get(f"/conversations/{external.pk}/").content.decode()
    assert 'hx-trigger="sse:consultation_state_patch"' in page
    response = client_in.post(
        f"/conversations/{external.pk}/state/pain_level", {"value": "severe"}, headers=HX
    )
    assert response.status_code == 200 and "明显疼痛" in response.content.decode()
    assert StructuredAnswer.objects.last().source == "user_edit"
    bad = client_in.post(f"/conversations/{external.pk}/state/nope", {"value": "x"}, headers=HX)
    assert bad.status_code == 404


def test_admin_shows_consultation_state(client, django_user_model, external, make_ask):
    from questionnaires.asks.services import ask_answer

    make_ask()
    ask_answer(
        conversation=external,
        answer={
            "field": "pain_level",
            "turn_id": "turn_1",
            "source": "user_free_text",
            "raw_text": "有点轻微疼痛",
        },
    )
    admin = django_user_model.objects.create_superuser("root", password="pw-root-123")
    client.force_login(admin)
    html = client.get(f"/admin/chat/conversation/{external.pk}/change/").content.decode()
    assert "Consultation state" in html and "轻微疼痛" in html and "有点轻微疼痛" in html


def test_open_ask_refresh_is_204_so_typed_text_survives(client_in, external, make_ask):
    """Open tabs re-request live widgets on every new message; an ask that is still open
    and unanswered answers 204, and htmx leaves the widget (and its typed text) alone."""
    ask = make_ask()
    url = f"/conversations/{external.pk}/asks/{ask.pk}"
    assert client_in.get(url, headers=HX).status_code == 204
    client_in.post(url + "/answer", {"action": "option", "value": "mild"}, headers=HX)
    response = client_in.get(url, headers=HX)
    assert response.status_code == 200 and 'data-state="answered"' in response.content.decode()


def test_slot_edit_error_without_js_renders_the_page(client_in, external, make_ask):
    ask = make_ask()
    client_in.post(f"/conversations/{external.pk}/asks/{ask.pk}/answer", {"value": "mild"})
    long = "x" * 2001
    response = client_in.post(f"/conversations/{external.pk}/state/pain_level", {"text": long})
    assert response.status_code == 413
    html = response.content.decode()
    assert "<html" in html and 'role="alert"' in html and 'id="state-panel"' in html


def test_an_ask_answer_waits_while_a_form_is_pending(api, external, make_ask):
    """Spec 003: a pending deferred form refuses other input, an ask's answer included."""
    from tests.support.asking import open_form

    make_ask()
    _message, result = open_form(external)
    assert result["success"] is True
    body = {
        "type": "structured_answer",
        "field": "pain_level",
        "value": "mild",
        "source": "user_option_click",
        "turn_id": "turn_1",
    }
    response = api.post(f"/api/v1/conversations/{external.pk}/answers", body)
    assert response.status_code == 409
    assert response.json()["error"] == "pending_interactive_form"
    assert not StructuredAnswer.objects.exists()


def test_slot_edits_wait_while_a_form_is_pending(api, client_in, external, make_ask):
    """Issue 25: a slot edit — `source: user_edit` over the API, or the state panel's edit —
    is refused like every other input while a deferred form waits (409
    `pending_interactive_form`), the panel showing the same two ways out; the state is
    unchanged. Once the form is cancelled, the same edit goes through."""
    from tests.support.asking import open_form

    ask = make_ask()
    client_in.post(f"/conversations/{external.pk}/asks/{ask.pk}/answer", {"value": "mild"})
    _message, result = open_form(external)
    before = StructuredAnswer.objects.count()
    body = {"field": "pain_level", "value": "severe", "source": "user_edit", "turn_id": ""}
    response = api.post(f"/api/v1/conversations/{external.pk}/answers", body)
    assert response.status_code == 409
    assert response.json()["error"] == "pending_interactive_form"
    assert response.json()["details"]["ask_id"] == result["ask_id"]
    url = f"/conversations/{external.pk}/state/pain_level"
    panel = client_in.post(url, {"value": "severe"}, headers=HX)
    html = panel.content.decode()
    assert panel.status_code == 409
    assert f'href="#form-{result["ask_id"]}"' in html  # Submit the form
    assert 'name="status" value="cancelled"' in html and "Cancel the form" in html
    page = client_in.post(url, {"value": "severe"})  # without JavaScript: the page
    assert page.status_code == 409 and "Cancel the form" in page.content.decode()
    assert StructuredAnswer.objects.count() == before
    external.refresh_from_db()
    assert external.state["consultation_state"]["pain_level"] == "mild"

    cancel = {"status": "cancelled", "tool_use_id": "call_1", "ask_id": result["ask_id"]}
    client_in.post(f"/conversations/{external.pk}/forms/answer", cancel, headers=HX)
    assert client_in.post(url, {"value": "severe"}, headers=HX).status_code == 200
    external.refresh_from_db()
    assert external.state["consultation_state"]["pain_level"] == "severe"


def test_named_option_icons_are_drawn_and_emoji_stay_text():
    from questionnaires.asks.presenter import option_views

    views = option_views(
        {
            "question": "Pain?",
            "field": "pain",
            "options": [
                {"label": "No pain", "value": "none", "icon": "check"},
                {"label": "Some", "value": "some", "icon": "😐"},
                {"label": "Bad", "value": "bad", "icon": "<b>x</b>"},
            ],
        }  # type: ignore[typeddict-item]
    )
    assert views[0].icon == '<span class="i i-check" aria-hidden="true"></span>'
    assert views[1].icon == "😐"
    assert views[2].icon == "<b>x</b>" and not hasattr(views[2].icon, "__html__")  # escaped


def test_the_bundled_definitions_use_drawn_icons_not_emoji():
    from questionnaires.asks.definitions import definitions_all
    from questionnaires.asks.presenter import ICONS

    icons = {
        option.get("icon", "")
        for definition in definitions_all().values()
        for slot in definition.slots
        for option in slot.ask.get("options", [])
    }
    assert icons - {""} <= ICONS
