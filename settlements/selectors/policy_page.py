"""What the crash policy page shows: the rules every case is settled by, and the site's
readings of them.

Everything that can come from the engine does: the stage thresholds and late formula in
force (a rulebook version's), the cell table and its wording
(settlements.wording, over the engine's table), and the worked examples, settled by the engine
when the page is read. No database: the engine works on the examples below.
"""

import json

from settlements import wording
from settlements.models import Stage, TournamentType
from settlements.rules import (
    DEFAULT_POLICY,
    Policy,
    decision_options,
    icm,
    parse_snapshot,
    remedy_for,
    settle,
)
from settlements.rules.policy import LATE_FORMULAS
from settlements.rules.snapshot import MAX_AMOUNT, MAX_CHIPS

# The worked example: a regular tournament of 10 entrants that crashed with 3 players left,
# all of them in the money. Amounts in cents.
EXAMPLE_CURRENCY = "USD"
EXAMPLE_STACKS = {"a": 60000, "b": 30000, "c": 10000}
EXAMPLE_KNOCKED_OUT = 7
EXAMPLE_TOURNAMENT = {
    "id": "EXAMPLE",
    "name": "Worked example",
    "type": "regular",
    "currency": EXAMPLE_CURRENCY,
    "buy_in": 1000,
    "fee": 100,
    "payouts": [5000, 3000, 2000],
}


def policy_page(policy: Policy, *, icm_on: bool) -> dict:
    """The page's figures for the site's ``policy``; ``icm_on``: whether the second opinion
    is switched on."""
    example = _example(policy)
    return {
        "policy": policy,
        "default_policy": DEFAULT_POLICY,
        "default_late_formula_label": wording.remedy_label(DEFAULT_POLICY.late_formula),
        "late_formula_label": wording.remedy_label(policy.late_formula),
        "other_late_formulas": [
            wording.remedy_label(formula)
            for formula in LATE_FORMULAS
            if formula != policy.late_formula
        ],
        "stages": [(stage.value, stage.label) for stage in Stage],
        "rows": _cell_rows(policy),
        "example": example,
        "rebuy_example": _rebuy_example(policy),
        "example_alternatives": [
            _example(Policy(policy.pre_pct, policy.early_pct, formula))
            for formula in LATE_FORMULAS
            if formula != policy.late_formula
        ],
        "icm_flag": icm_on,
        "icm_example": _icm_example(example),
        "max_amount": MAX_AMOUNT,
        "max_chips": MAX_CHIPS,
    }


def _cell_rows(policy: Policy) -> list[dict]:
    """One row per tournament type, one cell per stage, each with what it pays in words."""
    rows = []
    for kind in TournamentType:
        cells = []
        for stage in Stage:
            options = decision_options(kind.value, stage.value)
            if options:
                outcomes = [
                    {
                        "option": wording.option_label(option),
                        "label": wording.remedy_label(
                            remedy_for(kind.value, stage.value, decision=option)
                        ),
                        "text": wording.option_description(kind.value, stage.value, option),
                    }
                    for option in options
                ]
            else:
                remedy = remedy_for(kind.value, stage.value, policy=policy)
                outcomes = [
                    {
                        "option": None,
                        "label": wording.remedy_label(remedy),
                        "text": wording.describe(kind.value, stage.value, remedy),
                    }
                ]
                outcomes += _other_late_formulas(kind.value, stage.value, remedy, policy)
            cells.append(
                {
                    "anchor": wording.policy_anchor(kind.value, stage.value),
                    "type": kind.label,
                    "stage": stage.label,
                    "decided_by_marketing": bool(options),
                    "outcomes": outcomes,
                }
            )
        rows.append({"type": kind.label, "cells": cells})
    return rows


def _other_late_formulas(kind: str, stage: str, remedy: str, policy: Policy) -> list[dict]:
    """Where the site's late formula decides the split, what the other formula would pay."""
    outcomes = []
    for formula in LATE_FORMULAS:
        other = remedy_for(kind, stage, policy=Policy(policy.pre_pct, policy.early_pct, formula))
        if other != remedy:
            outcomes.append(
                {
                    "option": None,
                    "alternative": True,
                    "label": wording.remedy_label(other),
                    "text": wording.describe(kind, stage, other),
                }
            )
    return outcomes


# RULES.md §8's worked example: a rebuy knock-out of six players, three knocked out. Per player:
# chips, entries, add-ons, bounty on the head.
REBUY_PLAYERS = {
    "a": (30000, 2, 1, 1250),
    "b": (15000, 1, 1, 500),
    "c": (5000, 1, 0, 750),
    "d": (0, 1, 0, 0),
    "e": (0, 2, 1, 0),
    "f": (0, 1, 0, 0),
}
REBUY_TOURNAMENT = {
    "id": "EXAMPLE-KO",
    "name": "Worked example: rebuys and bounties",
    "type": "regular",
    "currency": EXAMPLE_CURRENCY,
    "buy_in": 1000,
    "fee": 100,
    "entry_bounty": 500,
    "add_on": 1000,
    "payouts": [7000, 4000],
}


def _rebuy_example(policy: Policy) -> dict:
    """§8's worked example settled by the engine: each player's own buy-ins, share, bounty."""
    players = [
        {"id": player, "chips": chips, "entries": entries, "add_ons": add_ons, "bounty": bounty}
        for player, (chips, entries, add_ons, bounty) in REBUY_PLAYERS.items()
    ]
    document = {"format": "crash-snapshot/2", "tournament": REBUY_TOURNAMENT, "players": players}
    snapshot = parse_snapshot(json.dumps(document))
    result = settle(snapshot, policy=policy)
    bounties = {line.player: line.amount for line in result.lines if line.kind == "bounty"}
    rows = []
    for player in sorted(result.explanations):
        explained = result.explanations[player]
        _, entries, add_ons, _ = REBUY_PLAYERS[player]
        rows.append(
            {
                "player": player,
                "entries": entries,
                "add_ons": add_ons,
                "own": explained.guaranteed,
                "share": explained.rounded - explained.guaranteed,
                "bounty": bounties.get(player, 0),
                "total": explained.rounded + bounties.get(player, 0),
            }
        )
    return {
        "currency": EXAMPLE_CURRENCY,
        "tournament": REBUY_TOURNAMENT,
        "entrants": result.entrants,
        "eliminated": result.eliminated,
        "entries": sum(entries for _, entries, _, _ in REBUY_PLAYERS.values()),
        "add_ons": sum(add_ons for _, _, add_ons, _ in REBUY_PLAYERS.values()),
        "stage": result.stage,
        "remedy_label": wording.remedy_label(result.remedy),
        "pool": result.pool,
        "rows": rows,
        "guaranteed_total": sum(row["own"] for row in rows),
        "shared": result.pool - sum(row["own"] for row in rows),
        "bounties": sum(bounties.values()),
    }


def _example(policy: Policy) -> dict:
    """The worked example settled by the engine, with each split player's figures."""
    players = [{"id": player, "chips": chips} for player, chips in EXAMPLE_STACKS.items()]
    players += [{"id": f"x{n}", "chips": 0} for n in range(1, EXAMPLE_KNOCKED_OUT + 1)]
    snapshot = parse_snapshot(
        json.dumps(
            {"format": "crash-snapshot/1", "tournament": EXAMPLE_TOURNAMENT, "players": players}
        )
    )
    result = settle(snapshot, policy=policy)
    explanations = [result.explanations[player] for player in sorted(result.explanations)]
    guaranteed = explanations[0].guaranteed
    split_pool = sum(explanation.rounded for explanation in explanations)
    refunds = {"refund_buy_in", "refund_fee"}
    return {
        "currency": EXAMPLE_CURRENCY,
        "tournament": EXAMPLE_TOURNAMENT,
        "entrants": result.entrants,
        "eliminated": result.eliminated,
        "remaining": result.remaining,
        "stage": result.stage,
        "remedy": result.remedy,
        "remedy_label": wording.remedy_label(result.remedy),
        "pool": result.pool,
        "already_paid": result.pool - split_pool,
        "split_pool": split_pool,
        "guaranteed": guaranteed,
        "guaranteed_total": guaranteed * len(explanations),
        "shared": split_pool - guaranteed * len(explanations),
        "capped": [explanation.player for explanation in explanations if explanation.capped],
        "explanations": explanations,
        "rounded_down": sum(e.rounded - e.rounding_cent for e in explanations),
        "leftover_cents": sum(e.rounding_cent for e in explanations),
        "cents_to": [e.player for e in explanations if e.rounding_cent],
        "distributed": result.pool_distributed,
        "fees_refunded": any(line.kind in refunds for line in result.lines),
    }


def _icm_example(example: dict) -> list[dict]:
    """The worked example's players: what the policy pays each, and their stack's ICM value
    for the same prizes (every place 1..3 still to be played for)."""
    players = sorted(EXAMPLE_STACKS)
    chips = [EXAMPLE_STACKS[player] for player in players]
    values = icm.exact_equity(chips, EXAMPLE_TOURNAMENT["payouts"])
    amounts = icm.round_to_units(values, chips, players)
    paid = {explanation.player: explanation.rounded for explanation in example["explanations"]}
    return [
        {
            "player": player,
            "policy": paid[player],
            "icm": amount,
            "difference": paid[player] - amount,
        }
        for player, amount in zip(players, amounts, strict=True)
    ]
