"""Small snapshot documents for the engine tests, written as plain dicts."""

import json

from settlements.rules import Settlement, parse_snapshot, settle


def players(*chips: int, prefix: str = "p") -> list[dict]:
    """Players p01, p02, … with the given chip counts (0 = eliminated)."""
    return [{"id": f"{prefix}{n:02d}", "chips": c} for n, c in enumerate(chips, start=1)]


def regular(chips, *, buy_in=1000, fee=100, payouts=None, **fields) -> dict:
    tournament = {"id": "T-1", "type": "regular", "currency": "USD", "buy_in": buy_in, "fee": fee}
    pool = max(len(chips) * buy_in, fields.get("guarantee", 0))
    tournament["payouts"] = payouts if payouts is not None else [pool]
    return _document(tournament, chips, fields)


def freeroll(chips, *, prize_pool=10000, payouts=None, fpp_buy_in=250, **fields) -> dict:
    tournament = {
        "id": "F-1",
        "type": "freeroll",
        "currency": "USD",
        "prize_pool": prize_pool,
        "fpp_buy_in": fpp_buy_in,
        "payouts": payouts if payouts is not None else [prize_pool],
    }
    return _document(tournament, chips, fields)


def satellite(chips, *, buy_in=1000, fee=100, seat_value=5000, **fields) -> dict:
    tournament = {
        "id": "S-1",
        "type": "satellite",
        "currency": "USD",
        "buy_in": buy_in,
        "fee": fee,
        "seat_value": seat_value,
    }
    return _document(tournament, chips, fields)


def _document(tournament: dict, chips, fields: dict) -> dict:
    top = {key: fields.pop(key) for key in ("crashed_at", "format") if key in fields}
    tournament.update(fields)
    listed = chips if chips and isinstance(chips[0], dict) else players(*chips)
    return {"format": "crash-snapshot/1", "tournament": tournament, "players": listed, **top}


def encode(document: dict) -> bytes:
    return json.dumps(document).encode()


def settle_doc(document: dict, **options) -> Settlement:
    return settle(parse_snapshot(encode(document)), **options)


def amounts(settlement: Settlement, field: str = "cash") -> dict[str, int]:
    """player -> one column of the payouts table."""
    return {row.player: getattr(row, field) for row in settlement.payouts}


def line_sums(settlement: Settlement) -> dict[str, dict[str, int]]:
    """{unit: {source: amount}} added up line by line, as the desk once did."""
    sums: dict[str, dict[str, int]] = {}
    for line in settlement.lines:
        by_source = sums.setdefault(line.unit, {})
        by_source[line.source] = by_source.get(line.source, 0) + line.amount
    return sums
