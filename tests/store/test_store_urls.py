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
