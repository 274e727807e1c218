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

# setuptools warns on every editable install that a folder named like the package may shadow it: that folder is
# the package here, so the note is silenced (PIP below); real errors still show
PIP := PYTHONWARNINGS=ignore::UserWarning $(BIN)/python -m pip

# the demo needs only evalkit's own dependencies; the tests also need the notebook and dev extras
$(BASE): pyproject.toml | $(BIN)/python
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e .
	@touch $(BASE)

# in a git checkout, notebooks are committed without outputs whatever the working copy holds: nbstripout is
# installed as this repository's git filter (.git/info/attributes), so JupyterLab's autosave cannot dirty a commit
$(STAMP): pyproject.toml $(BASE)
	$(PIP) install --quiet -e '.[notebooks,dev]'
	@if git rev-parse --git-dir >/dev/null 2>&1; then \
	  py="$(abspath $(BIN))/python"; attrs="$$(git rev-parse --git-path info/attributes)"; \
	  git config filter.nbstripout.clean "$$py -m nbstripout --keep-id --extra-keys metadata.widgets"; \
	  git config filter.nbstripout.smudge cat; \
	  git config filter.nbstripout.required true; \
	  git config diff.ipynb.textconv "$$py -m nbstripout -t --keep-id"; \
	  mkdir -p "$$(dirname "$$attrs")"; touch "$$attrs"; \
	  grep -qx '*.ipynb filter=nbstripout diff=ipynb' "$$attrs" || echo '*.ipynb filter=nbstripout diff=ipynb' >> "$$attrs"; \
	fi
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

# as root (a container) JupyterLab refuses to start without --allow-root
lab: setup
	$(BIN)/jupyter lab notebooks/ $$( [ "$$(id -u)" = 0 ] && echo --allow-root )

# Offline whatever the environment holds: the baselines need no API, and the judged checks are answered by the
# simulated judge of `evalkit serve` on a free loopback port (labelled simulated in every verdict), so a key that
# is set pays for nothing.
demo: $(BASE)
	$(BIN)/evalkit validate goldens/
	@mkdir -p .evalkit; rm -f .evalkit/demo-serve.url; \
	$(BIN)/evalkit serve --port 0 > .evalkit/demo-serve.url 2> .evalkit/demo-serve.log & pid=$$!; \
	trap 'kill $$pid 2>/dev/null' EXIT; \
	for i in $$(seq 100); do [ -s .evalkit/demo-serve.url ] && break; sleep 0.1; done; \
	url=$$(head -n 1 .evalkit/demo-serve.url); \
	if [ -z "$$url" ]; then cat .evalkit/demo-serve.log; exit 2; fi; \
	echo "judged checks: the simulated judge of evalkit serve at $$url (offline, not Claude)"; \
	ANTHROPIC_BASE_URL=$$url ANTHROPIC_API_KEY=local-simulated-judge \
	  $(BIN)/evalkit run goldens/ --system baseline --judge on --cache off --quiet --report --gate

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy

# the suite spreads over PYTEST_WORKERS processes (pytest-xdist): most tests wait on subprocesses, servers and
# kernels, so two workers on two cores cut the wall time (11 min 38 s to 7 min 10 s here);
# PYTEST_WORKERS=0 runs it in one process; --dist loadfile keeps a file on one worker, so a notebook's cells run
# in order in one kernel
PYTEST_WORKERS ?= 2
# notebooks/ run top to bottom by nbval in this environment; --nbval-lax compares only cells marked to be
unit: setup browser-deps
	EVALKIT_CHROMIUM=$(CHROMIUM) $(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile --nbval-lax --nbval-current-env \
	  --nbval-sanitize-with notebooks/sanitize.cfg

test: lint typecheck unit

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis test-artifacts
