"""A person's chat preferences (`UserPreferences`): read with a default, written on change."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction

from chat.core.models import NotifyMode, UserPreferences


def developer_details(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Whether `user` sees the machinery (envelopes, tool names, confidence figures)."""
    if not user.is_authenticated:
        return False
    prefs = UserPreferences.objects.filter(user_id=user.pk).only("developer_details").first()
    return bool(prefs and prefs.developer_details)


def developer_details_set(user: AbstractBaseUser, *, on: bool) -> None:
    UserPreferences.objects.update_or_create(user_id=user.pk, defaults={"developer_details": on})


def notify_mode(*, user_id: int) -> str:
    """How the person wants to hear of questions waiting for them (`NotifyMode`; off
    unless they chose otherwise)."""
    found = UserPreferences.objects.filter(user_id=user_id).values_list("notify", flat=True)
    return found.first() or NotifyMode.OFF


def notify_set(user: AbstractBaseUser, *, mode: str, email: str) -> None:
    """Save the person's notification choice and the address it goes to."""
    with transaction.atomic():
        UserPreferences.objects.update_or_create(user_id=user.pk, defaults={"notify": mode})
        get_user_model().objects.filter(pk=user.pk).update(email=email)
