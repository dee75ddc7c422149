"""The demo login `make run` creates (`manage.py ensure_demo_user`), and whether the login
page may name it.

`ensure_demo_user` stores the demo password under a salt derived from SECRET_KEY, so the
stored hash itself is the marker "created by ensure_demo_user, password unchanged": any
password change (admin, `changepassword`, a rehash after an upgrade) writes a random salt
and the login page stops naming the account. The page therefore never shows a password
that does not log in. Checking costs one indexed read; the hash is computed at most once
per process, and only when the stored salt already matches.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import get_hasher, identify_hasher, make_password


@dataclass(frozen=True, slots=True)
class DemoLogin:
    username: str
    password: str
    # Shown with DEBUG off: a published superuser password on a reachable site.
    warn: bool = False


def _marker_salt() -> str:
    """32 hex characters (128 bits, what Django's hashers ask of a salt) from SECRET_KEY."""
    key = settings.SECRET_KEY.encode()
    return hmac.new(key, b"chat.core.demo.password-salt", hashlib.sha256).hexdigest()[:32]


@lru_cache(maxsize=4)
def _marked_hash(password: str, salt: str, algorithm: str) -> str:
    return make_password(password, salt=salt, hasher=algorithm)


def demo_password_hash() -> str:
    """The stored form of DEMO_PASSWORD as ensure_demo_user writes it (the marker)."""
    return _marked_hash(settings.DEMO_PASSWORD, _marker_salt(), get_hasher().algorithm)


def demo_user_ensure() -> DemoLogin:
    """Create (or reset) the demo superuser with DEMO_PASSWORD, stored with the marker."""
    user, _created = get_user_model().objects.get_or_create(username=settings.DEMO_USERNAME)
    user.password = demo_password_hash()
    user.is_active = user.is_staff = user.is_superuser = True
    user.save()
    return DemoLogin(settings.DEMO_USERNAME, settings.DEMO_PASSWORD)


def demo_login_shown() -> DemoLogin | None:
    """The demo login, when its account exists, is active and still has the password
    ensure_demo_user gave it; else None."""
    stored = (
        get_user_model()
        .objects.filter(username=settings.DEMO_USERNAME, is_active=True)
        .values_list("password", flat=True)
        .first()
    )
    if not stored:
        return None
    try:
        salt = identify_hasher(stored).decode(stored).get("salt")
    except (ValueError, KeyError, TypeError, NotImplementedError):
        return None  # unusable or unknown: never shown
    if salt != _marker_salt() or not hmac.compare_digest(stored, demo_password_hash()):
        return None
    return DemoLogin(settings.DEMO_USERNAME, settings.DEMO_PASSWORD, warn=not settings.DEBUG)
