"""The elicitation card in the page and its answer view (no JS and htmx)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from questionnaires.models import Elicitation
from tests.support.asking import open_elicitation
from tests.support.htmlcheck import assert_inert

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
GOOD = {"action": "accept", "answer-name": "Ann", "answer-age": "30"}


def _page(client, conversation) -> str:
    return client.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()


def _card(html: str, row) -> str:
    start = html.index(f'<section id="elic-{row.pk}"')
    return html[start : html.index("</section>", start) + len("</section>")]


def _url(row) -> str:
    return reverse("chat:elicitation_answer", args=[row.conversation_id, row.pk])


def test_the_card_shows_the_server_message_and_every_input(client_in, conversation, pending):
    card = _card(_page(client_in, conversation), pending)
    assert '<span class="qcard-source">demo · MCP</span>' in card and "Who is coming?" in card
    assert "Your name" in card and "As on the badge" in card  # title and description
    for kind in (
        'type="text"',
        'type="number"',
        'type="checkbox"',
        'type="radio"',
        'type="date"',
        'type="email"',
        'min="0"',
        'max="150"',
        "required",
    ):
        assert kind in card, kind
    assert 'value="accept"' in card and 'value="decline"' in card and 'value="cancel"' in card
    assert 'data-elic-expires="' in card and "Answer by" in card
    assert_inert(card, allow_forms=True)
    assert 'data-card-state="e"' in _page(client_in, conversation)


def test_html_from_the_server_is_escaped(client_in, conversation):
    schema = {"type": "object", "properties": {"x": {"type": "string", "title": "<img src=x>"}}}
    row = open_elicitation(
        conversation,
        server_name="<b>evil</b>",
        message="<script>1</script>",
        requested_schema=schema,
    )
    card = _card(_page(client_in, conversation), row)
    assert "<script>1" not in card and "&lt;script&gt;" in card and "<img" not in card
    assert_inert(card, allow_forms=True)


def test_submit_without_js_redirects_and_locks_with_the_answers(client_in, conversation, pending):
    response = client_in.post(_url(pending), GOOD)
    assert response.status_code == 302 and response["Location"].endswith(f"#elic-{pending.pk}")
    assert Elicitation.objects.get().status == "accepted"
    card = _card(_page(client_in, conversation), pending)
    assert "Answered" in card and "<dt>Your name</dt><dd>Ann</dd>" in card
    assert "<form" not in card


def test_invalid_submit_without_js_shows_the_page_with_errors_and_input(client_in, pending):
    response = client_in.post(
        _url(pending), {"action": "accept", "answer-name": "Zed", "answer-age": "x"}
    )
    assert response.status_code == 400
    card = _card(response.content.decode(), pending)
    assert 'value="Zed"' in card and "Enter a number." in card and 'aria-invalid="true"' in card
    assert Elicitation.objects.get().status == "pending"


def test_htmx_submit_swaps_the_card(client_in, pending):
    response = client_in.post(_url(pending), {**GOOD, "answer-age": "200"}, headers=HTMX)
    assert response.status_code == 400 and "Enter 150 or less." in response.content.decode()
    response = client_in.post(_url(pending), GOOD, headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith(f'<section id="elic-{pending.pk}"') and "Ann" in html


@pytest.mark.parametrize(("action", "label"), [("decline", "Declined"), ("cancel", "Cancelled")])
def test_decline_and_cancel(client_in, pending, action, label):
    response = client_in.post(_url(pending), {"action": action}, headers=HTMX)
    assert response.status_code == 200 and label in response.content.decode()
    assert Elicitation.objects.get().action == action


def test_second_answer_is_409_and_the_card_comes_back_locked(client_in, pending):
    client_in.post(_url(pending), {"action": "decline"})
    response = client_in.post(_url(pending), GOOD, headers=HTMX)
    assert response.status_code == 409
    html = response.content.decode()
    assert "already answered" in html and "Declined" in html and "<form" not in html


def test_another_users_ids_are_404_and_change_nothing(client, other_user, conversation, pending):
    client.force_login(other_user)
    assert client.post(_url(pending), GOOD).status_code == 404
    mine = reverse("chat:elicitation_answer", args=[conversation.pk, 99999])
    assert client.post(mine, GOOD).status_code == 404
    assert Elicitation.objects.get().status == "pending"


@pytest.mark.parametrize(
    "body",
    [
        {"action": "accept\x00", "answer-name": "Ann"},
        {"action": "accept", "answer-name": "A\x00nn", "answer-age": "1"},
        {"action": ["accept", "decline"], "answer-age": ["1", "x"]},
        {"action": "explode"},
        {"action": "accept", "answer-name": "x" * 20_000, "answer-age": "1"},
        {"action": "accept", "answer-age": "1e999"},
        {"action": "accept", "answer-tags": ["z"] * 500, "answer-name": "A", "answer-age": "1"},
    ],
)
def test_hostile_bodies_are_4xx_and_store_nothing(client_in, pending, body):
    response = client_in.post(_url(pending), body)
    assert 400 <= response.status_code < 500
    assert Elicitation.objects.get().status == "pending"


def test_huge_and_broken_bodies_are_refused(client_in, pending):
    huge = client_in.post(_url(pending), "x" * 3_000_000, content_type="text/plain")
    assert huge.status_code in (400, 413)
    broken = client_in.post(
        _url(pending), b"--x\r\nbroken", content_type="multipart/form-data; boundary=x"
    )
    assert broken.status_code == 400
    assert Elicitation.objects.get().status == "pending"


def test_the_composer_is_refused_while_a_card_waits(client_in, conversation, pending):
    url = reverse("chat:message_send", args=[conversation.pk])
    response = client_in.post(url, {"content": "hello"}, headers=HTMX)
    assert response.status_code == 409 and "demo" in response.content.decode()
    assert not conversation.messages.filter(role="user").exists()


def test_url_mode_shows_the_host_in_punycode_and_opens_only_on_consent(
    client_in, conversation, pending_url
):
    card = _card(_page(client_in, conversation), pending_url)
    assert '<strong class="elic-host">xn--bcher-kva.example</strong>' in card
    # Shown as a browser serialises it (WHATWG): what Open navigates to, byte for byte.
    assert "pay?x=%3Cb%3E" in card and 'target="_blank"' in card and "noopener" in card
    assert "<a " not in card  # never a plain link: Open is a consented POST
    # "noreferrer" on the form would make the browser send Origin: null: CSRF failure.
    assert 'rel="noopener"' in card and "noreferrer" not in card
    response = client_in.post(_url(pending_url), {"action": "accept"})
    # Not a redirect: the CSP's form-action 'self' would block one to another origin.
    assert response.status_code == 200 and response["Referrer-Policy"] == "no-referrer"
    opening = response.content.decode()
    assert '<meta http-equiv="refresh" content="0;url=https://' in opening
    assert "url=https://xn--bcher-kva.example/pay?x=%3Cb%3E" in opening
    assert "<b>" not in opening.split("<body", 1)[1]
    assert Elicitation.objects.get().status == "accepted"
    assert "waiting for the server" in _card(_page(client_in, conversation), pending_url)


def test_open_tabs_get_the_locked_card_out_of_band(client_in, conversation, pending):
    live = f"{pending.message_id}:e"
    url = reverse("chat:message_list", args=[conversation.pk])
    after = conversation.messages.order_by("-seq").first().seq
    nothing = client_in.get(url, {"after": after, "live": live}).content.decode()
    assert "elic-" not in nothing
    client_in.post(_url(pending), {"action": "cancel"})
    html = client_in.get(url, {"after": after, "live": live}).content.decode()
    assert 'hx-swap-oob="outerHTML"' in html and "Cancelled" in html


def test_an_expired_card_keeps_what_was_typed(client_in, conversation, pending):
    from questionnaires.drafts import draft_save
    from questionnaires.elicitations.services import elicitations_expire_due

    draft_save(
        user_id=conversation.owner_id,
        conversation=conversation,
        card=f"elic:{pending.pk}",
        pairs=[("answer-name", ["Half typed"])],
    )
    assert 'value="Half typed"' in _card(_page(client_in, conversation), pending)
    elicitations_expire_due(ids=[pending.pk])
    card = _card(_page(client_in, conversation), pending)
    assert "Expired" in card and "<dd>Half typed</dd>" in card and "<form" not in card
