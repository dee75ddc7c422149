"""The agent registry: a sixth agent, registered from the test tree (tests/support/toy_agent)
through settings alone, is offered on the home page, opens and answers a conversation, is
created through the API, counts as model-calling, and shows in admin — with no line of the
product changed. A wrong list of agents fails at start-up (chat.E001); a stored agent that
is no longer registered is refused, never answered by another agent."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.urls import reverse

from chat.apps import agents_check
from chat.core.agents import agent_names, model_agent_names
from chat.core.models import Conversation, Message, Run, RunStatus
from chat.core.services import conversation_create, message_create
from chat.mcphost.models import McpServer
from chat.runs.runner import run_execute

pytestmark = pytest.mark.django_db

TOY = "tests.support.toy_agent.agent.TOY"
BROKEN_TOY = "tests.support.toy_agent.agent.BROKEN_TOY"
CREATE = reverse("chat:conversation_create")


@pytest.fixture
def toy(settings):
    settings.CHAT_AGENTS = [*settings.CHAT_AGENTS, TOY]
    templates = Path(__file__).resolve().parents[1] / "support" / "toy_agent" / "templates"
    engine = settings.TEMPLATES[0]
    settings.TEMPLATES = [{**engine, "DIRS": [*engine["DIRS"], templates]}]
    # the settings fixture restores both; the registry follows (setting_changed)


def _page(client, conversation) -> str:
    return client.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()


def _texts(conversation) -> list[tuple[str, str]]:
    return list(conversation.messages.order_by("seq").values_list("role", "content"))


def test_a_toy_agent_is_offered_opens_answers_and_shows_in_admin(
    toy, client_in, user, admin_client
):
    home = client_in.get("/").content.decode()
    assert '<option value="toy" data-opens>Toy box</option>' in home
    assert '<p class="home-about-text" data-about="toy">Plays with you in toy words.' in home
    assert '[data-about="toy"] { display: block; }' in home  # shown while it is chosen
    assert "Play with the Toy box" in home  # its quick start (its template)

    # it opens the conversation itself: an empty send starts it with its first words
    response = client_in.post(CREATE, {"agent": "toy", "content": ""})
    conversation = Conversation.objects.get(owner=user)
    assert response["Location"] == reverse("chat:conversation", args=[conversation.pk])
    assert conversation.agent == "toy" and conversation.title == "Toy box"
    assert _texts(conversation) == [("assistant", "Toy here: what shall we play?")]

    # it answers; its page names it and shows its own notice (its template)
    send = reverse("chat:message_send", args=[conversation.pk])
    assert client_in.post(send, {"content": "a kite"}).status_code == 302
    assert _texts(conversation)[-2:] == [("user", "a kite"), ("assistant", "Toy says: a kite")]
    page = _page(client_in, conversation)
    assert '<span class="agent-badge">Toy box</span>' in page
    assert f"Toy box keeps its toys in conversation {conversation.pk}." in page

    # admin: listed with its name, chosen in the form, offered for budgets and MCP servers
    listing = admin_client.get(reverse("admin:chat_conversation_changelist")).content.decode()
    assert "Toy box (toy)" in listing
    change = reverse("admin:chat_conversation_change", args=[conversation.pk])
    assert (
        '<option value="toy" selected>Toy box</option>' in admin_client.get(change).content.decode()
    )
    budget = admin_client.get(reverse("admin:chat_questionbudget_add")).content.decode()
    assert '<option value="toy">Toy box</option>' in budget
    server = admin_client.get(reverse("admin:chat_mcpserver_add")).content.decode()
    assert 'value="toy"' in server and 'value="echo"' not in server  # model-calling ones


def test_a_toy_agent_greets_an_empty_conversation_and_is_created_through_the_api(
    toy, api, client_in
):
    created = api.post("/api/v1/conversations/", {"agent": "toy"})
    assert created.status_code == 201
    conversation = Conversation.objects.get(pk=created.json()["id"])
    page = _page(client_in, conversation)
    assert "Hello from the toy box!" in page and "Send anything to play." in page
    assert 'data-agent="toy"' in page
    # a user message posted through the API runs it like one typed in the page
    posted = api.post(
        f"/api/v1/conversations/{conversation.pk}/messages", {"role": "user", "content": "a ball"}
    )
    assert posted.status_code == 201
    assert _texts(conversation)[-1] == ("assistant", "Toy says: a ball")


def test_the_one_list_of_model_calling_agents_includes_a_registered_one(toy):
    assert model_agent_names() == ("scripted", "openai", "toy")  # settings' order
    call_command("mcp_server_add", "toys", "http://127.0.0.1:9/mcp", stdout=io.StringIO())
    assert McpServer.objects.get(name="toys").agents == ["scripted", "openai", "toy"]
    McpServer(name="echoes", url="http://127.0.0.1:9/mcp", agents=["toy"]).full_clean()
    with pytest.raises(Exception, match="Agents are a list of scripted, openai, toy"):
        McpServer(name="echoes", url="http://127.0.0.1:9/mcp", agents=["echo"]).full_clean()


def test_an_agent_that_is_not_available_is_offered_disabled_and_refused(settings, client_in, user):
    settings.CHAT_AGENTS = [*settings.CHAT_AGENTS, BROKEN_TOY]
    home = client_in.get("/").content.decode()
    assert '<option value="broken-toy" disabled>Broken toy (not available)</option>' in home
    assert "TOY_BATTERIES" not in home  # what to set: staff only
    response = client_in.post(CREATE, {"agent": "broken-toy", "content": "hi"})
    assert response.status_code == 400
    assert "isn’t available on this server yet" in response.content.decode()
    assert not Conversation.objects.exists()
    # one made anyway (the API does not ask) says why nothing answers, and what to set to staff
    conversation = conversation_create(owner=user, agent="broken-toy")
    page = _page(client_in, conversation)
    assert 'data-agent-notice="toy_batteries_flat"' in page
    assert "The toy has flat batteries." in page and "TOY_BATTERIES" not in page
    user.is_staff = True
    user.save()
    assert "Put new batteries in (TOY_BATTERIES)." in _page(client_in, conversation)


@pytest.mark.parametrize(
    ("agents", "default", "says"),
    [
        (["tests.support.toy_agent.agent.NOWHERE"], "echo", "NOWHERE"),
        (["tests.support.toy_agent.agent.NOT_AN_AGENT"], "echo", "is not an Agent"),
        (["tests.support.toy_agent.agent.BADLY_NAMED"], "echo", "'Toy Box!'"),
        ([TOY, TOY], "toy", "two agents share a name"),
        ([TOY], "echo", "CHAT_DEFAULT_AGENT is 'echo', not one of CHAT_AGENTS (toy)"),
    ],
)
def test_a_wrong_list_of_agents_fails_at_start_up(settings, agents, default, says):
    settings.CHAT_AGENTS = agents
    settings.CHAT_DEFAULT_AGENT = default
    [error] = agents_check()
    assert error.id == "chat.E001" and says in error.msg
    with pytest.raises(SystemCheckError, match="chat.E001"):
        call_command("check", stdout=io.StringIO(), stderr=io.StringIO())


def test_the_built_in_list_passes_the_check():
    assert agents_check() == []
    assert agent_names() == ("intake", "scripted", "openai", "echo", "external")


def test_an_unknown_agent_is_refused_when_a_conversation_is_created(client_in, api, user):
    response = client_in.post(CREATE, {"agent": "toy", "content": "hi"})
    assert response.status_code == 400 and not Conversation.objects.exists()
    refused = api.post("/api/v1/conversations/", {"agent": "toy"})
    assert refused.status_code == 400 and refused.json()["error"] == "agent_invalid"
    assert "intake, scripted, openai, echo, external" in refused.json()["message"]


def test_a_stored_agent_taken_out_of_the_list_is_refused_never_answered_by_another(
    settings, toy, client_in, api, user
):
    conversation = conversation_create(owner=user, agent="toy")
    trigger = message_create(conversation=conversation, role="user", content="still there?")
    queued = Run.objects.create(conversation=conversation, trigger_message=trigger)
    settings.CHAT_AGENTS = [p for p in settings.CHAT_AGENTS if p != TOY]

    # the page still shows, and says so; a new message is refused and not stored
    page = _page(client_in, conversation)
    assert 'data-agent-notice="agent_unknown"' in page
    send = reverse("chat:message_send", args=[conversation.pk])
    response = client_in.post(send, {"content": "hello?"})
    assert (
        response.status_code == 409 and "is no longer on this server" in response.content.decode()
    )
    assert "hello?" in response.content.decode()  # what the person typed is kept
    assert not Message.objects.filter(conversation=conversation, content="hello?").exists()
    posted = api.post(
        f"/api/v1/conversations/{conversation.pk}/messages", {"role": "user", "content": "api?"}
    )
    assert posted.status_code == 409 and posted.json()["error"] == "agent_unknown"
    assert not Message.objects.filter(conversation=conversation, content="api?").exists()

    # a run queued before fails with its reason, and no other agent answers it
    run_execute(run_id=queued.pk)
    queued.refresh_from_db()
    assert queued.status == RunStatus.FAILED and queued.error.startswith("This conversation")
    assert not conversation.messages.filter(role="assistant").exists()
    status = client_in.get(reverse("chat:run_status", args=[conversation.pk])).content.decode()
    assert "it is no longer on this server" in status and "Retry" not in status
