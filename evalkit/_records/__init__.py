"""JSONL records: the one codec, located reading and atomic writing, shared by every JSONL file evalkit keeps
(cases, labels, ratings, verdicts)."""

from evalkit._lazy import attach
from evalkit._records._append import append_jsonl, locked, mend_tail, rewrite_jsonl
from evalkit._records._codec import DEEP_HINT, decode_line, encode_line, split_lines, strip_bom
from evalkit._records._document import (
    DIGEST_KEY,
    check_format_version,
    content_digest,
    decode_document,
    digest_problem,
)
from evalkit._records._read import read_jsonl
from evalkit._records._write import write_jsonl

__getattr__, __dir__, __all__ = attach(__name__, __file__)
