"""Keyword baseline for support-triage: the floor a prompt has to beat.

Written from the label policy in prompt.md, not from the cases: each label has a list of lower-case
keywords and phrases taken from that label's bullets. A ticket scores one point per keyword occurrence in the
body and two per occurrence in the subject; the highest-scoring label wins, ties go to the policy's priority
order (refund > shipping > account > billing > technical), and a ticket that matches nothing is `other`.
Phrases that report a takeover of the account answer `account` outright (the policy's security rule).

What it cannot do, by design: tell a request from background, ignore instructions written into the ticket,
read sarcasm, or read any language but English. Those are the slices where a model should beat it.
"""

from __future__ import annotations

import re
from typing import Any

# fmt: off
PRIORITY = ("refund", "shipping", "account", "billing", "technical")

KEYWORDS: dict[str, tuple[str, ...]] = {
    "refund": (
        "refund", "refunded", "refunds", "refunding", "money back", "reimburse", "reimbursed",
        "reimbursement", "chargeback", "charge back", "dispute", "reverse the charge", "reversed",
        "credit back", "credited back", "put back on my card", "pay me back", "return for a refund",
        "want my money", "get my money",
    ),
    "shipping": (
        "shipping", "ship", "shipped", "ships", "delivery", "deliver", "delivered", "courier", "tracking",
        "track", "tracking number", "parcel", "package", "where is my order", "order status", "not arrived",
        "hasn't arrived", "never arrived", "arrive", "arrived", "lost in transit", "delivery address",
        "express", "wrong item", "missing item", "replacement", "exchange", "damaged", "dispatch",
        "dispatched", "in transit", "out for delivery",
    ),
    "account": (
        "password", "log in", "login", "sign in", "signin", "sign-in", "locked", "locked out", "unlock",
        "two-factor", "2fa", "authenticator", "verification", "verify", "verification code", "username",
        "profile", "delete my account", "close my account", "deactivate", "disabled", "suspended",
        "under review", "personal data", "gdpr", "my data", "permissions", "admin", "role", "owner",
        "ownership", "change my email", "email address", "account",
    ),
    "billing": (
        "invoice", "invoices", "receipt", "receipts", "credit note", "vat", "tax", "billing", "billed",
        "bill", "charge", "charged", "charges", "payment", "payments", "pay", "paid", "card", "credit card",
        "declined", "price", "pricing", "plan", "plans", "upgrade", "downgrade", "subscription", "subscribe",
        "renewal", "renew", "renewed", "trial", "promo", "promo code", "coupon", "discount", "overdue",
        "balance", "annual", "monthly", "yearly", "seat", "seats",
    ),
    "technical": (
        "error", "errors", "bug", "bugs", "crash", "crashes", "crashed", "crashing", "freeze", "freezes",
        "frozen", "slow", "not working", "doesn't work", "does not work", "stopped working", "won't load",
        "loading", "sync", "syncing", "api", "integration", "install", "installed", "update", "updated",
        "upload", "uploading", "export", "import", "notifications", "notification", "outage", "down",
        "glitch", "pair", "pairing", "bluetooth", "app", "browser", "how do i", "500", "502", "503", "404",
    ),
}

SECURITY_PHRASES: tuple[str, ...] = (
    "hacked", "someone got into my account", "someone logged into my account", "someone accessed my account",
    "unauthorized access", "unauthorised access", "account was compromised", "account has been compromised",
    "took over my account", "sign-ins from", "logins from",
)
# fmt: on

SUBJECT_WEIGHT = 2
BODY_WEIGHT = 1


def _pattern(phrase: str) -> re.Pattern[str]:
    # Whole words / whole phrases only, so "ship" does not match "relationship".
    return re.compile(r"(?<![a-z0-9])" + re.escape(phrase) + r"(?![a-z0-9])")


_COMPILED: dict[str, list[re.Pattern[str]]] = {
    label: [_pattern(p) for p in phrases] for label, phrases in KEYWORDS.items()
}
_SECURITY = [_pattern(p) for p in SECURITY_PHRASES]


def _text(value: Any) -> str:
    return value.lower().replace("\u2019", "'") if isinstance(value, str) else ""


def scores(ticket: dict[str, Any]) -> dict[str, int]:
    """Keyword score per label (subject hits count double)."""
    subject, body = _text(ticket.get("subject")), _text(ticket.get("body"))
    out: dict[str, int] = {}
    for label, patterns in _COMPILED.items():
        out[label] = sum(
            SUBJECT_WEIGHT * len(p.findall(subject)) + BODY_WEIGHT * len(p.findall(body)) for p in patterns
        )
    return out


def predict(input: dict[str, Any]) -> str:
    ticket = input if isinstance(input, dict) else {}
    text = _text(ticket.get("subject")) + "\n" + _text(ticket.get("body"))
    if any(p.search(text) for p in _SECURITY):
        return "account"
    label_scores = scores(ticket)
    best = max(label_scores.values(), default=0)
    if best == 0:
        return "other"
    return next(label for label in PRIORITY if label_scores[label] == best)
