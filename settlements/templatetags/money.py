"""Filters that turn engine amounts (integer minor units) into what a person reads.

Amounts never pass through a float: the major and minor parts come from integer divmod, so
12345 USD is always shown as "123.45 USD", whatever its size.
"""

from django import template

register = template.Library()

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


def currency_exponent(currency: str) -> int:
    return _EXPONENTS.get(currency.upper(), 2)


def format_minor_units(amount: int, currency: str) -> str:
    """123456, "USD" -> "1,234.56 USD"; the exponent comes from the currency."""
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise TypeError(f"money amounts are integers in minor units, got {amount!r}")
    exponent = currency_exponent(currency)
    sign = "-" if amount < 0 else ""
    major, minor = divmod(abs(amount), 10**exponent)
    figure = f"{major:,}"
    if exponent:
        figure += f".{minor:0{exponent}d}"
    return f"{sign}{figure} {currency.upper()}"


@register.filter
def money(amount, currency):
    """{{ amount|money:currency }}; an empty amount shows as an em dash."""
    if amount is None or amount == "":
        return "—"
    return format_minor_units(amount, currency)


@register.filter
def tickets(count):
    """{{ count|tickets }} -> "1 seat", "3 seats"."""
    if count is None or count == "":
        return "—"
    return f"{count:,} seat" if count == 1 else f"{count:,} seats"


@register.filter
def fpp(points):
    """{{ points|fpp }} -> "250 FPP"."""
    if points is None or points == "":
        return "—"
    return f"{points:,} FPP"


@register.simple_tag
def amount_in_unit(amount, unit, currency):
    """One settlement line's amount in its own unit: cash, tdollars, tickets or fpp."""
    if unit == "cash":
        return format_minor_units(amount, currency)
    if unit == "tdollars":
        return f"{format_minor_units(amount, currency)} in T$"
    if unit == "tickets":
        return tickets(amount)
    if unit == "fpp":
        return fpp(amount)
    raise ValueError(f"unknown unit {unit!r}")
