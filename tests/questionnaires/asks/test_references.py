"""`knowledge_reference` (spec 004 "知识库引用") in the chat: the event, the stored
metadata, and the "Why we ask" disclosure rendered (escaped) after a reload (validation:
`tests/questionnaires/protocol/test_ask_reference.py`)."""

from __future__ import annotations

import re

import pytest

from chat.core.models import Event, Message
from questionnaires.asks.services import ask_create
from tests.support.asking import REFERENCE as GOOD
from tests.support.asking import SPEC_PAYLOAD
from tests.support.htmlcheck import assert_inert

XSS = '<script>alert(1)</script><img src=x onerror="alert(2)"><a href="javascript:alert(3)">x</a>'


@pytest.mark.django_db
def test_ask_with_reference_emits_event_and_persists(external):
    message = ask_create(
        conversation=external, payload=SPEC_PAYLOAD, turn_id="turn_9", reference=GOOD
    )
    assert message is not None
    assert message.metadata["knowledge_reference"] == GOOD
    events = list(Event.objects.filter(conversation=external).order_by("id"))
    names = [e.name for e in events]
    assert names.index("ask_user_options") < names.index("knowledge_reference")
    (event,) = [e for e in events if e.name == "knowledge_reference"]
    assert event.data == {
        "turn_id": "turn_9",
        "message_id": message.pk,
        "field": SPEC_PAYLOAD["field"],
        **GOOD,
    }


@pytest.mark.django_db
def test_ask_without_reference_emits_no_reference(external):
    message = ask_create(conversation=external, payload=SPEC_PAYLOAD, turn_id="turn_1")
    assert "knowledge_reference" not in message.metadata
    assert not Event.objects.filter(conversation=external, name="knowledge_reference").exists()


@pytest.mark.django_db
def test_malformed_reference_is_an_error_event_and_the_question_still_asked(external):
    message = ask_create(
        conversation=external,
        payload=SPEC_PAYLOAD,
        turn_id="turn_1",
        reference={"title": "t", "snippet": "s", "url": "javascript:alert(1)"},
    )
    assert message is not None and "knowledge_reference" not in message.metadata
    names = list(Event.objects.filter(conversation=external).values_list("name", flat=True))
    assert "knowledge_reference" not in names and "ask_user_options" in names
    error = Event.objects.get(conversation=external, name="error")
    assert error.data["code"] == "knowledge_reference_invalid"
    assert error.data["field"] == SPEC_PAYLOAD["field"]
    assert error.data["errors"] == [
        {
            "code": "reference.url_invalid",
            "path": "reference.url",
            "message": "`url` must be an http:// or https:// address.",
            "details": {},
        }
    ]


@pytest.mark.django_db
def test_invalid_ask_with_reference_is_one_ask_error(external):
    assert ask_create(conversation=external, payload={"field": "f"}, reference=GOOD) is None
    assert list(Event.objects.filter(conversation=external).values_list("name", flat=True)) == [
        "error"
    ]
    assert not Message.objects.filter(conversation=external).exists()


def _article(html: str, message_id: int) -> str:
    match = re.search(rf'<article id="msg-{message_id}".*?</article>', html, re.S)
    assert match, "message not rendered"
    return match.group(0)


@pytest.mark.django_db
def test_disclosure_rendered_on_reload_and_inert(client_in, external):
    reference = {**GOOD, "title": XSS, "snippet": "line one\n" + XSS, "source": XSS}
    message = ask_create(
        conversation=external, payload=SPEC_PAYLOAD, turn_id="turn_1", reference=reference
    )
    html = client_in.get(f"/conversations/{external.pk}/").content.decode()
    article = _article(html, message.pk)
    assert '<details class="ask-reference"' in article
    assert "<summary>Why we ask</summary>" in article
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in article
    assert "line one<br>" in article
    assert 'href="https://example.org/knee#swelling"' in article
    assert_inert(article, allow_forms=True)
    # The live path (htmx fetch after message_done) renders the same disclosure.
    fragment = client_in.get(
        f"/conversations/{external.pk}/fragment?after={message.seq - 1}"
    ).content.decode()
    assert "Why we ask" in fragment
    assert_inert(_article(fragment, message.pk), allow_forms=True)


@pytest.mark.django_db
def test_source_without_url_is_plain_text_and_no_reference_no_disclosure(client_in, external):
    message = ask_create(
        conversation=external,
        payload=SPEC_PAYLOAD,
        turn_id="turn_1",
        reference={"title": "T", "snippet": "S", "source": "Clinic intake guide"},
    )
    html = client_in.get(f"/conversations/{external.pk}/").content.decode()
    details = _article(html, message.pk).split('<details class="ask-reference"')[1]
    assert re.search(r"Source:\s+Clinic intake guide\s+</p>", details)
    assert "<a " not in details
    other = ask_create(
        conversation=external, payload={**SPEC_PAYLOAD, "field": "g"}, turn_id="turn_2"
    )
    html = client_in.get(f"/conversations/{external.pk}/").content.decode()
    assert "ask-reference" not in _article(html, other.pk)


@pytest.mark.django_db
def test_tampered_metadata_renders_no_broken_disclosure(client_in, external):
    message = ask_create(
        conversation=external, payload=SPEC_PAYLOAD, turn_id="turn_1", reference=GOOD
    )
    message.metadata["knowledge_reference"] = {"title": "t", "url": "javascript:alert(1)"}
    message.save(update_fields=["metadata"])
    html = client_in.get(f"/conversations/{external.pk}/").content.decode()
    article = _article(html, message.pk)
    assert "ask-reference" not in article and 'data-widget="buttons"' in article
