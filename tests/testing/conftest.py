"""Closes the SDK clients a test of the local server opened."""

from collections.abc import Iterator

import pytest
from server_helpers import close_clients


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    close_clients()
