"""`mcp_server_add NAME URL [--header "Name: value"]… [--bearer TOKEN]`: register an MCP
server as a tool source for every agent that calls a model. Prints the server back with
its secrets masked; exit 2 on a bad name, URL or header."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from chat.core.agents import model_agent_names
from chat.mcphost.models import McpServer


class Command(BaseCommand):
    help = "Register an MCP server (streamable HTTP URL, or builtin:demo) as a tool source."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="Letters, digits, '_' and '-'; tools are NAME__TOOL.")
        parser.add_argument("url", help="http(s)://host/path of the endpoint, or builtin:demo.")
        parser.add_argument(
            "--header", action="append", default=[], help='"Name: value" (repeatable).'
        )
        parser.add_argument("--bearer", default="", help="Sent as Authorization: Bearer …")

    def handle(self, *args: str, **options: Any) -> None:
        headers: dict[str, str] = {}
        for raw in options["header"]:
            name, sep, value = raw.partition(":")
            if not sep or not name.strip():
                raise CommandError(f"A header is 'Name: value', not {raw!r}.", returncode=2)
            headers[name.strip()] = value.strip()
        server = McpServer(
            name=options["name"],
            url=options["url"],
            headers=headers,
            bearer_token=options["bearer"],
            enabled=True,
            agents=list(model_agent_names()),
        )
        try:
            server.full_clean()
        except ValidationError as exc:
            problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
            raise CommandError(problems, returncode=2) from None
        server.save()
        self.stdout.write(f"MCP server {server.name} (id {server.pk}) added, enabled")
        self.stdout.write(f"  url: {server.url}")
        self.stdout.write(f"  agents: {', '.join(server.agents)}")
        for name, shown in server.masked_headers().items():
            self.stdout.write(f"  header {name}: {shown}")
