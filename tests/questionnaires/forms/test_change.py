"""Issue 27 on deferred forms: provenance in the tool result, and "Change answer" once the
form's run has finished (a new user message with amends; exactly once per version)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from chat.core.errors import ChatError
from chat.core.models import Message, Role, Run
from questionnaires.forms.answers import interactive_form_answer, interactive_form_change
from questionnaires.models import InteractiveForm

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
ANSWERS = {"color": "red", "extras": [], "name": "Bo"}


def answered(conversation, pending):
    form = InteractiveForm.objects.get()
    interactive_form_answer(
        conversation=conversation,
        payload={
            "type": "interactive_form_question",
            "tool_use_id": form.tool_use_id,
            "answers": ANSWERS,
        },
    )
    Run.objects.filter(pk=form.run_id).update(status="finished")
    return InteractiveForm.objects.get()


def test_the_tool_result_says_how_each_answer_came_to_be(conversation, pending):
    answered(conversation, pending)
    tool = Message.objects.get(role=Role.TOOL)
    entries = json.loads(tool.content)["answers"]
    assert [e["provenance"] for e in entries] == ["chosen", "default", "free_text"]


def test_a_change_after_the_run_posts_amends_once_per_version(conversation, pending):
    form = answered(conversation, pending)
    first = form.answer_message_id
    message = interactive_form_change(
        conversation=conversation,
        ask_id=form.ask_id,
        version=1,
        payload={"answers": {**ANSWERS, "color": "blue"}},
    )
    envelope = json.loads(message.content)
    assert envelope["amends"] == first and envelope["version"] == 2
    assert [e["provenance"] for e in envelope["answers"]] == ["amended", "default", "free_text"]
    assert message.display_content.splitlines()[1] == "- Colour?: blue (was: red)"
    with pytest.raises(ChatError) as stale:
        interactive_form_change(
            conversation=conversation,
            ask_id=form.ask_id,
            version=1,
            payload={"answers": {**ANSWERS, "color": "red"}},
        )
    assert stale.value.code == "questionnaire_version_stale" and stale.value.status == 409
    form.refresh_from_db()
    assert form.version == 2 and form.earlier[0]["message_id"] == first


def test_no_change_while_the_run_works_or_of_nothing(conversation, pending):
    form = answered(conversation, pending)
    with pytest.raises(ChatError) as same:
        interactive_form_change(
            conversation=conversation, ask_id=form.ask_id, version=1, payload={"answers": ANSWERS}
        )
    assert same.value.code == "answer_unchanged"
    Run.objects.filter(pk=form.run_id).update(status="running")
    with pytest.raises(ChatError) as busy:
        interactive_form_change(
            conversation=conversation,
            ask_id=form.ask_id,
            version=1,
            payload={"answers": {**ANSWERS, "color": "blue"}},
        )
    assert busy.value.code == "form_run_active" and busy.value.status == 409


def test_change_answer_over_htmx(client_in, conversation, pending):
    form = answered(conversation, pending)
    page = client_in.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()
    assert "Change answer" in page
    url = reverse("chat:interactive_form_change", args=[conversation.pk, form.ask_id])
    reopened = client_in.get(url, headers=HTMX).content.decode()
    assert 'name="version" value="1"' in reopened and "Send the change" in reopened
    data = {"version": "1", "answer-color": "blue", "answer-name": "Bo"}
    assert client_in.post(url, data, headers=HTMX).status_code == 200
    stale = client_in.post(url, {**data, "answer-color": "red"}, headers=HTMX)
    assert stale.status_code == 409 and "Changed</span>" in stale.content.decode()
    bad = client_in.post(url, {**data, "version": "zz"}, headers=HTMX)
    assert bad.status_code == 400
