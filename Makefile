# The README's two set-up commands: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test lint bench load serve messages screenshots clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py ensure_demo_user
	$(PY) -m uvicorn chat.asgi:application --host $(HOST) --port $(PORT)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: $(STAMP) lint
	$(PY) -m pytest $(PYTEST_ARGS)

# The production shape: DEBUG off, migrations, collected + compressed static files, several
# web workers, Celery worker(s) + beat for agent runs (AGENT_RUNNER=celery unless set).
# Needs DATABASE_URL and REDIS_URL (see README).
WORKERS ?= 2
serve: $(STAMP)
	$(PY) manage.py migrate --noinput
	STATIC_MANIFEST=1 $(PY) manage.py collectstatic --noinput -v0
	AGENT_RUNNER=$${AGENT_RUNNER:-celery} STATIC_MANIFEST=1 \
	  $(PY) manage.py serve --host $(HOST) --port $(PORT) --workers $(WORKERS)

# Load + fault test (loopback, bounded): 200 users; half-way one web worker is SIGKILLed
# and one Celery pool process is SIGKILLed in the middle of a turn, which must resume.
# Needs DATABASE_URL (PostgreSQL) and REDIS_URL.
load: $(STAMP)
	$(PY) -m bench.load --users 200 --duration 30 --kill-worker --kill-run-worker

# Refresh the translation catalogs (then translate new entries in locale/*/django.po).
messages: $(STAMP)
	$(PY) manage.py makemessages -l zh_Hans --ignore=.venv --ignore=tests --ignore=bench --ignore=staticfiles --ignore=screenshots --no-obsolete
	$(PY) manage.py compilemessages --ignore=.venv

# PNGs of the main screens (1280 + 360 px, light + dark, en + zh-Hans) into screenshots/.
screenshots: $(STAMP)
	$(PY) -m tests.e2e.screenshots --out screenshots

bench: $(STAMP)
	$(PY) -m bench

clean:
	rm -rf $(VENV) db.sqlite3 .pytest_cache .mypy_cache .ruff_cache
