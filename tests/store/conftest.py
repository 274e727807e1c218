"""A real S3 protocol endpoint on 127.0.0.1 (moto's server), reached over HTTP by the same client code as a real
store: nothing of the client is patched. Each test gets a bucket of its own and an empty local store folder."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_helpers import S3

pytest.importorskip("moto", reason="moto[server] is a dev dependency: make test installs it")


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3(moto_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> S3:
    """A new, empty bucket; the AWS variables set to reach it; local copies kept under tmp_path/store."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("EVALKIT_STORE_DIR", str(tmp_path / "store"))
    made = S3(moto_endpoint, f"evk-{secrets.token_hex(4)}")
    made.client().create_bucket(Bucket=made.bucket)
    return made
