"""What a store URL may be, and where its local copy goes."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit._store import is_url, parse_url
from evalkit.errors import StorageError


def test_urls_and_paths_are_told_apart() -> None:
    assert is_url("s3://evals/runs") and is_url("s3:/evals/runs")  # what pathlib.Path makes of a URL
    assert (
        is_url("gs://evals/runs")
        and not is_url("runs/x")
        and not is_url("C:/runs")
        and not is_url(Path("runs"))
    )
    assert parse_url("s3://evals//runs/").url == "s3://evals/runs"
    assert parse_url(Path("s3://evals/runs/r1")).key("manifest.json") == "runs/r1/manifest.json"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("gs://evals/runs", "gs:// is not supported"),
        ("s3://", "no bucket named"),
        ("s3://../runs", "not a bucket name"),
        ("s3://Evals/runs", "not a bucket name"),
        ("s3://evals/../../etc", "'.' and '..' cannot be part"),
    ],
)
def test_a_bad_url_says_what_is_accepted(url: str, says: str) -> None:
    with pytest.raises(StorageError, match=says):
        parse_url(url)


def test_the_local_copy_stays_under_the_store_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_STORE_DIR", str(tmp_path / "store"))
    local = parse_url("s3://evals/team/runs/r1").local
    assert local == tmp_path / "store" / "evals" / "team" / "runs" / "r1"


@pytest.mark.parametrize(
    ("said", "says"),
    [
        ("Error performing PUT http://169.254.169.254/latest/api/token: 403", "no credentials"),
        ("<Code>NoSuchBucket</Code>", "does not exist"),
        ("<Code>PermanentRedirect</Code><Message>The bucket you are attempting to access", "AWS_REGION"),
        ("<Code>InvalidAccessKeyId</Code>", "refused the credentials (InvalidAccessKeyId)"),
        ("<Code>AccessDenied</Code>", "access denied"),
        ("HTTP error: error sending request", "cannot reach the store"),
        ("something else entirely", "cannot read: something else entirely"),
    ],
)
def test_each_failure_of_the_store_is_said_with_what_to_do(said: str, says: str) -> None:
    from evalkit._store import storage_error

    error = storage_error(RuntimeError(said), parse_url("s3://evals/runs"), "read")
    assert str(error).startswith("s3://evals/runs: cannot read") and says in str(error)
