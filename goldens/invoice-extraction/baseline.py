"""Regex invoice extractor: labelled fields, date and number patterns, `qty x price = amount` rows."""

from __future__ import annotations

import re
import unicodedata

_LEGAL_FORMS = (
    r"GmbH|AG|KG|UG|e\.K\.|Ltd\.?|Limited|LLC|Inc\.?|PLC|LLP|S\.?A\.?R\.?L\.?|SAS|SASU|EURL|S\.?A\.?|"
    r"S\.?L\.?U?\.?|S\.?r\.?l\.?s?|S\.?p\.?A\.?|S\.?n\.?c\.?|B\.?V\.?|N\.?V\.?|V\.?o\.?F\.?|Lda\.?|OÜ|ApS|AB|Oy"
)
_LEGAL_RE = re.compile(rf"(?<![\w.])(?:{_LEGAL_FORMS})(?![\w])")

_INVOICE_WORDS = re.compile(
    r"\b(invoice|tax invoice|rechnung|facture|factura|fattura|factuur|fatura|bill)\b", re.IGNORECASE
)
_NOT_INVOICE_WORDS = re.compile(
    r"\b(quot(?:e|ation)|estimate|angebot|kostenvoranschlag|devis|presupuesto|cotizaci[oó]n|preventivo|"
    r"offerte|delivery note|packing slip|lieferschein|bon de livraison|albar[aá]n|bolla|pakbon|"
    r"pro ?-?forma|purchase order|bestellung|order confirmation|auftragsbest[aä]tigung)\b",
    re.IGNORECASE,
)

_TOTAL_LABEL = re.compile(
    r"(grand total|total amount|amount due|balance due|total due|invoice total|total ttc|montant ttc|"
    r"net [àa] payer|montant total|total [àa] payer|gesamtbetrag|rechnungsbetrag|endbetrag|gesamtsumme|"
    r"zu zahlen|gesamt|importe total|total factura|total a pagar|totaal|te betalen|totale fattura|"
    r"totale documento|totale da pagare|totale|total)",
    re.IGNORECASE,
)
_NOT_TOTAL = re.compile(
    r"(sub-?total|zwischensumme|sous-total|subtotaal|subtotale|total ht|total net|netto|net total|"
    r"total excl|excl\.|base imponible|imponibile|total hors|totaal excl)",
    re.IGNORECASE,
)
_TAX_LABEL = re.compile(r"\b(vat|tax|mwst|ust|umsatzsteuer|mehrwertsteuer|tva|iva|btw|igic)\b", re.IGNORECASE)
_DISCOUNT_LABEL = re.compile(
    r"\b(discount|rabatt|nachlass|remise|rabais|descuento|korting|sconto)\b", re.IGNORECASE
)
_DATE_LABEL = re.compile(
    r"(invoice date|date of issue|issue date|rechnungsdatum|datum|date de facture|date|fecha de emisi[oó]n|"
    r"fecha|factuurdatum|data fattura|data)",
    re.IGNORECASE,
)
_NUMBER_LABEL = re.compile(
    r"(invoice\s*(?:no|number|#)|rechnungs?-?\s*(?:nr|nummer)|facture\s*n|n[°º]\s*de\s*facture|"
    r"factura\s*n|n[°º]\s*factura|factuurnummer|fattura\s*n|invoice)\.?\s*[:#°º]?\s*([A-Z0-9][A-Z0-9\-/.]*\d)",
    re.IGNORECASE,
)

_CURRENCY_SYMBOLS = {"€": "EUR", "£": "GBP", "$": "USD", "¥": "JPY", "₹": "INR", "zł": "PLN"}
_CURRENCY_CODES = (
    "EUR",
    "USD",
    "GBP",
    "CHF",
    "SEK",
    "NOK",
    "DKK",
    "PLN",
    "CZK",
    "HUF",
    "JPY",
    "CAD",
    "AUD",
    "MXN",
    "BRL",
    "CNY",
    "INR",
)
_CODE_RE = re.compile(r"\b(" + "|".join(_CURRENCY_CODES) + r")\b")

_MONTHS = {
    # English, German, French, Spanish, Dutch, Italian, Portuguese month names (prefixes).
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "may": 5,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
    "januar": 1,
    "jänner": 1,
    "februar": 2,
    "märz": 3,
    "mai": 5,
    "juni": 6,
    "juli": 7,
    "okt": 10,
    "dez": 12,
    "janv": 1,
    "févr": 2,
    "fevr": 2,
    "mars": 3,
    "avr": 4,
    "juin": 6,
    "juil": 7,
    "août": 8,
    "aout": 8,
    "déc": 12,
    "enero": 1,
    "febrero": 2,
    "marzo": 3,
    "abril": 4,
    "mayo": 5,
    "junio": 6,
    "julio": 7,
    "agosto": 8,
    "septiembre": 9,
    "setiembre": 9,
    "octubre": 10,
    "noviembre": 11,
    "diciembre": 12,
    "januari": 1,
    "februari": 2,
    "maart": 3,
    "mei": 5,
    "augustus": 8,
    "oktober": 10,
    "gennaio": 1,
    "febbraio": 2,
    "aprile": 4,
    "maggio": 5,
    "giugno": 6,
    "luglio": 7,
    "settembre": 9,
    "ottobre": 10,
    "dicembre": 12,
    "janeiro": 1,
    "fevereiro": 2,
    "março": 3,
    "maio": 5,
    "junho": 6,
    "julho": 7,
    "setembro": 9,
    "outubro": 10,
    "novembro": 11,
    "dezembro": 12,
}
_MONTH_ALT = "|".join(sorted((re.escape(m) for m in _MONTHS), key=len, reverse=True))

_NUM = r"-?\d{1,3}(?:[.,' \u00a0\u202f]\d{3})+(?:[.,]\d{1,2})?|-?\d+(?:[.,]\d{1,4})?"
_NUM_RE = re.compile(rf"(?<![\w.,])({_NUM})(?![\d])")
_PERCENT_RE = re.compile(rf"({_NUM})\s*%")

_DATE_PATTERNS = [
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), "ymd"),
    (re.compile(r"\b(\d{1,2})[./-](\d{1,2})[./-](\d{4})\b"), "dmy"),
    (re.compile(r"\b(\d{1,2})[./-](\d{1,2})[./-](\d{2})\b"), "dmy2"),
    (
        re.compile(rf"\b(\d{{1,2}})\.?\s*(?:de\s+)?({_MONTH_ALT})[a-zé]*\.?,?\s*(?:de\s+)?(\d{{4}})\b", re.I),
        "dMy",
    ),
    (re.compile(rf"\b({_MONTH_ALT})[a-zé]*\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I), "Mdy"),
]


def parse_number(text: str) -> float | None:
    """Parse `1,234.56`, `1.234,56`, `1 234,56`, `1'234.56` or `1234,5` into a float."""
    s = text.strip().replace("\u00a0", " ").replace("\u202f", " ").replace("'", "").replace(" ", "")
    if not s:
        return None
    neg = s.startswith("-")
    s = s.lstrip("-+")
    last_comma, last_dot = s.rfind(","), s.rfind(".")
    if last_comma >= 0 and last_dot >= 0:
        decimal = "," if last_comma > last_dot else "."
    elif last_comma >= 0:
        # A single separator followed by exactly three digits reads as thousands.
        decimal = "" if s.count(",") > 1 or len(s) - last_comma == 4 else ","
    elif last_dot >= 0:
        decimal = "" if s.count(".") > 1 or len(s) - last_dot == 4 else "."
    else:
        decimal = "."
    thousands = {",": ".", ".": ",", "": ",."}[decimal]
    for sep in thousands:
        s = s.replace(sep, "")
    s = s.replace(",", ".")
    try:
        value = float(s)
    except ValueError:
        return None
    return -value if neg else value


def _amounts(line: str) -> list[float]:
    """Numbers on a line that are not percentages, dates or long ids."""
    cleaned = _PERCENT_RE.sub(" ", line)
    for pattern, _ in _DATE_PATTERNS:
        cleaned = pattern.sub(" ", cleaned)
    values = []
    for match in _NUM_RE.finditer(cleaned):
        token = match.group(1)
        digits = re.sub(r"\D", "", token)
        if len(digits) > 9:
            continue
        value = parse_number(token)
        if value is not None:
            values.append(value)
    return values


def _to_iso(year: int, month: int, day: int) -> str | None:
    if not (1 <= month <= 12 and 1 <= day <= 31 and 1900 <= year <= 2100):
        return None
    return f"{year:04d}-{month:02d}-{day:02d}"


def _month_number(word: str) -> int | None:
    word = word.lower().rstrip(".")
    for length in range(len(word), 2, -1):
        if word[:length] in _MONTHS:
            return _MONTHS[word[:length]]
    return None


def find_date(text: str) -> str | None:
    for match, kind in _iter_dates(text):
        iso = _convert(match, kind)
        if iso:
            return iso
    return None


def _iter_dates(text: str):
    found = []
    for pattern, kind in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            found.append((match.start(), match, kind))
    found.sort(key=lambda item: item[0])
    return [(m, k) for _, m, k in found]


def _convert(match: re.Match[str], kind: str) -> str | None:
    g = match.groups()
    if kind == "ymd":
        return _to_iso(int(g[0]), int(g[1]), int(g[2]))
    if kind == "dmy":
        day, month = int(g[0]), int(g[1])
        if month > 12 >= day:
            day, month = month, day
        return _to_iso(int(g[2]), month, day)
    if kind == "dmy2":
        return _to_iso(2000 + int(g[2]), int(g[1]), int(g[0]))
    if kind == "dMy":
        month = _month_number(g[1])
        return _to_iso(int(g[2]), month, int(g[0])) if month else None
    month = _month_number(g[0])
    return _to_iso(int(g[2]), month, int(g[1])) if month else None


def _extract_date(lines: list[str]) -> str | None:
    for line in lines:
        label = _DATE_LABEL.search(line)
        if label and not re.search(
            r"(due|f[äa]llig|[ée]ch[ée]ance|vencimiento|vervaldatum|scadenza)", line, re.I
        ):
            iso = find_date(line[label.start() :])
            if iso:
                return iso
    return find_date("\n".join(lines))


def _extract_currency(lines: list[str], total_line: str | None) -> str | None:
    def from_text(text: str) -> str | None:
        code = _CODE_RE.search(text)
        if code:
            return code.group(1)
        for symbol, iso in _CURRENCY_SYMBOLS.items():
            if symbol in text:
                return iso
        return None

    if total_line:
        found = from_text(total_line)
        if found:
            return found
    counts: dict[str, int] = {}
    text = "\n".join(lines)
    for code in _CODE_RE.findall(text):
        counts[code] = counts.get(code, 0) + 1
    for symbol, iso in _CURRENCY_SYMBOLS.items():
        if symbol in text:
            counts[iso] = counts.get(iso, 0) + text.count(symbol)
    if not counts:
        return None
    return max(sorted(counts), key=lambda c: counts[c])


def _extract_supplier(lines: list[str]) -> str | None:
    for line in lines:
        match = re.match(
            r"\s*(?:from|supplier|seller|vendor|lieferant|verk[äa]ufer|fournisseur|[ée]metteur|proveedor|"
            r"emisor|leverancier|fornitore)\s*[:\-]\s*(.+)",
            line,
            re.I,
        )
        if match:
            return _clean_name(match.group(1))
    for line in lines[:15]:
        if _LEGAL_RE.search(line) and not re.search(
            r"(bill to|ship to|kunde|client|cliente|klant|an:|to:)", line, re.I
        ):
            return _clean_name(line)
    for line in lines:
        if line.strip() and not _INVOICE_WORDS.fullmatch(line.strip()):
            return _clean_name(line)
    return None


def _clean_name(text: str) -> str:
    # A name line often carries the address after a separator.
    name = re.split(r"\s*(?:[·|•,]|\s{3,}|\s-\s)\s*", text.strip())[0]
    return name.strip(" :") or text.strip()


def _labelled_amount(lines: list[str], label: re.Pattern[str], exclude: re.Pattern[str] | None = None):
    hits = []
    for index, line in enumerate(lines):
        if label.search(line) and not (exclude and exclude.search(line)):
            values = _amounts(line[label.search(line).end() :])
            if values:
                hits.append((index, line, values[-1]))
    return hits


def _line_items(lines: list[str]) -> list[dict]:
    items = []
    qty_price = re.compile(
        rf"^\s*(?P<desc>.*?)[\s:]*(?P<qty>{_NUM})\s*(?:x|×|\*)\s*(?P<price>{_NUM})\s*[€$£]?\s*"
        rf"(?:=|:)?\s*[€$£]?\s*(?P<amount>{_NUM})\s*[€$£]?\s*(?:[A-Z]{{3}})?\s*$",
        re.I,
    )
    for line in lines:
        if _TOTAL_LABEL.search(line) or _TAX_LABEL.search(line) or _DISCOUNT_LABEL.search(line):
            continue
        match = qty_price.match(line)
        if match:
            qty, price, amount = (parse_number(match.group(k)) for k in ("qty", "price", "amount"))
            if None not in (qty, price, amount) and abs(qty * price - amount) <= 0.02:
                items.append(_item(match.group("desc"), qty, price, amount))
            continue
        # Table rows: description followed by quantity, unit price and amount columns.
        values = _amounts(line)
        desc = re.split(rf"\s(?:{_NUM})", line, maxsplit=1)[0]
        if len(values) >= 3 and re.search(r"[A-Za-zÀ-ÿ]{3}", desc):
            qty, price, amount = values[-3:]
            if qty > 0 and abs(qty * price - amount) <= 0.02:
                items.append(_item(desc, qty, price, amount))
    return items


def _item(desc: str, qty: float, price: float, amount: float) -> dict:
    desc = re.sub(r"^\s*\d+[.)]?\s+", "", desc).strip(" \t-:|")
    return {"description": desc, "quantity": qty, "unit_price": price, "amount": amount}


def _empty() -> dict:
    return {
        "supplier": None,
        "invoice_number": None,
        "date": None,
        "currency": None,
        "line_items": [],
        "discount": 0,
        "tax": 0,
        "total": None,
    }


def predict(input: dict | str) -> dict:
    """Extract the invoice fields from `{"document": text}`."""
    text = input.get("document", "") if isinstance(input, dict) else str(input)
    text = unicodedata.normalize("NFC", text)
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if not lines:
        return _empty()

    head = "\n".join(lines[:8])
    if _NOT_INVOICE_WORDS.search(head) and not _INVOICE_WORDS.search(head):
        return _empty()

    totals = _labelled_amount(lines, _TOTAL_LABEL, _NOT_TOTAL)
    total_line, total = (totals[-1][1], totals[-1][2]) if totals else (None, None)
    taxes = _labelled_amount(
        [line for line in lines if not _TOTAL_LABEL.search(line) or _TAX_LABEL.search(line)], _TAX_LABEL
    )
    tax = round(sum(abs(hit[2]) for hit in taxes if total is None or abs(hit[2]) < abs(total)), 2)
    discounts = _labelled_amount(lines, _DISCOUNT_LABEL)
    discount = round(sum(abs(hit[2]) for hit in discounts), 2)

    number = None
    for line in lines:
        match = _NUMBER_LABEL.search(line)
        if match:
            number = match.group(2)
            break

    return {
        "supplier": _extract_supplier(lines),
        "invoice_number": number,
        "date": _extract_date(lines),
        "currency": _extract_currency(lines, total_line),
        "line_items": _line_items(lines),
        "discount": discount,
        "tax": tax,
        "total": total,
    }
