"""Filters that show engine amounts (integers in minor units) in templates; the formatting
itself lives in settlements/money.py. An empty value shows as an em dash."""

from django import template

from settlements import money as amounts
from settlements.models import Unit

register = template.Library()


def _empty(value) -> bool:
    return value is None or value == ""


@register.filter
def money(amount, currency):
    """{{ amount|money:currency }} -> "1,234.56 USD"."""
    return "—" if _empty(amount) else amounts.format_minor_units(amount, currency)


@register.filter
def tickets(count):
    """{{ count|tickets }} -> "1 seat", "3 seats"."""
    return "—" if _empty(count) else amounts.format_tickets(count)


@register.filter
def fpp(points):
    """{{ points|fpp }} -> "250 FPP"."""
    return "—" if _empty(points) else amounts.format_fpp(points)


register.simple_tag(amounts.format_in_unit, name="amount_in_unit")


@register.filter
def unit_name(unit: str) -> str:
    """{{ "tdollars"|unit_name }} -> "T$": a unit by the name the screens give it."""
    if unit in amounts.SATELLITE_POOL_UNITS:
        return amounts.SATELLITE_POOL_UNITS[unit][0]
    return Unit(unit).label if unit in Unit.values else unit
