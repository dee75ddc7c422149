"""`POST /api/v1/conversations/{id}/runs`: an external runtime opens a run and receives
its per-run identity (MCP token + skill identity token) and the MCP endpoint URL;
`POST …/runs/{run_id}/cancel` ends a run (an external one at once, its tokens with it;
a built-in agent's at its next step) and the run's waits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from django.http import HttpRequest
from ninja import Field, Router, Schema
from ninja.params import functions as param
from ninja.responses import Status

from chat.core import selectors
from chat.core.identity import run_environment
from chat.core.runs import run_create
from chat.edge.apibase import ApiTokenAuth, ConversationId, error_descriptions, errors
from chat.edge.http import signed_in
from chat.edge.mcp import PATH as MCP_PATH
from chat.runs.services import run_cancel as run_cancel_service

router = Router(auth=ApiTokenAuth(), tags=["runs"])
RunId = Annotated[int, param.Path(..., ge=0, le=2**63 - 1, description="The run's id.")]


class RunEnvironment(Schema):
    MCP_RUN_TOKEN: str = Field(description="Bearer token for `mcp_url`, bound to this run.")
    SKILL_IDENTITY_TOKEN: str = Field(description="Bearer token for skill publishing.")
    WEGENT_SKILL_IDENTITY_TOKEN: str = Field(description="The same, under spec 003's name.")


class RunOpened(Schema):
    run_id: int
    mcp_url: str = Field(description="The chat's MCP endpoint (streamable HTTP).")
    env: RunEnvironment


class RunEnded(Schema):
    run_id: int
    status: str = Field(description="The run's status now (`cancelled`, `finished`, …).")
    stop_reason: str = Field(description="Why it ended (`cancelled`, …).")


@router.post(
    "/conversations/{id:conversation_id}/runs",
    url_name="run_open",
    response={201: RunOpened, **errors()},
    openapi_extra=error_descriptions(),
    summary="Open a run for an external runtime",
)
def run_open(request: HttpRequest, conversation_id: ConversationId) -> Status[Mapping[str, object]]:
    conversation = selectors.conversation_get_for_user(
        user=signed_in(request), conversation_id=conversation_id
    )
    # An external run has no heartbeat: it ends when idle or expires with its tokens.
    run = run_create(conversation=conversation, external=True)
    env = run_environment(
        conversation_id=conversation.pk, run_id=run.pk, user_id=signed_in(request).pk
    )
    body = {"run_id": run.pk, "mcp_url": request.build_absolute_uri(MCP_PATH), "env": env}
    return Status(201, body)


@router.post(
    "/conversations/{id:conversation_id}/runs/{id:run_id}/cancel",
    url_name="run_cancel_api",
    response={200: RunEnded, **errors(409)},
    openapi_extra=error_descriptions(409),
    summary="End a run",
)
def run_cancel(
    request: HttpRequest, conversation_id: ConversationId, run_id: RunId
) -> Mapping[str, object]:
    conversation = selectors.conversation_get_for_user(
        user=signed_in(request), conversation_id=conversation_id
    )
    run = run_cancel_service(conversation=conversation, run_id=run_id)
    run.refresh_from_db()
    return {"run_id": run.pk, "status": run.status, "stop_reason": run.stop_reason}
