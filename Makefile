# Two commands: `make demo` and `make test`. Both create .venv when missing and reinstall only when
# pyproject.toml changed (the stamp file records the last install).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.evalkit-installed
BASE   := $(VENV)/.evalkit-installed-base

.PHONY: demo test setup lint typecheck unit clean help

help:
	@echo "make demo   set up .venv and run every shipped suite offline"
	@echo "make test   set up .venv, then ruff, mypy and pytest (tests/, and notebooks/ by nbval)"

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

unit: setup
	$(BIN)/pytest

test: lint typecheck unit

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
