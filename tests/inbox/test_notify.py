"""Notifications: an email when a question starts waiting (only for a person who chose it,
with no tab open on that conversation), the digest, and the signed, single-use, expiring
answer link each carries (replay, tampering, another person, a question that ended)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core import mail, signing
from django.core.management import call_command
from django.utils import timezone

pytestmark = pytest.mark.django_db


@pytest.fixture
def immediate(user):
    from chat.core.preferences import notify_set

    notify_set(user, mode="immediate", email="alice@example.org")
    user.refresh_from_db()
    return user


def _link(body: str) -> str:
    found = re.search(r"http://testserver(/inbox/a/[^\s]+/)", body)
    assert found, body
    return found.group(1)


def test_quiet_by_default(user, ask, django_capture_on_commit_callbacks):
    user.email = "alice@example.org"
    user.save()
    with django_capture_on_commit_callbacks(execute=True):
        ask()
    assert mail.outbox == []


def test_right_away_an_email_names_the_question_and_carries_its_link(
    immediate, ask, django_capture_on_commit_callbacks, settings
):
    settings.SITE_URL = "http://testserver"
    with django_capture_on_commit_callbacks(execute=True):
        message = ask()
    [sent] = mail.outbox
    assert sent.to == ["alice@example.org"]
    assert sent.subject == "A question is waiting for you: How bad is the pain?"
    assert "How bad is the pain?" in sent.body and "“Knee check”" in sent.body
    assert "Your program asks you" in sent.body  # the conversation's agent
    assert "http://testserver/inbox/" in sent.body  # the inbox
    from chat.inbox.models import AnswerLink

    row = AnswerLink.objects.get()
    assert row.wait.ref == f"ask:{message.pk}" and row.owner_id == immediate.pk
    assert _link(sent.body).startswith("/inbox/a/")


def test_no_email_while_a_tab_shows_that_conversation(
    immediate, ask, external, second, django_capture_on_commit_callbacks
):
    from chat.inbox.services import presence_note

    presence_note(user=immediate, conversation_id=external.pk)
    with django_capture_on_commit_callbacks(execute=True):
        ask()
    assert mail.outbox == []
    with django_capture_on_commit_callbacks(execute=True):
        ask(conversation=second)  # a tab of the app is open, but not on this one
    assert len(mail.outbox) == 1


def test_a_tab_that_stopped_polling_no_longer_counts(
    immediate, ask, external, django_capture_on_commit_callbacks
):
    from chat.inbox.models import Presence

    Presence.objects.create(
        user=immediate, conversation_id=external.pk, seen_at=timezone.now() - timedelta(hours=1)
    )
    with django_capture_on_commit_callbacks(execute=True):
        ask()
    assert len(mail.outbox) == 1


def test_no_address_no_email(user, ask, django_capture_on_commit_callbacks):
    from chat.core.preferences import notify_set

    notify_set(user, mode="immediate", email="")
    with django_capture_on_commit_callbacks(execute=True):
        ask()
    assert mail.outbox == []


def test_the_link_opens_its_card_once_then_refuses_a_replay(
    immediate, ask, client, django_capture_on_commit_callbacks, settings
):
    settings.SITE_URL = "http://testserver"
    with django_capture_on_commit_callbacks(execute=True):
        message = ask()
    link = _link(mail.outbox[0].body)
    # the session is gone: log in first, and come back to the link
    first = client.get(link)
    assert first.status_code == 302
    assert first["Location"].startswith("/accounts/login/?next=/inbox/a/")
    client.force_login(immediate)
    opened = client.get(link)
    assert opened.status_code == 302
    assert opened["Location"] == f"/conversations/{message.conversation_id}/#ask-{message.pk}"
    replay = client.get(link)
    assert replay.status_code == 410
    assert 'data-error-code="answer_link_used"' in replay.content.decode()


def test_a_tampered_link_is_refused_and_reaches_no_card(
    immediate, ask, client, django_capture_on_commit_callbacks, settings
):
    from chat.inbox.models import AnswerLink

    settings.SITE_URL = "http://testserver"
    with django_capture_on_commit_callbacks(execute=True):
        ask()
        ask({"question": "Other?", "field": "x", "type": "boolean"}, turn_id="t2")
    link = _link(mail.outbox[0].body)
    other = AnswerLink.objects.order_by("pk").last()
    token = link.split("/")[3]
    forged = signing.dumps({"l": other.pk, "n": "0" * 32}, salt="not-ours")
    client.force_login(immediate)
    for bad in (token[:-2] + "xx", forged, "nonsense", token.upper()):
        response = client.get(f"/inbox/a/{bad}/")
        assert response.status_code == 403, bad
        assert b'data-error-code="answer_link_invalid"' in response.content
    assert not AnswerLink.objects.filter(used_at__isnull=False).exists()
    # a genuine signature over a row with the wrong nonce names no link
    wrong = signing.dumps({"l": other.pk, "n": "0" * 32}, salt="chat.inbox.answer-link")
    response = client.get(f"/inbox/a/{wrong}/")
    assert response.status_code == 404 and b"answer_link_unknown" in response.content


def test_another_person_can_not_use_the_link(
    immediate, other_user, ask, client, django_capture_on_commit_callbacks, settings
):
    from chat.inbox.models import AnswerLink

    settings.SITE_URL = "http://testserver"
    with django_capture_on_commit_callbacks(execute=True):
        ask()
    link = _link(mail.outbox[0].body)
    client.force_login(other_user)
    response = client.get(link)
    assert response.status_code == 403
    assert b'data-error-code="answer_link_other_person"' in response.content
    assert b"Knee check" not in response.content and b"How bad" not in response.content
    assert AnswerLink.objects.get().used_at is None  # still the owner's to use
    client.force_login(immediate)
    assert client.get(link).status_code == 302


def test_the_link_dies_when_the_question_ends(
    immediate, ask, client, django_capture_on_commit_callbacks, settings
):
    from questionnaires.asks.interrupts import ask_resolve

    settings.SITE_URL = "http://testserver"
    with django_capture_on_commit_callbacks(execute=True):
        message = ask()
    link = _link(mail.outbox[0].body)
    ask_resolve(
        conversation=message.conversation,
        ref=f"ask:{message.pk}",
        payload={"value": "none"},
        user=immediate,
        lang="en",
    )
    client.force_login(immediate)
    response = client.get(link)
    assert response.status_code == 410
    assert b'data-error-code="answer_link_question_ended"' in response.content


def test_the_link_expires(immediate, ask, client, django_capture_on_commit_callbacks, settings):
    settings.SITE_URL = "http://testserver"
    with django_capture_on_commit_callbacks(execute=True):
        ask()
    link = _link(mail.outbox[0].body)
    settings.INBOX_LINK_MAX_AGE = -1
    client.force_login(immediate)
    response = client.get(link)
    assert response.status_code == 410 and b"answer_link_expired" in response.content


def test_past_its_deadline_the_link_is_refused(
    immediate, ask, client, django_capture_on_commit_callbacks, settings
):
    from chat.core.models import Wait

    settings.SITE_URL = "http://testserver"
    with django_capture_on_commit_callbacks(execute=True):
        ask()
    link = _link(mail.outbox[0].body)
    Wait.objects.update(deadline=timezone.now() - timedelta(seconds=1))  # not yet reaped
    client.force_login(immediate)
    assert client.get(link).status_code == 410


def test_the_digest_lists_every_waiting_question_once_until_something_new(
    user, ask, second, settings
):
    from chat.core.preferences import notify_set

    settings.SITE_URL = "http://testserver"
    notify_set(user, mode="digest", email="alice@example.org")
    ask()
    ask(conversation=second, turn_id="t2")
    call_command("inbox_digest", stdout=None)
    [sent] = mail.outbox
    assert sent.subject == "2 questions are waiting for you"
    assert sent.body.count("How bad is the pain?") == 2
    assert len(re.findall(r"/inbox/a/", sent.body)) == 2
    from chat.inbox.notify import digest_send

    assert digest_send() == 0  # nothing new since
    ask({"question": "New?", "field": "n", "type": "boolean"}, turn_id="t3")
    assert digest_send() == 1
    assert "New?" in mail.outbox[-1].body


def test_the_digest_is_not_sent_to_people_who_chose_otherwise(user, ask):
    from chat.core.preferences import notify_set
    from chat.inbox.notify import digest_send

    notify_set(user, mode="immediate", email="alice@example.org")
    ask()
    assert digest_send() == 0 and mail.outbox == []


def test_the_email_is_in_the_conversations_language(
    user, django_capture_on_commit_callbacks, settings
):
    from chat.core.preferences import notify_set
    from chat.core.services import conversation_create
    from questionnaires.asks.services import ask_create

    notify_set(user, mode="immediate", email="alice@example.org")
    conversation = conversation_create(owner=user, title="膝盖", agent="external")
    conversation.language = "zh-hans"
    conversation.save()
    with django_capture_on_commit_callbacks(execute=True):
        ask_create(
            conversation=conversation,
            payload={"question": "疼吗？", "field": "p", "type": "boolean"},
            turn_id="t1",
        )
    [sent] = mail.outbox
    assert "疼吗？" in sent.subject and "有一个问题在等你回答" in sent.subject


def test_one_email_for_a_turns_asks_not_one_per_queued_question(
    immediate, ask, django_capture_on_commit_callbacks
):
    from tests.inbox.conftest import YESNO

    with django_capture_on_commit_callbacks(execute=True):
        ask(turn_id="turn_5")
    with django_capture_on_commit_callbacks(execute=True):
        ask(YESNO, turn_id="turn_5")  # asked after the first is answered: queued till then
    assert len(mail.outbox) == 1
