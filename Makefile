# Two commands: `make demo` and `make test`. Both create .venv when missing and reinstall only when
# pyproject.toml changed (the stamp file records the last install).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.evalkit-installed
BASE   := $(VENV)/.evalkit-installed-base

.PHONY: demo test setup lint typecheck unit browser-deps lab clean help

help:
	@echo "make demo   set up .venv and run every shipped suite offline"
	@echo "make test   set up .venv, then ruff, mypy and pytest (tests/, notebooks/ by nbval, JupyterLab in Chromium)"
	@echo "make lab    open JupyterLab on the notebooks"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# the demo needs only evalkit's own dependencies; the tests also need the notebook and dev extras
$(BASE): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	@touch $(BASE)

$(STAMP): pyproject.toml $(BASE)
	$(BIN)/python -m pip install --quiet -e '.[notebooks,dev]'
	@touch $(STAMP)

setup: $(STAMP)

# the browser tests drive Debian's Chromium (a browser download of Playwright's own cannot work offline)
CHROMIUM ?= /usr/bin/chromium
browser-deps:
	@if [ ! -x "$(CHROMIUM)" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's chromium for the browser tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "no $(CHROMIUM): the browser tests will be skipped (install chromium, or set CHROMIUM=...)"; \
	  fi; \
	fi

lab: setup
	$(BIN)/jupyter lab notebooks/

# offline whatever the environment holds: the baselines need no API, and --judge off keeps a key that is set
# from paying for judge calls
demo: $(BASE)
	$(BIN)/evalkit validate goldens/
	$(BIN)/evalkit run goldens/ --system baseline --judge off --quiet --report --gate

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy

# notebooks/ run top to bottom by nbval in this environment; --nbval-lax compares only cells marked to be
unit: setup browser-deps
	EVALKIT_CHROMIUM=$(CHROMIUM) $(BIN)/pytest --nbval-lax --nbval-current-env \
	  --nbval-sanitize-with notebooks/sanitize.cfg

test: lint typecheck unit

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis test-artifacts
