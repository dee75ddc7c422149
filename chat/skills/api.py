"""Skill publishing API (spec 003, DESIGN §6): thin adapters over `chat.skills.services`.

`GET /api/v1/kinds/skills?name=…&exact_match=true`, `POST /api/v1/kinds/skills/upload`,
`PUT /api/v1/kinds/skills/{skill_id}`. Bearer: a run's skill identity token or a user
API token.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from chat.core.errors import ChatError
from chat.edge.http import ApiView, error_response, request_check, signed_in
from chat.skills import services as skills


def skill_view(methods: tuple[str, ...]) -> Callable[[ApiView], ApiView]:
    """Like `api_view`, but a run's skill identity token is accepted too (spec 003)."""

    def decorator(view: ApiView) -> ApiView:
        @csrf_exempt
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args: int, **kwargs: int) -> HttpResponse:
            try:
                request.user = skills.skill_auth_user(request)
                request_check(request, methods)
                response: HttpResponse = view(request, *args, **kwargs)
                return response
            except ChatError as error:
                return error_response(error)

        return wrapper

    return decorator


@skill_view(("GET",))
def skill_list(request: HttpRequest) -> JsonResponse:
    exact = request.GET.get("exact_match", "").lower() in {"1", "true", "yes"}
    rows = skills.skill_list(
        owner=signed_in(request), name=request.GET.get("name", ""), exact_match=exact
    )
    items = [skills.skill_json(s) for s in rows]
    return JsonResponse({"items": items, "total": len(items)})


@skill_view(("POST",))
def skill_upload(request: HttpRequest) -> JsonResponse:
    fields, archive = skills.skill_fields_from_request(request)
    skill = skills.skill_create(owner=signed_in(request), fields=fields, archive=archive)
    return JsonResponse(skills.skill_json(skill), status=201)


@skill_view(("PUT",))
def skill_update(request: HttpRequest, skill_id: int) -> JsonResponse:
    if request.content_type == "multipart/form-data":
        # Django parses multipart bodies for POST only; parse this PUT the same way.
        request.method = "POST"
        request._load_post_and_files()
        request.method = "PUT"
    fields, archive = skills.skill_fields_from_request(request)
    skill = skills.skill_update(
        owner=signed_in(request), skill_id=skill_id, fields=fields, archive=archive
    )
    return JsonResponse(skills.skill_json(skill))
