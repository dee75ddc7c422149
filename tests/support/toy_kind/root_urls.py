"""The project's URLs built again once the toy kind is registered (`ROOT_URLCONF` in its
test): read on every new resolver, so they always follow `QUESTIONNAIRE_KINDS`."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver


def __getattr__(name: str) -> list[URLPattern | URLResolver]:
    if name != "urlpatterns":
        raise AttributeError(name)
    from chat.urls import project_patterns

    return project_patterns()
