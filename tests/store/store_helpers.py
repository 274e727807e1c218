"""The bucket a store test works in (the `s3` fixture of this folder's conftest makes one)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass
class S3:
    endpoint: str
    bucket: str

    def url(self, prefix: str = "") -> str:
        return f"s3://{self.bucket}/{prefix}".rstrip("/")

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )

    def keys(self, prefix: str = "") -> list[str]:
        listed = self.client().list_objects_v2(Bucket=self.bucket, Prefix=prefix)
        return sorted(o["Key"] for o in listed.get("Contents", []))


def machine(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Work as another machine would, in `folder`: its own working folder, local store copies and response cache."""
    folder.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("EVALKIT_STORE_DIR", str(folder / ".evalkit" / "store"))
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(folder / ".evalkit" / "cache"))
    return folder
