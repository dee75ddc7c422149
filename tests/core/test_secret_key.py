"""The app never runs with a key from the repository (issue: anyone could mint tokens)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRINT_KEY = "from django.conf import settings; print(settings.SECRET_KEY)"


def _key(env: dict[str, str]) -> str:
    inherited = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    full = {**inherited, "DJANGO_SETTINGS_MODULE": "chat.settings", **env}
    result = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {PRINT_KEY}"],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def test_without_secret_key_a_random_key_is_made_once_and_kept_private(tmp_path):
    path = tmp_path / "key"
    first = _key({"SECRET_KEY_FILE": str(path), "DEBUG": "0"})
    assert len(first) >= 50 and "insecure" not in first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert _key({"SECRET_KEY_FILE": str(path)}) == first  # kept across restarts
    other = _key({"SECRET_KEY_FILE": str(tmp_path / "elsewhere")})
    assert other != first  # a new install gets its own


def test_an_explicit_secret_key_always_wins(tmp_path):
    key = _key({"SECRET_KEY": "explicit-key-" + "x" * 40, "SECRET_KEY_FILE": str(tmp_path / "k")})
    assert key.startswith("explicit-key-")
    assert not (tmp_path / "k").exists()
