"""Settings, all from environment variables (see `.env.example`).

Embedded defaults (SQLite, in-memory channel layer, offline agents) make `make run` need
nothing else; `DATABASE_URL` and `REDIS_URL` switch to PostgreSQL and Redis.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import tempfile
import time
import warnings
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent


def _optional_int(name: str) -> int | None:
    """A non-negative integer setting, or None when unset or empty."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise ImproperlyConfigured(f"{name} must be a non-negative integer or empty")
    return int(raw)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)


def _secret_key() -> str:
    """`SECRET_KEY` when set; otherwise a random key made once per install and kept in
    `SECRET_KEY_FILE` (default `.secret_key` beside manage.py, git-ignored, mode 0600).
    No key from the repository is ever used: anyone could mint sessions and run tokens."""
    explicit = os.environ.get("SECRET_KEY", "").strip()
    if explicit:
        return explicit
    path = Path(os.environ.get("SECRET_KEY_FILE") or BASE_DIR / ".secret_key")
    try:  # O_EXCL: of several processes starting at once, one writes and all read it
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(50))
    for _attempt in range(50):  # another process may be writing it this instant
        key = path.read_text(encoding="utf-8").strip()
        if key:
            return key
        time.sleep(0.01)
    raise RuntimeError(f"{path} is empty: delete it or set SECRET_KEY")


SECRET_KEY = _secret_key()
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
    "ninja",  # the JSON API's docs page and its static swagger-ui (no CDN)
    "chat",
    "channels",
    "questionnaires",
    "axes",
]

# Called (dotted paths, with `wait_id=`) after a wait for a person is committed: the
# inbox's notifications (chat.inbox.notify). Named here, like the kinds, because the
# waits (chat.core) sit below everything that knows how to tell a person.
WAIT_OPENED_HOOKS = ["chat.inbox.notify.wait_opened"]

# Ways of asking (questionnaires.registry): one line per kind, in the order their cards show
# on a message. A kind's subpackage holds everything else (see docs/architecture.md, "A way of asking").
QUESTIONNAIRE_KINDS = [
    "questionnaires.inline.kind.KIND",
    "questionnaires.asks.kind.KIND",
    "questionnaires.forms.kind.KIND",
    "questionnaires.elicitations.kind.KIND",
]

MIDDLEWARE = [
    # First: the request id, its log context and its latency cover everything below.
    "chat.obs.middleware.ObservabilityMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # A skill identity token works only on the skill publishing API (spec 003); first, so
    # no redirect or static file answers before the refusal.
    "chat.edge.http.SkillTokenScopeMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Too large, broken or NUL-carrying form posts get a 400/413 before anything reads them.
    "chat.edge.http.RequestGuardMiddleware",
    # A view whose database connection died under it runs once more (chat/core/dbfaults.py).
    "chat.core.dbfaults.ConnectionLossRetryMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Times shown and typed in the person's own zone (the browser's `tz` cookie; UTC without).
    "chat.edge.timezones.PersonTimeZoneMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: locks out repeated failed logins.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Failed logins (django-axes): 5 per username and address, then a 15-minute lock.
AXES_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
# Bad bearer tokens: at most this many per client address and minute, then 429 (only for
# refused tokens: a valid one is always served, whoever shares its address).
BAD_TOKEN_LIMIT_PER_MINUTE = int(os.environ.get("BAD_TOKEN_LIMIT_PER_MINUTE", "30"))
# Proxies (IPs or CIDRs, comma-separated) whose X-Forwarded-For / -Proto uvicorn believes:
# `manage.py serve` and `make run` pass them as --forwarded-allow-ips, or --no-proxy-headers
# when empty (the default), so no client picks its own address (lockouts, throttling).
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES")

# Content-Security-Policy (django-csp): scripts only from this origin, no inline script,
# no eval, no framing. Inline *styles* are allowed: admin widgets and a few computed
# widths use style attributes, and styles can't run code.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "font-src": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
        "base-uri": [NONE],
        "object-src": [NONE],
    }
}

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
                "chat.edge.preferences.developer_details_context",
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
    # Tests get a file too, not Django's shared-cache in-memory database: that one locks
    # whole tables and ignores the busy timeout, so a stream reading while a test writes
    # fails with "database table is locked" instead of waiting.
    DATABASES["default"]["TEST"] = {
        "NAME": str(Path(tempfile.gettempdir()) / f"chat-test-{os.getpid()}.sqlite3")
    }
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Under ASGI every request runs in its own thread, so per-thread persistent
    # connections would pile up; a bounded psycopg pool per process keeps the count
    # predictable (workers x DB_POOL_MAX_SIZE must stay below max_connections).
    # A kept (or pooled) connection is checked before it is reused: one the server dropped
    # (a restart, pg_terminate_backend) is replaced, never given to a view.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
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
# periodic check then delivers those events up to SSE_CATCHUP_SECONDS late.)
STREAM_CHANNEL_CAPACITY = {"specific.*": 10_000}
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # Groups fan out stream wake-ups to every web process (agent runs go
            # through Celery, not the channel layer).
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [REDIS_URL],
                "channel_capacity": STREAM_CHANNEL_CAPACITY,
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
if not STATIC_ROOT.is_dir():
    # Until `collectstatic` creates it (`make serve`), whitenoise serves from the finders
    # (WHITENOISE_USE_FINDERS) and would warn "No directory at …" on every start.
    warnings.filterwarnings("ignore", message=re.escape(f"No directory at: {STATIC_ROOT}"))
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

# Rendered message HTML (questionnaires.inline.render) is cached per process, keyed by content
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

# Logs: plain lines (the default, `make run`) or JSON lines (`LOG_FORMAT=json`), each with
# the request id, run id, conversation id and a pseudonymous user id (chat/obs/logs.py).
LOG_FORMAT = os.environ.get("LOG_FORMAT", "plain").strip().lower() or "plain"
if LOG_FORMAT not in {"plain", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be plain or json, not {LOG_FORMAT!r}")
# One access line per Django request (method, path, status, duration, view, ids): on with
# JSON logs, where it replaces uvicorn's (which can't know the request id).
LOG_ACCESS = env_bool("LOG_ACCESS", LOG_FORMAT == "json")
_LOG_FORMATTER = "json" if LOG_FORMAT == "json" else "plain"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "chat.obs.logs.json_formatter"},
    },
    "filters": {"brief": {"()": "chat.log.BriefWarningFilter"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": _LOG_FORMATTER},
        "brief": {
            "class": "logging.StreamHandler",
            "formatter": _LOG_FORMATTER,
            "filters": ["brief"],
        },
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.request": {"level": "ERROR"},
        # A bad Host header is a client's mistake (or a scan), not a server error: one
        # warning line, no traceback.
        "django.security.DisallowedHost": {"handlers": ["brief"], "propagate": False},
        "chat.access": {"level": "INFO"},  # (written only with LOG_ACCESS)
    },
}
if LOG_FORMAT == "json":
    # uvicorn's own lines (start-up, errors) as JSON too; its access lines give way to ours.
    LOGGING["loggers"].update(  # type: ignore[attr-defined]
        {
            "uvicorn": {"handlers": ["console"], "level": "INFO", "propagate": False},
            "uvicorn.error": {"handlers": ["console"], "level": "INFO", "propagate": False},
            "uvicorn.access": {"handlers": ["console"], "level": "WARNING", "propagate": False},
        }
    )

# Metrics (chat/obs/metrics.py, Prometheus text format) at /metrics, never public: a
# scraper sends `Authorization: Bearer $METRICS_TOKEN`; without a token the URL is a 404.
# METRICS_BIND (host:port) serves them instead on a port of their own from `manage.py
# serve`, without a token (bind it to an address only the scraper reaches).
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "").strip()
METRICS_BIND = os.environ.get("METRICS_BIND", "").strip()


def _model_costs(raw: str) -> dict[str, tuple[Decimal, Decimal]]:
    """MODEL_COSTS: JSON {"model": [input, output]} in currency units per million tokens."""
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
        costs = {
            str(model): (Decimal(str(pair[0])), Decimal(str(pair[1])))
            for model, pair in data.items()
        }
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, InvalidOperation):
        raise ImproperlyConfigured(
            'MODEL_COSTS must be JSON like {"gpt-4o-mini": [0.15, 0.6]} '
            "(price per million input and output tokens)."
        ) from None
    if any(price < 0 for pair in costs.values() for price in pair):
        raise ImproperlyConfigured("MODEL_COSTS: prices can't be negative.")
    return costs


# Token usage (chat/core/usage.py): what each model costs per million tokens in and out,
# in MODEL_COST_CURRENCY (shown in admin); a per-user daily token budget (0 = none): once
# a person's model tokens today (UTC) reach it, a new turn of a model-calling agent is
# refused with 429 `token_budget_exhausted` (nothing typed is lost).
MODEL_COSTS = _model_costs(os.environ.get("MODEL_COSTS", ""))
MODEL_COST_CURRENCY = os.environ.get("MODEL_COST_CURRENCY", "USD")
DAILY_TOKEN_BUDGET = int(os.environ.get("DAILY_TOKEN_BUDGET", "0"))
if DAILY_TOKEN_BUDGET < 0:
    raise ImproperlyConfigured("DAILY_TOKEN_BUDGET can't be negative (0 turns it off).")

# --- Product settings -------------------------------------------------------------------
# Longest message a person or an API client may post (characters).
CHAT_MAX_MESSAGE_CHARS = int(os.environ.get("CHAT_MAX_MESSAGE_CHARS", "20000"))
# Longest assistant/tool message accepted through the API (characters).
CHAT_MAX_API_MESSAGE_CHARS = int(os.environ.get("CHAT_MAX_API_MESSAGE_CHARS", "200000"))
# Agents (chat.core.agents): one line per agent, in the home page's menu order; adding one
# is one more line (docs/agents.md). An unknown line fails `manage.py check` (chat.E001).
CHAT_AGENTS = [
    "chat.runs.agents.INTAKE",
    "chat.runs.agents.SCRIPTED",
    "chat.runs.agents.OPENAI",
    "chat.runs.agents.ECHO",
    "chat.runs.agents.EXTERNAL",
]
# The agent of new conversations when the user doesn't choose one (one of CHAT_AGENTS).
CHAT_DEFAULT_AGENT = os.environ.get("CHAT_DEFAULT_AGENT", "intake")
# How agent runs execute: "thread" (a thread in the web process; `make run`), "inline"
# (inside the request; tests), or "celery" (a Celery task on worker processes; durable:
# a turn whose worker dies resumes on another one). See chat/celery.py.
AGENT_RUNNER = os.environ.get("AGENT_RUNNER", "thread")
if AGENT_RUNNER == "worker":
    raise ImproperlyConfigured(
        "AGENT_RUNNER=worker (channels runworker) was replaced by AGENT_RUNNER=celery."
    )
if AGENT_RUNNER not in {"thread", "inline", "celery"}:
    raise ImproperlyConfigured(
        f"AGENT_RUNNER must be thread, inline or celery, not {AGENT_RUNNER!r}"
    )
# What starts a run the core queued (a dotted path, like Django's backends): the runs
# package, a layer above the core, which the core therefore never imports.
RUN_STARTER = "chat.runs.dispatch.run_dispatch"
# Which of a conversation's open waits a person's new message answers (the kinds say: the
# kind registry, also a layer above the core).
WAITS_ANSWERED = "questionnaires.registry.waits_answered"
# Runs one Celery worker executes at once (its prefork pool size).
AGENT_WORKER_CONCURRENCY = int(os.environ.get("AGENT_WORKER_CONCURRENCY", "8"))
# A running run whose heartbeat is older than this (seconds) lost its worker: with Celery
# it is queued again and resumes (up to AGENT_MAX_ATTEMPTS takes), otherwise it is failed.
# A queued run nobody picked up within AGENT_HANDOFF_TIMEOUT of being handed off lost its
# hand-off (the web process died before sending it, the broker restarted): it is handed
# off again, backing off as it keeps waiting; one nobody took within AGENT_QUEUE_TIMEOUT
# is failed. Failures show Retry.
AGENT_HEARTBEAT_TIMEOUT = float(os.environ.get("AGENT_HEARTBEAT_TIMEOUT", "30"))
AGENT_HANDOFF_TIMEOUT = float(os.environ.get("AGENT_HANDOFF_TIMEOUT", "2"))
AGENT_QUEUE_TIMEOUT = float(os.environ.get("AGENT_QUEUE_TIMEOUT", "120"))
AGENT_MAX_ATTEMPTS = int(os.environ.get("AGENT_MAX_ATTEMPTS", "3"))
# Turns one person has running at once (0: no cap). More wait, queued in the order they
# were asked for, and start as that person's turns end; other people's start at once.
# (One conversation runs one turn at a time whatever this says: chat.runs.slots.)
AGENT_RUNS_PER_PERSON = int(os.environ.get("AGENT_RUNS_PER_PERSON", "3"))
if AGENT_RUNS_PER_PERSON < 0:
    raise ImproperlyConfigured("AGENT_RUNS_PER_PERSON can't be negative (0 turns the cap off).")
# The longest a turn may take on one worker (seconds): at the soft limit the run fails
# with `turn_time_limit`; at the hard limit the worker process is killed.
# How long an MCP server's elicitation waits for the person (seconds) before it expires
# and the server gets `cancel`. No worker waits meanwhile (the run is suspended), so a
# turn's time limits don't depend on it.
MCP_ELICITATION_TIMEOUT = int(os.environ.get("MCP_ELICITATION_TIMEOUT", "1800"))
AGENT_TURN_SOFT_TIME_LIMIT = int(os.environ.get("AGENT_TURN_SOFT_TIME_LIMIT", "600"))
AGENT_TURN_TIME_LIMIT = int(
    os.environ.get("AGENT_TURN_TIME_LIMIT", str(AGENT_TURN_SOFT_TIME_LIMIT + 30))
)
# How often the beat process looks for runs whose worker or hand-off was lost (seconds):
# one indexed query over active runs (the `run_active` partial index).
AGENT_REAP_INTERVAL = float(os.environ.get("AGENT_REAP_INTERVAL", "2"))
# Streamed `text_delta` events older than this (seconds) are pruned (the message they
# built is stored; only a replay older than a day loses the typing animation).
EVENT_DELTA_MAX_AGE = int(os.environ.get("EVENT_DELTA_MAX_AGE", str(24 * 3600)))
AGENT_MAX_ITERATIONS = int(os.environ.get("AGENT_MAX_ITERATIONS", "50"))
# The question budget (issue 27) of every agent without its own row in admin
# ("Question budgets"): at most N questions per turn, M per conversation (empty: no
# limit), and optionally one open card at a time. Self-check enforces it.
QUESTION_BUDGET_PER_TURN = _optional_int("QUESTION_BUDGET_PER_TURN")
QUESTION_BUDGET_PER_CONVERSATION = _optional_int("QUESTION_BUDGET_PER_CONVERSATION")
QUESTION_BUDGET_ONE_CARD = os.environ.get("QUESTION_BUDGET_ONE_CARD", "0") == "1"
# Conversation repair (issue 36, docs/repair.md): how many times a waiting question is
# shown again after replies that don't answer it, before it is skipped (offline agents)
# or left to the model; per agent in REPAIR_REPROMPTS_PER_AGENT ("intake=3,openai=1").
REPAIR_REPROMPTS = int(os.environ.get("REPAIR_REPROMPTS", "2"))
REPAIR_REPROMPTS_PER_AGENT: dict[str, int] = {
    agent.strip(): int(n)
    for agent, _sep, n in (
        item.partition("=") for item in os.environ.get("REPAIR_REPROMPTS_PER_AGENT", "").split(",")
    )
    if agent.strip() and n.strip().isdigit()
}
# Kinds whose typed answers always ask for a confirming click (several fields, or a
# third party's question), even when the reply is exact.
REPAIR_CONFIRM_KINDS = ("form", "elicitation")
# Kinds whose `resolve` takes `"typed"` (the words an answer was read from: free_text, kept).
REPAIR_TYPED_KINDS = ("inline", "ask")
LLM_BASE_URL = os.environ.get("LLM_BASE_URL", "")
LLM_API_KEY = os.environ.get("LLM_API_KEY", "")
LLM_MODEL = os.environ.get("LLM_MODEL", "")
LLM_TIMEOUT_SECONDS = float(os.environ.get("LLM_TIMEOUT_SECONDS", "60"))
# Ask the endpoint for the token usage of each streamed call (`stream_options:
# {"include_usage": true}`); an endpoint that refuses the option can turn it off, and
# its usage is then estimated (and marked so).
LLM_STREAM_USAGE = env_bool("LLM_STREAM_USAGE", True)
# A 429 whose Retry-After (or retry-after-ms) asks for a wait is retried before anything
# streamed, while the waits of one call add up to at most this many seconds (0: never).
LLM_RATE_LIMIT_WAIT_SECONDS = float(os.environ.get("LLM_RATE_LIMIT_WAIT_SECONDS", "20"))
# MCP servers as tool sources (chat/mcphost). A tool call fails with MCP_TIMEOUT after
# MCP_TOOL_TIMEOUT seconds of a silent server; the clock stops while a person answers the
# server's elicitation (bounded by MCP_ELICITATION_TIMEOUT instead). Connecting gives up
# after MCP_CONNECT_TIMEOUT. Tool listings are cached MCP_TOOLS_CACHE_SECONDS (and
# refreshed at once when the server's row changes).
MCP_TOOL_TIMEOUT = float(os.environ.get("MCP_TOOL_TIMEOUT", "60"))
MCP_CONNECT_TIMEOUT = float(os.environ.get("MCP_CONNECT_TIMEOUT", "5"))
MCP_TOOLS_CACHE_SECONDS = int(os.environ.get("MCP_TOOLS_CACHE_SECONDS", "300"))
# A server's progress notes on a call (`notifications/progress`) reach the page at most
# once every MCP_PROGRESS_INTERVAL seconds per call (and its last note always).
MCP_PROGRESS_INTERVAL = float(os.environ.get("MCP_PROGRESS_INTERVAL", "1"))
# MCP servers' header values and bearer tokens are stored encrypted (chat/mcphost/sealed.py)
# with MCP_SECRETS_KEY (Fernet keys, comma-separated, the first encrypts) or else the keys in
# MCP_SECRETS_KEY_FILE (made at random on first use, mode 0600; git-ignored).
MCP_SECRETS_KEY = os.environ.get("MCP_SECRETS_KEY", "")
MCP_SECRETS_KEY_FILE = os.environ.get("MCP_SECRETS_KEY_FILE") or str(BASE_DIR / ".mcp_secrets_key")
# What a turn offers the model (chat/mcphost/tools.py): at most MCP_MAX_TOOLS tools (built-in
# first, then servers by name); a description cut at MCP_TOOL_DESCRIPTION_MAX characters; a
# tool whose schema is over MCP_TOOL_SCHEMA_MAX characters of JSON left out.
MCP_MAX_TOOLS = int(os.environ.get("MCP_MAX_TOOLS", "128"))
MCP_TOOL_DESCRIPTION_MAX = int(os.environ.get("MCP_TOOL_DESCRIPTION_MAX", "2000"))
MCP_TOOL_SCHEMA_MAX = int(os.environ.get("MCP_TOOL_SCHEMA_MAX", "20000"))
# How long a run's worker waits for the MCP session host's result of a call to a
# 2025-11-25 server before the run suspends (a call that doesn't ask the person finishes
# in the same attempt); how long the host's lease lives without a heartbeat before its
# pending calls are ended as interrupted.
# Where the MCP session host runs: "process" (`manage.py mcp_session_host`, started by
# `manage.py serve`; the default with AGENT_RUNNER=celery) or "thread" (a background
# thread of the web process; the default otherwise).
MCP_SESSION_HOST = os.environ.get("MCP_SESSION_HOST", "")
if MCP_SESSION_HOST not in {"", "thread", "process"}:
    raise ImproperlyConfigured(
        f"MCP_SESSION_HOST must be thread or process (or unset), not {MCP_SESSION_HOST!r}"
    )
MCP_HOST_GRACE_SECONDS = float(os.environ.get("MCP_HOST_GRACE_SECONDS", "3"))
MCP_HOST_LEASE_SECONDS = float(os.environ.get("MCP_HOST_LEASE_SECONDS", "15"))
# The circuit breaker per MCP server: after a failure or a timeout its tools are left out
# for MCP_BREAKER_COOLOFF seconds, doubling with each consecutive failure up to
# MCP_BREAKER_MAX_COOLOFF.
MCP_BREAKER_COOLOFF = float(os.environ.get("MCP_BREAKER_COOLOFF", "30"))
MCP_BREAKER_MAX_COOLOFF = float(os.environ.get("MCP_BREAKER_MAX_COOLOFF", "1800"))
# Person-waits (cards, forms, asks, MCP elicitations; chat.core.waits): open ones per
# user and per conversation; questions one tool call and one turn may ask; how long a
# card that ends the turn (inline, form, ask) stays open.
WAITS_PER_USER = int(os.environ.get("WAITS_PER_USER", "20"))
WAITS_PER_CONVERSATION = int(os.environ.get("WAITS_PER_CONVERSATION", "10"))
WAITS_PER_TOOL_CALL = int(os.environ.get("WAITS_PER_TOOL_CALL", "3"))
WAITS_PER_TURN = int(os.environ.get("WAITS_PER_TURN", "6"))
WAIT_TIMEOUT = int(os.environ.get("WAIT_TIMEOUT", str(7 * 24 * 3600)))
# An external runtime's run with no activity (no API or MCP call) for this many minutes
# ends (`idle`), and the page stops saying the assistant is working.
EXTERNAL_RUN_IDLE_MINUTES = float(os.environ.get("EXTERNAL_RUN_IDLE_MINUTES", "10"))
# Lifetime of a run's MCP / skill identity tokens (seconds).
RUN_TOKEN_MAX_AGE_SECONDS = int(os.environ.get("RUN_TOKEN_MAX_AGE_SECONDS", str(6 * 3600)))
# Largest skill archive accepted by /api/v1/kinds/skills/upload (bytes).
SKILL_MAX_ARCHIVE_BYTES = int(os.environ.get("SKILL_MAX_ARCHIVE_BYTES", str(10 * 1024 * 1024)))
# Everything one person's skills may take (SKILL.md texts + archives; a replaced archive is
# deleted): beyond it 413 `skill_storage_full`.
SKILL_MAX_BYTES_PER_USER = int(os.environ.get("SKILL_MAX_BYTES_PER_USER", str(100 * 1024 * 1024)))
# SSE keep-alive comment interval (seconds); also how often each process checks for events
# whose wake-up went missing (one query per process, whatever the number of streams).
SSE_KEEPALIVE_SECONDS = float(os.environ.get("SSE_KEEPALIVE_SECONDS", "15"))
# How often each process checks, in one query, whether its open conversations have events
# their wake-up never announced (a Redis restart, a process that died after its commit):
# the longest such an event can be late.
SSE_CATCHUP_SECONDS = float(os.environ.get("SSE_CATCHUP_SECONDS", "2"))
# Open event streams per process. Beyond it a new stream gets 503 with a jittered
# Retry-After at once (reconnect storms are shed, not queued). Each stream is a socket: the
# process lifts its soft open-files limit to SSE_MAX_STREAMS + 1024 when the hard one allows.
SSE_MAX_STREAMS = int(os.environ.get("SSE_MAX_STREAMS", "5000"))
# Of those, what one user may hold open in a process (more tabs than a person uses): beyond
# it 429 `too_many_streams` with Retry-After, so one account can't shut everyone else out.
SSE_MAX_STREAMS_PER_USER = int(os.environ.get("SSE_MAX_STREAMS_PER_USER", "20"))
# Reconnect delay (ms) a stream announces: `retry:` is SSE_RETRY_MS to 3x that at random, so
# dropped tabs come back spread out; a 503's Retry-After is 1x to 10x it (in seconds).
SSE_RETRY_MS = int(os.environ.get("SSE_RETRY_MS", "1000"))
DEMO_USERNAME = os.environ.get("DEMO_USERNAME", "demo")
DEMO_PASSWORD = os.environ.get("DEMO_PASSWORD", "demo-password")
# Serve static files straight from the app folders when `collectstatic` hasn't run
# (`make run`); `make serve` collects them and whitenoise serves the compressed copies.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG


# --- Celery (AGENT_RUNNER=celery) -------------------------------------------------------
# The broker is Redis in a database of its own: REDIS_URL with the next database number
# (redis://host:6379/0 -> /1), so the channel layer and the broker never share keys.


def _next_redis_db(url: str) -> str:
    parts = urlsplit(url)
    db = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(db + 1) % 16}"))


CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or (
    _next_redis_db(REDIS_URL) if REDIS_URL else "memory://"
)
if AGENT_RUNNER == "celery" and CELERY_BROKER_URL == "memory://":
    raise ImproperlyConfigured("AGENT_RUNNER=celery needs a broker: set REDIS_URL.")
# One queue for runs and housekeeping; deployments sharing a broker use their own.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "chat")
# Durability: a message is acknowledged only when its task has returned; a worker process
# that dies mid-task gives its message back (redelivered at once), and each process
# reserves one message at a time, so a dying process takes no queued work with it.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = AGENT_TURN_SOFT_TIME_LIMIT
CELERY_TASK_TIME_LIMIT = AGENT_TURN_TIME_LIMIT
# An unacknowledged message goes back to the queue after this long (a whole worker
# machine died): longer than the longest allowed turn, or a live turn would be handed out
# twice. The reaper (beat) resumes such runs much sooner, from their stale heartbeat.
CELERY_VISIBILITY_TIMEOUT = int(
    os.environ.get("CELERY_VISIBILITY_TIMEOUT", str(AGENT_TURN_TIME_LIMIT + 300))
)
if CELERY_VISIBILITY_TIMEOUT <= AGENT_TURN_TIME_LIMIT:
    raise ImproperlyConfigured(
        "CELERY_VISIBILITY_TIMEOUT must be longer than AGENT_TURN_TIME_LIMIT."
    )
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_WORKER_SEND_TASK_EVENTS = False
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE_FILENAME = os.environ.get(
    "CELERY_BEAT_SCHEDULE_FILENAME", str(BASE_DIR / ".celerybeat-schedule")
)
# How often Celery beat brings the questionnaire analytics up to date (admin's numbers lag
# the chat by at most this much; admin's "Refresh now" and `manage.py analytics_refresh`
# do it at once).
ANALYTICS_REFRESH_SECONDS = float(os.environ.get("ANALYTICS_REFRESH_SECONDS", "60"))
# Without Celery beat (AGENT_RUNNER=thread: `make run`) nothing refreshes them on a
# schedule: admin's analytics pages then bring numbers older than ANALYTICS_REFRESH_SECONDS
# up to date as they open (reading for at most 2 s; *Refresh now* goes on from there).
ANALYTICS_REFRESH_ON_VIEW = env_bool("ANALYTICS_REFRESH_ON_VIEW", AGENT_RUNNER == "thread")
CELERY_BEAT_SCHEDULE = {
    # Resume (or fail, after AGENT_MAX_ATTEMPTS) runs whose worker died.
    "runs-reap": {
        "task": "chat.runs_reap",
        "schedule": AGENT_REAP_INTERVAL,
        "options": {"expires": AGENT_REAP_INTERVAL},
    },
    # The event table grows with every streamed fragment; old ones are dropped.
    "events-prune": {"task": "chat.events_prune", "schedule": 3600.0, "options": {"expires": 3600}},
    # Questionnaire analytics: cards shown and settled since the last refresh.
    "analytics-refresh": {
        "task": "chat.analytics_refresh",
        "schedule": ANALYTICS_REFRESH_SECONDS,
        "options": {"expires": ANALYTICS_REFRESH_SECONDS},
    },
    # Login sessions past their expiry (Django's clearsessions).
    "sessions-clear": {"task": "chat.sessions_clear", "schedule": 86400.0},
    # The inbox's digest email to the people who chose it (chat.inbox.notify).
    "inbox-digest": {
        "task": "chat.inbox_digest",
        "schedule": float(os.environ.get("INBOX_DIGEST_SECONDS", "3600")),
    },
}

# --- The inbox and notifications (docs/inbox.md) -----------------------------------------
# Every tab polls the inbox's count this often (seconds); a tab that polled within
# INBOX_PRESENCE_SECONDS counts as open (on its conversation, if it shows one).
INBOX_POLL_SECONDS = int(os.environ.get("INBOX_POLL_SECONDS", "15"))
INBOX_PRESENCE_SECONDS = int(os.environ.get("INBOX_PRESENCE_SECONDS", "45"))
# An answer link works at most this long (seconds), and never past its question's end.
INBOX_LINK_MAX_AGE = int(os.environ.get("INBOX_LINK_MAX_AGE", str(7 * 24 * 3600)))
# Absolute links in emails: the address people open the app at.
SITE_URL = os.environ.get("SITE_URL", "http://127.0.0.1:8000").rstrip("/")
# Email: the console (printed by `make run`) unless an SMTP host is set.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend",
)
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "587"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", bool(EMAIL_HOST))
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Questionnaire chat <chat@localhost>")
