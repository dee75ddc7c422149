"""Questionnaire pages that need nothing from the chat: the protocol playground."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.utils import translation
from django.views.decorators.http import require_http_methods

from chat.edge.http import HtmxRequest
from questionnaires.inline.playground import EXAMPLES, EXAMPLES_BY_SLUG, playground_result


@login_required
@require_http_methods(["GET", "POST"])
def playground(request: HtmxRequest) -> HttpResponse:
    """Paste a message, see its segments, cards and self-check (htmx live, or a plain
    form POST without JavaScript). `?example=<slug>` opens with that example in the editor
    (the "Load an example" form, which works without JavaScript too)."""
    data = request.POST if request.method == "POST" else request.GET
    lang = translation.get_language() or "en"
    content, role, status, unknown = data.get("content", ""), data.get("role", "assistant"), 200, ""
    slug = request.GET.get("example", "") if request.method == "GET" else ""
    if slug:
        example = EXAMPLES_BY_SLUG.get(slug)
        if example is None:
            status, unknown = 400, slug[:80]
        else:
            content, role = example.text(lang), "assistant"
    result = playground_result(content, role=role, lang=lang)
    template = "questionnaires/playground.html"
    if request.htmx and not slug:
        template += "#result"
    context = {"result": result, "examples": EXAMPLES, "example": slug, "unknown": unknown}
    return render(request, template, context, status=status)
