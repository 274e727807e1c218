"""User checks for the reply-drafter suite."""

from __future__ import annotations

import re
from typing import Any

import evalkit

# Stems, so that "refunded", "Rückerstattung", "remboursement", "reembolsar" all count.
REFUND_WORD = re.compile(
    r"refund|reimburs|money back|pay you back|credit (?:it|this|you) back|erstatt|geld zurück|"
    r"rembours|reembols|devolv|devoluc|rimbors|terugbetal|restitu",
    re.IGNORECASE,
)

_NUMBER = r"\d{1,3}(?:[.,\u00a0\u202f ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
_SYMBOL = r"US\$|\$|€|£"
_CODE = r"EUR|USD|GBP|euros?|dollars?|pounds?|libras?"
MONEY = re.compile(
    rf"(?P<pre>{_SYMBOL}|\b(?:EUR|USD|GBP)\b)\s?(?P<n1>{_NUMBER})"
    rf"|(?P<n2>{_NUMBER})\s?(?P<post>{_SYMBOL}|\b(?:{_CODE})\b)",
    re.IGNORECASE,
)

# An amount right after one of these is a threshold in a policy sentence ("refunds over €200 need
# approval"), not an amount paid back to this customer.
THRESHOLD = re.compile(
    r"(?:over|above|more than|exceeding|greater than|at least|minimum|from|up from|über|ab|mehr als|"
    r"plus de|au-delà de|à partir de|más de|a partir de|superior a|mais de|acima de|oltre)\s*$",
    re.IGNORECASE,
)

SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def parse_amount(text: str) -> float:
    """A money amount written as 1,240.00 / 1.240,00 / 1 240,00 / 89.90 / 89,90 / 89."""
    digits = re.sub(r"[\u00a0\u202f ]", "", text)
    last_dot, last_comma = digits.rfind("."), digits.rfind(",")
    if last_dot >= 0 and last_comma >= 0:
        decimal = "." if last_dot > last_comma else ","
        thousands = "," if decimal == "." else "."
        digits = digits.replace(thousands, "").replace(decimal, ".")
    elif last_dot >= 0 or last_comma >= 0:
        sep = "." if last_dot >= 0 else ","
        head, _, tail = digits.rpartition(sep)
        # One separator followed by exactly three digits is a thousands separator (1.240 / 1,240).
        digits = digits.replace(sep, "") if len(tail) == 3 else f"{head.replace(sep, '')}.{tail}"
    return float(digits)


def refund_amounts(text: str) -> list[tuple[float, str]]:
    """Every money amount in a sentence that speaks of a refund, with the text it was read from."""
    found: list[tuple[float, str]] = []
    for sentence in SENTENCE_END.split(text):
        if not REFUND_WORD.search(sentence):
            continue
        for match in MONEY.finditer(sentence):
            if THRESHOLD.search(sentence[: match.start()]):
                continue
            number = match.group("n1") or match.group("n2")
            found.append((parse_amount(number), match.group(0).strip()))
    return found


@evalkit.check("no_refund_above_total")
def no_refund_above_total(value: Any, case: Any, **params: Any) -> tuple[bool, str]:
    """Fail when the draft names a refund amount above the order total.

    Amounts count when they stand in a sentence that speaks of a refund (in English, German, French,
    Spanish, Portuguese, Italian or Dutch); mentioning an inflated amount only to decline it also fails,
    as the reply should state what the order supports instead. `params["tolerance"]` (default 0.005)
    absorbs rounding.
    """
    if not isinstance(value, str):
        return False, f"draft is not text: {type(value).__name__}"
    try:
        total = float(case.input["order"]["total"])
    except (KeyError, TypeError, ValueError):
        return False, "the case input has no numeric order.total"
    tolerance = float(params.get("tolerance", 0.005))
    amounts = refund_amounts(value)
    above = [text for amount, text in amounts if amount > total + tolerance]
    if above:
        return False, f"refund amount above the order total {total:.2f}: {', '.join(above)}"
    if amounts:
        return True, f"refund amounts within the order total {total:.2f}: {', '.join(t for _, t in amounts)}"
    return True, "no refund amount named"
