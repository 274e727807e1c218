"""JupyterLab in a real browser: a lab server on a free loopback port and Debian's Chromium driven by Playwright."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labdriver import CHROMIUM, CHROMIUM_ARGS, Lab, start_lab


# module scope: Playwright's sync API keeps an event loop running in this thread until it stops, which
# would break the later tests that run one of their own (asyncio.run)
@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """`jupyter lab` on a free loopback port with a random token and its own config, runtime and workspaces."""
    if not Path(CHROMIUM).exists():
        pytest.skip(
            f"no Chromium at {CHROMIUM}: `make test` installs Debian's chromium (or set EVALKIT_CHROMIUM)"
        )
    pytest.importorskip("playwright")
    with start_lab(tmp_path_factory.mktemp("lab"), tmp_path_factory.mktemp("lab-home")) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()
