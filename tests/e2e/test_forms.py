"""The deferred interactive form in a real browser ("forms" scripted walk-through)."""

from __future__ import annotations

import json
import threading

import httpx
from playwright.sync_api import expect

from .conftest import new_conversation


def _forms_conversation(page, server) -> int:
    conversation_id = new_conversation(page, server, agent="scripted", title="Trip", script="forms")
    page.fill("#id_content", "Plan a trip for me")
    page.press("#id_content", "Enter")
    expect(page.locator(".iform-pending")).to_have_count(0)
    expect(page.locator("section.iform")).to_be_visible(timeout=15000)
    return conversation_id


def _state(server, conversation_id: int) -> dict:
    out = server.shell(
        "import json\n"
        "from chat.models import Run, Message\n"
        "from questionnaires.models import InteractiveForm\n"
        f"runs = list(Run.objects.filter(conversation_id={conversation_id}).order_by('id').values_list('stop_reason', flat=True))\n"
        f"forms = list(InteractiveForm.objects.filter(conversation_id={conversation_id}).values('status', 'tool_use_id', 'ask_id'))\n"
        f"tools = [m.content for m in Message.objects.filter(conversation_id={conversation_id}, role='tool')]\n"
        "print(json.dumps({'runs': runs, 'forms': forms, 'tools': tools}))"
    )
    return json.loads(out.strip().splitlines()[-1])


def test_form_appears_run_stops_and_plain_text_offers_the_choice(page, server):
    conversation_id = _forms_conversation(page, server)
    card = page.locator("section.iform")
    expect(card.locator("legend", has_text="Where would you like to go?")).to_be_visible()
    expect(card.get_by_label("Seaside")).to_be_checked()  # the default
    notes = card.get_by_label("Anything else I should know?")
    expect(notes).to_have_attribute("placeholder", "Dates, budget, companions…")
    state = _state(server, conversation_id)
    assert state["runs"] == ["deferred"]
    assert [f["status"] for f in state["forms"]] == ["pending"]

    page.fill("#id_content", "Actually, never mind")
    page.press("#id_content", "Enter")
    # The composer's choice (the pending card itself is `section.iform-pending` too).
    choice = page.get_by_role("group", name="A form is waiting")
    expect(choice).to_be_visible()
    expect(page.locator("#composer-error")).to_contain_text("A form is waiting")
    expect(page.locator("#id_content")).to_have_value("Actually, never mind")
    expect(choice.get_by_role("link", name="Submit the form")).to_be_visible()

    choice.get_by_role("button", name="Cancel the form and send this text").click()
    expect(page.locator("section.iform-cancelled")).to_be_visible()
    expect(page.locator("#id_content")).to_have_value("")
    expect(page.locator(".msg-user", has_text="Actually, never mind")).to_be_visible()
    expect(page.locator(".msg-assistant", has_text="Thank you")).to_be_visible(timeout=15000)
    state = _state(server, conversation_id)
    assert [f["status"] for f in state["forms"]] == ["cancelled"]
    answer = json.loads(state["tools"][0])
    assert answer["status"] == "cancelled" and answer["message"] == "Actually, never mind"


def test_submit_resumes_the_model_with_the_tool_result(page, server):
    conversation_id = _forms_conversation(page, server)
    card = page.locator("section.iform")
    card.get_by_label("City").check()
    card.get_by_label("Good food").check()
    card.get_by_label("Anything else I should know?").fill("In May")
    card.get_by_role("button", name="Send", exact=True).click()
    expect(page.locator("section.iform-answered")).to_be_visible()
    expect(page.locator(".msg-user", has_text="Where would you like to go?: City")).to_be_visible()
    expect(page.locator(".msg-assistant", has_text="Thank you")).to_be_visible(timeout=15000)
    state = _state(server, conversation_id)
    assert state["runs"] == ["deferred", "completed"]
    answer = json.loads(state["tools"][0])
    assert answer["status"] == "answered"
    assert [a.get("value") or a.get("values") for a in answer["answers"]] == [
        "City",
        ["food"],
        "In May",
    ]
    # plain text works again once the form is answered
    page.fill("#id_content", "And the weather?")
    page.press("#id_content", "Enter")
    expect(page.locator(".msg-user", has_text="And the weather?")).to_be_visible()


def test_two_tabs_submitting_at_once_store_one_answer(page, server, context):
    conversation_id = _forms_conversation(page, server)
    second = context.new_page()
    second.goto(page.url)
    expect(second.locator("section.iform")).to_be_visible()
    cookies = {c["name"]: c["value"] for c in context.cookies()}
    form = _state(server, conversation_id)["forms"][0]
    url = f"{server.url}/conversations/{conversation_id}/forms/answer"
    data = {
        "tool_use_id": form["tool_use_id"],
        "status": "answered",
        "answer-destination": "Mountains",
    }
    statuses: list[int] = []
    barrier = threading.Barrier(4)

    def submit() -> None:
        with httpx.Client(cookies=cookies) as client:
            token = (
                client.get(f"{server.url}/conversations/{conversation_id}/").cookies.get(
                    "csrftoken"
                )
                or cookies["csrftoken"]
            )
            barrier.wait()
            response = client.post(
                url,
                data={**data, "csrfmiddlewaretoken": token},
                headers={"HX-Request": "true", "X-CSRFToken": token},
            )
            statuses.append(response.status_code)

    threads = [threading.Thread(target=submit) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200, 409, 409, 409]
    state = _state(server, conversation_id)
    assert (
        len(state["tools"]) == 2
    )  # the deferred result replaced by the one answer, + 2nd call's refusal
    assert sum(json.loads(t).get("status") == "answered" for t in state["tools"]) == 1
    # the other tab's card locks live
    expect(second.locator("section.iform-answered")).to_be_visible(timeout=15000)
