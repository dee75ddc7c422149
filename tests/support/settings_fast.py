"""The app's settings for servers the tests start (browser tests, MCP endpoint tests):
everything as in production but two speed-ups that protect nothing in a test:

- the password hasher: PBKDF2's deliberate slowness (about 0.5 s a hash here) protects
  real passwords; a test user's password protects nothing, and every browser test logs in;
- on PostgreSQL, commits that don't wait for the disk (`synchronous_commit=off`): a crash
  of the test server would lose its last transactions, never corrupt anything, and the
  suite commits thousands of times (transactional tests, live servers, Celery workers) —
  on a machine with a slow disk it spent a third of its time waiting for fsync.
"""

from chat.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":  # noqa: F405
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c synchronous_commit=off"  # noqa: F405
