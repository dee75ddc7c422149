"""Settings, all from environment variables (see `.env.example`).

Embedded defaults (SQLite, in-memory channel layer, offline agents) make `make run` need
nothing else; `DATABASE_URL` and `REDIS_URL` switch to PostgreSQL and Redis.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)
# A fixed development key is only acceptable while DEBUG is on or for local runs; production
# deployments must set SECRET_KEY (`check --deploy` complains otherwise).
SECRET_KEY = os.environ.get("SECRET_KEY", "django-insecure-local-development-key-change-me")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    # chat before channels: its `runworker` (which survives layer errors) wins.
    "chat",
    "channels",
    "questionnaires",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # A skill identity token works only on the skill publishing API (spec 003); first, so
    # no redirect or static file answers before the refusal.
    "chat.skills.SkillTokenScopeMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "chat.urls"
ASGI_APPLICATION = "chat.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
            ],
        },
    }
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "0")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL + a busy timeout let the SSE stream read while a run writes.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Under ASGI every request runs in its own thread, so per-thread persistent
    # connections would pile up; a bounded psycopg pool per process keeps the count
    # predictable (workers x DB_POOL_MAX_SIZE must stay below max_connections).
    pool_max = int(os.environ.get("DB_POOL_MAX_SIZE", "10"))
    if pool_max > 0:
        DATABASES["default"]["CONN_MAX_AGE"] = 0
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": 1,
            "max_size": pool_max,
            "timeout": float(os.environ.get("DB_POOL_TIMEOUT", "20")),
        }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")
# Each process's stream fan-out (chat/fanout.py) gets every wake-up of its conversations on
# one process-specific channel: room for a burst. (A full channel drops wake-ups; the
# periodic check then delivers those events up to SSE_KEEPALIVE_SECONDS late.)
STREAM_CHANNEL_CAPACITY = {"specific.*": 10_000}
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # The list-based layer: named channels queue (agent runs for runworker);
            # groups fan out to every worker process's streams.
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [REDIS_URL],
                # Queued agent runs may wait behind a busy worker: room for a burst.
                "channel_capacity": {"agent-runs": 100_000, **STREAM_CHANNEL_CAPACITY},
            },
        }
    }
else:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels.layers.InMemoryChannelLayer",
            # (channels 4.3 ignores channel_capacity patterns here; its channels are ours.)
            "CONFIG": {"capacity": STREAM_CHANNEL_CAPACITY["specific.*"]},
        }
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh-hans", _("Simplified Chinese"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if env_bool("STATIC_MANIFEST", False)
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
MEDIA_ROOT = BASE_DIR / "media"

# Rendered message HTML (questionnaires.render) is cached per process, keyed by content
# and card state; a long conversation needs more than locmem's default 300 entries.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "OPTIONS": {"MAX_ENTRIES": int(os.environ.get("CACHE_MAX_ENTRIES", "10000"))},
    }
}

# Security headers: on by default; HTTPS-only flags switch on with SECURE_SSL=1 (behind TLS).
SECURE_SSL = env_bool("SECURE_SSL", False)
SESSION_COOKIE_SECURE = SECURE_SSL
CSRF_COOKIE_SECURE = SECURE_SSL
SECURE_SSL_REDIRECT = SECURE_SSL
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000" if SECURE_SSL else "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_SSL
SECURE_HSTS_PRELOAD = SECURE_SSL
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if SECURE_SSL else None
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.request": {"level": "ERROR"}},
}

# --- Product settings -------------------------------------------------------------------
# Longest message a person or an API client may post (characters).
CHAT_MAX_MESSAGE_CHARS = int(os.environ.get("CHAT_MAX_MESSAGE_CHARS", "20000"))
# Longest assistant/tool message accepted through the API (characters).
CHAT_MAX_API_MESSAGE_CHARS = int(os.environ.get("CHAT_MAX_API_MESSAGE_CHARS", "200000"))
# Agent kind of new conversations when the user doesn't choose one.
CHAT_DEFAULT_AGENT = os.environ.get("CHAT_DEFAULT_AGENT", "intake")
# How agent runs execute: "thread" (a thread in the web process), "inline" (inside the
# request; tests), or "worker" (a channels worker process: `manage.py runworker agent-runs`).
AGENT_RUNNER = os.environ.get("AGENT_RUNNER", "thread")
# Runs one worker process executes at once (AGENT_RUNNER=worker).
AGENT_WORKER_CONCURRENCY = int(os.environ.get("AGENT_WORKER_CONCURRENCY", "8"))
# A running run whose heartbeat is older than this (seconds) lost its worker; a queued run
# nobody picked up within AGENT_QUEUE_TIMEOUT is failed too. Both get a visible retry.
AGENT_HEARTBEAT_TIMEOUT = float(os.environ.get("AGENT_HEARTBEAT_TIMEOUT", "30"))
AGENT_QUEUE_TIMEOUT = float(os.environ.get("AGENT_QUEUE_TIMEOUT", "120"))
AGENT_MAX_ITERATIONS = int(os.environ.get("AGENT_MAX_ITERATIONS", "50"))
LLM_BASE_URL = os.environ.get("LLM_BASE_URL", "")
LLM_API_KEY = os.environ.get("LLM_API_KEY", "")
LLM_MODEL = os.environ.get("LLM_MODEL", "")
LLM_TIMEOUT_SECONDS = float(os.environ.get("LLM_TIMEOUT_SECONDS", "60"))
# Lifetime of a run's MCP / skill identity tokens (seconds).
RUN_TOKEN_MAX_AGE_SECONDS = int(os.environ.get("RUN_TOKEN_MAX_AGE_SECONDS", str(6 * 3600)))
# Largest skill archive accepted by /api/v1/kinds/skills/upload (bytes).
SKILL_MAX_ARCHIVE_BYTES = int(os.environ.get("SKILL_MAX_ARCHIVE_BYTES", str(10 * 1024 * 1024)))
# SSE keep-alive comment interval (seconds); also how often each process checks for events
# whose wake-up went missing (one query per process, whatever the number of streams).
SSE_KEEPALIVE_SECONDS = float(os.environ.get("SSE_KEEPALIVE_SECONDS", "15"))
# Open event streams per process. Beyond it a new stream gets 503 with a jittered
# Retry-After at once (reconnect storms are shed, not queued). Each stream is a socket: the
# process lifts its soft open-files limit to SSE_MAX_STREAMS + 1024 when the hard one allows.
SSE_MAX_STREAMS = int(os.environ.get("SSE_MAX_STREAMS", "5000"))
# Reconnect delay (ms) a stream announces: `retry:` is SSE_RETRY_MS to 3x that at random, so
# dropped tabs come back spread out; a 503's Retry-After is 1x to 10x it (in seconds).
SSE_RETRY_MS = int(os.environ.get("SSE_RETRY_MS", "1000"))
DEMO_USERNAME = os.environ.get("DEMO_USERNAME", "demo")
DEMO_PASSWORD = os.environ.get("DEMO_PASSWORD", "demo-password")
# Serve static files straight from the app folders when `collectstatic` hasn't run
# (`make run`); `make serve` collects them and whitenoise serves the compressed copies.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
