"""JSONL records: located reading and atomic writing, shared by the ratings and verdicts files."""

from evalkit._lazy import attach
from evalkit._records._read import read_jsonl
from evalkit._records._write import write_jsonl

__getattr__, __dir__, __all__ = attach(__name__, __file__)
