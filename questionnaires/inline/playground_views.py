"""Questionnaire pages that need nothing from the chat: the protocol playground."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.utils import translation
from django.views.decorators.http import require_http_methods

from chat.edge.http import HtmxRequest
from questionnaires.inline.playground import playground_result


@login_required
@require_http_methods(["GET", "POST"])
def playground(request: HtmxRequest) -> HttpResponse:
    """Paste a message, see its segments, cards and self-check (htmx live, or a plain
    form POST without JavaScript)."""
    data = request.POST if request.method == "POST" else request.GET
    result = playground_result(
        data.get("content", ""),
        role=data.get("role", "assistant"),
        lang=translation.get_language() or "en",
    )
    template = "questionnaires/playground.html"
    if request.htmx:
        template += "#result"
    return render(request, template, {"result": result})
