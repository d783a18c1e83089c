"""RULES.md §3 and §6: what each tournament type pays at each stage, and the decisions.

`assess` says where a crashed tournament stands (stage, terms, the decision it needs);
`settle` computes what every player receives, as lines per player and totals per player.
"""

from dataclasses import dataclass, replace
from itertools import compress

from .basis import Basis
from .entries import EntryColumns
from .errors import InvalidInput, Problem
from .formulas import BoundsError, split
from .icm import exact_equity, round_to_units
from .output import line_totals, output
from .policy import DEFAULT_POLICY, LATE_FORMULAS, MIDDLE_FORMULAS, Policy
from .remedy_names import (
    CHIP_EQUITY,
    CHIP_POSITION,
    CHIP_PROPORTIONAL,
    FPP_REFUND,
    ICM,
    NO_RESCHEDULE,
    REFUND,
    REFUND_EVEN_SPLIT,
    RESCHEDULE,
    SATELLITE_RANK,
)
from .satellite import pay_as_seats, rank_values
from .settlement import Explanations, RankingPart, Settlement, SplitPart
from .snapshot import Snapshot
from .split_result import Split
from .stage import classify
from .terms import Terms, entry_columns, terms_of

# RULES.md §9: the late stage's formula is the policy's late_formula (a stand-in, not a remedy),
# the regular middle stage's its middle_formula, and the late stage of a regular or freeroll
# pays by ICM once few enough players remain (final_table_icm).
LATE_FORMULA = "<policy late_formula>"


@dataclass(frozen=True, slots=True)
class SplitTerms:
    """What bounds a cell's split, named rather than valued, so that one table both drives the
    computation and tells a person what the split guarantees and limits."""

    # What the split shares: "prize_pool" (P), "pool_less_refunds" (P − R·B: the refunded
    # buy-ins stay out of it) or "late_pool" (P_late: the places already paid stay out of it).
    pool: str
    floor: str | None  # paid to everyone first (L): "buy_in" (B), "next_payout" (prize(R))
    cap: str | None  # nobody gets more (H): "first_prize" (prize(1)) or "one_seat" (V)
    fees_refunded: bool  # each player also gets the buy-in and the fee back beside the split


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell of the §3 table: a fixed remedy, or the remedy each decision option leads to."""

    remedy: str | None = None
    options: tuple[tuple[str, str], ...] = ()  # (decision option, remedy), in display order
    split: SplitTerms | None = None  # the terms of the split that any remedy here computes


_EARLY_SPLIT = SplitTerms("pool_less_refunds", floor=None, cap=None, fees_refunded=True)
_LATE_SPLIT = SplitTerms("late_pool", floor="next_payout", cap="first_prize", fees_refunded=False)

TABLE: dict[tuple[str, str], Cell] = {
    ("regular", "pre"): Cell(REFUND),
    ("regular", "early"): Cell(REFUND_EVEN_SPLIT, split=_EARLY_SPLIT),
    ("regular", "middle"): Cell(
        CHIP_EQUITY,
        split=SplitTerms("prize_pool", floor="buy_in", cap="first_prize", fees_refunded=False),
    ),
    ("regular", "late"): Cell(LATE_FORMULA, split=_LATE_SPLIT),
    ("freeroll", "pre"): Cell(FPP_REFUND),
    # Either answer refunds the FPP; the decision only records whether it is announced again.
    ("freeroll", "early"): Cell(options=((RESCHEDULE, FPP_REFUND), (NO_RESCHEDULE, FPP_REFUND))),
    # A freeroll has no buy-in to guarantee before the middle stage's split.
    ("freeroll", "middle"): Cell(
        options=((RESCHEDULE, RESCHEDULE), (CHIP_EQUITY, CHIP_EQUITY)),
        split=SplitTerms("prize_pool", floor=None, cap="first_prize", fees_refunded=False),
    ),
    # Every remaining player is in the money, so the next payout is guaranteed here too.
    ("freeroll", "late"): Cell(LATE_FORMULA, split=_LATE_SPLIT),
    ("satellite", "pre"): Cell(REFUND),
    ("satellite", "early"): Cell(REFUND_EVEN_SPLIT, split=_EARLY_SPLIT),
    ("satellite", "middle"): Cell(
        options=((CHIP_PROPORTIONAL, CHIP_PROPORTIONAL), (CHIP_EQUITY, CHIP_EQUITY)),
        split=SplitTerms("prize_pool", floor=None, cap="one_seat", fees_refunded=False),
    ),
    ("satellite", "late"): Cell(SATELLITE_RANK),
}

# The remedies computed by a split of the pool (the others are refunds, a ranking or nothing).
SPLIT_REMEDIES = (REFUND_EVEN_SPLIT, CHIP_EQUITY, CHIP_PROPORTIONAL, CHIP_POSITION)


def _cell(tournament_type: str, stage: str) -> Cell:
    try:
        return TABLE[tournament_type, stage]
    except KeyError:
        raise ValueError(
            f"no rule for a {tournament_type!r} tournament at a {stage!r} stage"
        ) from None


def decision_options(tournament_type: str, stage: str) -> list[str]:
    """The options someone must choose between for this cell (§6); empty when none."""
    return [option for option, _ in _cell(tournament_type, stage).options]


def remedy_for(
    tournament_type: str,
    stage: str,
    *,
    decision: str | None = None,
    policy: Policy = DEFAULT_POLICY,
) -> str | None:
    """The remedy of §3 for this type and stage; None while the decision it needs is not taken.

    A decision the cell does not take, or does not offer, raises InvalidInput at "--decision".
    """
    cell = _cell(tournament_type, stage)
    case = f"a {tournament_type} tournament at the {stage} stage"
    if not cell.options:
        if decision is not None:
            raise InvalidInput.at("--decision", f"{case} takes no decision; leave it out")
        if cell.remedy == LATE_FORMULA:
            return policy.late_formula
        if (tournament_type, stage) == ("regular", "middle"):
            return policy.middle_formula
        return cell.remedy
    if decision is None:
        return None
    remedies = dict(cell.options)
    if decision not in remedies:
        choices = " or ".join(option for option, _ in cell.options)
        raise InvalidInput.at(
            "--decision", f"{decision!r} is not an option for {case}; choose {choices}"
        )
    return remedies[decision]


def reachable_remedies(tournament_type: str, stage: str) -> frozenset[str]:
    """Every remedy this cell can pay by, under any rulebook: its own or its options', the
    policy's late or middle formulas in its stand-in's place, and the final table's ICM."""
    cell = _cell(tournament_type, stage)
    reachable = {code for _, code in cell.options}
    if cell.remedy == LATE_FORMULA:
        reachable |= {*LATE_FORMULAS, ICM}
    elif cell.remedy is not None:
        reachable.add(cell.remedy)
    if (tournament_type, stage) == ("regular", "middle"):
        reachable |= set(MIDDLE_FORMULAS)
    return frozenset(reachable)


def split_terms(tournament_type: str, stage: str, remedy: str | None) -> SplitTerms | None:
    """The terms of the split `remedy` computes in this cell; None for a remedy that is not a
    split (refunds, a reschedule, seats by chip rank). A remedy the cell never leads to is a
    ValueError, so that a description cannot silently borrow another cell's terms."""
    cell = _cell(tournament_type, stage)
    pending = remedy is None and cell.options  # no remedy yet: the decision is not taken
    if not pending and remedy not in reachable_remedies(tournament_type, stage):
        raise ValueError(
            f"a {tournament_type} tournament at the {stage} stage never pays {remedy!r}"
        )
    return cell.split if remedy in SPLIT_REMEDIES else None


@dataclass(frozen=True, slots=True)
class Assessment:
    type: str
    stage: str
    entrants: int
    eliminated: int
    remaining: int
    paid_places: int
    pool: int
    decision_options: list[str]  # empty when the case needs no decision
    pre_pct: int
    early_pct: int
    terms: Terms


def assess(snapshot: Snapshot, policy: Policy = DEFAULT_POLICY) -> Assessment:
    terms = terms_of(snapshot)
    kind = snapshot.tournament.type
    if policy.late_registration == "refund" and snapshot.tournament.late_registration_open:
        # §9: decided before any other stage rule, for every type.
        stage = "pre"
    else:
        stage = classify(
            started=snapshot.tournament.started,
            entrants=terms.entrants,
            eliminated=terms.eliminated,
            remaining=terms.remaining,
            paid_places=terms.paid_places,
            policy=policy,
        )
    if kind == "satellite" and stage != "pre" and terms.remaining < terms.seats:
        raise InvalidInput.at(
            "players",
            f"only {terms.remaining} players remain for {terms.seats} seats: past its start a "
            "satellite with fewer players than seats should already have finished",
        )
    return Assessment(
        type=kind,
        stage=stage,
        entrants=terms.entrants,
        eliminated=terms.eliminated,
        remaining=terms.remaining,
        paid_places=terms.paid_places,
        pool=terms.pool,
        decision_options=decision_options(kind, stage),
        pre_pct=policy.pre_pct,
        early_pct=policy.early_pct,
        terms=terms,
    )


# Remedies after which the remaining players also receive the bounties on their heads (§8):
# every decided one but the refunds of the pre stage and a reschedule.
_PAYS_BOUNTIES = frozenset(SPLIT_REMEDIES) | {SATELLITE_RANK, ICM}


def settle(
    snapshot: Snapshot, *, decision: str | None = None, policy: Policy = DEFAULT_POLICY
) -> Settlement:
    if decision is not None and not isinstance(decision, str):
        raise InvalidInput.at("--decision", "must be the name of an option")
    assessment = assess(snapshot, policy)
    remedy = _settled_remedy(assessment, decision, policy)
    terms = assessment.terms
    # Everything below works on the players in the snapshot's order, which is also the order
    # of their objects in memory; only the output is sorted by id. Refunds concern every
    # entrant; everything else only the players still holding chips.
    players = snapshot.players
    chips = [p.chips for p in players]
    # §8's columns only when something is paid per entry or add-on (never for version 1).
    own = entry_columns(snapshot) if terms.per_player or terms.entry_bounty else None
    if remedy not in (REFUND, FPP_REFUND):
        players = list(compress(players, chips))
        own = own.compressed(chips) if own is not None else None
        chips = list(compress(chips, chips))
    ids = [p.id for p in players]
    n = len(players)
    columns: dict[str, list[int]] = {}  # column name -> amount of each player above
    part: SplitPart | RankingPart | None = None  # who is paid by a split or a ranking
    values = None  # prize values (before the ticket rule) of a split or a ranking
    bounds = result = None

    if remedy == REFUND:
        columns["refund_buy_in"], columns["refund_fee"] = _own_payments(own, terms, n)
        if terms.entry_bounty:
            # The bounties still on heads return to the house, which refunds every entry's.
            columns["refund_bounty"] = _per_entry(own, terms.entry_bounty, 0)
    elif remedy == FPP_REFUND:
        columns["refund_fpp"] = [terms.fpp_buy_in] * n
    elif remedy == SATELLITE_RANK:
        values, shared, places = rank_values(
            chips, ids, seat_value=terms.seat_value, seats=terms.seats, remainder=terms.remainder
        )
        part = RankingPart(ids, chips, values, places, shared)
    elif remedy == ICM:
        # §9: every prize in play, 1..R, by Malmuth–Harville, exactly, then rounded as in §4.
        values = round_to_units(exact_equity(chips, terms.prizes[:n]), chips, ids)
    elif remedy in SPLIT_REMEDIES:
        bounds, result = _policy_split(assessment, policy, remedy, columns, own, chips, ids)
        part = SplitPart(ids, chips, result)
        values = result.amounts
    # "reschedule" and a pending decision pay nothing.
    if terms.entry_bounty and remedy in _PAYS_BOUNTIES:
        # §9's bounty_refund "entry": one entry's bounty each; the rest stays with the house.
        columns["bounty"] = (
            [terms.entry_bounty] * n if policy.bounty_refund == "entry" else own.heads
        )

    as_seats = assessment.type == "satellite" and policy.satellite_prizes == "tickets"
    if values is not None and as_seats:
        columns["ticket"], columns["prize_tdollars"] = pay_as_seats(values, terms.seat_value)
    elif values is not None:
        columns["prize_cash"] = values

    payouts, lines, pool_distributed, paid_positions = output(columns, ids, terms.seat_value)
    return Settlement(
        tournament_id=snapshot.tournament.id,
        currency=snapshot.tournament.currency,
        policy=policy,
        stage=assessment.stage,
        remedy=remedy,
        decision=decision,
        decision_options=assessment.decision_options if remedy is None else [],
        entrants=terms.entrants,
        eliminated=terms.eliminated,
        remaining=terms.remaining,
        pool=terms.pool,
        pool_distributed=pool_distributed,
        payouts=payouts,
        lines=lines,
        line_totals=line_totals(columns),
        explanations=Explanations(part),
        basis=_basis(assessment.type, terms, bounds, result),
        settled_chips=chips,
        paid_positions=paid_positions,
    )


def _settled_remedy(assessment: Assessment, decision: str | None, policy: Policy) -> str | None:
    """remedy_for, with §9's ICM in place of the late formula once R <= final_table_icm."""
    remedy = remedy_for(assessment.type, assessment.stage, decision=decision, policy=policy)
    if (
        assessment.stage == "late"
        and remedy in LATE_FORMULAS
        and assessment.remaining <= policy.final_table_icm
    ):
        return ICM
    return remedy


def _policy_split(
    assessment: Assessment,
    policy: Policy,
    remedy: str,
    columns: dict[str, list[int]],
    own: EntryColumns | None,
    chips: list[int],
    ids: list[str],
) -> tuple[SplitTerms, Split]:
    """The split of §3–§4 under §9's keys, and its terms; the refunds paid beside it are added
    to `columns`."""
    terms, n = assessment.terms, len(ids)
    bounds = TABLE[assessment.type, assessment.stage].split
    regular_middle = (assessment.type, assessment.stage) == ("regular", "middle")
    if regular_middle and policy.middle_floor == "none":
        bounds = replace(bounds, floor=None)
    refunded = 0  # Σ paid_i of the players refunded beside the split
    if bounds.fees_refunded:
        columns["refund_buy_in"], columns["refund_fee"] = _own_payments(own, terms, n)
        refunded = sum(columns["refund_buy_in"])
    elif regular_middle and policy.middle_fee_refund:
        columns["refund_fee"] = _own_payments(own, terms, n)[1]
    own_bounds = _own_bounds(own, terms, bounds)
    # §9's guarantee_before_itm "house": before the money the split shares only what the
    # players paid in, so a guarantee's overlay waits for the money.
    paid_only = (
        policy.guarantee_before_itm == "house"
        and assessment.type != "freeroll"
        and assessment.stage in ("early", "middle")
    )
    return bounds, _split(terms, bounds, remedy, chips, ids, own_bounds, refunded, paid_only)


def _own_payments(own: EntryColumns | None, terms: Terms, n: int) -> tuple[list[int], list[int]]:
    """paid_i and fees_i of §8 for each of n players: what they put into the pool, and their
    fees."""
    if not terms.per_player:
        return [terms.buy_in] * n, [terms.fee] * n
    return _own_paid(own, terms), _per_entry(own, terms.fee, terms.add_on_fee)


def _own_paid(own: EntryColumns, terms: Terms) -> list[int]:
    return _per_entry(own, terms.buy_in, terms.add_on)


def _per_entry(own: EntryColumns, per_entry: int, per_add_on: int) -> list[int]:
    """e_i·per_entry + a_i·per_add_on for each player. A list comprehension: Python 3.13's
    inline integer arithmetic is twice as fast as map() through operator.mul and add."""
    return [e * per_entry + a * per_add_on for e, a in zip(own.entries, own.add_ons, strict=True)]


def _own_bounds(own: EntryColumns | None, terms: Terms, bounds: SplitTerms) -> tuple | None:
    """§8's regular middle stage: each player's own buy-ins L_i guaranteed and their cap
    H_i = max(prize(1), L_i), as (floors, caps), caps None where every H_i is prize(1); None
    where one L and one H serve everyone."""
    if bounds.floor != "buy_in" or not terms.per_player:
        return None
    floors = _own_paid(own, terms)
    distinct = set(floors)  # a few amounts: one pass, cheaper than min() and max()
    low, high, first = min(distinct), max(distinct), terms.first_prize
    # One L and one H only when every L_i is the buy-in that the split's L stands for.
    if low == high == terms.buy_in <= first:
        return None
    if high <= first:
        return floors, None
    return floors, [floor if floor > first else first for floor in floors]


def _basis(kind: str, terms: Terms, bounds: SplitTerms | None, result: Split | None) -> Basis:
    return Basis(
        tournament_type=kind,
        prize_pool=terms.pool,
        buy_in=terms.buy_in,
        fee=terms.fee,
        fpp_buy_in=terms.fpp_buy_in,
        first_prize=terms.first_prize,
        paid_places=terms.paid_places,
        next_payout=terms.prize(terms.remaining),
        already_paid=sum(terms.prizes[terms.remaining :]),
        seat_value=terms.seat_value,
        seats=terms.seats,
        remainder=terms.remainder,
        split=result.summary if result is not None else None,
        split_pool=bounds.pool if result is not None else None,
        split_floor=_floor_name(bounds, result),
        split_cap=_cap_name(bounds, result),
        fees_refunded=bounds.fees_refunded if result is not None else False,
        entry_bounty=terms.entry_bounty,
        add_on=terms.add_on,
        add_on_fee=terms.add_on_fee,
        per_player=terms.per_player,
    )


def _floor_name(bounds: SplitTerms | None, result: Split | None) -> str | None:
    if result is None:
        return None
    return "own_buy_ins" if result.floors is not None else bounds.floor


def _cap_name(bounds: SplitTerms | None, result: Split | None) -> str | None:
    if result is None:
        return None
    return "first_prize_or_own_buy_ins" if result.floors is not None else bounds.cap


def _split(
    terms: Terms,
    bounds: SplitTerms,
    remedy: str,
    chips: list[int],
    ids: list[str],
    own: tuple[list[int], list[int] | None] | None = None,
    refunded: int = 0,
    paid_only: bool = False,
) -> Split:
    pool, floor, cap, floor_path, cap_path = _bounds(terms, bounds, refunded, paid_only)
    floors, caps = own if own is not None else (None, None)
    try:
        return split(
            pool,
            chips,
            ids,
            # The early split shares evenly what the refunded buy-ins leave of P.
            formula="even" if remedy == REFUND_EVEN_SPLIT else remedy,
            floor=floor,
            cap=cap,
            prizes=terms.prizes,
            floors=floors,
            caps=caps,
        )
    except BoundsError as error:
        path = floor_path if error.which == "floor" else cap_path
        raise InvalidInput([Problem(path, f"the split's bounds cannot hold: {error}")]) from None


def _bounds(
    terms: Terms, bounds: SplitTerms, refunded: int, paid_only: bool = False
) -> tuple[int, int, int | None, str, str]:
    """(Q, L, H) of a split, with the snapshot field behind L and behind H ("$" for none);
    `refunded` is Σ paid_i of the players whose buy-ins are refunded beside it, and
    `paid_only` puts Σ paid_i over every entrant in the place of P (§9)."""
    whole = terms.paid_in if paid_only else terms.pool
    if bounds.pool == "prize_pool":
        pool = whole
    elif bounds.pool == "pool_less_refunds":
        pool = whole - refunded
    else:
        # P_late: the places R+1..M were already paid by the tournament itself.
        pool = terms.pool - sum(terms.prizes[terms.remaining :])
    floor, floor_path = {
        None: (0, "$"),
        "buy_in": (terms.buy_in, "tournament.buy_in"),
        "next_payout": (terms.prize(terms.remaining), "tournament.payouts"),
    }[bounds.floor]
    cap, cap_path = {
        None: (None, "$"),
        "first_prize": (terms.first_prize, "tournament.payouts"),
        "one_seat": (terms.seat_value, "tournament.seat_value"),
    }[bounds.cap]
    return pool, floor, cap, floor_path, cap_path
