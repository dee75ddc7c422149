"""A person's chat preferences (`UserPreferences`): read with a default, written on change."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from chat.core.models import UserPreferences


def developer_details(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Whether `user` sees the machinery (envelopes, tool names, confidence figures)."""
    if not user.is_authenticated:
        return False
    prefs = UserPreferences.objects.filter(user_id=user.pk).only("developer_details").first()
    return bool(prefs and prefs.developer_details)


def developer_details_set(user: AbstractBaseUser, *, on: bool) -> None:
    UserPreferences.objects.update_or_create(user_id=user.pk, defaults={"developer_details": on})
