"""A statement as it is handed out: its parts, its arithmetic, its words as plain text
(``Statement.text``) and as one JSON object (``document``)."""

from dataclasses import dataclass, field
from fractions import Fraction

from settlements.statements.facts import LineFacts, SettlementFacts
from settlements.statements.words import (
    KIND_LABELS,
    SOURCE_LABELS,
    exact_text,
    payment_document,
    payment_words,
    tournament_words,
    unit_amount,
)

# What a statement is about, by the player's situation in the settlement.
REFUND = "refund"  # buy-in and fee back, or FPP back (everyone, knocked out or not)
RESCHEDULED = "rescheduled"  # nothing now: the freeroll is played again
SHARE = "share"  # a share of a split of the pool
SEAT_RANK = "seat_rank"  # a satellite's places by chips
KNOCKED_OUT = "knocked_out"  # out before the crash, and this remedy pays only those still in


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
    @property
    def payments_text(self) -> str:
        """Where each line's payment stands, in words ("" where the payments were not read)."""
        return "; ".join(
            f"{KIND_LABELS[line.kind]}: {payment_words(line.payment)}"
            for line in self.lines
            if line.payment is not None
        )

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
        return exact_text(self.exact, self.settlement.currency)

    @property
    def amounts_text(self) -> str:
        return " + ".join(amount.shown for amount in self.amounts) or "nothing"

    @property
    def totals(self) -> dict[str, int]:
        return {amount.unit: amount.amount for amount in self.amounts}

    @property
    def payments_text(self) -> str:
        """Where each line's payment stands, in words ("" where the payments were not read)."""
        return "; ".join(
            f"{KIND_LABELS[line.kind]}: {payment_words(line.payment)}"
            for line in self.lines
            if line.payment is not None
        )

    def text(self) -> str:
        """The whole statement as plain text, for pasting into a reply or a mail."""
        facts = self.settlement
        who = self.player + (
            f" (written out: {self.player_escaped})" if self.player_escaped else ""
        )
        title = f"Statement for player {who}"
        where = tournament_words(facts)
        if facts.settlement_id is not None:
            where += f", settlement #{facts.settlement_id} ({facts.status_label.lower()})"
        out = [title, where]
        if facts.rulebook:
            out.append(f"Settled under rulebook {facts.rulebook[0]}, version {facts.rulebook[1]}")
        out += ["", self.headline]
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
                f"- {unit_amount(line.amount, line.unit, currency)}: "
                f"{KIND_LABELS[line.kind]}, {SOURCE_LABELS[line.source]}"
                + (f"; {payment_words(line.payment)}" if line.payment is not None else "")
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
        "rulebook": {"key": facts.rulebook[0], "version": facts.rulebook[1]}
        if facts.rulebook
        else None,
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
            {
                "kind": line.kind,
                "unit": line.unit,
                "amount": line.amount,
                "source": line.source,
                "payment": payment_document(line.payment),
            }
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
