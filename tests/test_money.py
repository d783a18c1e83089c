"""Money in minor units: currency exponents, what people read, type and export, never a float."""

from fractions import Fraction

import pytest

from settlements.money import (
    AmountError,
    currency_exponent,
    decimal_amount,
    format_exact,
    format_fpp,
    format_in_unit,
    format_minor_units,
    format_tickets,
    parse_amount,
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
    assert format_minor_units(amount, currency) == shown


def test_unknown_currencies_use_two_decimals():
    assert currency_exponent("XYZ") == 2


@pytest.mark.parametrize("bad", [12.5, "100", True])
def test_money_refuses_anything_but_integers(bad):
    with pytest.raises(TypeError):
        format_minor_units(bad, "USD")


def test_tickets_and_points():
    assert format_tickets(1) == "1 seat"
    assert format_tickets(3) == "3 seats"
    assert format_tickets(0) == "0 seats"
    assert format_fpp(250) == "250 FPP"
    assert format_fpp(12500) == "12,500 FPP"


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
    assert format_in_unit(amount, unit, "USD") == shown


def test_an_unknown_unit_is_refused():
    with pytest.raises(ValueError, match="unknown unit"):
        format_in_unit(1, "chips", "USD")


@pytest.mark.parametrize(
    ("value", "currency", "shown"),
    [
        ("5600/3", "USD", "18.666666… USD"),  # cut after four more digits, never rounded up
        (Fraction(-1, 8), "USD", "-0.00125 USD"),
        (1250, "USD", "12.50 USD"),  # a whole minor unit keeps the usual decimals only
        ("7/2", "JPY", "3.5 JPY"),
        (1234567, "BHD", "1,234.567 BHD"),
    ],
)
def test_exact_amounts_are_cut_not_rounded(value, currency, shown):
    assert format_exact(value, currency) == shown


@pytest.mark.parametrize(
    ("amount", "unit", "currency", "text"),
    [
        (12345, "cash", "USD", "123.45"),
        (5, "cash", "USD", "0.05"),
        (-250, "tdollars", "EUR", "-2.50"),
        (12345, "cash", "JPY", "12345"),
        (12345, "cash", "BHD", "12.345"),
        (250, "fpp", "USD", "250"),
        (1, "tickets", "USD", "1"),
        (10**18 + 1, "cash", "USD", "10000000000000000.01"),
    ],
)
def test_decimal_amounts_use_the_currencys_minor_unit(amount, unit, currency, text):
    assert decimal_amount(amount, unit, currency) == text


@pytest.mark.parametrize(
    ("text", "unit", "currency", "expected"),
    [
        ("12.50", "cash", "USD", 1250),
        ("12,5", "cash", "USD", 1250),
        ("7", "tdollars", "USD", 700),
        ("1500", "cash", "JPY", 1500),
        ("250", "fpp", "USD", 250),
        ("0.001", "cash", "KWD", 1),
    ],
)
def test_amounts_are_read_in_minor_units_without_floats(text, unit, currency, expected):
    assert parse_amount(text, unit=unit, currency=currency) == expected


@pytest.mark.parametrize(
    ("text", "unit", "message"),
    [
        ("12.505", "cash", "more than 2 decimals"),
        ("1.5", "fpp", "whole number"),
        ("-3", "cash", "not an amount"),
        ("1e3", "cash", "not an amount"),
    ],
)
def test_bad_amounts_are_refused(text, unit, message):
    with pytest.raises(AmountError, match=message):
        parse_amount(text, unit=unit, currency="USD")


@pytest.mark.parametrize(
    ("amount", "unit", "currency"),
    [(123456, "cash", "USD"), (-5, "tdollars", "EUR"), (1234, "cash", "JPY"), (5, "cash", "KWD")],
)
def test_what_the_ledger_exports_reads_back_as_the_same_amount(amount, unit, currency):
    text = decimal_amount(abs(amount), unit, currency)
    assert parse_amount(text, unit=unit, currency=currency) == abs(amount)
