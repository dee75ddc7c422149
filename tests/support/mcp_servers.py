"""Real MCP servers for tests and benchmarks, written with the official SDK's high-level server.

`make_server()` speaks only 2025-11-25 (its `server/discover` names no 2026 revision,
so a client in automatic mode falls back to the handshake): its tools ask mid-call with
`ctx.elicit`. `make_modern_server()` speaks 2026-07-28: its tools ask with input requests
in their results (`Resolve(Elicit…)`, or an `InputRequiredResult` they return).
`make_stock_server()` is a stock `MCPServer`, unpatched: it speaks both revisions, as the
SDK's own servers do, and asks every way the SDK offers (`ctx.elicit`, `ctx.elicit_url`,
`Resolve(Elicit…)`, -32042). `serve(server)` runs one on a free loopback port with uvicorn in a thread and yields its
URL; `dying_server()` runs the 2025-11-25 one in a subprocess whose `die` tool kills its
own process mid-call. `python -m tests.support.mcp_servers PORT` is that subprocess.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Literal

import mcp_types as types
import uvicorn
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.shared.exceptions import UrlElicitationRequiredError
from pydantic import BaseModel, Field

from tests.support.liveserver import free_port


class Booking(BaseModel):
    size: int = Field(description="How many people?")
    seating: Literal["indoor", "outdoor"] = "indoor"


class Everything(BaseModel):
    """Every field type of the elicitation subset (with formats, bounds and defaults)."""

    name: str = Field(title="Your name", min_length=2, max_length=40)
    code: str = Field(default="AB-1", pattern=r"^[A-Z]{2}-\d$")
    email: str = Field(json_schema_extra={"format": "email"})
    site: str = Field(default="https://example.test/", json_schema_extra={"format": "uri"})
    day: dt.date
    at: dt.datetime
    age: int = Field(ge=0, le=150)
    height: float = Field(default=1.7, ge=0.5, le=2.5)
    member: bool = False
    size: Literal["s", "m", "l"] = "m"
    plan: str = Field(
        json_schema_extra={
            "oneOf": [{"const": "basic", "title": "Basic"}, {"const": "pro", "title": "Pro"}]
        }
    )
    tags: list[Literal["a", "b", "c"]] = Field(default=["a"])
    colours: list[str] = Field(
        default_factory=list,
        json_schema_extra={
            "items": {"anyOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]}
        },
    )


def legacy_only(server: MCPServer) -> MCPServer:
    """Make `server` answer `server/discover` with no 2026 revision (like go-sdk's
    stateful default): clients in automatic mode use the 2025-11-25 handshake."""

    async def discover(_ctx: object, _params: object) -> types.DiscoverResult:
        return types.DiscoverResult(supported_versions=["2025-11-25"], capabilities={})

    server._lowlevel_server.add_request_handler(  # noqa: SLF001 (the SDK's documented hook)
        "server/discover", types.RequestParams, discover
    )
    return server


def make_server() -> MCPServer:
    """The 2025-11-25 test server (asks mid-call)."""
    server = legacy_only(MCPServer("test"))

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    async def book(ctx: Context) -> str:
        """Asks the person with a form."""
        answer = await ctx.elicit("How many of you?", Booking)
        if answer.action == "accept":
            return f"booked {answer.data.size} {answer.data.seating}"
        return f"not booked: {answer.action}"

    @server.tool()
    async def everything(ctx: Context) -> str:
        """Asks for every field type; returns what it got as JSON."""
        answer = await ctx.elicit("Tell me everything", Everything)
        if answer.action == "accept":
            return json.dumps(answer.data.model_dump(mode="json"), sort_keys=True)
        return f"nothing: {answer.action}"

    @server.tool()
    async def login(ctx: Context) -> str:
        """Sends the person to a URL, then reports completion."""
        answer = await ctx.elicit_url("Sign in", "https://example.test/sign-in", "el-42")
        if answer.action == "accept":
            await ctx.request_context.session.send_elicit_complete("el-42")
        return f"login: {answer.action}"

    @server.tool()
    async def slow(seconds: float = 30) -> str:
        """Takes its time."""
        await asyncio.sleep(seconds)
        return "finally"

    @server.tool()
    async def fail() -> str:
        """Raises."""
        raise ToolError("the tool broke")

    @server.tool(name="a_tool_name_far_too_long_to_fit_the_openai_function_name_limit")
    async def long_name() -> str:
        """Never offered with a prefix."""
        return "x"

    @server.tool()
    async def die() -> str:
        """Kills its own process mid-call."""
        os._exit(1)

    return server


def impatient_server(patience: float = 2.0) -> MCPServer:
    """A 2025-11-25 server that gives up on its question after `patience` seconds (as the
    TypeScript SDK does after its 60 s request timeout)."""
    server = legacy_only(MCPServer("impatient"))

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Asks, but does not wait long."""
        try:
            answer = await asyncio.wait_for(ctx.elicit("Quick!", Booking), patience)
        except TimeoutError:
            return "gave up waiting"
        return f"got {answer.action}"

    return server


def _ask_booking() -> Elicit[Booking]:
    return Elicit("How many of you?", Booking)


def make_modern_server() -> MCPServer:
    """The 2026-07-28 test server (asks with input requests in results)."""
    server = MCPServer("modern")

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    async def book(answer: Annotated[ElicitationResult[Booking], Resolve(_ask_booking)]) -> str:
        """Asks the person with a form."""
        if answer.action == "accept":
            return f"booked {answer.data.size} {answer.data.seating}"
        return f"not booked: {answer.action}"

    @server.tool()
    async def login(ctx: Context) -> str | types.InputRequiredResult:
        """Sends the person to a URL (an input request in the result)."""
        answer = (ctx.input_responses or {}).get("login")
        if answer is None:
            link = types.ElicitRequestURLParams(message="Sign in", url="https://example.test/in")
            return types.InputRequiredResult(
                input_requests={"login": types.ElicitRequest(params=link)}
            )
        return f"login: {getattr(answer, 'action', '?')}"

    @server.tool()
    async def survey(ctx: Context, questions: int = 4) -> str | types.InputRequiredResult:
        """Asks `questions` questions in one round."""
        answers = ctx.input_responses or {}
        if not answers:
            requests = {
                f"q{n}": types.ElicitRequest(
                    params=types.ElicitRequestFormParams(
                        message=f"Question {n}?",
                        requested_schema={
                            "type": "object",
                            "properties": {"size": {"type": "integer"}},
                        },
                    )
                )
                for n in range(questions)
            }
            return types.InputRequiredResult(input_requests=requests, request_state="survey")
        return "answers: " + ",".join(sorted(getattr(a, "action", "?") for a in answers.values()))

    @server.tool()
    async def slow(seconds: float = 30) -> str:
        """Takes its time."""
        await asyncio.sleep(seconds)
        return "finally"

    return server


def make_stock_server(gate: threading.Event | None = None) -> MCPServer:
    """A stock Python-SDK server as its users write one: no revision patched, so it speaks
    2026-07-28 and 2025-11-25 both (issue 33); its tools ask the ways the SDK offers.
    `count` reports progress (`ctx.report_progress`); with a `gate`, it holds its last
    step until the gate is set (a test sees the progress before the result)."""
    server = MCPServer("stock")

    @server.tool()
    async def count(ctx: Context, n: int = 3) -> str:
        """Counts to n, reporting progress after each step."""
        for i in range(1, n + 1):
            await ctx.report_progress(i, n, f"Counted {i} of {n}")
            if i == n - 1 and gate is not None:
                await asyncio.to_thread(gate.wait, 120)
        return f"counted to {n}"

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    async def book(ctx: Context) -> str:
        """Asks mid-call with `ctx.elicit` (form mode): a back-channel only 2025-11-25 has."""
        answer = await ctx.elicit("How many of you?", Booking)
        if answer.action == "accept":
            return f"booked {answer.data.size} {answer.data.seating}"
        return f"not booked: {answer.action}"

    @server.tool()
    async def login(ctx: Context) -> str:
        """Sends the person to a URL with `ctx.elicit_url`, then says it is complete."""
        answer = await ctx.elicit_url("Sign in", "https://example.test/sign-in", "el-7")
        if answer.action == "accept":
            await ctx.request_context.session.send_elicit_complete("el-7")
        return f"login: {answer.action}"

    @server.tool()
    async def plain_login(ctx: Context) -> str:
        """Sends the person to a plain-http URL (which the chat refuses to show)."""
        answer = await ctx.elicit_url("Sign in", "http://example.test/sign-in", "el-8")
        return f"plain login: {answer.action}"

    @server.tool()
    async def confirm(ctx: Context) -> str | types.InputRequiredResult:
        """Asks with an `InputRequiredResult` it builds itself (2026-07-28 only)."""
        answer = (ctx.input_responses or {}).get("ok")
        if answer is None:
            form = types.ElicitRequestFormParams(
                message="Go ahead?",
                requested_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
            )
            return types.InputRequiredResult(
                input_requests={"ok": types.ElicitRequest(params=form)}
            )
        return f"confirm: {getattr(answer, 'action', '?')} {getattr(answer, 'content', None)}"

    @server.tool()
    async def plain_link(ctx: Context) -> str | types.InputRequiredResult:
        """A 2026 input request for a plain-http URL; returns what it heard, `_meta` too."""
        answer = (ctx.input_responses or {}).get("link")
        if answer is None:
            link = types.ElicitRequestURLParams(
                message="Sign in", url="http://example.test/in", elicitation_id="el-9"
            )
            return types.InputRequiredResult(
                input_requests={"link": types.ElicitRequest(params=link)}
            )
        meta = answer.model_dump(by_alias=True).get("_meta") or {}
        return f"plain link: {getattr(answer, 'action', '?')} {json.dumps(meta, sort_keys=True)}"

    @server.tool()
    async def reserve(answer: Annotated[ElicitationResult[Booking], Resolve(_ask_booking)]) -> str:
        """Asks with `Resolve(Elicit…)`: input requests in 2026, a request mid-call before."""
        if answer.action == "accept":
            return f"reserved {answer.data.size} {answer.data.seating}"
        return f"not reserved: {answer.action}"

    @server.tool()
    async def authorize() -> str:
        """Needs a browser step first: -32042 (URL elicitation required)."""
        link = types.ElicitRequestURLParams(
            message="Authorize access to your files",
            url="https://example.test/authorize",
            elicitation_id="auth-1",
        )
        raise UrlElicitationRequiredError([link])

    return server


@contextlib.contextmanager
def serve(server: MCPServer) -> Iterator[str]:
    """Serve `server` (streamable HTTP) on loopback in a thread; yields its URL."""
    port = free_port()
    config = uvicorn.Config(
        server.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning"
    )
    web = uvicorn.Server(config)
    thread = threading.Thread(target=web.run, daemon=True, name=f"mcp-test-{port}")
    thread.start()
    deadline = time.monotonic() + 10
    while not web.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the test MCP server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        web.should_exit = True
        thread.join(5)


def _await_port(port: int, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 20
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        if time.monotonic() > deadline or process.poll() is not None:
            raise RuntimeError(f"{what} did not start")
        time.sleep(0.05)


@contextlib.contextmanager
def dying_server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The test server in a subprocess (its `die` tool ends the process); yields its URL
    and the process (to kill it while a call is pending)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.mcp_servers", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _await_port(port, process, "the dying MCP server")
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(5)


TS_SERVER = Path(__file__).resolve().parent / "ts_server"
# The TypeScript SDK v2 (2026-07-28): @modelcontextprotocol/server and /client.
TS_SERVER_V2 = TS_SERVER.with_name("ts_server_v2")


def ts_folder(folder: Path) -> Path:
    """`folder`, or its copy with the newest releases installed (INTEROP_NODE_ROOT)."""
    root = os.environ.get("INTEROP_NODE_ROOT")
    return Path(root) / folder.name if root else folder


def ts_server_missing(folder: Path = TS_SERVER) -> str | None:
    """Why the TypeScript-SDK server in `folder` can't run here (None when it can)."""
    folder = ts_folder(folder)
    if shutil.which("node") is None:
        return "node is not installed: the TypeScript-SDK MCP server can't run"
    if not (folder / "node_modules" / "@modelcontextprotocol").is_dir():
        return f"run `npm ci` in {folder} (make test does) for the TypeScript-SDK server"
    return None


@contextlib.contextmanager
def ts_server(patience_ms: int = 60000, folder: Path = TS_SERVER) -> Iterator[str]:
    """The TypeScript-SDK server in `folder` (tests/support/ts_server, v1, by default) on
    a loopback port; v1's `book` gives up on its question after `patience_ms`. Yields
    its URL."""
    port = free_port()
    process = subprocess.Popen(
        ["node", "server.mjs", str(port)],
        cwd=ts_folder(folder),
        env={**os.environ, "PATIENCE_MS": str(patience_ms)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _await_port(port, process, "the TypeScript-SDK MCP server")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait(5)


if __name__ == "__main__":
    config = uvicorn.Config(
        make_server().streamable_http_app(),
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="warning",
    )
    uvicorn.Server(config).run()
