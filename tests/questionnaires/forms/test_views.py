"""The form card in the page, its submit/cancel view, and the composer's pending choice."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from chat.core.models import Message, Role
from questionnaires.models import InteractiveForm
from tests.support.asking import open_form
from tests.support.htmlcheck import assert_inert

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


def _card_html(html: str) -> str:
    start = html.index('<section id="form-')
    return html[start : html.index("</section>", start) + len("</section>")]


def _page(client, conversation) -> str:
    return client.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()


def test_the_card_renders_from_the_render_payload(client_in, conversation, pending):
    html = _page(client_in, conversation)
    form = InteractiveForm.objects.get()
    assert f'id="form-{form.ask_id}"' in html
    assert 'type="radio"' in html and 'type="checkbox"' in html
    assert 'placeholder="Ann"' in html
    assert "Send</button>" in html and "formnovalidate" in html
    assert_inert(_card_html(html), allow_forms=True)


def test_raw_tool_input_never_renders(client_in, conversation, pending):
    # the payload is the only source: drop it and nothing renders, whatever the tool input
    Message.objects.filter(pk=pending.pk).update(metadata={})
    assert "iform-form" not in _page(client_in, conversation)


def test_a_tampered_payload_does_not_render(client_in, conversation, pending):
    payload = Message.objects.get(pk=pending.pk).metadata["render_payloads"]["call_1"]
    bad = {**payload, "questions": [{"question": "x", "input_type": "choice"}]}
    Message.objects.filter(pk=pending.pk).update(metadata={"render_payloads": {"call_1": bad}})
    assert "iform-form" not in _page(client_in, conversation)


def test_html_in_questions_is_escaped(client_in, conversation):
    questions = [{"question": "<script>alert(1)</script>", "options": ["<b>x</b>"]}]
    open_form(conversation, questions=questions)
    html = _page(client_in, conversation)
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert_inert(_card_html(html), allow_forms=True)


def _answer_url(conversation) -> str:
    return reverse("chat:interactive_form_answer", args=[conversation.pk])


def test_submit_without_js_redirects_and_locks_the_card(client_in, conversation, pending):
    data = {
        "tool_use_id": "call_1",
        "status": "answered",
        "answer-color": "red",
        "answer-extras": ["a", "b"],
    }
    response = client_in.post(_answer_url(conversation), data)
    assert response.status_code == 302
    form = InteractiveForm.objects.get()
    assert form.status == "answered"
    assert form.answer["answers"] == {"color": "red", "extras": ["a", "b"], "name": ""}
    html = _page(client_in, conversation)
    assert "Form answered" in html and "iform-answered" in html
    assert "Send</button>" not in html


def test_submit_with_htmx_returns_the_locked_card(client_in, conversation, pending):
    data = {"tool_use_id": "call_1", "status": "answered", "answer-color": "blue"}
    response = client_in.post(_answer_url(conversation), data, headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "iform-answered" in html and "checked" in html


def test_refused_submit_keeps_values_and_names_fields(client_in, conversation, pending):
    data = {"tool_use_id": "call_1", "status": "answered", "answer-name": "Bo"}
    response = client_in.post(_answer_url(conversation), data, headers=HTMX)
    assert response.status_code == 400
    html = response.content.decode()
    assert "needs an answer" in html and 'value="Bo"' in html
    assert InteractiveForm.objects.get().status == "pending"


def test_cancel_button(client_in, conversation, pending):
    response = client_in.post(
        _answer_url(conversation), {"tool_use_id": "call_1", "status": "cancelled"}, headers=HTMX
    )
    assert response.status_code == 200 and "iform-cancelled" in response.content.decode()
    assert json.loads(Message.objects.get(role=Role.TOOL).content)["status"] == "cancelled"


def test_plain_text_while_pending_offers_the_choice_and_keeps_the_text(
    client_in, conversation, pending
):
    url = reverse("chat:message_send", args=[conversation.pk])
    response = client_in.post(url, {"content": "just text"}, headers=HTMX)
    assert response.status_code == 409
    html = response.content.decode()
    assert "just text</textarea>" in html
    assert "Submit the form" in html and "Cancel the form and send this text" in html
    # without JS too
    response = client_in.post(url, {"content": "just text"})
    assert (
        response.status_code == 409
        and "Cancel the form and send this text" in response.content.decode()
    )


def test_cancel_and_send(client_in, conversation, pending):
    url = reverse("chat:interactive_form_cancel_send", args=[conversation.pk])
    response = client_in.post(url, {"content": "Actually, tell me a joke"}, headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'hx-swap-oob="outerHTML"' in html and "iform-cancelled" in html
    result = json.loads(Message.objects.get(role=Role.TOOL).content)
    assert result["status"] == "cancelled" and result["message"] == "Actually, tell me a joke"
    user = Message.objects.filter(role=Role.USER).first()
    assert "Actually, tell me a joke" in user.content


def test_other_users_cannot_answer(client, other_user, conversation, pending):
    client.force_login(other_user)
    response = client.post(
        _answer_url(conversation), {"tool_use_id": "call_1", "status": "cancelled"}
    )
    assert response.status_code == 404
    assert InteractiveForm.objects.get().status == "pending"


def test_api_answer_and_refusals(api, conversation, pending):
    url = f"/api/v1/conversations/{conversation.pk}/messages"
    response = api.post(url, {"role": "user", "content": "hi"})
    assert response.status_code == 409 and response.json()["error"] == "pending_interactive_form"
    bad = {"type": "interactive_form_question", "tool_use_id": "call_1", "answers": {"color": "x"}}
    response = api.post(url, {"role": "user", "interactive_form_answer": bad})
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "interactive_form_answer_invalid"
    assert body["details"]["fields"]["color"]
    good = {**bad, "answers": {"color": "red"}}
    response = api.post(url, {"role": "user", "interactive_form_answer": good})
    assert response.status_code == 201
    response = api.post(url, {"role": "user", "interactive_form_answer": good})
    assert (
        response.status_code == 409 and response.json()["error"] == "interactive_form_not_pending"
    )


def test_the_composer_refusal_stands_while_the_form_waits_and_goes_after(
    client_in, conversation, pending
):
    """Issue 32, defect 5: an open tab asks for the composer's refusal on every card and run
    event; it comes back while the form waits, and empty once it was answered."""
    send = reverse("chat:message_send", args=[conversation.pk])
    refused = client_in.post(send, {"content": "hello?"}, headers=HTMX).content.decode()
    url = reverse("chat:composer_refusal", args=[conversation.pk])
    assert f'hx-get="{url}"' in refused and 'id="composer-refusal"' in refused
    waiting = client_in.get(url, headers=HTMX).content.decode()
    assert 'id="composer-refusal"' in waiting and "A form is waiting" in waiting
    client_in.post(
        _answer_url(conversation), {"tool_use_id": "call_1", "status": "cancelled"}, headers=HTMX
    )
    gone = client_in.get(url, headers=HTMX)
    assert gone.status_code == 200 and gone.content.decode().strip() == ""
