"""`POST /api/v1/conversations/{id}/runs`: an external runtime opens a run and receives
its per-run identity (MCP token + skill identity token) and the MCP endpoint URL."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from chat.core import selectors
from chat.core.identity import run_environment
from chat.core.models import EXTERNAL_WORKER, Run, RunStatus
from chat.edge.http import api_view, signed_in
from chat.edge.mcp import PATH as MCP_PATH


@api_view(("POST",))
def run_open(request: HttpRequest, conversation_id: int) -> JsonResponse:
    conversation = selectors.conversation_get_for_user(
        user=signed_in(request), conversation_id=conversation_id
    )
    # An external run has no heartbeat: it expires with its tokens (the reaper fails it).
    run = Run.objects.create(
        conversation=conversation, status=RunStatus.RUNNING, worker=EXTERNAL_WORKER
    )
    env = run_environment(
        conversation_id=conversation.pk, run_id=run.pk, user_id=signed_in(request).pk
    )
    body = {"run_id": run.pk, "mcp_url": request.build_absolute_uri(MCP_PATH), "env": env}
    return JsonResponse(body, status=201)
