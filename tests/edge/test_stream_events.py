"""The stream's event names: one tuple (chat.core.stream_events), what the server emits,
what the page renders for its JS, and what the JS and templates listen to, held together.

A name the server emits but the JS doesn't follow breaks reconnects (the page resumes
after the last event it saw, counted per name); a name the JS lists that nobody emits is a
stale copy. Before issue 35 the JS kept its own list, which no test compared.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from django.urls import reverse

from chat.core.models import Event
from chat.core.services import event_emit
from chat.core.stream_events import EVENT_NAMES

ROOT = Path(__file__).resolve().parent.parent.parent
APP = [*(ROOT / "chat").rglob("*.py"), *(ROOT / "questionnaires").rglob("*.py")]
EMITTERS = {"event_emit", "emit"}  # the core's function, and the turn's wrapper around it


def _emitted() -> tuple[set[str], list[str]]:
    """Every literal name passed to an emitter in the app's code, and every call whose name
    isn't a literal (as `file:line`) unless it is a parameter annotated `EventName`."""
    names: set[str] = set()
    unchecked: list[str] = []
    for path in APP:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typed: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for arg in node.args.args + node.args.kwonlyargs:
                    if isinstance(arg.annotation, ast.Name) and arg.annotation.id == "EventName":
                        typed.add(arg.arg)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called not in EMITTERS:
                continue
            given = [k.value for k in node.keywords if k.arg == "name"] or node.args[:1]
            if not given:
                continue
            value = given[0]
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                names.add(value.value)
            elif not (isinstance(value, ast.Name) and value.id in typed):
                unchecked.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return names, unchecked


def test_every_name_the_server_emits_is_in_the_tuple():
    names, unchecked = _emitted()
    assert names, "the scan found no emitter"
    assert names <= set(EVENT_NAMES), names - set(EVENT_NAMES)
    assert unchecked == []


def test_every_name_in_the_tuple_is_emitted_somewhere():
    names, _ = _emitted()
    assert set(EVENT_NAMES) <= names, set(EVENT_NAMES) - names
    assert len(EVENT_NAMES) == len(set(EVENT_NAMES))


@pytest.mark.django_db
def test_an_unknown_name_is_refused_and_nothing_is_stored(conversation):
    with pytest.raises(ValueError, match="unknown stream event name"):
        event_emit(conversation_id=conversation.pk, name="text_deltaa", data={})  # type: ignore[arg-type]
    assert not Event.objects.filter(name="text_deltaa").exists()


@pytest.mark.django_db
def test_the_conversation_page_renders_the_tuple_for_the_js(client_in, conversation):
    html = client_in.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()
    found = re.search(
        r'<script id="sse-event-names" type="application/json">(.*?)</script>', html, re.S
    )
    assert found, "no json_script with the event names"
    assert json.loads(found.group(1)) == list(EVENT_NAMES)
    assert "sse-connect=" in html  # the page that opens the stream is the one that has them


def test_the_js_reads_the_rendered_list_and_keeps_none_of_its_own():
    source = (ROOT / "static/js/chat.js").read_text(encoding="utf-8")
    assert 'getElementById("sse-event-names")' in source
    quoted = set(re.findall(r'"([a-z_]+)"', source)) & set(EVENT_NAMES)
    # Only the one event it does something with besides counting it.
    assert quoted == {"messages_superseded"}, quoted


def test_every_event_the_templates_and_scripts_listen_to_is_one_the_server_sends():
    listened: set[str] = set()
    for path in [*(ROOT / "templates").rglob("*.html"), *(ROOT / "static/js").rglob("*.js")]:
        text = path.read_text(encoding="utf-8")
        listened |= set(re.findall(r"\bsse:([a-z_]+)", text))
    assert listened, "no sse: trigger found"
    assert listened <= set(EVENT_NAMES), listened - set(EVENT_NAMES)
