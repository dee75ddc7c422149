from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from typing import TYPE_CHECKING

from django.apps import AppConfig, apps
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

if TYPE_CHECKING:
    from questionnaires.registry import Kind


class QuestionnairesConfig(AppConfig):
    """The asking app: one subpackage per way of asking, listed in
    `settings.QUESTIONNAIRE_KINDS` (questionnaires.registry)."""

    name = "questionnaires"
    verbose_name = _("Questionnaires")

    def ready(self) -> None:
        checks.register(kinds_check)


def kinds_check(
    app_configs: Sequence[AppConfig] | None = None, **_kwargs: object
) -> list[checks.CheckMessage]:
    """`manage.py check` (and every start) loads the kinds: a wrong line in
    QUESTIONNAIRE_KINDS fails there, not on the first page view."""
    if not apps.ready:
        return []
    from questionnaires.registry import kinds  # the registry needs the models loaded

    try:
        loaded = kinds()
    except (ImproperlyConfigured, ImportError, AttributeError) as error:
        return [checks.Error(str(error), id="questionnaires.E001")]
    return [e for kind in loaded for e in _hooks_check(kind)]


def _hooks_check(kind: Kind) -> list[checks.CheckMessage]:
    """A kind's dotted-path hooks load (its analytics source, admin, MCP elicitation
    module): a wrong one fails at start, not silently on the first refresh or request."""
    from questionnaires.analytics.outcomes import Source

    problems: list[checks.CheckMessage] = []
    for field, path in (
        ("analytics", kind.analytics),
        ("admin", kind.admin),
        ("mcp_elicitation", kind.mcp_elicitation),
    ):
        if not path:
            continue
        try:
            module = import_module(path)
        except ImportError as error:
            problems.append(checks.Error(f"{kind.name}.{field}: {error}", id="questionnaires.E002"))
            continue
        if field == "analytics" and not isinstance(getattr(module, "SOURCE", None), Source):
            message = f"{kind.name}.analytics: {path} has no SOURCE (an outcomes.Source)"
            problems.append(checks.Error(message, id="questionnaires.E002"))
    return problems
