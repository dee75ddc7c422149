"""Talk to one MCP server with the official `mcp` SDK client: list its tools, call one.

The agent runs synchronously (a run's worker thread, a Celery task, or inline in a
request), so each operation is one `anyio.run` of the async SDK client: connect, do the
one thing, disconnect. Nothing is kept between calls, so a dead or restarted server costs
one failed call, never a stuck connection.

Timeouts (issue #15 §4). A person answering a server's elicitation may take as long as
MCP_ELICITATION_TIMEOUT (30 minutes by default) while the `tools/call` request waits; a
server that simply does not answer must still fail in reasonable time. So:
- connecting gives up after MCP_CONNECT_TIMEOUT;
- each operation has a `Budget` of MCP_TOOL_TIMEOUT seconds that runs only while we wait
  on the *server*: the elicitation callback pauses it while a person is answering (the
  SDK's own `read_timeout_seconds` would keep running and cut the person off, so it is
  not used);
- the HTTP read timeout is only a backstop, longer than the elicitation limit plus the
  budget, because an SSE response stream is legitimately idle while a person answers.

Protocol revision: the client negotiates with the SDK's automatic mode (`mode="auto"`:
`server/discover`, falling back to the initialize handshake), so a 2026-07-28 server is
spoken to in that revision and an older one in 2025-11-25 — except where the caller pins
the revision (`mode=LEGACY`: the session host speaks 2025-11-25 to a server that speaks
both, because its tools ask over a back-channel only that revision has). `call_round` makes one round
of a call on a 2026 server and returns an `InputRequiredResult` as it is (the caller
persists it and re-issues the call with the answers later: no connection is held);
a 2025-11-25 server needs its session open while a person answers, so such calls are made
by the MCP session host (chat.mcphost.host) with `tool_call` and its elicitation hooks.
The client introduces itself as this product (`CLIENT_INFO`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import math
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import certifi
import httpx2
import mcp_types as types
from django.conf import settings
from mcp import Client
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from chat.core.version import product_version

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Stable codes of the errors a call can end with; the model sees them as `error_code`.
MCP_UNAVAILABLE = "MCP_UNAVAILABLE"
MCP_TIMEOUT = "MCP_TIMEOUT"
MCP_PROTOCOL_ERROR = "MCP_PROTOCOL_ERROR"
MCP_URL_ELICITATION_REQUIRED = "MCP_URL_ELICITATION_REQUIRED"
LEGACY_REVISION = "2025-11-25"
# Connect modes (the SDK's `Client(mode=…)`): negotiate, or the 2025-11-25 handshake only.
AUTO = "auto"
LEGACY = "legacy"


# How this product introduces itself to every MCP server (clientInfo).
CLIENT_INFO = types.Implementation(name="inline-questionnaire-chat", version=product_version())


def is_modern(revision: str) -> bool:
    """Does `revision` use 2026-07-28's stateless requests (input requests in results)?"""
    return revision in MODERN_PROTOCOL_VERSIONS


class McpHostError(Exception):
    """One MCP operation failed: a stable `code` and a message fit for the model and a log
    line (never a header value: those are not in any message)."""

    def __init__(self, code: str, message: str, *, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass(frozen=True)
class Endpoint:
    """Where a server is and what to send it. `headers` hold secrets: `repr` hides them."""

    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)


ElicitFn = Callable[
    [types.ElicitRequestParams, "Budget"], Awaitable[types.ElicitResult | types.ErrorData]
]
CompleteFn = Callable[[str], Awaitable[None]]
# A progress note of the call: (progress, total or None, message or None).
ProgressFn = ProgressFnT


@dataclass(frozen=True)
class Hooks:
    """What the server may ask of the chat during a call: an elicitation (`elicit`, which
    must pause the budget while a person answers) and the URL-mode completion
    notification (`elicitation_complete(elicitation_id)`); the call's progress notes
    (`progress`: the call asks for them with a progress token)."""

    elicit: ElicitFn | None = None
    elicitation_complete: CompleteFn | None = None
    progress: ProgressFn | None = None


class Budget:
    """Seconds an operation may spend waiting on the server; paused while on a person.

    `scope()` arms it around the operation (raising `TimeoutError` when it runs out);
    `paused()` stops the clock for a block (nestable: concurrent elicitations)."""

    def __init__(self, seconds: float) -> None:
        self.remaining = seconds
        self.pauses = 0
        self._scope: anyio.CancelScope | None = None

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        with anyio.CancelScope(deadline=anyio.current_time() + self.remaining) as scope:
            self._scope = scope
            try:
                yield
            finally:
                self._scope = None
        if scope.cancelled_caught:
            raise TimeoutError

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        scope = self._scope
        if scope is not None and not self.pauses:
            self.remaining = max(scope.deadline - anyio.current_time(), 0.0)
            scope.deadline = math.inf
        self.pauses += 1
        try:
            yield
        finally:
            self.pauses -= 1
            if scope is not None and not self.pauses:
                scope.deadline = anyio.current_time() + self.remaining


def elicitation_limit() -> float:
    """The longest a person may take to answer (the elicitation card owns the setting)."""
    return float(getattr(settings, "MCP_ELICITATION_TIMEOUT", 1800))


def http_timeout() -> httpx2.Timeout:
    connect = settings.MCP_CONNECT_TIMEOUT
    backstop = elicitation_limit() + settings.MCP_TOOL_TIMEOUT + 60
    return httpx2.Timeout(backstop, connect=connect, pool=connect)


@functools.lru_cache(maxsize=1)
def _tls() -> ssl.SSLContext:
    """One TLS context for every connection of this process: building one per client
    loads the CA bundle each time (~0.9 MB of memory per pending call in the session
    host)."""
    return ssl.create_default_context(cafile=certifi.where())


def _http_client(endpoint: Endpoint, limits: httpx2.Limits | None = None) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(
        headers=dict(endpoint.headers),
        timeout=http_timeout(),
        verify=_tls(),
        limits=limits or httpx2.Limits(max_connections=100, max_keepalive_connections=20),
    )


class HttpClients:
    """One HTTP client — one connection pool — per server (URL and headers) for the calls
    of one long-lived event loop (the session host's), instead of a client per call.

    Every pending call still holds its own two connections (the `tools/call` POST's SSE
    response and the session's GET stream), so the pool has no connection limit; idle
    connections are kept a few seconds (`IDLE_KEPT`, `IDLE_SECONDS`). The SDK session of
    each call stays its own (`mcp-session-id` is per call); cookies a server sets are
    shared by its calls, as a browser would. `aclose()` when the loop ends.
    """

    IDLE_KEPT = 20
    IDLE_SECONDS = 5.0

    def __init__(self) -> None:
        self._clients: dict[tuple[str, tuple[tuple[str, str], ...]], httpx2.AsyncClient] = {}

    def client(self, endpoint: Endpoint) -> httpx2.AsyncClient:
        key = (endpoint.url, tuple(sorted(endpoint.headers.items())))
        http = self._clients.get(key)
        if http is None or http.is_closed:
            limits = httpx2.Limits(
                max_connections=None,
                max_keepalive_connections=self.IDLE_KEPT,
                keepalive_expiry=self.IDLE_SECONDS,
            )
            http = self._clients[key] = _http_client(endpoint, limits)
        return http

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for http in clients:
            with contextlib.suppress(Exception):
                await http.aclose()


@contextlib.asynccontextmanager
async def _http_transport(endpoint: Endpoint, shared: HttpClients | None) -> AsyncIterator[Any]:
    if shared is not None:
        async with streamable_http_client(endpoint.url, http_client=shared.client(endpoint)) as s:
            yield s
        return
    async with (
        _http_client(endpoint) as http,
        streamable_http_client(endpoint.url, http_client=http) as streams,
    ):
        yield streams


def _target(endpoint: Endpoint, shared: HttpClients | None = None) -> Any:
    if endpoint.url.startswith("builtin:"):
        from chat.mcphost.demo import builtin_server

        return builtin_server(endpoint.url.removeprefix("builtin:"))
    return _http_transport(endpoint, shared)


@contextlib.asynccontextmanager
async def _connected(
    endpoint: Endpoint,
    budget: Budget,
    hooks: Hooks,
    mode: str = "auto",
    shared: HttpClients | None = None,
) -> AsyncIterator[Client]:
    elicitation_callback = None
    if hooks.elicit is not None:
        elicit = hooks.elicit

        async def elicitation_callback(
            context: ClientRequestContext, params: types.ElicitRequestParams
        ) -> types.ElicitResult | types.ErrorData:
            return await elicit(params, budget)

    async def message_handler(message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            logger.info("MCP server %s: transport error %s", endpoint.name, type(message).__name__)
            return
        notification = getattr(message, "root", message)
        complete = hooks.elicitation_complete
        if isinstance(notification, types.ElicitCompleteNotification) and complete is not None:
            await complete(notification.params.elicitation_id)

    client = Client(
        _target(endpoint, shared),
        mode=mode,
        elicitation_callback=elicitation_callback,
        message_handler=message_handler,
        client_info=CLIENT_INFO,
        cache=None,
    )
    async with client:
        yield client


def _error(endpoint: Endpoint, exc: BaseException) -> McpHostError:
    """The stable error for what an operation raised."""
    if isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        return _error(endpoint, inner[0] if inner else exc.exceptions[0])
    if isinstance(exc, McpHostError):
        return exc
    if isinstance(exc, TimeoutError):
        return McpHostError(MCP_TIMEOUT, f"The MCP server {endpoint.name} did not answer in time.")
    if isinstance(exc, MCPError):
        if exc.code == types.URL_ELICITATION_REQUIRED:
            return McpHostError(MCP_URL_ELICITATION_REQUIRED, exc.message, data=exc.data)
        if exc.code == types.CONNECTION_CLOSED:
            return McpHostError(
                MCP_UNAVAILABLE, f"The MCP server {endpoint.name} closed the connection."
            )
        return McpHostError(
            MCP_PROTOCOL_ERROR, f"The MCP server {endpoint.name} answered an error: {exc.message}"
        )
    if isinstance(exc, httpx2.HTTPError | OSError | anyio.BrokenResourceError | anyio.EndOfStream):
        return McpHostError(
            MCP_UNAVAILABLE,
            f"The MCP server {endpoint.name} can't be reached ({type(exc).__name__}).",
        )
    return McpHostError(
        MCP_PROTOCOL_ERROR,
        f"Talking to the MCP server {endpoint.name} failed ({type(exc).__name__}).",
    )


def needs_back_channel(error: McpHostError) -> bool:
    """Did a 2026-07-28 call fail because its tool asked mid-call (`ctx.elicit` on a
    server that speaks both revisions: the SDK's NoBackChannelError, -32600)?"""
    return error.code == MCP_PROTOCOL_ERROR and "no back-channel" in error.message


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from synchronous code.

    A run's worker thread and a Celery task have no event loop; the inline runner may be
    called from async code (a test, an ASGI view's sync_to_async thread has none either),
    and then the coroutine runs on a thread of its own."""

    async def main() -> T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(main)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mcp") as pool:
        return pool.submit(anyio.run, main).result()


async def operate(
    endpoint: Endpoint,
    hooks: Hooks,
    work: Callable[[Client], Awaitable[T]],
    seconds: float,
    shared: HttpClients | None = None,
    mode: str = AUTO,
) -> T:
    """Connect (`mode`: automatic revision, or `LEGACY` for the 2025-11-25 handshake), do
    `work` within a budget of `seconds` spent waiting on the server, disconnect. `shared`:
    the event loop's HTTP clients (else one of its own). Raises `McpHostError`."""
    budget = Budget(seconds)
    try:
        with budget.scope():
            async with _connected(endpoint, budget, hooks, mode, shared) as client:
                return await work(client)
    except (Exception, BaseExceptionGroup) as exc:
        error = _error(endpoint, exc)
        if not needs_back_channel(error):  # expected: the caller switches and says so
            logger.warning("MCP server %s: %s %s", endpoint.name, error.code, error.message)
        raise error from exc


def _operate(
    endpoint: Endpoint, hooks: Hooks, work: Callable[[Client], Awaitable[T]], seconds: float
) -> T:
    return run_sync(lambda: operate(endpoint, hooks, work, seconds))


def tools_list(endpoint: Endpoint) -> tuple[list[types.Tool], str]:
    """Every tool the server lists (all pages), and the protocol revision negotiated.
    Raises `McpHostError`."""

    async def work(client: Client) -> tuple[list[types.Tool], str]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _page in range(50):  # a paginator that never ends can't hang a turn
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools, client.protocol_version

    return _operate(endpoint, Hooks(), work, settings.MCP_TOOL_TIMEOUT)


@dataclass(frozen=True)
class Round:
    """One round of a tool call: the revision the server speaks, and its answer — the
    result, or (2026-07-28) the input it needs first; neither when the server speaks
    2025-11-25 and the caller did not allow such a call (`legacy=False`)."""

    revision: str
    result: types.CallToolResult | None = None
    input: types.InputRequiredResult | None = None
    seconds: float = 0.0  # spent waiting on the server


def call_round(
    endpoint: Endpoint,
    name: str,
    arguments: dict[str, Any],
    *,
    seconds: float,
    responses: types.InputResponses | None = None,
    request_state: str | None = None,
    progress: ProgressFn | None = None,
) -> Round:
    """One round of a call on a 2026-07-28 server, within `seconds` of the tool budget:
    its result or its `InputRequiredResult`, returned as they are (nothing is held
    afterwards). Against a 2025-11-25 server nothing is called (`Round.revision` says
    so: the caller hands the call to the session host). Raises `McpHostError`."""

    async def work(client: Client) -> Round:
        revision = client.protocol_version
        if not is_modern(revision):
            return Round(revision)
        started = anyio.current_time()
        answer = await client.session.call_tool(
            name,
            arguments,
            input_responses=responses,
            request_state=request_state,
            allow_input_required=True,
            progress_callback=progress,
        )
        spent = anyio.current_time() - started
        if isinstance(answer, types.InputRequiredResult):
            return Round(revision, input=answer, seconds=spent)
        if not isinstance(answer, types.CallToolResult):
            raise McpHostError(MCP_PROTOCOL_ERROR, f"{endpoint.name} answered an unknown result.")
        return Round(revision, result=answer, seconds=spent)

    return _operate(endpoint, Hooks(elicit=_no_back_channel), work, max(seconds, 0.5))


async def _no_back_channel(
    _params: types.ElicitRequestParams, _budget: Budget
) -> types.ElicitResult | types.ErrorData:
    """Declares the elicitation capability on a 2026 connection, whose questions come as
    input requests in results; a request mid-call can't be answered there."""
    return types.ErrorData(code=types.INVALID_PARAMS, message="Ask with an input request.")


async def tool_call_async(
    endpoint: Endpoint,
    name: str,
    arguments: dict[str, Any],
    hooks: Hooks | None = None,
    *,
    seconds: float | None = None,
    shared: HttpClients | None = None,
    mode: str = AUTO,
) -> types.CallToolResult:
    """Call one tool with the whole exchange in one connection (the session host's way,
    for 2025-11-25 servers: their elicitations come over that connection, and a 2026 one's
    input requests are answered through the same hooks; the budget is paused while a
    person answers). `shared`: the session host's HTTP clients (a pool per server);
    `mode`: `LEGACY` pins 2025-11-25 (a server that speaks both, whose tool asks over a
    back-channel). A server error result comes back as the result (`is_error`), a
    failure to get one raises `McpHostError`."""

    async def work(client: Client) -> types.CallToolResult:
        hook = hooks.progress if hooks is not None else None
        return await client.call_tool(name, arguments, progress_callback=hook)

    budget = settings.MCP_TOOL_TIMEOUT if seconds is None else seconds
    return await operate(endpoint, hooks or Hooks(), work, budget, shared, mode)


def tool_call(
    endpoint: Endpoint,
    name: str,
    arguments: dict[str, Any],
    hooks: Hooks | None = None,
    *,
    seconds: float | None = None,
) -> types.CallToolResult:
    """`tool_call_async` from synchronous code."""
    return run_sync(lambda: tool_call_async(endpoint, name, arguments, hooks, seconds=seconds))
