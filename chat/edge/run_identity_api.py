"""`POST /api/v1/conversations/{id}/runs`: an external runtime opens a run and receives
its per-run identity (MCP token + skill identity token) and the MCP endpoint URL;
`POST …/runs/{run_id}/cancel` ends a run (an external one at once, its tokens with it;
a built-in agent's at its next step) and the run's waits."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from chat.core import selectors
from chat.core.identity import run_environment
from chat.core.runs import run_create
from chat.edge.http import api_view, signed_in
from chat.edge.mcp import PATH as MCP_PATH
from chat.runs.services import run_cancel as run_cancel_service


@api_view(("POST",))
def run_open(request: HttpRequest, conversation_id: int) -> JsonResponse:
    conversation = selectors.conversation_get_for_user(
        user=signed_in(request), conversation_id=conversation_id
    )
    # An external run has no heartbeat: it ends when idle or expires with its tokens.
    run = run_create(conversation=conversation, external=True)
    env = run_environment(
        conversation_id=conversation.pk, run_id=run.pk, user_id=signed_in(request).pk
    )
    body = {"run_id": run.pk, "mcp_url": request.build_absolute_uri(MCP_PATH), "env": env}
    return JsonResponse(body, status=201)


@api_view(("POST",))
def run_cancel(request: HttpRequest, conversation_id: int, run_id: int) -> JsonResponse:
    conversation = selectors.conversation_get_for_user(
        user=signed_in(request), conversation_id=conversation_id
    )
    run = run_cancel_service(conversation=conversation, run_id=run_id)
    run.refresh_from_db()
    return JsonResponse({"run_id": run.pk, "status": run.status, "stop_reason": run.stop_reason})
