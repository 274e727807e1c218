"""Template reply drafter: keyword triage picks the queue, a per-queue template fills in the order facts."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

# Ties go to the queue listed first: a money-back request usually also mentions the parcel or the charge.
KEYWORDS: dict[str, tuple[str, ...]] = {
    "refund": (
        "refund",
        "money back",
        "reimburse",
        "return",
        "cancel",
        "erstattung",
        "erstatten",
        "geld zurück",
        "rückgabe",
        "rembourse",
        "retour",
        "reembols",
        "devolu",
        "devolver",
    ),
    "billing": (
        "invoice",
        "charged",
        "charge",
        "payment",
        "billing",
        "vat",
        "receipt",
        "paid twice",
        "card",
        "paypal",
        "rechnung",
        "abgebucht",
        "zahlung",
        "facture",
        "paiement",
        "factura",
        "cobro",
        "cobrado",
        "pagamento",
        "fatura",
    ),
    "account": (
        "password",
        "log in",
        "login",
        "sign in",
        "account",
        "2fa",
        "verification code",
        "locked out",
        "passwort",
        "konto",
        "anmelden",
        "mot de passe",
        "compte",
        "contraseña",
        "cuenta",
        "senha",
        "conta",
    ),
    "technical": (
        "error",
        "bug",
        "app",
        "website",
        "crash",
        "not working",
        "doesn't work",
        "does not work",
        "won't turn on",
        "firmware",
        "bluetooth",
        "pair",
        "fehler",
        "funktioniert nicht",
        "erreur",
        "ne marche pas",
        "no funciona",
        "não funciona",
    ),
    "shipping": (
        "delivery",
        "deliver",
        "shipping",
        "shipped",
        "tracking",
        "parcel",
        "package",
        "arrived",
        "courier",
        "late",
        "damaged",
        "broken",
        "lieferung",
        "paket",
        "geliefert",
        "livraison",
        "colis",
        "envío",
        "entrega",
        "encomenda",
    ),
}

SIGN_OFF = re.compile(
    r"^(?:thanks|thank you|cheers|regards|best|kind regards|best regards|many thanks|br|"
    r"danke|viele grüße|grüße|gruß|mfg|merci|cordialement|bien à vous|gracias|saludos|un saludo|"
    r"obrigad[oa]|abraços|atenciosamente)\b[\s,!.]*(.*)$",
    re.IGNORECASE,
)

TEMPLATES = {
    "shipping": (
        "Thank you for getting in touch about order {order}. The order is currently marked as {status}{when}. "
        "{policy}We are checking the delivery with our carrier and will update you by email as soon as we "
        "have news. If anything in the parcel arrived damaged, please reply with a photo of the item and the "
        "packaging so we can sort it out quickly."
    ),
    "refund": (
        "Thank you for your message about order {order} ({total}). The order is currently marked as {status}. "
        "{policy}We have passed your request to our returns team, who will review it and confirm the next "
        "steps by email. Once a refund is approved it goes back to the original payment method."
    ),
    "billing": (
        "Thank you for your message about the payment for order {order}. Our records show an order total of "
        "{total} and the order is currently marked as {status}. {policy}Our billing team will review the "
        "charges and reply with the details. If you can, please send the date and amount shown on your "
        "statement so we can match it faster."
    ),
    "account": (
        "Thank you for contacting us. We are sorry you are having trouble with your account. For security "
        "reasons we cannot change sign-in details by email: please use the 'Forgot password' link on the "
        "sign-in page to reset your password. {policy}Your order {order} is marked as {status} and is not "
        "affected."
    ),
    "technical": (
        "Thank you for letting us know, and sorry that something is not working as expected with order "
        "{order}. Please try restarting the device or app, or clearing your browser cache, and let us know "
        "if the problem continues. {policy}If it does, please reply with a short description of the steps "
        "and a screenshot or photo, and our technical team will look into it."
    ),
    "other": (
        "Thank you for contacting us about order {order}, which is currently marked as {status}. "
        "{policy}We have received your message and a member of our team will get back to you shortly."
    ),
}

CLOSING = "Kind regards,\nCustomer Support"


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def classify(subject: str, body: str) -> str:
    """The queue with the most keyword hits in subject and body; `other` when none hits."""
    text = _fold(f"{subject}\n{body}")
    scores = {label: sum(text.count(word) for word in words) for label, words in KEYWORDS.items()}
    best = max(scores.values())
    if best == 0:
        return "other"
    return next(label for label, score in scores.items() if score == best)


def first_name(body: str, email: str) -> str:
    """The name after a sign-off at the end of the ticket, else the first part of the email address."""
    lines = [line.strip() for line in body.strip().splitlines() if line.strip()]
    for index in range(len(lines) - 1, max(len(lines) - 4, -1), -1):
        match = SIGN_OFF.match(lines[index])
        if not match:
            continue
        rest = match.group(1).strip() or (lines[index + 1] if index + 1 < len(lines) else "")
        word = re.match(r"[^\W\d_]{2,}", rest)
        if word:
            return word.group(0).capitalize()
    local = email.split("@", 1)[0]
    part = re.split(r"[._+-]", local)[0]
    if part.isalpha() and len(part) >= 2:
        return part.capitalize()
    return "there"


def _money(amount: Any, currency: str) -> str:
    try:
        return f"{float(amount):.2f} {currency}".strip()
    except (TypeError, ValueError):
        return str(amount)


def predict(input: dict[str, Any]) -> dict[str, str]:
    ticket = input.get("ticket") or {}
    order = input.get("order") or {}
    subject = str(ticket.get("subject") or "")
    body = str(ticket.get("body") or "")
    label = classify(subject, body)

    status = str(order.get("status") or "unknown").replace("_", " ")
    delivered = order.get("delivered_at")
    policy = str(input.get("policy") or "").strip()
    if policy and not policy.endswith((".", "!", "?")):
        policy += "."
    text = TEMPLATES[label].format(
        order=order.get("order_number", "your order"),
        status=status,
        when=f" (delivered on {str(delivered)[:10]})" if delivered else "",
        total=_money(order.get("total"), str(order.get("currency") or "")),
        policy=f"{policy} " if policy else "",
    )
    name = first_name(body, str(ticket.get("customer_email") or ""))
    draft = f"Hi {name},\n\n{text}\n\n{CLOSING}"
    return {"label": label, "draft": draft}
