"""deferred_mcp_proxy: the spec-003 Claude Code path. A stdio MCP server that exposes only
`interactive_form_question` and forwards each call's raw arguments, unchanged, to this
app's `/mcp/` endpoint with the run's token; the app validates, shows the form, stores the
call and ends the run (`tool_deferred`). The person's answer arrives as the next message.

Run by the MCP client (Claude Code) as a subprocess; it needs no Django and no database:

    MCP_URL=https://chat.example.com/mcp/ MCP_RUN_TOKEN=… python -m chat.deferred_mcp_proxy

(`manage.py deferred_mcp_proxy` does the same.) Both values come from
`POST /api/v1/conversations/{id}/runs` (`mcp_url`, `env.MCP_RUN_TOKEN`). The tool's name,
description and schema are the app's own (read from `/mcp/` once per call of
`tools/list`), so the proxy never drifts from what the app accepts.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from chat.core.version import product_version

TOOL = "interactive_form_question"
TIMEOUT = 60.0


def _upstream() -> tuple[str, str]:
    url, token = os.environ.get("MCP_URL", ""), os.environ.get("MCP_RUN_TOKEN", "")
    if not url or not token:
        raise SystemExit("deferred_mcp_proxy: set MCP_URL and MCP_RUN_TOKEN")
    return url, token


async def _with_app(work: Any) -> Any:
    """One session with the app for `work`. A deferred form ends the run, and its token
    with it: the session's closing requests are refused then, which is no failure once
    `work` has its answer."""
    url, token = _upstream()
    answer: list[Any] = []
    try:
        async with (
            httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT
            ) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            answer.append(await work(session))
    except (MCPError, httpx2.HTTPError, OSError, ExceptionGroup):
        if not answer:
            raise
    return answer[0]


async def _list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
    async def work(client: ClientSession) -> list[types.Tool]:
        return [t for t in (await client.list_tools()).tools if t.name == TOOL]

    return types.ListToolsResult(tools=await _with_app(work))


async def _call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name != TOOL:
        text = f"Unknown tool {params.name!r}: this proxy offers {TOOL} only."
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=True
        )

    async def work(client: ClientSession) -> types.CallToolResult:
        # Listed first: the SDK checks a result against the tool's schema, and after a
        # deferred form (the run ended) it could no longer list the tools to do so.
        await client.list_tools()
        return await client.call_tool(TOOL, dict(params.arguments or {}))

    try:
        result: types.CallToolResult = await _with_app(work)
        return result
    except (MCPError, httpx2.HTTPError, OSError, ExceptionGroup) as exc:
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        text = f"The chat could not be reached ({type(exc).__name__}: {exc}); nothing was shown."
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=True
        )


server: Server[Any] = Server(
    "deferred-mcp-proxy",
    version=product_version(),
    instructions=(
        "interactive_form_question shows a form to the person in the chat and defers: end "
        "your turn after calling it; the answer arrives as the next user message."
    ),
    on_list_tools=_list_tools,
    on_call_tool=_call_tool,
)


async def main() -> None:
    _upstream()  # fail at start, not at the first call
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    try:
        anyio.run(main)
    except KeyboardInterrupt:
        sys.exit(0)
