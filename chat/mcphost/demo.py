"""The bundled demo MCP server: a restaurant that asks the person through elicitations.

`reserve_table` asks with a form (date, party size, seating, dietary needs, newsletter);
`verify_email` asks in URL mode. Both are written for the 2026-07-28 revision: the
question is an input request in the call's result (a `Resolve` parameter, or an
`InputRequiredResult` the tool returns), so a pending question holds nothing — the chat
re-issues the call with the answer.

How it is reachable without configuration: it runs *in process*. An admin registers it
with the URL `builtin:demo` (only admins set URLs, and only names in
`models.BUILTIN_SERVERS` are accepted), and the host's client connects to the server
object through the SDK's in-memory transport (`mcp.Client(server)`) instead of HTTP. That
needs no port, no extra ASGI mount, no loopback request from a worker back into the web
process (which would deadlock a single-worker `make run` and fail under Celery workers
that have no web server), and it works the same with the thread, inline and Celery
runners and in tests. The same object can still be served over HTTP for manual testing:
`server.streamable_http_app()`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from typing import Annotated, Literal

import mcp_types as types
from django.conf import settings
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.server.request_state import RequestStateSecurity
from pydantic import BaseModel, Field

INFO_URL = "https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation"


def _request_state_security() -> RequestStateSecurity:
    """The server's request state is sealed with a key every process derives alike (from
    SECRET_KEY): the answer may be re-issued by another worker than the one that asked.
    It lives as long as a person may take to answer."""
    key = hashlib.sha256(f"mcp-demo-request-state:{settings.SECRET_KEY}".encode()).hexdigest()
    return RequestStateSecurity(keys=[key], ttl=settings.MCP_ELICITATION_TIMEOUT + 300)


server = MCPServer(
    "demo",
    instructions="A demo restaurant: reserve a table, verify an email address.",
    request_state_security=_request_state_security(),
)


class Reservation(BaseModel):
    date: dt.date = Field(description="Which day?")
    party_size: int = Field(description="How many people?", ge=1, le=12)
    seating: Literal["indoor", "terrace", "bar"] = Field(
        default="indoor", description="Where would you like to sit?"
    )
    dietary: list[Literal["vegetarian", "vegan", "gluten-free", "nut allergy"]] = Field(
        default_factory=list, description="Any dietary needs?"
    )
    newsletter: bool = Field(default=False, description="Send me the monthly newsletter")


def _ask_reservation(restaurant: str = "Chez MCP") -> Elicit[Reservation]:
    return Elicit(f"Reserve a table at {restaurant}", Reservation)


@server.tool(title="Checking availability")
async def reserve_table(
    answer: Annotated[ElicitationResult[Reservation], Resolve(_ask_reservation)],
    restaurant: str = "Chez MCP",
) -> str:
    """Reserve a table: asks the person for the date, party size, seating and dietary needs."""
    if answer.action != "accept":
        return f"No reservation made (the person chose {answer.action})."
    data = answer.data
    needs = ", ".join(data.dietary) or "none"
    return (
        f"Reserved a table at {restaurant} for {data.party_size} on {data.date.isoformat()} "
        f"({data.seating}); dietary needs: {needs}; newsletter: "
        f"{'yes' if data.newsletter else 'no'}. Reference {secrets.token_hex(3).upper()}."
    )


@server.tool(title="Verifying the address")
async def verify_email(ctx: Context, email: str) -> str | types.InputRequiredResult:
    """Verify an email address: sends the person to a page outside the chat (URL mode)."""
    answer = (ctx.input_responses or {}).get("verify")
    if answer is None:
        link = types.ElicitRequestURLParams(
            message=f"Open the link to confirm {email} (a demo page about URL-mode elicitation).",
            url=INFO_URL,
            elicitation_id="verify-" + secrets.token_hex(6),
        )
        return types.InputRequiredResult(
            input_requests={"verify": types.ElicitRequest(params=link)}
        )
    action = getattr(answer, "action", "cancel")
    if action != "accept":
        return f"{email} was not verified (the person chose {action})."
    return f"{email} is verified."


def builtin_server(name: str) -> MCPServer:
    """The in-process server behind `builtin:NAME`."""
    if name != "demo":
        raise LookupError(f"No built-in MCP server {name!r}.")
    return server
