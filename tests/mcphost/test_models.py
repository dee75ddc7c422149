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
    assert server.enabled and sorted(server.agents) == ["openai", "scripted"]
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


# --- issue 22: credentials encrypted at rest ---------------------------------------------


@pytest.fixture
def key_file(settings, tmp_path):
    from chat.mcphost import sealed

    settings.MCP_SECRETS_KEY = ""
    settings.MCP_SECRETS_KEY_FILE = str(tmp_path / "mcp.key")
    sealed.fernet(reload=True)
    yield tmp_path / "mcp.key"
    settings.MCP_SECRETS_KEY_FILE = ""
    sealed._keys = None  # the next test reads its own settings


def _raw_row(pk: int) -> tuple[str, str]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT headers, bearer_token FROM chat_mcpserver WHERE id = %s", [pk])
        return cursor.fetchone()


@pytest.mark.django_db
def test_secrets_are_encrypted_in_the_database(key_file):
    server = McpServer.objects.create(
        name="s", url="https://x.example/", headers={"X-Key": "s3cret"}, bearer_token="tok-123"
    )
    headers, bearer = _raw_row(server.pk)
    assert "s3cret" not in headers and "X-Key" not in headers and "tok-123" not in bearer
    again = McpServer.objects.get(pk=server.pk)
    assert again.headers == {"X-Key": "s3cret"} and again.bearer_token == "tok-123"
    assert key_file.stat().st_mode & 0o077 == 0  # the key: owner only


@pytest.mark.django_db
def test_rotation_reencrypts_every_row_and_drops_the_old_key(key_file):
    from django.core.management import call_command

    from chat.mcphost import sealed

    server = McpServer.objects.create(name="s", url="https://x.example/", bearer_token="tok")
    old_key, before = key_file.read_text().split(), _raw_row(server.pk)
    call_command("mcp_secrets_rotate", stdout=io.StringIO())
    new_key = key_file.read_text().split()
    assert len(new_key) == 1 and new_key != old_key
    assert _raw_row(server.pk) != before
    assert McpServer.objects.get(pk=server.pk).bearer_token == "tok"
    # A database copy with the old key only reveals nothing.
    key_file.write_text(old_key[0] + "\n")
    sealed.fernet(reload=True)
    with pytest.raises(sealed.SealedValueError):
        McpServer.objects.get(pk=server.pk)


@pytest.mark.django_db
def test_keys_from_the_environment_first_encrypts_all_decrypt(settings, key_file):
    from cryptography.fernet import Fernet
    from django.core.management import call_command

    from chat.mcphost import sealed

    first, second = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.MCP_SECRETS_KEY = second
    sealed.fernet(reload=True)
    server = McpServer.objects.create(name="s", url="https://x.example/", bearer_token="tok")
    settings.MCP_SECRETS_KEY = f"{first}, {second}"
    sealed.fernet(reload=True)
    assert McpServer.objects.get(pk=server.pk).bearer_token == "tok"  # read with the second
    call_command("mcp_secrets_rotate", stdout=io.StringIO())  # written with the first
    settings.MCP_SECRETS_KEY = first
    sealed.fernet(reload=True)
    assert McpServer.objects.get(pk=server.pk).bearer_token == "tok"


# Long enough that a random ciphertext never contains them by chance ("h1" did, 2% of runs).
HEADER, BEARER = "header-secret-value-1", "bearer-secret-value-1"


@pytest.mark.django_db(transaction=True)
def test_the_migration_encrypts_existing_rows(key_file):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("chat", "0007_demo_mcp_server")], [("chat", "0008_mcpserver_sealed_secrets")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("chat", "McpServer")
    old.objects.create(
        name="plain", url="https://x.example/", headers={"A": HEADER}, bearer_token=BEARER
    )
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(after)
    row = McpServer.objects.get(name="plain")
    assert HEADER not in _raw_row(row.pk)[0] and BEARER not in _raw_row(row.pk)[1]
    assert row.headers == {"A": HEADER} and row.bearer_token == BEARER
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_admin_shows_the_remembered_revision_and_a_new_url_forgets_it(admin_client):
    """Issue 33: a server whose tools ask mid-call is called in 2025-11-25 from then on;
    admin says so, and pointing the row at another URL learns the revision anew."""
    from chat.mcphost import health
    from chat.mcphost.records import McpServerState

    server = McpServer.objects.create(name="s", url="http://x/mcp", agents=["scripted"])
    health.record_success(server.pk, "2026-07-28")
    health.mark_needs_back_channel(server.pk, "book")
    health.mark_needs_back_channel(server.pk, "login")
    health.mark_needs_back_channel(server.pk, "book")
    change = f"/admin/chat/mcpserver/{server.pk}/change/"
    html = admin_client.get(change).text
    assert "tools that ask mid-call, called in 2025-11-25: book, login" in html
    form = {
        "name": "s",
        "url": "http://y/mcp",
        "enabled": "on",
        "agents": ["scripted"],
        "headers_text": "",
        "bearer": "",
    }
    assert admin_client.post(change, form).status_code == 302
    state = McpServerState.objects.get(server=server)
    assert (state.revision, state.legacy_tools) == ("", [])
