"""The one adapter between the MCP host and the card kind that answers MCP servers'
elicitation requests.

`backend()` is the module the registered kind names (`Kind.mcp_elicitation`,
questionnaires.registry), typed by `Backend`: what the host calls of it. None when no
registered kind answers elicitations (the host then refuses them). `open_arguments` turns a
server's `elicitation/create` parameters (form or URL mode) into the arguments of
`elicitation_open`. The 2026-07-28 path (chat.mcphost.calling) opens cards for a round's
input requests; the session host (chat.mcphost.host) opens them for a 2025-11-25 server's
requests mid-call and hands the answers back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib import import_module
from typing import Any, Protocol, cast

import mcp_types as types

from chat.core.errors import ChatError
from questionnaires import registry
from questionnaires.protocol.jsontypes import Json


class Card(Protocol):
    """The card a request opened (its row)."""

    @property
    def pk(self) -> int: ...


class Outcome(Protocol):
    """A settled card's answer, as the server gets it (`ElicitResult`)."""

    @property
    def action(self) -> str: ...  # "accept" | "decline" | "cancel"
    @property
    def content(self) -> dict[str, Json] | None: ...
    @property
    def meta(self) -> dict[str, Json] | None: ...


class Backend(Protocol):
    """What the MCP host calls of the kind answering elicitations (its services module)."""

    ElicitationRefused: type[ChatError]  # a refused request (its code and message)

    def elicitation_open(
        self,
        *,
        conversation_id: int,
        run_id: int | None,
        server_name: str,
        tool_name: str,
        tool_call_id: str,
        mode: str,
        message: str,
        requested_schema: Mapping[str, object] | None = None,
        url: str | None = None,
        remote_id: str | None = None,
        input_key: str = "",
        resumes_run: bool = False,
        session_ref: str = "",
    ) -> Card: ...
    def elicitation_complete(
        self, *, conversation_id: int, remote_id: str, session_ref: str
    ) -> bool: ...
    def elicitations_settled(self, ids: Iterable[int]) -> Mapping[int, Outcome]: ...
    def elicitations_end(
        self, *, run_id: int, tool_call_id: str | None = None, code: str
    ) -> int: ...
    def elicitations_resolve_links(
        self, *, run_id: int, tool_call_id: str, success: bool
    ) -> None: ...


def backend() -> Backend | None:
    """The registered kind's elicitation module, or None where no kind answers them."""
    path = registry.mcp_elicitation()
    return cast(Backend, import_module(path)) if path else None


def open_arguments(
    params: Any,
    *,
    conversation_id: int,
    run_id: int | None,
    server_name: str,
    tool_name: str,
    call_id: str,
) -> dict[str, Any]:
    """`elicitation_open`'s arguments for one request's parameters."""
    is_url = isinstance(params, types.ElicitRequestURLParams)
    schema = getattr(params, "requested_schema", None)
    return {
        "conversation_id": conversation_id,
        "run_id": run_id,
        "server_name": server_name,
        "tool_name": tool_name,
        "tool_call_id": call_id,
        "mode": "url" if is_url else "form",
        "message": str(getattr(params, "message", "") or ""),
        "requested_schema": None if is_url or schema is None else dict(schema),
        "url": params.url if is_url else None,
        "remote_id": params.elicitation_id if is_url else None,
    }
