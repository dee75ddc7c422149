"""The JSON API through clients that stock generators make from `/api/v1/openapi.json`
with their default options, used unedited (issue 33.5): openapi-python-client, and
openapi-typescript + openapi-fetch compiled with `tsc --strict`. Before, the Python client
had no `POST /api/v1/conversations/` ("ModelProperty cannot have a default value") and the
TypeScript types made every defaulted request field mandatory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.interop.conftest import node_tools

USER = """
from django.contrib.auth.models import User
from chat.core.services import api_token_create
user, _ = User.objects.get_or_create(username="{name}")
print(api_token_create(user=user)[1])
"""

PY_CLIENT = """
import json, sys
from inline_questionnaire_chat_api_client import AuthenticatedClient
from inline_questionnaire_chat_api_client.api.conversations import (
    conversation_create, message_list, message_post,
)
from inline_questionnaire_chat_api_client.models import ConversationIn, MessageIn, Role

client = AuthenticatedClient(base_url=sys.argv[1], token=sys.argv[2])
created = conversation_create.sync_detailed(client=client)
titled = conversation_create.sync(client=client, body=ConversationIn(title="From Python"))
cid = created.parsed.id
posted = message_post.sync_detailed(
    cid, client=client, body=MessageIn(role=Role.USER, content="Hello from a generated client")
)
listed = message_list.sync(cid, client=client)
print(json.dumps({
    "created": int(created.status_code), "titled": titled.id != cid,
    "posted": int(posted.status_code),
    "messages": [[m.role.value, m.content] for m in listed.messages],
}))
"""


def _schema(server, tmp: Path) -> Path:
    path = tmp / "openapi.json"
    path.write_bytes(httpx.get(server.url + "/api/v1/openapi.json", timeout=30).content)
    return path


def _token(server, name: str) -> str:
    return server.shell(USER.format(name=name)).strip()


def test_openapi_python_client_generates_every_operation_and_works(interop_server, tmp_path):
    generator = Path(sys.executable).with_name("openapi-python-client")
    schema = _schema(interop_server, tmp_path)
    made = subprocess.run(
        [str(generator), "generate", "--path", str(schema), "--output-path", str(tmp_path / "py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    assert "will not be generated" not in made.stdout + made.stderr, made.stdout
    ran = subprocess.run(
        [sys.executable, "-c", PY_CLIENT, interop_server.url, _token(interop_server, "py-client")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "py")},
    )
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout)
    assert seen == {
        "created": 201,
        "titled": True,
        "posted": 201,
        "messages": [["user", "Hello from a generated client"]],
    }


def test_openapi_typescript_with_openapi_fetch_compiles_strict_and_works(interop_server, tmp_path):
    tools = node_tools("api_clients")
    bin_ = tools / "node_modules" / ".bin"
    schema = _schema(interop_server, tmp_path)
    work = tmp_path / "ts"
    work.mkdir()
    (work / "node_modules").symlink_to(tools / "node_modules")
    shutil.copy(tools / "client.ts", work / "client.ts")
    (work / "package.json").write_text('{"type": "module"}')
    made = subprocess.run(
        [str(bin_ / "openapi-typescript"), str(schema), "-o", str(work / "api.d.ts")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    compiled = subprocess.run(
        [
            str(bin_ / "tsc"),
            "--strict",
            "--noEmitOnError",
            "--skipLibCheck",
            "--target",
            "es2022",
            "--module",
            "nodenext",
            "--moduleResolution",
            "nodenext",
            "--lib",
            "es2022,dom",
            "--types",
            "node",
            "client.ts",
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    ran = subprocess.run(
        ["node", "client.js", interop_server.url, _token(interop_server, "ts-client")],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout)
    assert seen["created"] == 201 and seen["url"].startswith(interop_server.url)
    assert seen["titled"] == 201 and seen["posted"] == 201 and seen["reply"] == 2
    assert seen["refused"] == [400, "invalid_role"]
    assert seen["messages"] == [
        ["user", "Hello from a generated client"],
        ["assistant", "Hi! How can I help?"],
    ]


@pytest.mark.parametrize("field", ["title", "agent"])
def test_request_defaults_are_said_not_typed(interop_server, tmp_path, field):
    """A request schema's default is in its description, not a `default` generators
    read as 'always present'; the body is a plain `$ref` without a body-level default."""
    doc = json.loads(_schema(interop_server, tmp_path).read_text())
    body = doc["paths"]["/api/v1/conversations/"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ConversationIn"
    }
    prop = doc["components"]["schemas"]["ConversationIn"]["properties"][field]
    assert "default" not in prop and "Default: `" in prop["description"]
