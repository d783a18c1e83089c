"""A statement for one player of one settlement: what happened, why, what the policy gives
them, and the arithmetic behind their amount, in words a support agent can paste or a mailer
can send.

Pure: no database. The inputs are plain facts (``SettlementFacts``, ``PlayerFacts``) that the
selectors read from the stored settlement, or that tests take straight from the engine. Every
figure comes from the engine: the settlement's ``Basis`` (its pool, guaranteed amount, cap,
the players sharing and their weights) and the player's stored explanation (their exact amount,
even and weighted parts, rounding cent). The printed arithmetic is built from those inputs so
that evaluated it gives the exact amount before rounding; the amounts at the end are the sums
of the player's ledger lines, by unit.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from math import floor

from settlements import player_ids, wording
from settlements.money import (
    currency_exponent,
    format_exact,
    format_figure,
    format_in_unit,
    format_minor_units,
)
from settlements.rules import Basis, SplitSummary
from settlements.rules.satellite import pay_as_seat, position_value

UNITS = ("cash", "tdollars", "tickets", "fpp")
KIND_LABELS = {
    "refund_buy_in": "buy-in back",
    "refund_fee": "fee back",
    "refund_fpp": "FPP buy-in back",
    "prize": "prize",
    "ticket": "seat ticket",
}
SOURCE_LABELS = {"pool": "from the prize pool", "house": "paid by the house"}
TYPE_LABELS = {"regular": "regular", "freeroll": "freeroll", "satellite": "satellite"}

# What a statement is about, by the player's situation in the settlement.
REFUND = "refund"  # buy-in and fee back, or FPP back (everyone, knocked out or not)
RESCHEDULED = "rescheduled"  # nothing now: the freeroll is played again
SHARE = "share"  # a share of a split of the pool
SEAT_RANK = "seat_rank"  # a satellite's places by chips
KNOCKED_OUT = "knocked_out"  # out before the crash, and this remedy pays only those still in


# A settlement prepared before the engine's figures were kept with it, whose figures could not
# be put back (services.bases): the working is left out rather than shown unchecked.
WITHOUT_BASIS = (
    "This settlement was prepared before CrashDesk kept the figures the engine worked from. "
    "They are put back only when the engine, run again on the same snapshot and decision, "
    "gives exactly the ledger lines that were paid; for this settlement that has not been "
    "done, so only what you receive is shown, not how it was worked out."
)


# --- Inputs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Explained:
    """A player's stored explanation (SettlementPayout) or the engine's (Explanation)."""

    guaranteed: int
    exact: Fraction
    capped: bool
    rounding_cent: int
    weight: Fraction | None = None  # stored for chip position only; else the chips
    places: tuple[int, int] | None = None

    @property
    def rounded(self) -> int:
        # A player at the guaranteed amount or at the cap is a whole number and gains no cent.
        return floor(self.exact) + self.rounding_cent


@dataclass(frozen=True)
class LineFacts:
    kind: str
    unit: str
    amount: int  # signed: a reversal in an adjustment is negative
    source: str


@dataclass(frozen=True)
class Followup:
    """Something else on record for the player in this case, beside the settlement."""

    kind: str  # "adjustment", "compensation" or "prize_withdrawal"
    number: int
    status: str  # in words: "Approved", "Awaiting approval", "Withdraw the prize", …
    amounts: tuple[tuple[str, int], ...] = ()  # (unit, signed amount)
    words: str = ""  # the reason, or the prize given in error


@dataclass(frozen=True)
class SettlementFacts:
    settlement_id: int | None
    case_id: int | None
    incident_id: int | None
    status: str  # settlement status code; empty for an engine result not stored
    status_label: str
    tournament_id: str
    tournament_name: str
    currency: str
    stage: str
    remedy: str | None
    decision: str | None
    entrants: int
    eliminated: int
    remaining: int
    pool: int
    pre_pct: int
    early_pct: int
    basis: Basis | None  # None for a settlement stored before bases were kept
    started: bool | None = None
    crashed_at: datetime | None = None
    reschedule_at: datetime | None = None
    invite_scope: str = ""  # "entrants", "remaining", "custom" or "" (no reschedule)
    invited: frozenset[str] = frozenset()  # the hand-picked list of a "custom" scope
    tournament_type: str = ""  # regular, freeroll or satellite (also in the basis, when kept)


@dataclass(frozen=True)
class PlayerFacts:
    player: str
    chips: int
    explained: Explained | None  # None when only refunds or nothing were paid
    lines: tuple[LineFacts, ...]
    followups: tuple[Followup, ...] = ()


# --- Output ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One line of arithmetic: ``expression`` evaluated (× ÷ before + −, amounts in the
    currency's major unit, chips and counts as whole numbers) equals ``result`` (minor units)."""

    label: str
    expression: str
    result: Fraction
    shown: str

    @property
    def is_input(self) -> bool:
        """A figure given as it is (a pool, a prize), with nothing to work out."""
        return not any(operator in self.expression for operator in "+−×÷")

    @property
    def text(self) -> str:
        if self.is_input:
            return f"{self.label}: {self.shown}"
        return f"{self.label}: {self.expression} = {self.shown}"


@dataclass(frozen=True)
class Part:
    """A named part of what the player receives, in minor units of value."""

    code: str  # "guaranteed" or "share"
    label: str
    amount: int
    shown: str


@dataclass(frozen=True)
class Amount:
    unit: str
    amount: int
    shown: str


@dataclass(frozen=True)
class Section:
    title: str
    paragraphs: tuple[str, ...]


@dataclass(frozen=True)
class Statement:
    settlement: SettlementFacts
    player: str
    player_escaped: str  # "" when the id has no character worth escaping
    chips: int
    kind: str
    headline: str
    sections: tuple[Section, ...]
    parts: tuple[Part, ...]
    steps: tuple[Step, ...]
    # What the statement pays before rounding, in minor units of value (a seat counted at its
    # value; points for an FPP refund): the result of the last step. None when nothing.
    exact: Fraction | None
    rounding: str
    amounts: tuple[Amount, ...]  # the player's ledger lines summed by unit
    lines: tuple[LineFacts, ...]
    followups: tuple[str, ...] = field(default=())
    capped: bool = False  # held at the cap of a split

    @property
    def exact_shown(self) -> str:
        if self.exact is None:
            return ""
        if "fpp" in self.totals or self.kind == REFUND and self.settlement.remedy == "fpp_refund":
            return f"{int(self.exact):,} FPP"
        return _exact_text(self.exact, self.settlement.currency)

    @property
    def amounts_text(self) -> str:
        return " + ".join(amount.shown for amount in self.amounts) or "nothing"

    @property
    def totals(self) -> dict[str, int]:
        return {amount.unit: amount.amount for amount in self.amounts}

    def text(self) -> str:
        """The whole statement as plain text, for pasting into a reply or a mail."""
        facts = self.settlement
        who = self.player + (
            f" (written out: {self.player_escaped})" if self.player_escaped else ""
        )
        title = f"Statement for player {who}"
        where = _tournament_words(facts)
        if facts.settlement_id is not None:
            where += f", settlement #{facts.settlement_id} ({facts.status_label.lower()})"
        out = [title, where, "", self.headline]
        for section in self.sections:
            out += ["", section.title, *section.paragraphs]
        if self.parts:
            out += ["", "The parts of what you receive"]
            out += [f"- {part.label}: {part.shown}" for part in self.parts]
        if self.steps:
            out += ["", "How it was worked out"]
            out += [f"{n}. {step.text}" for n, step in enumerate(self.steps, start=1)]
            if self.rounding:
                out.append(self.rounding)
        out += ["", "What you receive"]
        if self.lines:
            currency = facts.currency
            out += [
                f"- {_unit_amount(line.amount, line.unit, currency)}: "
                f"{KIND_LABELS.get(line.kind, line.kind)}, {SOURCE_LABELS[line.source]}"
                for line in self.lines
            ]
        out.append(f"In all: {self.amounts_text}.")
        if self.followups:
            out += ["", "Also on record", *(f"- {words}" for words in self.followups)]
        return "\n".join(out) + "\n"


def document(statement: Statement) -> dict:
    """A statement as one JSON object: the figures (minor units, exact fractions as "n/d"),
    the arithmetic and the words, for a CRM or a mailer: a line of the JSON Lines export, and
    an item of the API's statements."""
    facts = statement.settlement
    return {
        "settlement": facts.settlement_id,
        "case": facts.case_id,
        "incident": facts.incident_id,
        "tournament": facts.tournament_id,
        "tournament_name": facts.tournament_name,
        "settlement_status": facts.status,
        "currency": facts.currency,
        "stage": facts.stage,
        "remedy": facts.remedy,
        "decision": facts.decision,
        "player": statement.player,
        "player_written_out": statement.player_escaped or None,
        "chips": statement.chips,
        "situation": statement.kind,
        "amounts": statement.totals,
        "lines": [
            {"kind": line.kind, "unit": line.unit, "amount": line.amount, "source": line.source}
            for line in statement.lines
        ],
        "parts": [
            {"part": part.code, "label": part.label, "amount": part.amount}
            for part in statement.parts
        ],
        "arithmetic": [
            {"label": step.label, "expression": step.expression, "result": str(step.result)}
            for step in statement.steps
        ],
        "exact_before_rounding": str(statement.exact) if statement.exact is not None else None,
        "rounding": statement.rounding,
        "headline": statement.headline,
        "also_on_record": list(statement.followups),
        "text": statement.text(),
    }


# --- Building a statement ------------------------------------------------------------------------


def build(facts: SettlementFacts, player: PlayerFacts) -> Statement:
    """The statement of ``player`` (an entrant of the tournament) in this settlement."""
    builder = _Builder(facts, player)
    return builder.statement()


def payout_parts(
    basis: Basis | None, remedy: str | None, remaining: int, explained: Explained | None, currency
) -> tuple[Part, ...]:
    """The guaranteed part (buy-in and fee back, the buy-in, or the prize of the lowest place
    still in play) apart from the share of the rest, for a player paid by a split; empty for
    anyone else. The review's payout rows and the statements show the same parts."""
    if basis is None or basis.split is None or explained is None or remedy is None:
        return ()
    split = basis.split
    share = explained.rounded - split.floor
    parts = []
    if basis.fees_refunded:
        back = basis.buy_in + basis.fee
        parts.append(Part("guaranteed", "Buy-in and fee back", back, _money(back, currency)))
        share_label = "Equal share of the rest of the pool"
    elif split.floor:
        label = _floor_label(basis, remaining)
        parts.append(Part("guaranteed", label, split.floor, _money(split.floor, currency)))
        share_label = "Share of the rest of the pool"
    else:
        share_label = "Share of the pool"
    parts.append(Part("share", share_label, share, _value_text(share, basis, currency)))
    return tuple(parts)


class _Builder:
    def __init__(self, facts: SettlementFacts, player: PlayerFacts):
        self.facts, self.player = facts, player
        self.currency = facts.currency
        self.basis = facts.basis
        self.still_in = player.chips > 0
        self.steps: list[Step] = []
        self.rounding = ""
        self.exact: Fraction | None = None

    # The statement as a whole.

    def statement(self) -> Statement:
        facts, player = self.facts, self.player
        kind, headline, paragraphs = self._outcome()
        sections = [
            Section("What happened", (self._what_happened(),)),
            Section("Why this stage", (self._why_stage(),)),
        ]
        rule = wording.describe(
            self._type(), facts.stage, facts.remedy, decision=facts.decision or None
        )
        if rule:
            sections.append(Section("What the crash policy gives in this case", (rule,)))
        if paragraphs:
            sections.append(Section("What it means for you", tuple(paragraphs)))
        if facts.status and facts.status != "approved":
            sections.append(Section("Not final yet", (self._status_words(),)))
        if self.basis is None and player.lines and kind in (REFUND, SHARE, SEAT_RANK):
            sections.append(Section("Why no working is shown", (WITHOUT_BASIS,)))
        parts = ()
        if kind == SHARE:
            parts = payout_parts(
                self.basis, facts.remedy, facts.remaining, player.explained, self.currency
            )
        return Statement(
            settlement=facts,
            player=player.player,
            player_escaped=player_ids.escaped(player.player),
            chips=player.chips,
            kind=kind,
            headline=headline,
            sections=tuple(sections),
            parts=parts,
            steps=tuple(self.steps),
            exact=self.exact,
            rounding=self.rounding,
            amounts=self._amounts(),
            lines=player.lines,
            followups=tuple(self._followup_words(f) for f in player.followups),
            capped=kind == SHARE and player.explained is not None and player.explained.capped,
        )

    def _outcome(self) -> tuple[str, str, list[str]]:
        remedy = self.facts.remedy
        if remedy == "refund":
            return self._refund()
        if remedy == "fpp_refund":
            return self._fpp_refund()
        if remedy == "reschedule":
            return self._rescheduled()
        if not self.still_in:
            return self._knocked_out()
        if remedy == "satellite_rank":
            return self._seat_rank()
        return self._share()

    # Each situation.

    def _refund(self) -> tuple[str, str, list[str]]:
        basis, total = self.basis, self._total("cash")
        out = [] if self.still_in else ["Players already knocked out are refunded too."]
        if basis is not None:
            self.exact = Fraction(basis.buy_in + basis.fee)
            self._step(
                "Buy-in plus fee",
                f"{self._figure(basis.buy_in)} + {self._figure(basis.fee)}",
                self.exact,
            )
        if not total:
            return REFUND, "You paid nothing to enter, so there is nothing to give back.", out
        headline = f"You get {self._money(total)} back: the tournament is called off."
        if basis is not None:
            headline = (
                f"You get {self._money(total)} back: your buy-in of {self._money(basis.buy_in)} "
                f"and your fee of {self._money(basis.fee)}."
            )
        return REFUND, headline, out

    def _fpp_refund(self) -> tuple[str, str, list[str]]:
        points = self._total("fpp")
        out = [] if self.still_in else ["Players already knocked out get their FPP back too."]
        out += self._reschedule_words(refunded=True)
        if self.basis is not None:
            self.exact = Fraction(self.basis.fpp_buy_in)
            self._step("FPP paid to enter", f"{self.basis.fpp_buy_in:,}", self.exact)
        headline = (
            f"You get your {points:,} FPP buy-in back; no prize is paid."
            if points
            else "The freeroll cost no FPP to enter, so there is nothing to give back."
        )
        return REFUND, headline, out

    def _rescheduled(self) -> tuple[str, str, list[str]]:
        headline = "Nothing is paid now: the freeroll will be played again."
        return RESCHEDULED, headline, self._reschedule_words(refunded=False)

    def _knocked_out(self) -> tuple[str, str, list[str]]:
        facts, basis = self.facts, self.basis
        headline = "You were knocked out before the crash, so this settlement pays you nothing."
        out = []
        if facts.remedy == "refund_even_split":
            out.append(
                "At this stage only the players still holding chips get their buy-in and fee "
                "back; the buy-ins of the players knocked out stay in the prize pool, which is "
                "then shared equally among the players still in."
            )
        elif facts.stage == "late":
            out.append(
                "If you finished in a paid place, the tournament paid your prize when you went "
                "out; the settlement does not pay it a second time."
            )
            if basis is not None and basis.already_paid:
                out.append(
                    f"The places already paid that way are worth {self._money(basis.already_paid)}"
                    " in all, and they are left out of the pool the settlement shares."
                )
        else:
            out.append(
                "The pool is shared only among the players who still held chips when it crashed."
            )
        return KNOCKED_OUT, headline, out

    def _seat_rank(self) -> tuple[str, str, list[str]]:
        basis, explained = self.basis, self.player.explained
        if basis is None or explained is None or explained.places is None:
            return SEAT_RANK, self._paid_headline(), []
        first, last = explained.places
        tied = last - first + 1
        values = [
            position_value(
                k, seat_value=basis.seat_value, seats=basis.seats, remainder=basis.remainder
            )
            for k in range(first, last + 1)
        ]
        out = [
            f"The {self.facts.remaining:,} players still in were ranked by chips: places 1 to "
            f"{basis.seats:,} are worth one seat ({self._money(basis.seat_value)}) each"
            + (
                f", and place {basis.seats + 1:,} the {self._money(basis.remainder)} the seats "
                "leave over."
                if basis.remainder
                else "."
            )
        ]
        if tied == 1:
            out.append(f"With {self.player.chips:,} chips you were in place {first:,}.")
            self._step(f"The value of place {first:,}", self._figure(values[0]), explained.exact)
        else:
            out.append(
                f"With {self.player.chips:,} chips you were tied with {tied - 1:,} other "
                f"player{'s' if tied > 2 else ''} for places {first:,} to {last:,}, so you share "
                "what those places are worth equally."
            )
            self._step(
                f"Places {first:,} to {last:,} shared by {tied:,} players",
                f"({' + '.join(self._figure(v) for v in values)}) ÷ {tied:,}",
                explained.exact,
            )
        self.exact = explained.exact
        self._round(explained, leftover=None)
        out.append(self._seat_words(explained.rounded))
        return SEAT_RANK, self._paid_headline(), out

    def _share(self) -> tuple[str, str, list[str]]:
        basis, facts = self.basis, self.facts
        if basis is None or basis.split is None:
            return SHARE, self._paid_headline(), []
        split = basis.split
        explained = self.player.explained or self._unpaid_explanation(split)
        out = []
        q = self._pool_step(basis, split)
        if basis.fees_refunded:
            out.append(
                "You get your buy-in and fee back, and an equal share of what the prize pool "
                "holds beyond the buy-ins given back."
            )
        if split.floor:
            self._step(
                f"{_floor_words(basis, facts.remaining)}, guaranteed first to each of the "
                f"{split.players:,} players",
                f"{split.players:,} × {self._figure(split.floor)}",
                Fraction(split.players * split.floor),
            )
        capped_words = ""
        if split.capped:
            cap_name = wording.cap_name(self._type(), facts.stage, facts.remedy)
            capped_words = (
                f"{split.capped:,} player{'s were' if split.capped > 1 else ' was'} held at the "
                f"cap of {self._money(split.cap)} ({cap_name}); "
                f"what the formula gave {'them' if split.capped > 1 else 'that player'} above it "
                f"went to the other {split.rest_players:,}."
            )
            out.append(capped_words)
        rest_expression = q
        if split.capped:
            rest_expression += f" − {split.capped:,} × {self._figure(split.cap)}"
        if split.floor:
            rest_expression += f" − {split.rest_players:,} × {self._figure(split.floor)}"
        if rest_expression != q:
            whom = "the players not capped" if split.capped else "the players"
            self._step(
                f"Left to share among {whom} ({split.rest_players:,})",
                rest_expression,
                Fraction(split.rest_pool),
            )
        rest = self._figure(split.rest_pool)
        if explained.capped:
            out.append(
                f"Your share by the formula came to more than the cap, so you get the cap, "
                f"{self._money(split.cap)}."
            )
            self.exact = Fraction(split.cap)
            self._step("Held at the cap", self._figure(split.cap), self.exact)
            # No split with a cap refunds fees (RULES.md §3), so the cap is the whole amount.
        else:
            out.append(self._formula_words(split))
            terms = [self._figure(split.floor)] if split.floor else []
            if split.chip_share < 1:
                even = f"{rest} ÷ {self._halves(split)}{split.rest_players:,}"
                self._step(
                    f"Your equal part: {'half of ' if split.chip_share else ''}{rest} shared by "
                    f"{split.rest_players:,}",
                    even,
                    split.even_part,
                )
                terms.append(even)
            if split.chip_share:
                weight = explained.weight if explained.weight is not None else self.player.chips
                chip = (
                    f"{rest}{' ÷ 2' if split.chip_share != 1 else ''} × "
                    f"{self._weight_figure(weight)} ÷ {self._weight_total(split)}"
                )
                self._step(self._chip_label(split, explained), chip, split.chip_part(weight))
                terms.append(chip)
            if basis.fees_refunded:
                terms[:0] = [self._figure(basis.buy_in), self._figure(basis.fee)]
            self.exact = Fraction(basis.buy_in + basis.fee if basis.fees_refunded else 0)
            self.exact += explained.exact
            if len(terms) > 1:
                label = "In all, before rounding" if basis.fees_refunded else "Your exact amount"
                self._step(label, " + ".join(terms), self.exact)
        self._round(explained, leftover=split.leftover)
        if self._type() == "satellite":
            out.append(self._seat_words(explained.rounded))
        if not self.player.lines:
            out.append("Your share came to less than one cent, so rounding left you nothing.")
        return SHARE, self._paid_headline(), out

    # Pieces of the arithmetic.

    def _pool_step(self, basis: Basis, split: SplitSummary) -> str:
        """Adds the step that says what the split shares; returns the figure of that pool."""
        facts = self.facts
        pool = self._figure(split.pool)
        if basis.split_pool == "pool_less_refunds":
            self._step(
                f"The prize pool less the {facts.remaining:,} buy-ins given back",
                f"{self._figure(basis.prize_pool)} − {facts.remaining:,} × "
                f"{self._figure(basis.buy_in)}",
                Fraction(split.pool),
            )
        elif basis.split_pool == "late_pool" and basis.already_paid:
            self._step(
                "The prize pool less the places the tournament already paid",
                f"{self._figure(basis.prize_pool)} − {self._figure(basis.already_paid)}",
                Fraction(split.pool),
            )
        else:
            self._step("The prize pool being shared", pool, Fraction(split.pool))
        return pool

    def _round(self, explained: Explained, *, leftover: int | None) -> None:
        rounded, exact = explained.rounded, explained.exact
        if exact.denominator == 1:
            self.rounding = f"No rounding was needed: {self._money(rounded)}."
            return
        down = self._money(rounded - explained.rounding_cent)
        if explained.rounding_cent:
            self.rounding = (
                f"Rounding: {self._exact(exact)} is rounded down to {down}, plus one of the "
                f"cents left over after rounding everyone down: {self._money(rounded)}."
            )
        else:
            self.rounding = f"Rounding: {self._exact(exact)} is rounded down to {down}."
        if leftover:
            self.rounding += (
                f" The {leftover:,} leftover cent{'s go' if leftover > 1 else ' goes'} one each to "
                "the players whose amounts had the largest fractions (on a tie: more chips first, "
                "then the smaller player id)."
            )

    def _unpaid_explanation(self, split: SplitSummary) -> Explained:
        """A player still in whom the split paid nothing has no stored explanation: their
        share, by the engine's split summary, rounded down to nothing."""
        exact = split.floor + split.even_part + split.chip_part(self.player.chips)
        return Explained(guaranteed=split.floor, exact=exact, capped=False, rounding_cent=0)

    def _formula_words(self, split: SplitSummary) -> str:
        shared = f"{self._money(split.rest_pool)} is shared among the {split.rest_players:,}"
        if split.formula == "even":
            return f"{shared} players equally."
        if split.formula == "chip_proportional":
            return f"{shared} players in proportion to their chips."
        if split.formula == "chip_position":
            return (
                f"Half of {self._money(split.rest_pool)} is shared equally among the "
                f"{split.rest_players:,} players and half by the prize each one's chip rank "
                "would win."
            )
        return (
            f"Half of {self._money(split.rest_pool)} is shared equally among the "
            f"{split.rest_players:,} players and half in proportion to their chips."
        )

    def _halves(self, split: SplitSummary) -> str:
        return "2 ÷ " if split.chip_share else ""

    def _chip_label(self, split: SplitSummary, explained: Explained) -> str:
        whose = "the players not capped" if split.capped else "all the players"
        if split.formula == "chip_position":
            first, last = explained.places or (0, 0)
            where = f"place {first:,}" if first == last else f"places {first:,} to {last:,}"
            return (
                f"Your part by chip rank: the prize of {where} against the prizes of the places "
                f"of {whose}"
            )
        return (
            f"Your part by chips: your {self.player.chips:,} chips out of the "
            f"{int(split.rest_weight):,} chips of {whose}"
        )

    def _weight_figure(self, weight: Fraction) -> str:
        if self.facts.remedy == "chip_position":
            return self._amount_expression(weight)  # a prize, in money
        return f"{int(weight):,}"  # chips

    def _weight_total(self, split: SplitSummary) -> str:
        if self.facts.remedy == "chip_position":
            return self._amount_expression(split.rest_weight)
        return f"{int(split.rest_weight):,}"

    def _amount_expression(self, amount: Fraction) -> str:
        """An exact amount in minor units as arithmetic on decimals: "15.00" or, for the
        mean prize of tied places, "(25.00 ÷ 3)"."""
        if amount.denominator == 1:
            return self._figure(amount.numerator)
        return f"({self._figure(amount.numerator)} ÷ {amount.denominator:,})"

    # Words.

    def _what_happened(self) -> str:
        facts = self.facts
        when = ""
        if facts.crashed_at is not None:
            when = f" on {facts.crashed_at.astimezone(UTC):%d %b %Y at %H:%M} UTC"
        words = f"{_tournament_words(facts)}{',' if self._type() else ''} crashed{when}. "
        if facts.started is False:
            words += f"It had not started yet; {facts.entrants:,} players had registered."
        else:
            words += (
                f"{facts.entrants:,} players had entered; {facts.eliminated:,} were already "
                f"knocked out and {facts.remaining:,} still had chips."
            )
        you = (
            f" You still had {self.player.chips:,} chips."
            if self.still_in
            else " You were one of the players already knocked out."
        )
        return words + you

    def _why_stage(self) -> str:
        facts, basis = self.facts, self.basis
        out = f"{facts.eliminated:,} of {facts.entrants:,} entrants were out. "
        places = (
            f" ({facts.remaining:,} players left for {basis.paid_places:,} paid places)"
            if basis is not None
            else ""
        )
        if facts.stage == "pre":
            if facts.started is False:
                return "A tournament that had not started is settled as a crash before the start."
            return out + (
                f"That is fewer than {facts.pre_pct} % of the field, so the crash counts as one "
                "before the tournament was really under way."
            )
        if facts.stage == "late":
            return out + f"Every player left was already in the money{places}: the late stage."
        if facts.stage == "early":
            return out + (
                f"That is at least {facts.pre_pct} % but fewer than {facts.early_pct} % of the "
                "field: the early stage."
            )
        return out + (
            f"That is {facts.early_pct} % of the field or more, and not everyone left was in the "
            f"money yet{places}: the middle stage."
        )

    def _reschedule_words(self, *, refunded: bool) -> list[str]:
        facts = self.facts
        if facts.decision == "no_reschedule":
            return ["The freeroll will not be announced again."]
        if facts.decision != "reschedule" and facts.remedy != "reschedule":
            return []
        when = (
            f" on {facts.reschedule_at.astimezone(UTC):%d %b %Y at %H:%M} UTC"
            if facts.reschedule_at
            else ""
        )
        invited = self._invited()
        out = [f"The freeroll will be played again{when}."]
        if invited is True:
            out.append("You are invited to play it.")
        elif invited is False:
            out.append(
                "The invitation goes to "
                + (
                    "the players who still had chips"
                    if facts.invite_scope == "remaining"
                    else "players chosen by the Marketing Manager"
                )
                + ", and you are not among them."
            )
        if not refunded:
            out.append("No FPP buy-in is given back, since the freeroll will be played.")
        return out

    def _invited(self) -> bool | None:
        scope = self.facts.invite_scope
        if scope == "entrants":
            return True
        if scope == "remaining":
            return self.still_in
        if scope == "custom":
            return self.player.player in self.facts.invited
        return None

    def _seat_words(self, value: int) -> str:
        basis = self.basis
        tickets, tdollars = pay_as_seat(value, basis.seat_value)
        worth = self._money(value)
        if tickets and tdollars:
            return (
                f"A prize worth {worth} is at least one seat, so it is paid as one seat ticket "
                f"and the {self._money(tdollars)} above the seat value in T$."
            )
        if tickets:
            return f"A prize worth {worth} is exactly one seat, paid as a seat ticket."
        if value:
            return (
                f"A prize worth {worth} is less than a seat ({self._money(basis.seat_value)}), "
                "so it is paid in T$."
            )
        return ""

    def _status_words(self) -> str:
        facts = self.facts
        state = facts.status_label.lower()
        if facts.status in ("rejected", "withdrawn"):
            return f"This settlement was {state}: it will not be paid as it stands."
        return (
            f"This settlement is {state}: the amounts are final only once a Tournament Manager "
            "approves it."
        )

    def _paid_headline(self) -> str:
        amounts = self._amounts()
        if not amounts:
            return "This settlement pays you nothing."
        return f"You receive {' + '.join(amount.shown for amount in amounts)}."

    def _followup_words(self, followup: Followup) -> str:
        amounts = " + ".join(_unit_amount(a, u, self.currency) for u, a in followup.amounts)
        if followup.kind == "adjustment":
            return (
                f"Adjustment #{followup.number} ({followup.status.lower()}) corrects this "
                f"settlement for you by {amounts}: {followup.words}"
            )
        if followup.kind == "compensation":
            return (
                f"Compensation #{followup.number} ({followup.status.lower()}), paid by the house: "
                f"{amounts}. Reason: {followup.words}"
            )
        return (
            f"Prize given in error ({followup.words}): decision #{followup.number}, "
            f"{followup.status.lower()}."
        )

    # Figures.

    def _amounts(self) -> tuple[Amount, ...]:
        totals = dict.fromkeys(UNITS, 0)
        for line in self.player.lines:
            totals[line.unit] += line.amount
        return tuple(
            Amount(unit, amount, _unit_amount(amount, unit, self.currency))
            for unit, amount in totals.items()
            if amount
        )

    def _total(self, unit: str) -> int:
        return sum(line.amount for line in self.player.lines if line.unit == unit)

    def _step(self, label: str, expression: str, result: Fraction) -> None:
        self.steps.append(Step(label, expression, Fraction(result), self._exact(result)))

    def _type(self) -> str:
        if self.basis is not None:
            return self.basis.tournament_type
        return self.facts.tournament_type

    def _money(self, amount: int) -> str:
        return _money(amount, self.currency)

    def _exact(self, amount: Fraction) -> str:
        return _exact_text(amount, self.currency)

    def _figure(self, amount: int) -> str:
        """An amount in minor units as a number in the major unit, for the arithmetic."""
        return format_figure(amount, self.currency)


def _exact_text(amount: Fraction, currency: str) -> str:
    if amount.denominator == 1:
        return _money(amount.numerator, currency)
    return format_exact(amount, currency)


def _money(amount: int, currency: str) -> str:
    return format_minor_units(amount, currency)


def _unit_amount(amount: int, unit: str, currency: str) -> str:
    return format_in_unit(amount, unit, currency)


def _value_text(amount: int, basis: Basis, currency: str) -> str:
    if basis.tournament_type != "satellite":
        return _money(amount, currency)
    tickets, tdollars = pay_as_seat(amount, basis.seat_value)
    paid = " + ".join(
        text
        for text in (
            "1 seat" if tickets else "",
            f"{_money(tdollars, currency)} in T$" if tdollars else "",
        )
        if text
    )
    return f"{_money(amount, currency)}" + (f" (paid as {paid})" if paid else "")


def _floor_label(basis: Basis, remaining: int) -> str:
    if basis.split_floor == "next_payout":
        return f"Prize of place {remaining:,}"
    return "Buy-in back"


def _floor_words(basis: Basis, remaining: int) -> str:
    if basis.split_floor == "next_payout":
        return f"The prize of place {remaining:,} (what the next player out would have won)"
    return "The buy-in back"


def _tournament_words(facts: SettlementFacts) -> str:
    name = facts.tournament_id
    if facts.tournament_name:
        name = f"{facts.tournament_name} ({facts.tournament_id})"
    kind = facts.basis.tournament_type if facts.basis else facts.tournament_type
    kind = TYPE_LABELS.get(kind, "")
    return f"{name}, a {kind} tournament" if kind else name


# --- Evaluating the printed arithmetic ----------------------------------------------------------


def evaluate(expression: str, currency: str) -> Fraction:
    """The value, in minor units, of a Step's expression: numbers with a decimal point are
    amounts in the major unit, the others chips or counts. For tests and checks."""
    scale = 10 ** currency_exponent(currency)
    tokens = _tokens(expression, scale)
    value, rest = _sum(tokens)
    if rest:
        raise ValueError(f"unexpected {rest[0]!r} in {expression!r}")
    return value


def _tokens(expression: str, scale: int) -> list:
    tokens: list = []
    i = 0
    while i < len(expression):
        character = expression[i]
        if character == " ":
            i += 1
        elif character in "+−×÷()":
            tokens.append(character)
            i += 1
        elif character.isdigit() or character == "-":
            j = i + 1
            while j < len(expression) and (expression[j].isdigit() or expression[j] in ",."):
                j += 1
            text = expression[i:j].replace(",", "")
            # Amounts have the currency's decimals; chips and counts have none. (A currency
            # without decimals has a scale of 1, so there the two read the same.)
            tokens.append(Fraction(text) * scale if "." in text else Fraction(text))
            i = j
        else:
            raise ValueError(f"unexpected {character!r} in {expression!r}")
    return tokens


def _sum(tokens: list) -> tuple[Fraction, list]:
    value, tokens = _product(tokens)
    while tokens and tokens[0] in ("+", "−"):
        operator, (right, tokens) = tokens[0], _product(tokens[1:])
        value = value + right if operator == "+" else value - right
    return value, tokens


def _product(tokens: list) -> tuple[Fraction, list]:
    value, tokens = _atom(tokens)
    while tokens and tokens[0] in ("×", "÷"):
        operator, (right, tokens) = tokens[0], _atom(tokens[1:])
        value = value * right if operator == "×" else value / right
    return value, tokens


def _atom(tokens: list) -> tuple[Fraction, list]:
    if tokens and tokens[0] == "(":
        value, rest = _sum(tokens[1:])
        if not rest or rest[0] != ")":
            raise ValueError("unbalanced parentheses")
        return value, rest[1:]
    if not tokens or not isinstance(tokens[0], Fraction):
        raise ValueError("a number was expected")
    return tokens[0], tokens[1:]


def lines_of(lines: Iterable[LineFacts], units: Sequence[str] = UNITS) -> dict[str, int]:
    """The lines' amounts summed by unit (every unit listed, zero when none)."""
    totals = dict.fromkeys(units, 0)
    for line in lines:
        totals[line.unit] += line.amount
    return totals


# --- Straight from the engine ----------------------------------------------------------------


def from_engine(result, snapshot, *, status: str = "", status_label: str = "") -> list[Statement]:
    """Every entrant's statement from an engine result (rules.Settlement) and its snapshot,
    without storing anything: for tests and for checking a settlement before it is kept."""
    facts = SettlementFacts(
        settlement_id=None,
        case_id=None,
        incident_id=None,
        status=status,
        status_label=status_label,
        tournament_id=result.tournament_id,
        tournament_name=snapshot.tournament.name or "",
        currency=result.currency,
        stage=result.stage,
        remedy=result.remedy,
        decision=result.decision,
        entrants=result.entrants,
        eliminated=result.eliminated,
        remaining=result.remaining,
        pool=result.pool,
        pre_pct=result.policy.pre_pct,
        early_pct=result.policy.early_pct,
        basis=result.basis,
        started=snapshot.tournament.started,
        tournament_type=snapshot.tournament.type,
    )
    lines: dict[str, list[LineFacts]] = {}
    for line in result.lines:
        lines.setdefault(line.player, []).append(
            LineFacts(line.kind, line.unit, line.amount, line.source)
        )
    explanations = result.explanations
    statements = []
    for entrant in sorted(snapshot.players, key=lambda p: p.id):
        explained = None
        if entrant.id in explanations:
            e = explanations[entrant.id]
            explained = Explained(
                guaranteed=e.guaranteed,
                exact=e.exact,
                capped=e.capped,
                rounding_cent=e.rounding_cent,
                weight=e.weight if result.remedy == "chip_position" else None,
                places=e.places,
            )
        player = PlayerFacts(entrant.id, entrant.chips, explained, tuple(lines.get(entrant.id, ())))
        statements.append(build(facts, player))
    return statements
