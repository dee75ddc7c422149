from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig, apps
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _


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
        kinds()
    except (ImproperlyConfigured, ImportError, AttributeError) as error:
        return [checks.Error(str(error), id="questionnaires.E001")]
    return []
