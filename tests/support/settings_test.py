"""The settings the test suite runs with (pyproject's DJANGO_SETTINGS_MODULE): the servers'
settings (fast password hasher, tests/support/settings_fast.py), and under pytest-xdist
each worker process on Redis databases of its own.

`make test` runs the suite in three processes (`-n 3`). With REDIS_URL set (the CI's second
pass), they would share one Redis database: one test's `cache.clear()` would empty another's
cache, and user 1 of one test database would share throttle and stream counters with
user 1 of another. Worker N moves REDIS_URL to database base + 2N (the broker takes
the next one, chat/settings.py), before the app's settings read it, and in the
environment, so the servers and Celery workers a test starts follow. PostgreSQL needs
nothing: pytest-django gives each worker its own test database.
"""

import os
from urllib.parse import urlsplit, urlunsplit

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker.startswith("gw") and os.environ.get("REDIS_URL"):
    _parts = urlsplit(os.environ["REDIS_URL"])
    _db = int(_parts.path.strip("/") or 0) + 2 * int(_worker[2:])
    os.environ["REDIS_URL"] = urlunsplit(_parts._replace(path=f"/{_db % 16}"))

from tests.support.settings_fast import *  # noqa: E402, F403

# Analytics are refreshed by the tests themselves (a test turns the pages' own refresh on).
ANALYTICS_REFRESH_ON_VIEW = False
