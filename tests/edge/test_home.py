"""The chat-first home page: the composer's first send creates the conversation."""

from __future__ import annotations

import pytest
from django.urls import reverse

from chat.core.models import Conversation, Message

pytestmark = pytest.mark.django_db
CREATE = reverse("chat:conversation_create")


def _only(user) -> Conversation:
    return Conversation.objects.get(owner=user)


def test_the_home_page_opens_on_a_composer_with_the_intake_chosen(client_in):
    html = client_in.get("/").content.decode()
    assert 'name="content"' in html and 'id="id_agent"' in html
    assert '<option value="intake" selected' in html


def test_developer_agents_are_only_offered_to_staff(client_in, user):
    html = client_in.get("/").content.decode()
    assert 'value="external"' not in html and 'value="echo"' not in html
    user.is_staff = True
    user.save()
    html = client_in.get("/").content.decode()
    assert 'value="external"' in html and 'value="echo"' in html


def test_the_first_send_creates_the_conversation_with_that_message(client_in, user):
    response = client_in.post(CREATE, {"agent": "echo", "content": "Plan a **trip**"})
    conversation = _only(user)
    assert response["Location"] == reverse("chat:conversation", args=[conversation.pk])
    assert conversation.title == "Plan a trip"  # named after the message
    texts = list(conversation.messages.order_by("seq").values_list("role", "content"))
    assert texts[0] == ("user", "Plan a **trip**")
    assert texts[1][0] == "assistant"  # the agent answered it


def test_an_empty_send_to_an_agent_that_waits_for_text_is_refused(client_in, user):
    response = client_in.post(CREATE, {"agent": "echo", "content": "   "})
    assert response.status_code == 400
    assert "Type a message first." in response.content.decode()
    assert not Conversation.objects.filter(owner=user).exists()


def test_a_too_long_first_message_is_413_and_kept(client_in, user, settings):
    settings.CHAT_MAX_MESSAGE_CHARS = 10
    response = client_in.post(CREATE, {"agent": "echo", "content": "x" * 11})
    assert response.status_code == 413
    assert "x" * 11 in response.content.decode()
    assert not Conversation.objects.filter(owner=user).exists()


def test_the_tour_opens_with_its_first_question_without_a_message(client_in, user):
    client_in.post(CREATE, {"agent": "scripted", "content": ""})
    conversation = _only(user)
    assert conversation.title == "Protocol tour"
    first = conversation.messages.order_by("seq").first()
    assert first is not None and first.role == "assistant" and "protocol tour" in first.content
    assert not conversation.messages.filter(role="user").exists()


def test_an_opened_tour_moves_one_step_per_answer(client_in, user):
    from chat.runs.turn import scripted_step_index

    client_in.post(CREATE, {"agent": "scripted"})
    conversation = _only(user)
    client_in.post(reverse("chat:message_send", args=[conversation.pk]), {"content": "hi"})
    run = conversation.runs.order_by("-id").first()
    assert run is not None and run.trigger_message is not None
    assert scripted_step_index(run) == 1  # step 0 opened the conversation


def test_the_intake_opens_on_its_topic_without_a_message(client_in, user):
    client_in.post(CREATE, {"agent": "intake", "intake": "knee", "content": ""})
    conversation = _only(user)
    assert conversation.title  # the topic's title
    assert conversation.messages.filter(role="assistant").exists()
    assert not conversation.messages.filter(role="user").exists()


def test_an_unknown_topic_is_refused_and_nothing_is_stored(client_in, user):
    response = client_in.post(CREATE, {"agent": "intake", "intake": "nope"})
    assert response.status_code == 400
    assert not Conversation.objects.filter(owner=user).exists()
    assert Message.objects.count() == 0


def test_a_quick_start_opens_the_topic_in_one_click(client_in, user):
    html = client_in.get("/").content.decode()
    assert 'name="intake" value="knee"' in html  # a one-button form per topic
    client_in.post(CREATE, {"agent": "intake", "intake": "knee"})
    assert _only(user).messages.filter(role="assistant").exists()


def test_the_deferred_form_tour_starts_from_the_home_page(client_in, user):
    """No admin edit: the home page offers the deferred-form tour, which opens on its form
    (issue 32, defect 11); a plain post works without JavaScript."""
    from questionnaires.models import InteractiveForm

    html = client_in.get("/").content.decode()
    assert 'name="script" value="forms"' in html and "Take the deferred-form tour" in html
    response = client_in.post(CREATE, {"agent": "scripted", "script": "forms"})
    conversation = _only(user)
    assert response.status_code == 302 and conversation.title == "Deferred-form tour"
    assert conversation.state["script"] == "forms"
    form = InteractiveForm.objects.get(conversation=conversation)
    assert form.status == "pending"
    # the answer moves it to its last step (the form's run was its opening: step 0)
    from chat.usecases import message_post_user

    message_post_user(
        conversation=conversation,
        content="",
        form_answer={
            "type": "interactive_form_question",
            "tool_use_id": form.tool_use_id,
            "status": "answered",
            "answers": {"destination": "City"},
        },
    )
    last = conversation.messages.filter(role="assistant").order_by("seq").last()
    assert last is not None and "end of the deferred-form tour" in last.content


def test_an_unknown_tour_is_refused_and_nothing_is_stored(client_in, user):
    response = client_in.post(CREATE, {"agent": "scripted", "script": "bench_reply"})
    assert response.status_code == 400
    assert not Conversation.objects.filter(owner=user).exists()
    response = client_in.post(CREATE, {"agent": "echo", "script": "forms", "content": "hi"})
    assert response.status_code == 400
    assert not Conversation.objects.filter(owner=user).exists()
