"""The inbox page, its count, answers given in place (the kinds' own answer path: the
record, provenance, 409s) and the notification settings page."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from tests.inbox.conftest import YESNO

pytestmark = pytest.mark.django_db
INBOX = "/inbox/"


def _item(ref: str, client, **params):
    from chat.inbox.selectors import choices_fingerprint, inbox_item

    item = inbox_item(user=client.user, ref=ref)
    return item, choices_fingerprint(item.choices) if item else ""


@pytest.fixture
def signed(client_in, user):
    client_in.user = user
    return client_in


def test_the_page_lists_both_conversations_questions_with_links_to_their_cards(
    signed, ask, inline_card
):
    message = ask()
    page = signed.get(INBOX)
    html = page.content.decode()
    assert page.status_code == 200
    assert "How bad is the pain?" in html and "Lunch" in html
    assert f'href="/conversations/{message.conversation_id}/#ask-{message.pk}"' in html
    newest_first = html.index('data-inbox-item="ask:') < html.index('data-inbox-item="inline:')
    assert newest_first
    assert "Knee check" in html and "Lunch plans" in html
    assert "data-countdown" in html and "Answer by" in html
    assert 'id="inbox-link"' in html and 'class="inbox-count"' in html  # the shell's count


def test_the_home_page_links_the_inbox_with_its_count(signed, ask):
    ask()
    ask(YESNO, turn_id="turn_2")
    html = signed.get("/").content.decode()
    assert f'href="{INBOX}"' in html
    assert 'data-count="2"' in html


def test_empty_state_and_filtered_empty_state(signed, external):
    assert "Nothing is waiting for you." in signed.get(INBOX).content.decode()
    html = signed.get(INBOX, {"c": external.pk}).content.decode()
    assert "No waiting question matches these filters." in html


def test_filters_narrow_the_list_and_bad_ones_are_a_400(signed, ask, inline_card, external):
    ask()
    html = signed.get(INBOX, {"k": "inline"}).content.decode()
    assert "Lunch" in html and "How bad is the pain?" not in html
    html = signed.get(INBOX, {"c": external.pk}).content.decode()
    assert "How bad is the pain?" in html and "Soup" not in html
    for bad in ({"k": "nope"}, {"c": "x"}, {"c": "-1"}):
        response = signed.get(INBOX, bad)
        assert response.status_code == 400
        assert 'data-error-code="inbox_filter_invalid"' in response.content.decode()


def test_another_persons_conversation_as_a_filter_shows_nothing_of_it(signed, other_user, ask):
    from chat.core.services import conversation_create

    theirs = conversation_create(owner=other_user, title="Secret plans", agent="external")
    ask(conversation=theirs)
    for params in ({}, {"c": theirs.pk}):
        html = signed.get(INBOX, params).content.decode()
        assert "How bad is the pain?" not in html and "Secret plans" not in html


def test_an_ask_answered_in_place_is_a_click_on_the_card(signed, ask):
    from questionnaires.asks.models import StructuredAnswer

    message = ask()
    ref = f"ask:{message.pk}"
    _item_, shown = _item(ref, signed)
    response = signed.post(
        reverse("chat:inbox_answer"), {"ref": ref, "choice": "1", "shown": shown}
    )
    assert response.status_code == 302 and response["Location"] == INBOX
    row = StructuredAnswer.objects.get(ask_message=message)
    assert row.value == "mild" and row.source == StructuredAnswer.Source.OPTION_CLICK
    html = signed.get(INBOX).content.decode()
    assert "Answered “How bad is the pain?”: Mild" in html
    assert "Nothing is waiting for you." in html


def test_an_inline_card_answered_in_place_records_chosen_even_for_the_default(signed, inline_card):
    from questionnaires.inline.models import Submission

    ref = f"inline:{inline_card.pk}"
    _item_, shown = _item(ref, signed)
    response = signed.post(
        reverse("chat:inbox_answer"),
        {"ref": ref, "choice": "0", "shown": shown},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert "Answered “Lunch”: Soup" in response.content.decode()
    row = Submission.objects.get(message=inline_card)
    assert row.answers == {"q1": "Soup"}
    envelope = inline_card.conversation.messages.filter(role="user").last().content
    assert '"provenance":"chosen"' in envelope  # a click, never "kept the default"


def test_a_question_answered_elsewhere_is_a_409_and_nothing_is_recorded_twice(signed, ask):
    from questionnaires.asks.models import StructuredAnswer

    message = ask()
    ref = f"ask:{message.pk}"
    _item_, shown = _item(ref, signed)
    post = {"ref": ref, "choice": "0", "shown": shown}
    assert signed.post(reverse("chat:inbox_answer"), post).status_code == 302
    again = signed.post(reverse("chat:inbox_answer"), post, HTTP_HX_REQUEST="true")
    assert again.status_code == 409
    assert 'data-error-code="question_not_waiting"' in again.content.decode()
    assert StructuredAnswer.objects.filter(ask_message=message).count() == 1


def test_changed_choices_bad_choice_and_another_persons_question_are_refused(
    signed, ask, other_user
):
    from chat.core.services import conversation_create
    from questionnaires.asks.models import StructuredAnswer

    message = ask()
    ref = f"ask:{message.pk}"
    _item_, shown = _item(ref, signed)
    url = reverse("chat:inbox_answer")
    stale = signed.post(url, {"ref": ref, "choice": "0", "shown": "0" * 16})
    assert stale.status_code == 409 and b"inbox_choices_changed" in stale.content
    for choice in ("9", "-1", "x", ""):
        bad = signed.post(url, {"ref": ref, "choice": choice, "shown": shown})
        assert bad.status_code == 400 and b"inbox_choice_invalid" in bad.content
    theirs = conversation_create(owner=other_user, title="Theirs", agent="external")
    other = ask(conversation=theirs)
    refused = signed.post(url, {"ref": f"ask:{other.pk}", "choice": "0", "shown": shown})
    assert refused.status_code == 404 and b"question_unknown" in refused.content
    assert not StructuredAnswer.objects.exists()


def test_the_count_poll_records_the_open_tab_and_returns_the_count(signed, ask, external):
    from chat.inbox.services import presence_on

    ask()
    response = signed.get(reverse("chat:inbox_badge"), {"c": external.pk, "after": 0})
    assert response.status_code == 200 and b'data-count="1"' in response.content
    assert presence_on(user_id=signed.user.pk, conversation_id=external.pk)
    assert presence_on(user_id=signed.user.pk)
    assert not presence_on(user_id=signed.user.pk, conversation_id=external.pk + 1)
    assert signed.get(reverse("chat:inbox_badge"), {"c": "x"}).status_code == 400


def test_the_poll_carries_browser_notices_only_for_right_away_and_other_conversations(
    signed, ask, external, second
):
    from chat.core.preferences import notify_set
    from chat.inbox.selectors import inbox_badge

    first = ask()
    url = reverse("chat:inbox_badge")
    assert b"data-notices" not in signed.get(url, {"after": 0}).content  # quiet by default
    notify_set(signed.user, mode="immediate", email="")
    here = signed.get(url, {"c": external.pk, "after": 0})
    assert b"data-notices" not in here.content  # this tab shows that conversation
    elsewhere = signed.get(url, {"c": second.pk, "after": 0}).content.decode()
    start = elsewhere.index('data-notices="') + len('data-notices="')
    raw = elsewhere[start : elsewhere.index('"', start)].replace("&quot;", '"')
    notices = json.loads(raw.replace("&amp;", "&").replace("&#x27;", "'"))
    assert [n["tag"] for n in notices] == [f"ask:{first.pk}"]
    assert notices[0]["url"].startswith("/inbox/a/")
    cursor = inbox_badge(user=signed.user).cursor  # what that poll told the tab
    assert f'after={cursor}"'.encode() in signed.get(url, {"c": second.pk, "after": 0}).content
    later = signed.get(url, {"c": second.pk, "after": cursor})
    assert b"data-notices" not in later.content  # each question is notified once per tab


def test_settings_page_saves_the_choice_and_the_address(signed):
    from chat.core.preferences import notify_mode

    url = reverse("chat:notify_settings")
    page = signed.get(url).content.decode()
    assert 'value="off" ' in page and "checked" in page.split('value="off"')[1][:40]
    assert "data-notify-ask" in page  # the permission button (JS shows it; never on load)
    saved = signed.post(url, {"notify": "digest", "email": "alice@example.org"})
    assert saved.status_code == 302
    signed.user.refresh_from_db()
    assert notify_mode(user_id=signed.user.pk) == "digest"
    assert signed.user.email == "alice@example.org"
    bad = signed.post(url, {"notify": "loud", "email": "not an address"})
    assert bad.status_code == 400
    assert notify_mode(user_id=signed.user.pk) == "digest"
    assert 'value="not an address"' in bad.content.decode()  # what was typed stays


def test_pages_need_a_login(client):
    for url in (INBOX, reverse("chat:notify_settings"), reverse("chat:inbox_badge")):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_signed_out_tabs_poll_stops_instead_of_swapping_in_the_login_page(client):
    for url in (INBOX, reverse("chat:inbox_badge")):
        response = client.get(url, HTTP_HX_REQUEST="true")
        assert response.status_code == 286 and response.content == b""
