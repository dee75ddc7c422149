from __future__ import annotations

from typing import Any

import anyio
from django.core.management.base import BaseCommand

from chat import deferred_mcp_proxy


class Command(BaseCommand):
    help = (
        "A stdio MCP server exposing only interactive_form_question, forwarding each call "
        "to this app's /mcp/ with MCP_RUN_TOKEN (spec 003's Claude Code path; needs MCP_URL "
        "and MCP_RUN_TOKEN in the environment)."
    )

    def handle(self, *args: str, **options: Any) -> None:
        anyio.run(deferred_mcp_proxy.main)
