# Hermes Explorer: `make run` serves the app, `make test` runs the whole suite.
# Both set up everything they need (virtualenv, packages, app database) on a fresh machine.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DATA_DIR ?= var
HOST ?= 127.0.0.1
PORT ?= 8000
# The demo HERMES_HOME: three profiles of three Hermes layouts (the current one, an older
# release's, and the deployment doc's).
DEMO_HOME := $(DATA_DIR)/demo-home
DEMO_DB := $(DEMO_HOME)/state.db
DEMO_SUPPORT_DB := $(DEMO_HOME)/profiles/support/state.db
DEMO_CRON_DB := $(DEMO_HOME)/profiles/cron/state.db
DEMO_SESSIONS ?= 400
DEMO_MESSAGES ?= 20000
# Whether nothing is configured (then `make run` serves the demo).
NOTHING_CONFIGURED = [ -z "$$HERMES_STATE_DB$$HERMES_HOME$$HERMES_STORES" ] && [ ! -d "$$HOME/.hermes" ]

export HERMES_EXPLORER_DATA_DIR ?= $(abspath $(DATA_DIR))
export DJANGO_SECRET_KEY_FILE ?= $(abspath $(DATA_DIR))/secret_key

.PHONY: run test install install-dev demo-db lint format clean bench

$(BIN)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

$(BIN)/.installed-dev: $(BIN)/.installed requirements-dev.txt
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

install: $(BIN)/.installed
install-dev: $(BIN)/.installed-dev

$(DATA_DIR)/secret_key:
	mkdir -p $(DATA_DIR)
	$(PYTHON) -c "import secrets; print(secrets.token_urlsafe(50))" > $@
	chmod 600 $@

$(DEMO_DB): | $(BIN)/.installed $(DATA_DIR)/secret_key
	mkdir -p $(DEMO_HOME)
	DJANGO_DEBUG=1 $(BIN)/python manage.py make_demo_db $@ --sessions $(DEMO_SESSIONS) --messages $(DEMO_MESSAGES) --seed 42

$(DEMO_SUPPORT_DB): | $(BIN)/.installed $(DATA_DIR)/secret_key
	DJANGO_DEBUG=1 $(BIN)/python manage.py make_demo_db $@ --sessions 150 --messages 6000 --seed 43 --shape legacy

$(DEMO_CRON_DB): | $(BIN)/.installed $(DATA_DIR)/secret_key
	DJANGO_DEBUG=1 $(BIN)/python manage.py make_demo_db $@ --sessions 100 --messages 3000 --seed 44 --shape doc

demo-db: $(DEMO_DB) $(DEMO_SUPPORT_DB) $(DEMO_CRON_DB)

## run: set up and serve the app with gunicorn on $(HOST):$(PORT) (demo data unless HERMES_STATE_DB,
## HERMES_HOME or HERMES_STORES is set, or ~/.hermes exists)
run: $(BIN)/.installed $(DATA_DIR)/secret_key catalogs
	@if $(NOTHING_CONFIGURED); then $(MAKE) --no-print-directory demo-db; fi
	$(BIN)/python manage.py migrate --noinput --verbosity 0
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	@if $(NOTHING_CONFIGURED); then $(BIN)/python manage.py demo_user; \
		echo "Serving the demo HERMES_HOME $(abspath $(DEMO_HOME)): profiles default, support, cron (demo data)"; \
	else $(BIN)/python manage.py profiles list; fi
	@echo "Open http://$(HOST):$(PORT)/"
	DJANGO_SECURE_COOKIES=$${DJANGO_SECURE_COOKIES:-0} GUNICORN_BIND=$(HOST):$(PORT) \
		$(BIN)/gunicorn -c deploy/gunicorn.conf.py hermes_explorer.wsgi:application

## test: set up, check the layering, and run the whole test suite on both cores (the browser
## tests drive Debian's Chromium), then the app-database and cache tests again on a real
## PostgreSQL and Redis (throwaway servers): the tests marked `appdb`
# pytest rewrites the asserts of every test module when it imports it and keeps the result in
# __pycache__; with bytecode writing turned off in the environment, each of the four pytest
# processes below would redo it for the whole suite.
test: export PYTHONDONTWRITEBYTECODE :=
test: $(BIN)/.installed-dev chromium servers catalogs
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n 2 --dist loadfile -m "not serial"
	$(BIN)/python -m pytest -m serial
	$(BIN)/python -m pytest -n 2 -p tests.real_servers -m "appdb and not browser"

## catalogs: the French (and any other) translation catalogs compiled to .mo by Django's
## compilemessages, with gettext's msgfmt (installed from apt when missing, as Chromium is)
.PHONY: catalogs gettext
catalogs: $(BIN)/.installed $(DATA_DIR)/secret_key gettext
	DJANGO_DEBUG=1 $(BIN)/python manage.py compilemessages --ignore=.venv --ignore=var -v 0
gettext:
	@if command -v msgfmt >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		DEBIAN_FRONTEND=noninteractive apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y gettext; \
	else \
		echo "make: msgfmt (gettext) is missing and this is not root." >&2; \
		echo "Install it once with: sudo apt-get install -y gettext" >&2; \
		exit 1; \
	fi

## chromium: the browser of the end-to-end tests, from apt when missing (never a download)
.PHONY: chromium
CHROMIUM ?= /usr/bin/chromium
chromium:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		DEBIAN_FRONTEND=noninteractive apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	else \
		echo "make test: $(CHROMIUM) is missing and this is not root." >&2; \
		echo "Install it once with: sudo apt-get install -y chromium" >&2; \
		exit 1; \
	fi

## servers: PostgreSQL, Redis and Caddy for the tests on real servers, from apt when missing.
## The tests start their own throwaway instances on free ports; the packages' services are
## not used.
.PHONY: servers
servers:
	@missing=""; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	command -v caddy >/dev/null 2>&1 || missing="$$missing caddy"; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		DEBIAN_FRONTEND=noninteractive apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	else \
		echo "make test:$$missing missing and this is not root." >&2; \
		echo "Install once with: sudo apt-get install -y$$missing" >&2; \
		exit 1; \
	fi

lint: $(BIN)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(BIN)/.installed-dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) $(DATA_DIR)/staticfiles .pytest_cache

## bench: build (or reuse) a 20k-session / 1M-message store and time the hot pages over HTTP
bench: $(BIN)/.installed
	$(BIN)/python bench/benchmark.py $(BENCH_ARGS)
