"""McpServer validation, masking, and the mcp_server_add command."""

from __future__ import annotations

import io

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError

from chat.mcphost.models import McpServer, server_name_problem, server_url_problem

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", ["demo", "a", "my-server_2", "x" * 24])
def test_good_names(name):
    assert server_name_problem(name) is None


@pytest.mark.parametrize("name", ["", "a__b", "-a", "a-", "has space", "dot.ted", "x" * 25])
def test_bad_names(name):
    assert server_name_problem(name)


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9000/mcp", "https://mcp.example/x", "builtin:demo"]
)
def test_good_urls(url):
    assert server_url_problem(url) is None


@pytest.mark.parametrize(
    "url",
    ["ftp://x/", "file:///etc/passwd", "http://user:pw@x/", "builtin:other", "x", "http:///p"],
)
def test_bad_urls(url):
    assert server_url_problem(url)


def test_secrets_are_masked():
    server = McpServer(name="s", url="http://x/", headers={"X-Key": "s3cret"}, bearer_token="tok")
    shown = server.masked_headers()
    assert "s3cret" not in str(shown) and "tok" not in str(shown)
    assert server.request_headers() == {"X-Key": "s3cret", "Authorization": "Bearer tok"}


def test_clean_rejects_bad_headers_and_agents():
    server = McpServer(name="s", url="http://x/", headers={"Bad Name": "v"}, agents=["echo"])
    with pytest.raises(ValidationError) as info:
        server.full_clean()
    assert set(info.value.message_dict) >= {"headers", "agents"}


def test_command_adds_an_enabled_server_for_model_agents():
    out = io.StringIO()
    call_command(
        "mcp_server_add",
        "demo2",
        "http://127.0.0.1:9/mcp",
        "--header",
        "X-Key: s3cret",
        stdout=out,
    )
    server = McpServer.objects.get(name="demo2")
    assert server.enabled and server.agents == ["openai", "scripted"]
    assert server.headers == {"X-Key": "s3cret"}
    assert "demo2" in out.getvalue() and "X-Key" in out.getvalue()
    assert "s3cret" not in out.getvalue()


@pytest.mark.parametrize(
    "args",
    [["bad__name", "http://x/"], ["ok", "ftp://x/"], ["ok", "http://x/", "--header", "nocolon"]],
)
def test_command_exits_2_on_bad_input(args):
    with pytest.raises(CommandError) as info:
        call_command("mcp_server_add", *args)
    assert info.value.returncode == 2
    assert not McpServer.objects.exists()


def test_admin_lists_header_names_never_values(admin_client):
    McpServer.objects.create(
        name="s", url="http://x/", headers={"X-Key": "s3cret"}, bearer_token="tok-123"
    )
    page = admin_client.get("/admin/chat/mcpserver/").content.decode()
    assert "X-Key" in page and "s3cret" not in page and "tok-123" not in page
    server = McpServer.objects.get()
    change = admin_client.get(f"/admin/chat/mcpserver/{server.pk}/change/").content.decode()
    assert "s3cret" not in change and "tok-123" not in change


def test_the_data_migration_registers_the_demo_server_once():
    """chat/0007: `demo` (builtin:demo) for the scripted agent, enabled; running it again
    (or after an admin changed the row) changes nothing."""
    import importlib

    from django.apps import apps

    migration = importlib.import_module("chat.migrations.0007_demo_mcp_server")
    assert not McpServer.objects.filter(name="demo").exists()  # tests start without it
    migration.add_demo(apps, None)
    demo = McpServer.objects.get(name="demo")
    assert (demo.url, demo.enabled, demo.agents) == ("builtin:demo", True, ["scripted"])
    demo.clean()
    McpServer.objects.filter(pk=demo.pk).update(agents=["scripted", "openai"])
    migration.add_demo(apps, None)
    assert McpServer.objects.get(name="demo").agents == ["scripted", "openai"]
    migration.remove_demo(apps, None)
    assert not McpServer.objects.exists()
