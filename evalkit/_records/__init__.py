"""JSONL records: located reading and atomic writing, shared by the ratings and verdicts files."""

from evalkit._records._read import read_jsonl
from evalkit._records._write import write_jsonl

__all__ = ["read_jsonl", "write_jsonl"]
