"""AG-UI (issue 33): a conversation's agent as an AG-UI run, checked with the official
client (`@ag-ui/client`'s HttpAgent, unedited) and by hand for the protocol's rules: a
run that needs a person ends `RUN_FINISHED` with `outcome: interrupt` (one interrupt per
waiting question, with `responseSchema` and `expiresAt`), and `resume` must answer or
cancel every open interrupt (the coverage rule), an expired one only cancelled."""

from __future__ import annotations

import json
import subprocess

import httpx
import pytest

from tests.interop.conftest import node_tools

USER = """
from django.contrib.auth.models import User
from chat.core.services import api_token_create
user, _ = User.objects.get_or_create(username="{name}")
print(api_token_create(user=user)[1])
"""
ANSWERS = """
from questionnaires.asks.models import StructuredAnswer
import json
print(json.dumps(list(StructuredAnswer.objects.filter(conversation_id={c})
    .order_by("id").values_list("field", "value", "source"))))
"""


class Thread:
    """One intake conversation of a fresh person, driven over AG-UI by hand."""

    def __init__(self, server, name: str, *, agent: str = "intake", script: str = "") -> None:
        self.server = server
        self.token = server.shell(USER.format(name=name)).strip()
        self.api = httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=60
        )
        created = self.api.post("/api/v1/conversations/", json={"agent": agent})
        self.id = created.json()["id"]
        if script:  # a scripted walk-through of chat/agent/scripts
            server.shell(
                "from chat.core.models import Conversation\n"
                f"Conversation.objects.filter(pk={self.id}).update(state={{'script': {script!r}}})"
            )
        self.url = f"/api/v1/conversations/{self.id}/agui"
        self.runs = 0

    def run(self, **body: object) -> tuple[int, list[dict]]:
        self.runs += 1
        payload = {"threadId": "t", "runId": f"r{self.runs}", "messages": [], **body}
        with self.api.stream("POST", self.url, json=payload) as response:
            if response.status_code != 200:
                return response.status_code, [json.loads(response.read())]
            events = [
                json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")
            ]
        return 200, events

    def say(self, text: str) -> list[dict]:
        status, events = self.run(messages=[{"id": "m", "role": "user", "content": text}])
        assert status == 200, events
        return events

    def answers(self) -> list[list]:
        return json.loads(self.server.shell(ANSWERS.format(c=self.id)))


def _interrupts(events: list[dict]) -> list[dict]:
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED", finished
    return finished.get("outcome", {}).get("interrupts", [])


def test_the_official_client_answers_intake_questions_end_to_end(interop_server):
    tools = node_tools("agui_client")
    thread = Thread(interop_server, "agui-client")
    ran = subprocess.run(
        ["node", "client.mjs", interop_server.url + thread.url, thread.token, "Hi", "2"],
        cwd=tools,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout)
    assert seen["errors"] == []
    assert seen["finished"][0] == "interrupt"
    first = seen["interrupts"][0]
    assert [i[0].split(":")[0] for i in first] == ["ask"] and all(i[2] and i[3] for i in first)
    assert first[0][1] == "Which intake would you like to start?"
    assert ["assistant", "Which intake would you like to start?"] in seen["messages"]
    # every answer the client sent is recorded as the person's click, nothing else
    answered = thread.answers()
    assert answered[0] == ["intake_definition", "knee", "user_option_click"]
    assert len(answered) == 1 + len(seen["interrupts"][1])
    assert {source for _f, _v, source in answered} == {"user_option_click"}


def _client(server, thread: Thread, text: str, rounds: int) -> dict:
    """`client.mjs` (the official HttpAgent) on `thread`: what it saw and sent."""
    ran = subprocess.run(
        ["node", "client.mjs", server.url + thread.url, thread.token, text, str(rounds)],
        cwd=node_tools("agui_client"),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert ran.returncode == 0, ran.stderr
    seen: dict = json.loads(ran.stdout)
    assert seen["errors"] == []
    return seen


FORM = """
from questionnaires.models import InteractiveForm
import json
f = InteractiveForm.objects.get(conversation_id={c})
print(json.dumps([f.status, f.answer, f.tool_use_id]))
"""


def test_the_official_client_answers_a_deferred_form(interop_server):
    thread = Thread(interop_server, "agui-form", agent="scripted", script="forms")
    seen = _client(interop_server, thread, "Plan a trip", 2)
    assert seen["finished"] == ["interrupt", "success"]
    ((ref, message, has_schema, expires, metadata),) = seen["interrupts"][0]
    assert ref.startswith("form:") and has_schema and expires and metadata is None
    assert message.startswith("Where would you like to go?")
    sent = seen["sent"][0][ref]
    assert sent["status"] == "resolved"
    status, answer, call = json.loads(interop_server.shell(FORM.format(c=thread.id)))
    # recorded exactly as the client sent it (the optional questions left empty)
    assert status == "answered"
    assert answer == {
        "answers": {"destination": sent["payload"]["answers"]["destination"], "extras": [],
                    "notes": ""},
        "message": "",
    }  # fmt: skip
    assert answer["answers"]["destination"] == "Mountains"  # the first option
    # the call's result is the answer (the run stopped with it open, no "waiting" result)
    tool = [c for role, c in seen["messages"] if role == "tool"]
    assert any('"status": "answered"' in c and call in c for c in tool), tool
    assert not any("waiting_for_user_response" in c for c in tool), tool
    assert any(
        role == "assistant" and text.startswith("Thank you — I have your answers")
        for role, text in seen["messages"]
    )


ELICITATION = """
from questionnaires.elicitations.models import Elicitation
import json
e = Elicitation.objects.get(conversation_id={c})
print(json.dumps([e.status, e.content, e.answered_by.username]))
"""


def test_the_official_client_answers_a_stock_mcp_servers_question(interop_server):
    from tests.support.mcp_servers import make_stock_server, serve

    thread = Thread(interop_server, "agui-elicit", agent="scripted", script="mcp_stock")
    with serve(make_stock_server()) as url:
        interop_server.shell(
            "from chat.mcphost.models import McpServer\n"
            f"McpServer.objects.create(name='srv', url={url!r}, agents=['scripted'])"
        )
        try:
            seen = _client(interop_server, thread, "A table, please", 2)
        finally:  # the server is shared: no other test may see this MCP server
            interop_server.shell(
                "from chat.mcphost.models import McpServer\n"
                "McpServer.objects.filter(name='srv').delete()"
            )
    assert seen["finished"] == ["interrupt", "success"]
    ((ref, message, has_schema, expires, metadata),) = seen["interrupts"][0]
    assert ref.startswith("elicitation:") and message == "How many of you?"
    assert has_schema and expires and metadata == {"server": "srv", "mode": "form"}
    assert seen["sent"][0][ref] == {"status": "resolved", "payload": {"size": 1}}
    status, content, by = json.loads(interop_server.shell(ELICITATION.format(c=thread.id)))
    assert (status, content, by) == ("accepted", {"size": 1}, "agui-elicit")
    # the server got the answer and the tool's result says so; the run went on
    tool = [c for role, c in seen["messages"] if role == "tool"]
    assert any("booked 1 indoor" in c for c in tool), tool
    assert ["assistant", "Booked."] in seen["messages"]


def test_an_interrupt_describes_its_question_and_the_answer_it_takes(interop_server):
    thread = Thread(interop_server, "agui-shape")
    events = thread.say("Hello")
    assert events[0] == {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}
    texts = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    (interrupt,) = _interrupts(events)
    assert interrupt["message"] in texts
    assert interrupt["reason"] == "ask" and interrupt["expiresAt"]
    schema = interrupt["responseSchema"]
    assert [o["const"] for o in schema["properties"]["value"]["oneOf"]] == [
        "knee",
        "project_kickoff",
        "trip",
    ]
    # a free-text answer in the person's words resolves it too, marked as typed
    status, events = thread.run(
        resume=[{"interruptId": interrupt["id"], "status": "resolved", "payload": {"text": "knee"}}]
    )
    assert status == 200 and _interrupts(events)
    assert thread.answers() == [["intake_definition", "knee", "user_free_text"]]


def test_resume_must_cover_every_open_interrupt_or_nothing_is_recorded(interop_server):
    thread = Thread(interop_server, "agui-cover")
    (first,) = _interrupts(thread.say("Hi"))
    choose = {"interruptId": first["id"], "status": "resolved", "payload": {"value": "knee"}}
    status, events = thread.run(resume=[choose])
    two = _interrupts(events)
    assert len(two) == 2
    recorded = thread.answers()

    one = {"interruptId": two[0]["id"], "status": "resolved", "payload": {"value": "left"}}
    status, body = thread.run(resume=[one])
    assert status == 409 and body[0]["error"] == "interrupts_uncovered"
    assert body[0]["details"]["interrupts"] == [two[1]["id"]]
    status, body = thread.run(resume=[one, one])
    assert status == 400 and body[0]["error"] == "interrupt_duplicate"
    unknown = {"interruptId": "ask:999999", "status": "cancelled"}
    status, body = thread.run(resume=[one, unknown])
    assert status == 409 and body[0]["error"] == "interrupt_unknown"
    bad = {"interruptId": two[1]["id"], "status": "resolved", "payload": {"colour": "red"}}
    status, body = thread.run(resume=[one, bad])
    assert status == 400 and body[0]["error"] == "interrupt_payload_invalid"
    assert thread.answers() == recorded  # all or nothing: the valid first one is not kept

    status, body = thread.run()  # neither a message nor answers while questions wait
    assert status == 409 and body[0]["error"] == "interrupts_pending"
    skip = {"interruptId": two[1]["id"], "status": "cancelled"}
    status, events = thread.run(resume=[one, skip])
    assert status == 200 and events[-1]["type"] == "RUN_FINISHED"
    assert thread.answers()[-2:] == [
        ["knee_side", "left", "user_option_click"],
        ["pain_level", None, "user_skipped"],
    ]


def test_an_expired_interrupt_can_only_be_cancelled(interop_server):
    thread = Thread(interop_server, "agui-expired")
    (first,) = _interrupts(thread.say("Hi"))
    interop_server.shell(
        "from datetime import timedelta\nfrom django.utils import timezone\n"
        "from chat.core.models import Wait\n"
        f"Wait.objects.filter(ref={first['id']!r}).update("
        "deadline=timezone.now() - timedelta(seconds=1))"
    )
    resolve = {"interruptId": first["id"], "status": "resolved", "payload": {"value": "knee"}}
    status, body = thread.run(resume=[resolve])
    assert status == 409 and body[0]["error"] == "interrupt_expired"
    assert thread.answers() == []


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"token": "nope"}, 401, "unauthorized"),
        ({"conversation": "other"}, 404, "not_found"),
        ({"body": {"threadId": "t"}}, 400, "agui_input_invalid"),
        ({"body": [1, 2]}, 400, "invalid_json"),
        ({"body": {"threadId": "t", "runId": "r", "messages": []}}, 400, "agui_nothing_to_run"),
        ({"method": "GET"}, 405, "method_not_allowed"),
    ],
    ids=["bad token", "another's conversation", "not RunAgentInput", "not an object",
         "nothing to run", "GET"],
)  # fmt: skip
def test_refusals_are_4xx_with_a_stable_code(interop_server, change, status, code):
    thread = Thread(interop_server, "agui-refusals")
    url = thread.url
    if change.get("conversation") == "other":
        other = Thread(interop_server, "agui-someone-else")
        url = other.url
    headers = {"Authorization": f"Bearer {change.get('token', thread.token)}"}
    body = change.get("body", {"threadId": "t", "runId": "r", "messages": []})
    response = httpx.request(
        change.get("method", "POST"), interop_server.url + url, json=body, headers=headers
    )
    assert response.status_code == status and response.json()["error"] == code
