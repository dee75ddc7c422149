# The README's two set-up commands: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
# Two installs: the app alone for `make run` (quick first start), the app + test tools for
# everything else. `uv` installs them (several times faster than pip, with a progress bar);
# if uv can't be had, pip does it.
RUN_STAMP := $(VENV)/.installed-app
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
say = @printf '\033[1m==> %s\033[0m\n' $(1)

.PHONY: run test lint bench load serve messages screenshots clean interop-latest

$(VENV)/bin/python:
	$(call say,"Creating the virtual environment in $(VENV)/")
	$(PYTHON) -m venv $(VENV)

$(UV): | $(VENV)/bin/python
	$(call say,"Installing the installer (uv)")
	$(PY) -m pip install --quiet --disable-pip-version-check uv || true

# Bytecode is compiled at install (pip does by default; uv with --compile-bytecode): with
# PYTHONDONTWRITEBYTECODE set, as on CI machines, every process would otherwise compile
# every module it imports from source — 3 of the 5 s a Django start took.
define install
	if [ -x $(UV) ]; then $(UV) pip install --python $(PY) --compile-bytecode -e '$(1)'; \
	else $(PY) -m pip install --progress-bar on --disable-pip-version-check -e '$(1)'; fi
endef

$(RUN_STAMP): pyproject.toml | $(UV)
	$(call say,"Installing the app's dependencies")
	@$(call install,.)
	touch $@

$(STAMP): pyproject.toml | $(UV)
	$(call say,"Installing the app's and the tests' dependencies")
	@$(call install,.[dev])
	touch $(RUN_STAMP) $@

run: $(RUN_STAMP)
	$(call say,"Preparing the database (SQLite: db.sqlite3)")
	$(PY) manage.py migrate --noinput
	$(PY) manage.py ensure_demo_user
	$(call say,"Serving http://$(HOST):$(PORT)/ - open it in a browser (Ctrl+C stops)")
	$(PY) -m uvicorn chat.asgi:application --host $(HOST) --port $(PORT) \
	  $$(if [ -n "$$TRUSTED_PROXIES" ]; then echo --forwarded-allow-ips "$$TRUSTED_PROXIES"; else echo --no-proxy-headers; fi)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# npm-published counterparts the tests use, at the versions their lockfiles pin (skipped
# with a reason without node): the TypeScript-SDK MCP servers and clients (v1 and v2), the
# MCP Inspector CLI, the API clients openapi-typescript + openapi-fetch generate, and the
# AG-UI client.
NODE_TOOLS := tests/support/ts_server tests/support/ts_server_v2 tests/support/mcp_inspector \
  tests/support/api_clients tests/support/agui_client
NODE_STAMPS := $(NODE_TOOLS:%=%/node_modules/.installed)
%/node_modules/.installed: %/package-lock.json
	if command -v npm >/dev/null; then cd $* && npm ci --no-audit --no-fund --silent && touch node_modules/.installed; fi

# Three test processes (pytest-xdist) on a 2-core CI machine: browser tests and the live
# servers, Celery workers and session hosts the tests start spend much of their time waiting,
# so a third process keeps both cores busy (measured: pass 1 2:56 -> 2:36, pass 2 2:29 -> 2:18
# against two). TEST_WORKERS=0 runs everything in one process.
TEST_WORKERS ?= 3
# The app's and the tests' own modules compiled once (see `install`): the suite starts
# dozens of Python processes (live servers, Celery workers, the session host).
test: $(STAMP) lint $(NODE_STAMPS)
	$(PY) -m compileall -q -j 0 chat questionnaires tests bench >/dev/null
	$(PY) -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

# The interop suite (docs/interop.md) against the NEWEST releases of its counterparts: the
# npm folders copied to $(INTEROP_LATEST)/ with every package at @latest, and mcp,
# openapi-python-client and ag-ui-protocol upgraded in a separate virtualenv (.venv-latest);
# the pinned install is untouched. Prints the versions it ran against, then the tests.
INTEROP_TESTS := tests/interop tests/mcphost/test_stock_sdk.py tests/mcphost/test_stock_ts_sdk.py \
  tests/edge/mcp/test_mcp_contract.py tests/e2e/test_stock_mcp.py tests/e2e/test_stock_ts_mcp.py
INTEROP_LATEST ?= .interop-latest
interop-latest: | $(UV)
	NODE_TOOLS="$(NODE_TOOLS)" INTEROP_LATEST="$(INTEROP_LATEST)" PYTHON="$(PYTHON)" \
	  UV="$(abspath $(UV))" sh bench/interop_latest.sh $(INTEROP_TESTS)

# The production shape: DEBUG off, migrations, collected + compressed static files, several
# web workers, Celery worker(s) + beat for agent runs (AGENT_RUNNER=celery unless set).
# Needs DATABASE_URL and REDIS_URL (see docs/scale.md).
WORKERS ?= 2
# Every process's metrics in one place (prometheus-client's multiprocess mode); `serve`
# empties it of an earlier start's files.
PROMETHEUS_MULTIPROC_DIR ?= $(CURDIR)/.metrics
serve: export PROMETHEUS_MULTIPROC_DIR := $(PROMETHEUS_MULTIPROC_DIR)
serve: $(RUN_STAMP)
	$(PY) manage.py migrate --noinput
	STATIC_MANIFEST=1 $(PY) manage.py collectstatic --noinput -v0
	AGENT_RUNNER=$${AGENT_RUNNER:-celery} STATIC_MANIFEST=1 \
	  $(PY) manage.py serve --host $(HOST) --port $(PORT) --workers $(WORKERS)

# Load + fault test (loopback, bounded): 200 users for 30 s under the fault matrix (a web
# worker and a Celery pool process SIGKILLed, Redis restarted empty, every PostgreSQL
# connection terminated, at random moments; bench/faults.py), plus a Celery pool process
# SIGKILLed in the middle of a slow turn, which must resume. Every user must get every turn.
# Needs DATABASE_URL (PostgreSQL), REDIS_URL and redis-server (the faults get their own).
load: $(STAMP)
	$(PY) -m bench.load --users 200 --duration 30 --kill-run-worker --faults

# Refresh the translation catalogs (then translate new entries in locale/*/django.po).
messages: $(STAMP)
	$(PY) manage.py makemessages -l zh_Hans --ignore=.venv --ignore=tests --ignore=bench --ignore=staticfiles --ignore=screenshots --no-obsolete
	$(PY) manage.py compilemessages --ignore=.venv

# PNGs of the main screens (1280 + 360 px, light + dark, en + zh-Hans) into screenshots/,
# and the README's few into docs/screenshots/ (committed). Needs the CJK and emoji fonts:
# installed by apt-get when run as root, else it stops with the command to run.
# (one server per language: the zh-Hans gallery failed after the English one in a shared
# server shell.)
screenshots: $(STAMP)
	for lang in en zh-hans; do \
	  $(PY) -m tests.e2e.screenshots --out screenshots --docs docs/screenshots --lang $$lang || exit 1; \
	done

bench: $(STAMP)
	$(PY) -m bench

clean:
	rm -rf $(VENV) db.sqlite3 .pytest_cache .mypy_cache .ruff_cache
