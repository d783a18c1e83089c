"""Money as people read, type and export it. Amounts are integers in minor units everywhere
(cents for USD, yen for JPY); this module is the one place that knows how many decimals a
currency has and turns amounts into text and back.

Standard library only, and never through a float: the major and minor parts come from
integer divmod, so 12345 USD is always "123.45 USD", however large the amount.
"""

import re
from fractions import Fraction

import pycountry

# The units a payout or a ledger line is in, by the name the screens give each, in the order
# every page, export and statement lists them: the one list of units (models.Unit is made
# from it).
UNITS = {"cash": "Cash", "tdollars": "T$", "tickets": "Tickets", "fpp": "FPP"}
UNIT_ORDER = tuple(UNITS)
# Units that are amounts of the currency; seats (tickets) and FPP are counts.
MONEY_UNITS = frozenset({"cash", "tdollars"})
# A satellite's prize pool before it is settled: an amount of the currency that is paid out as
# seats (and T$ for what is under a seat), or as cash when the rulebook converts seats. Never a
# payout's unit; it only names a pool on pages that add pools up.
SATELLITE_POOL_UNITS = {
    "seats": ("Seats and T$", "in seats and T$"),
    "seats_in_cash": ("Seats, paid in cash", "in seats paid in cash"),
}

# ISO 4217 minor-unit exponents that differ from the usual 2.
_EXPONENTS = {
    **dict.fromkeys(
        [
            "BIF",
            "CLP",
            "DJF",
            "GNF",
            "ISK",
            "JPY",
            "KMF",
            "KRW",
            "PYG",
            "RWF",
            "UGX",
            "UYI",
            "VND",
            "VUV",
            "XAF",
            "XOF",
            "XPF",
        ],
        0,
    ),
    **dict.fromkeys(["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"], 3),
    **dict.fromkeys(["CLF", "UYW"], 4),
}

# Digits shown after the currency's own decimals for an amount that is not a whole minor unit.
EXTRA_DIGITS = 4

# ASCII digits only: a bare \d also takes "١٢" or "１２", which int() reads as 12.
_TYPED_AMOUNT = re.compile(r"(\d{1,18})(?:[.,](\d+))?", re.ASCII)


def unit_rank(unit: str) -> int:
    """Where ``unit`` sorts in UNIT_ORDER; a unit it does not know sorts after them all."""
    return UNIT_ORDER.index(unit) if unit in UNIT_ORDER else len(UNIT_ORDER)


def is_currency(code: str) -> bool:
    """Whether ``code`` is an ISO 4217 currency code. The list is the one Debian's iso-codes
    keeps, as pycountry ships it (pinned): a list of our own would go stale as currencies come
    and go. A code of the right shape that names no currency (``ZZZ``, a typo of ``USD``) was
    stored and settled in as if it did."""
    return pycountry.currencies.get(alpha_3=code) is not None


def currency_exponent(currency: str) -> int:
    return _EXPONENTS.get(currency.upper(), 2)


def _figure(amount: int, exponent: int, *, grouped: bool) -> str:
    sign = "-" if amount < 0 else ""
    major, minor = divmod(abs(amount), 10**exponent)
    figure = f"{major:,}" if grouped else str(major)
    if exponent:
        figure += f".{minor:0{exponent}d}"
    return sign + figure


def format_minor_units(amount: int, currency: str) -> str:
    """123456, "USD" -> "1,234.56 USD"; the exponent comes from the currency."""
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise TypeError(f"money amounts are integers in minor units, got {amount!r}")
    return f"{_figure(amount, currency_exponent(currency), grouped=True)} {currency.upper()}"


def format_figure(amount: int, currency: str) -> str:
    """123456, "USD" -> "1,234.56": the amount in the major unit without the currency, as it
    stands in a line of arithmetic (a player's statement)."""
    return _figure(amount, currency_exponent(currency), grouped=True)


def format_tickets(count: int) -> str:
    """1 -> "1 seat", 3 -> "3 seats"."""
    return f"{count:,} seat" if count == 1 else f"{count:,} seats"


def format_fpp(points: int) -> str:
    """12500 -> "12,500 FPP"."""
    return f"{points:,} FPP"


def format_in_unit(amount: int, unit: str, currency: str) -> str:
    """One amount in its own unit: cash, tdollars, tickets or fpp (or a satellite's pool)."""
    if unit == "cash":
        return format_minor_units(amount, currency)
    if unit == "tdollars":
        return f"{format_minor_units(amount, currency)} in T$"
    if unit == "tickets":
        return format_tickets(amount)
    if unit == "fpp":
        return format_fpp(amount)
    if unit in SATELLITE_POOL_UNITS:
        return f"{format_minor_units(amount, currency)} {SATELLITE_POOL_UNITS[unit][1]}"
    raise ValueError(f"unknown unit {unit!r}")


def format_exact(value: Fraction | int | str, currency: str) -> str:
    """An exact amount in minor units ("5600/3", a Fraction or an int) in the currency:
    "18.666666… USD" (cut, never rounded, with an ellipsis when it goes on)."""
    amount = Fraction(value)
    exponent = currency_exponent(currency)
    sign = "-" if amount < 0 else ""
    amount = abs(amount)
    scaled = amount.numerator * 10**EXTRA_DIGITS
    cut, remainder = divmod(scaled, amount.denominator)
    major, minor = divmod(cut, 10 ** (exponent + EXTRA_DIGITS))
    digits = f"{minor:0{exponent + EXTRA_DIGITS}d}"
    # Trailing zeros beyond the currency's own decimals say nothing; keep the usual decimals.
    digits = digits[:exponent] + digits[exponent:].rstrip("0")
    figure = f"{major:,}" + (f".{digits}" if digits else "")
    return f"{sign}{figure}{'…' if remainder else ''} {currency.upper()}"


def decimal_amount(amount: int, unit: str, currency: str) -> str:
    """The figure a machine reads (the ledger's CSV): 12345 cents -> "123.45", no grouping and
    no currency code. Tickets and FPP are counts."""
    exponent = currency_exponent(currency) if unit in MONEY_UNITS else 0
    return _figure(amount, exponent, grouped=False)


class AmountError(ValueError):
    """What a person typed is not an amount in that unit; the message tells them why."""


def parse_amount(text: str, *, unit: str, currency: str) -> int:
    """What a person typed as an amount, in minor units: "12.50" USD -> 1250. Seats and FPP
    are whole counts. Digits only, never through a float."""
    text = text.strip()
    exponent = currency_exponent(currency) if unit in MONEY_UNITS else 0
    match = _TYPED_AMOUNT.fullmatch(text)
    if match is None:
        raise AmountError(f"“{text}” is not an amount; write it like 12.50.")
    whole, fraction = match.group(1), match.group(2) or ""
    if len(fraction) > exponent:
        if exponent == 0:
            raise AmountError(f"“{text}” must be a whole number.")
        raise AmountError(f"“{text}” has more than {exponent} decimals.")
    return int(whole) * 10**exponent + int(fraction.ljust(exponent, "0") or 0)
