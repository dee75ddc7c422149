"""The submit view (htmx, no-JS, JSON), live locking fragments, and the playground."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from chat.core.models import Message
from chat.core.services import message_create
from questionnaires.models import Submission
from tests.support.asking import TRIP
from tests.support.htmlcheck import assert_inert

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def url(card):
    return reverse("chat:questionnaire_submit", args=[card.conversation_id, card.pk])


def form(card, **fields):
    data = {
        "questionnaire_id": f"{card.pk}_q1",
        "answer-1": "Rome",
        "answer-2": ["Car"],
        "answer-3": "typed text",
    }
    data.update(fields)
    return data


def test_htmx_submit_returns_the_locked_card_only(client_in, card_message):
    response = client_in.post(url(card_message), form(card_message), **HX)
    assert response.status_code == 200
    html = response.content.decode()
    assert f'id="msg-{card_message.pk}"' in html and "qcard-answered" in html
    # answered, the card can still be changed (issue 27): other tabs follow its version
    assert 'value="Car" checked' in html and 'data-card-state="v1"' in html
    answer = Message.objects.get(role="user", content__startswith="<questionnaire-response>")
    # the answer arrives through the stream, as in every tab (issue 32, defect 13): nothing
    # out of band that a live refresh could have left without a target
    assert "hx-swap-oob" not in html and f'id="msg-{answer.pk}"' not in html
    assert_inert(html, allow_forms=True)


def test_no_js_submit_redirects_to_the_page(client_in, card_message):
    response = client_in.post(url(card_message), form(card_message))
    answer = Message.objects.get(role="user", content__startswith="<questionnaire-response>")
    assert response.status_code == 302 and response["Location"].endswith(f"#msg-{answer.pk}")
    page = client_in.get(response["Location"]).content.decode()
    assert "qcard-answered" in page and 'class="qanswer"' in page


def test_json_submit(client_in, card_message):
    body = {
        "questionnaire_id": f"{card_message.pk}_q1",
        "answers": {"q1": "Rome", "q2": [], "q3": ""},
    }
    response = client_in.post(url(card_message), body, content_type="application/json")
    assert response.status_code == 201
    assert response.json()["questionnaire_id"] == f"{card_message.pk}_q1"


def _stale(conversation, card):
    message_create(conversation=conversation, role="assistant", content="newer")


def _answered(conversation, card):
    from questionnaires.inline.services import questionnaire_answer

    questionnaire_answer(
        conversation=conversation,
        message_id=card.pk,
        questionnaire_id=f"{card.pk}_q1",
        answers={"q1": "Paris", "q2": [], "q3": ""},
        other_text={},
        user=None,
        lang="en",
    )


def _readonly(conversation, card):
    Message.objects.filter(pk=card.pk).update(readonly=True)


REFUSALS = [
    (_stale, {}, 409, "questionnaire_not_latest"),
    (_answered, {}, 409, "questionnaire_already_submitted"),
    (_readonly, {}, 409, "message_readonly"),
    (None, {"answer-1": "Berlin"}, 400, "answer_invalid"),
]


@pytest.mark.parametrize(("setup", "fields", "status", "code"), REFUSALS)
def test_refusals_htmx_keep_selections_and_show_the_reason(
    client_in, conversation, card_message, setup, fields, status, code
):
    if setup:
        setup(conversation, card_message)
    before = Message.objects.count()
    data = form(card_message, **fields)
    response = client_in.post(url(card_message), data, **HX)
    assert response.status_code == status
    html = response.content.decode()
    assert Message.objects.count() == before
    if code == "questionnaire_already_submitted":
        # a stale tab: the answer that counts replaces the rejected draft, with a notice
        assert "already answered" in html and ">typed text</textarea>" not in html
        assert 'data-card-mode="answered"' in html
        return
    assert f'data-error-code="{code}"' in html and 'role="alert"' in html
    assert ">typed text</textarea>" in html and 'value="Car" checked' in html
    if code == "answer_invalid":
        assert "hx-post" in html and 'class="qcard-field-error"' in html
    else:
        assert "hx-post" not in html


@pytest.mark.parametrize(("setup", "fields", "status", "code"), REFUSALS)
def test_refusals_without_js_render_the_page_with_the_card_error(
    client_in, conversation, card_message, setup, fields, status, code
):
    if setup:
        setup(conversation, card_message)
    response = client_in.post(url(card_message), form(card_message, **fields))
    if code == "questionnaire_already_submitted":
        # Nothing to fix: post, redirect, get (a reload never posts again); the page shows
        # the answer that counts, and why, under the card — once.
        assert response.status_code == 302
        assert response["Location"].endswith(f"#msg-{card_message.pk}")
        html = client_in.get(response["Location"]).content.decode()
        assert "already answered" in html and ">typed text</textarea>" not in html
        assert 'data-error-code="questionnaire_already_submitted"' in html
        assert "already answered" not in client_in.get(response["Location"]).content.decode()
        return
    assert response.status_code == status
    html = response.content.decode()
    assert 'id="composer"' in html
    assert f'data-error-code="{code}"' in html and ">typed text</textarea>" in html


@pytest.mark.parametrize(("setup", "fields", "status", "code"), REFUSALS)
def test_refusals_as_json(client_in, conversation, card_message, setup, fields, status, code):
    if setup:
        setup(conversation, card_message)
    answers = {"q1": fields.get("answer-1", "Rome"), "q2": [], "q3": ""}
    body = {"questionnaire_id": f"{card_message.pk}_q1", "answers": answers}
    response = client_in.post(url(card_message), body, content_type="application/json")
    assert response.status_code == status and response.json()["error"] == code
    if code == "answer_invalid":
        assert response.json()["details"]["errors"][0]["path"] == "q1"


def test_another_users_card_is_404(client, other_user, card_message):
    client.force_login(other_user)
    assert client.post(url(card_message), form(card_message)).status_code == 404
    assert not Submission.objects.exists()


def test_unknown_card_is_404(client_in, card_message):
    assert client_in.post(url(card_message), {"questionnaire_id": "x"}).status_code == 404
    missing = reverse("chat:questionnaire_submit", args=[card_message.conversation_id, 999999])
    assert client_in.post(missing, form(card_message)).status_code == 404


def test_csrf_is_enforced(user, card_message):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post(url(card_message), form(card_message)).status_code == 403
    page = client.get(reverse("chat:conversation", args=[card_message.conversation_id]))
    token = re.search(
        r'name="csrfmiddlewaretoken" value="([^"]+)" form="qc-', page.content.decode()
    ).group(1)
    assert (
        client.post(url(card_message), form(card_message, csrfmiddlewaretoken=token)).status_code
        == 302
    )


def test_fragment_returns_out_of_band_replacement_when_a_live_card_changed(
    client_in, conversation, card_message
):
    fragment = reverse("chat:message_list", args=[conversation.pk])
    last = card_message.seq
    live = f"{card_message.pk}:{_live_state(client_in, card_message)}"
    unchanged = client_in.get(fragment, {"after": last, "live": live}).content.decode()
    assert "hx-swap-oob" not in unchanged  # same state: the user's in-progress input is left alone
    client_in.post(url(card_message), form(card_message))
    html = client_in.get(fragment, {"after": last, "live": live}).content.decode()
    assert f'<article id="msg-{card_message.pk}"' in html
    oob = html[html.index(f'<article id="msg-{card_message.pk}"') :]
    assert 'hx-swap-oob="outerHTML"' in oob.split(">", 1)[0] and "qcard-answered" in oob


def _live_state(client, message):
    page = client.get(reverse("chat:conversation", args=[message.conversation_id])).content
    found = re.search(rf'id="msg-{message.pk}"[^>]*data-card-state="([^"]+)"', page.decode())
    assert found is not None
    return found[1]


def test_an_open_card_whose_message_changed_in_place_is_replaced_in_every_tab(
    client_in, conversation, card_message
):
    """Issue 32 #9: an agent brings its open card's message up to date (the intake's
    summary after a panel edit): tabs showing the old text get the new one out of band."""
    from chat.core.services import message_content_replace

    fragment = reverse("chat:message_list", args=[conversation.pk])
    live = f"{card_message.pk}:{_live_state(client_in, card_message)}"
    message_content_replace(
        message=card_message,
        content=card_message.content.replace("Please answer", "Updated: please answer"),
    )
    html = client_in.get(fragment, {"after": card_message.seq, "live": live}).content.decode()
    oob = html[html.index(f'<article id="msg-{card_message.pk}"') :]
    assert 'hx-swap-oob="outerHTML"' in oob.split(">", 1)[0] and "Updated:" in oob
    assert "qcard-interactive" in oob  # still open, still answerable


def test_page_queries_do_not_grow_with_messages(
    client_in, conversation, django_assert_max_num_queries
):
    for n in range(30):
        message_create(conversation=conversation, role="user", content=f"q {n}")
        message_create(conversation=conversation, role="assistant", content=TRIP)
    page = reverse("chat:conversation", args=[conversation.pk])
    client_in.get(page)
    with django_assert_max_num_queries(17):  # 14 + "developer details" + inbox + repair
        client_in.get(page)


def test_playground(client_in):
    page = reverse("questionnaires:playground")
    html = client_in.get(page).content.decode()
    assert 'hx-trigger="input changed delay:300ms, change"' in html  # a mouse paste too
    full = client_in.post(page, {"content": TRIP, "role": "assistant"}).content.decode()
    assert (
        "Passed" in full
        and "qcard-preview" in full
        and "<td><code>questionnaire</code></td>" in full
    )
    assert 'hx-post="/conversations' not in full  # preview cards never submit
    bad = client_in.post(
        page, {"content": "Hi\n```questionnaire\ntitle: x\n```\n"}, **HX
    ).content.decode()
    assert "<html" not in bad and "Failed with" in bad and "qinvalid" in bad


@pytest.mark.parametrize(
    ("slug", "passed", "kind"),
    [
        ("yaml-single", True, "questionnaire"),
        ("yaml-multi", True, "questionnaire"),
        ("xml-json", True, "questionnaire"),
        ("invalid", False, "invalid"),
    ],
)
def test_playground_loads_an_example_without_javascript(client_in, slug, passed, kind):
    """`?example=` (the "Load an example" GET form) fills the editor and the preview
    server-side: what a browser without JavaScript gets."""
    from questionnaires.inline.playground import EXAMPLES_BY_SLUG

    page = reverse("questionnaires:playground")
    blank = client_in.get(page).content.decode()
    assert 'id="pg-examples"' in blank and 'method="get"' in blank and "Load an example" in blank
    response = client_in.get(page, {"example": slug}, HTTP_ACCEPT_LANGUAGE="en")
    html = response.content.decode()
    assert response.status_code == 200
    editor = re.search(r'<textarea id="pg-content"[^>]*>([^<]*)</textarea>', html)
    assert editor and editor.group(1).strip()
    from html import unescape

    assert unescape(editor.group(1)) == EXAMPLES_BY_SLUG[slug].text("en")
    assert f'<option value="{slug}" selected>' in html
    assert ("Passed: every protocol block is valid." in html) is passed
    assert ("Failed with" in html) is not passed
    assert f"<td><code>{kind}</code></td>" in html


def test_playground_examples_speak_chinese(client_in):
    page = reverse("questionnaires:playground")
    html = client_in.get(page, {"example": "yaml-single"}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    text = html.content.decode()
    assert "载入示例" in text and "哪个套餐适合你？" in text and "Fenced YAML：一道题" in text


def test_playground_refuses_an_unknown_example_and_keeps_the_page(client_in):
    page = reverse("questionnaires:playground")
    response = client_in.get(page, {"example": "nope<script>"})
    html = response.content.decode()
    assert response.status_code == 400
    assert 'data-error-code="unknown_example"' in html and "nope&lt;script&gt;" in html
    assert 'id="pg-content"' in html and "<script>" not in html.split("nope")[1][:20]
    # htmx asking for an example gets the whole page too (its editor changes, not only the
    # preview), and a POST ignores `example`.
    full = client_in.get(page, {"example": "xml-json"}, **HX).content.decode()
    assert 'id="pg-content"' in full and "&lt;questionnaire&gt;{" in full


def test_playground_requires_login(client):
    assert client.get(reverse("questionnaires:playground")).status_code == 302


def test_questionnaire_async_posted_through_the_json_api_renders_and_submits(
    api, client_in, conversation
):
    import json as _json

    from questionnaires.protocol import questionnaire_async
    from tests.support.asking import ASYNC_ARGS

    base = f"/api/v1/conversations/{conversation.pk}/messages"
    call = {
        "id": "call_api",
        "type": "function",
        "function": {"name": "questionnaire_async", "arguments": _json.dumps(ASYNC_ARGS)},
    }
    card = api.post(base, {"role": "assistant", "content": "", "tool_calls": [call]}).json()
    page = reverse("chat:conversation", args=[conversation.pk])
    assert "qcard-pending" in client_in.get(page).content.decode()
    result = _json.dumps(questionnaire_async(ASYNC_ARGS, lang="en"))
    api.post(base, {"role": "tool", "tool_call_id": "call_api", "content": result})
    html = client_in.get(page).content.decode()
    assert 'data-questionnaire-id="call_api"' in html and "qcard-interactive" in html
    submit = reverse("chat:questionnaire_submit", args=[conversation.pk, card["id"]])
    response = client_in.post(submit, {"questionnaire_id": "call_api", "answer-1": "Oslo"}, **HX)
    assert response.status_code == 200 and "qcard-answered" in response.content.decode()
    messages = api.get(base).json()["messages"]
    answer = next(m for m in messages if m["role"] == "user")
    assert answer["segments"][0]["kind"] == "response"
    assert answer["segments"][0]["payload"]["questionnaire_id"] == "call_api"


def test_failed_questionnaire_async_result_renders_parameter_errors(client_in, conversation):
    from tests.support.asking import post_async_card

    post_async_card(conversation, arguments={"questions": [{"type": "bogus"}]})
    html = client_in.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()
    assert "qcard-error" in html and "<code>questions[1].type</code>" in html


def test_card_answer_is_refused_while_a_deferred_form_waits(client_in, conversation):
    """Spec 003: with a form pending, the user must submit or cancel it first."""
    from tests.support.asking import open_form

    message_create(conversation=conversation, role="user", content="Plan my trip")
    form_message, result = open_form(conversation)
    assert result["success"] is True
    card = message_create(conversation=conversation, role="assistant", content=TRIP)
    response = client_in.post(
        url(card),
        data={"questionnaire_id": f"{card.pk}_q1", "answers": {"q1": "Rome"}},
        content_type="application/json",
    )
    assert response.status_code == 409
    assert response.json()["error"] == "pending_interactive_form"
    assert not Submission.objects.exists()
    assert not conversation.messages.filter(role="user", seq__gt=card.seq).exists()


def test_a_machine_client_sees_the_open_card_and_answers_it(conversation, card_message, user):
    """AG-UI's view of an inline card (questionnaires.inline.interrupts): the open
    questionnaire with a schema of its answers, answered through the same service as a
    submit; once answered it is no longer pending."""
    from questionnaires.inline.interrupts import inline_pending, inline_resolve

    ref = f"inline:{card_message.pk}"
    pending = inline_pending(conversation, ref)
    assert pending is not None and pending.message == "Trip plan"
    answers = pending.response_schema["properties"]["answers"]["properties"]
    assert [o["const"] for o in answers["q1"]["oneOf"]][:2] == ["Paris", "Rome"]
    inline_resolve(
        conversation=conversation,
        ref=ref,
        payload={"answers": {"q1": "Rome", "q2": []}, "skipped": ["q3"]},
        user=user,
        lang="en",
    )
    row = Submission.objects.get(message=card_message)
    assert row.answers["q1"] == "Rome" and row.skipped == ["q3"]
    assert inline_pending(conversation, ref) is None
