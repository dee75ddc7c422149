from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig, apps
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _


class ChatConfig(AppConfig):
    name = "chat"
    verbose_name = _("Chat")

    def ready(self) -> None:
        checks.register(agents_check)
        # `<id:…>` in URLs: ASCII digits within 64 bits, else 400 `invalid_id` (not a 500).
        from django.urls import register_converter

        from chat.edge.http import IdConverter

        register_converter(IdConverter, "id")
        # Operating it (chat.obs): the request id rides along in Celery task messages;
        # traces when the OTEL_* variables ask for them (off by default).
        from importlib.metadata import PackageNotFoundError, version

        from chat.obs import logs, tracing

        logs.celery_connect()
        try:
            product = version("inline-questionnaire-chat")
        except PackageNotFoundError:
            product = ""
        tracing.tracing_setup(version=product)

        # django-axes names its app "Axes" and has no Chinese catalog: the admin shows it
        # under a name people understand, and its model names come from our catalog
        # (chat/admin.py lists them for `make messages`).
        from django.apps import apps

        if apps.is_installed("axes"):
            apps.get_app_config("axes").verbose_name = _("Login protection")


def agents_check(
    app_configs: Sequence[AppConfig] | None = None, **_kwargs: object
) -> list[checks.CheckMessage]:
    """`manage.py check` (and every start) loads the agents: a wrong line in CHAT_AGENTS or
    a CHAT_DEFAULT_AGENT that names none fails there (chat.E001), not on a first message."""
    if not apps.ready:
        return []
    from chat.core.agents import agents  # the registry needs the models loaded

    try:
        agents()
    except (ImproperlyConfigured, ImportError, AttributeError) as error:
        return [checks.Error(str(error), id="chat.E001")]
    return []
