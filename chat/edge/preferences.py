"""The "developer details" switch (account menu): its context processor and its view.

Machinery (what the assistant receives, tool names, confidence figures, API hints) carries
the `dev-only` class; `_base.html` puts `dev-details` on <body> when the switch is on, so
cached card HTML needs no per-person variant.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from chat.core.preferences import developer_details, developer_details_set


def developer_details_context(request: HttpRequest) -> dict[str, bool]:
    """`developer_details` in every template (read once per request, lazily cached)."""
    cached = getattr(request, "_developer_details", None)
    if cached is None:
        cached = developer_details(request.user) if hasattr(request, "user") else False
        request._developer_details = cached  # type: ignore[attr-defined]
    return {"developer_details": cached}


@login_required
@require_POST
def developer_details_toggle(request: HttpRequest) -> HttpResponse:
    """Turn the switch on (`on=1`) or off; back to the page it was used on."""
    developer_details_set(request.user, on=request.POST.get("on") == "1")  # type: ignore[arg-type]
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = "/"
    return redirect(target)
