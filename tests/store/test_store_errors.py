"""What goes wrong with a store is one line naming the URL and what to do, exit 2, before anything is paid for or
half-published: an unsupported scheme, no endpoint, no credentials, refused credentials, no bucket, no write."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from store_helpers import S3

from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
SUITE = str(ROOT / "goldens" / "support-triage")
CLAUDE = ["--system", "claude", "-q"]  # calls the API (the local server here), so its cache is checked first


def _fails(args: list[str], capsys: pytest.CaptureFixture[str], says: str) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert says in err, err
    assert len(err.splitlines()) == 1, err  # one line
    return err


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _nothing_written(folder: Path) -> None:
    assert not (folder / "runs").exists() and not (folder / "s3:").exists() and not (folder / "gs:").exists()
    assert not (folder / "store").exists() or not any(p.is_file() for p in (folder / "store").rglob("*"))


def test_an_unsupported_scheme_is_named(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _fails(["run", SUITE, "--runs-dir", "gs://evals/runs", "-q"], capsys, "gs:// is not supported")
    assert "s3://bucket/prefix" in err
    _fails(["run", SUITE, "--cache-dir", "azure://c/cache", "-q"], capsys, "azure:// is not supported")
    _fails(["report", "s3://"], capsys, "no bucket named")
    _nothing_written(here)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_endpoint(
    s3: S3,
    here: Path,
    anthropic_env: object,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("EVALKIT_STORE_RETRIES", "0")
    err = _fails(
        ["run", SUITE, "--runs-dir", s3.url("runs"), "-q"],
        capsys,
        "cannot reach the store at http://127.0.0.1:",
    )
    assert "AWS_ENDPOINT_URL" in err
    _fails(["run", SUITE, "--cache-dir", s3.url("cache"), *CLAUDE], capsys, "cannot reach the store")
    _nothing_written(here)


def test_no_credentials(
    s3: S3, here: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("EVALKIT_STORE_RETRIES", "0")
    assert main(["run", SUITE, "--runs-dir", s3.url("runs"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "no credentials" in err or "cannot reach" in err, err  # where no metadata service answers either
    assert "AWS_ACCESS_KEY_ID" in err or "AWS_ENDPOINT_URL" in err
    _nothing_written(here)
    assert not s3.keys()


def test_a_missing_bucket(
    s3: S3, here: Path, anthropic_env: object, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _fails(["run", SUITE, "--runs-dir", "s3://no-such-bucket/runs", "-q"], capsys, "does not exist")
    assert "'no-such-bucket'" in err and "aws s3 mb s3://no-such-bucket" in err
    _fails(["run", SUITE, "--cache-dir", "s3://no-such-bucket/cache", *CLAUDE], capsys, "does not exist")
    _fails(["report", "s3://no-such-bucket/runs/x"], capsys, "does not exist")
    _nothing_written(here)


def test_no_run_at_a_url(s3: S3, here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fails(["report", s3.url("runs/nope")], capsys, "no run here")
    _fails(["run", "--resume", s3.url("runs/nope")], capsys, "no run here")


@pytest.fixture
def read_only(s3: S3, monkeypatch: pytest.MonkeyPatch) -> S3:
    """The store checks credentials against IAM (moto's server does once asked to), and these may only read."""
    import boto3
    from moto import settings

    client = boto3.client(
        "iam",
        endpoint_url=s3.endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    user = f"reader-{s3.bucket}"
    client.create_user(UserName=user)
    policy = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["s3:GetObject", "s3:ListBucket"], "Resource": "*"}]}  # fmt: skip
    client.put_user_policy(UserName=user, PolicyName="read-only", PolicyDocument=json.dumps(policy))
    key = client.create_access_key(UserName=user)["AccessKey"]
    monkeypatch.setattr(settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key["AccessKeyId"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", key["SecretAccessKey"])
    return s3


def test_a_forbidden_write_stops_before_the_run(
    read_only: S3, here: Path, anthropic_env: object, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _fails(["run", SUITE, "--runs-dir", read_only.url("runs"), "-q"], capsys, "access denied")
    assert "s3:PutObject" in err
    _fails(["run", SUITE, "--cache-dir", read_only.url("cache"), *CLAUDE], capsys, "access denied")
    _nothing_written(here)


def test_refused_credentials(
    read_only: S3, here: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIANOTAREALKEY00000")
    # S3 answers a HEAD with a bare 403, a GET or PUT names the code: either way the line says what to check
    err = _fails(["run", SUITE, "--runs-dir", read_only.url("runs"), "-q"], capsys, "AWS_SECRET_ACCESS_KEY")
    assert "refused the credentials (InvalidAccessKeyId)" in err or "access denied" in err
    err = _fails(["report", read_only.url("runs/x")], capsys, "refused the credentials (InvalidAccessKeyId)")
    _nothing_written(here)


def test_a_bad_retry_count(
    s3: S3, here: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("EVALKIT_STORE_RETRIES", "three")
    _fails(["run", SUITE, "--runs-dir", s3.url("runs"), "-q"], capsys, "EVALKIT_STORE_RETRIES='three'")
    _nothing_written(here)
