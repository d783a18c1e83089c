import pytest
from django.template import Context, Template

from settlements.templatetags.money import (
    amount_in_unit,
    currency_exponent,
    format_minor_units,
    fpp,
    money,
    tickets,
)


@pytest.mark.parametrize(
    ("amount", "currency", "shown"),
    [
        (12345, "USD", "123.45 USD"),
        (123456789, "EUR", "1,234,567.89 EUR"),
        (5, "USD", "0.05 USD"),
        (0, "USD", "0.00 USD"),
        (-150, "USD", "-1.50 USD"),
        (1234, "JPY", "1,234 JPY"),
        (1234, "krw", "1,234 KRW"),
        (1234, "BHD", "1.234 BHD"),
        (5, "KWD", "0.005 KWD"),
        (12345, "CLF", "1.2345 CLF"),
        # Far beyond a float's 53-bit mantissa: still exact to the cent.
        (123456789012345678901, "USD", "1,234,567,890,123,456,789.01 USD"),
    ],
)
def test_money_formats_minor_units_with_the_currency_exponent(amount, currency, shown):
    assert money(amount, currency) == shown


def test_unknown_currencies_use_two_decimals():
    assert currency_exponent("XYZ") == 2


@pytest.mark.parametrize("bad", [12.5, "100", True])
def test_money_refuses_anything_but_integers(bad):
    with pytest.raises(TypeError):
        format_minor_units(bad, "USD")


def test_missing_amounts_show_a_dash():
    assert money(None, "USD") == "—"


def test_tickets_and_points():
    assert tickets(1) == "1 seat"
    assert tickets(3) == "3 seats"
    assert tickets(0) == "0 seats"
    assert fpp(250) == "250 FPP"
    assert fpp(12500) == "12,500 FPP"


@pytest.mark.parametrize(
    ("amount", "unit", "shown"),
    [
        (1050, "cash", "10.50 USD"),
        (1050, "tdollars", "10.50 USD in T$"),
        (1, "tickets", "1 seat"),
        (250, "fpp", "250 FPP"),
    ],
)
def test_amount_in_unit(amount, unit, shown):
    assert amount_in_unit(amount, unit, "USD") == shown


def test_filters_in_a_template():
    rendered = Template(
        "{% load money %}{{ a|money:c }} | {{ t|tickets }} | {{ p|fpp }} | "
        "{% amount_in_unit a 'tdollars' c %}"
    ).render(Context({"a": 98400_00, "c": "USD", "t": 2, "p": 250}))
    assert rendered == "98,400.00 USD | 2 seats | 250 FPP | 98,400.00 USD in T$"
