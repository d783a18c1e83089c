"""The sentences and figures every statement shares, whatever the player's situation: the
amounts as text, the tournament, what happened, why this stage, where the settlement stands,
what else is on record, and how a satellite prize is paid.
"""

from datetime import UTC
from fractions import Fraction

from settlements.money import format_exact, format_in_unit, format_minor_units
from settlements.rules import Basis
from settlements.rules.satellite import pay_as_seat
from settlements.statements.facts import Followup, PaymentFacts, PlayerFacts, SettlementFacts

# Every line kind (models.LineKind) and source (models.Source) as a statement words it; the
# registries are held to these in tests/test_vocabularies.py.
KIND_LABELS = {
    "refund_buy_in": "buy-in back",
    "refund_fee": "fee back",
    "refund_bounty": "entry bounty back",
    "refund_fpp": "FPP buy-in back",
    "prize": "prize",
    "ticket": "seat ticket",
    "bounty": "your own bounty, returned",
    "compensation": "compensation",
    "prize_withdrawal": "prize given in error, taken back",
}
SOURCE_LABELS = {
    "pool": "from the prize pool",
    "house": "paid by the house",
    "bounty": "from the bounty money the entries paid",
}
TYPE_LABELS = {"regular": "regular", "freeroll": "freeroll", "satellite": "satellite"}

# A settlement prepared before the engine's figures were kept with it, whose figures could not
# be put back (services.bases): the working is left out rather than shown unchecked.
WITHOUT_BASIS = (
    "This settlement was prepared before CrashDesk kept the figures the engine worked from. "
    "They are put back only when the engine, run again on the same snapshot and decision, "
    "gives exactly the ledger lines that were paid; for this settlement that has not been "
    "done, so only what you receive is shown, not how it was worked out."
)


# --- Amounts -----------------------------------------------------------------------------------


def money(amount: int, currency: str) -> str:
    return format_minor_units(amount, currency)


def exact_text(amount: Fraction, currency: str) -> str:
    if amount.denominator == 1:
        return money(amount.numerator, currency)
    return format_exact(amount, currency)


def unit_amount(amount: int, unit: str, currency: str) -> str:
    return format_in_unit(amount, unit, currency)


def value_text(amount: int, basis: Basis, currency: str) -> str:
    """An amount of value; for a satellite, with the seat and T$ it is paid as."""
    if basis.tournament_type != "satellite":
        return money(amount, currency)
    tickets, tdollars = pay_as_seat(amount, basis.seat_value)
    paid = " + ".join(
        text
        for text in (
            "1 seat" if tickets else "",
            f"{money(tdollars, currency)} in T$" if tdollars else "",
        )
        if text
    )
    return f"{money(amount, currency)}" + (f" (paid as {paid})" if paid else "")


def seat_words(value: int, basis: Basis, currency: str) -> str:
    """How a satellite pays a prize worth ``value``: a seat, a seat and T$, or T$."""
    tickets, tdollars = pay_as_seat(value, basis.seat_value)
    worth = money(value, currency)
    if tickets and tdollars:
        return (
            f"A prize worth {worth} is at least one seat, so it is paid as one seat ticket "
            f"and the {money(tdollars, currency)} above the seat value in T$."
        )
    if tickets:
        return f"A prize worth {worth} is exactly one seat, paid as a seat ticket."
    if value:
        return (
            f"A prize worth {worth} is less than a seat ({money(basis.seat_value, currency)}), "
            "so it is paid in T$."
        )
    return ""


# --- The guaranteed part of a split ------------------------------------------------------------


def floor_label(basis: Basis, remaining: int) -> str:
    if basis.split_floor == "next_payout":
        return f"Prize of place {remaining:,}"
    return "Buy-in back"


def floor_words(basis: Basis, remaining: int) -> str:
    if basis.split_floor == "next_payout":
        return f"The prize of place {remaining:,} (what the next player out would have won)"
    return "The buy-in back"


# --- The crash and the settlement --------------------------------------------------------------


def tournament_words(facts: SettlementFacts) -> str:
    name = facts.tournament_id
    if facts.tournament_name:
        name = f"{facts.tournament_name} ({facts.tournament_id})"
    kind = TYPE_LABELS.get(facts.type, "")
    return f"{name}, a {kind} tournament" if kind else name


def what_happened(facts: SettlementFacts, player: PlayerFacts) -> str:
    when = ""
    if facts.crashed_at is not None:
        when = f" on {facts.crashed_at.astimezone(UTC):%d %b %Y at %H:%M} UTC"
    words = f"{tournament_words(facts)}{',' if facts.type else ''} crashed{when}. "
    if facts.started is False:
        words += f"It had not started yet; {facts.entrants:,} players had registered."
    else:
        words += (
            f"{facts.entrants:,} players had entered; {facts.eliminated:,} were already "
            f"knocked out and {facts.remaining:,} still had chips."
        )
    you = (
        f" You still had {player.chips:,} chips."
        if player.chips > 0
        else " You were one of the players already knocked out."
    )
    return words + you


def why_stage(facts: SettlementFacts) -> str:
    basis = facts.basis
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


def status_words(facts: SettlementFacts) -> str:
    state = facts.status_label.lower()
    if facts.status in ("rejected", "withdrawn"):
        return f"This settlement was {state}: it will not be paid as it stands."
    return (
        f"This settlement is {state}: the amounts are final only once a Tournament Manager "
        "approves it."
    )


def followup_words(followup: Followup, currency: str) -> str:
    amounts = " + ".join(unit_amount(a, u, currency) for u, a in followup.amounts)
    if followup.kind == "adjustment":
        return (
            f"Adjustment #{followup.number} ({followup.status.lower()}) corrects this "
            f"settlement for you by {amounts}: {followup.words}"
        )
    if followup.kind == "compensation":
        words = (
            f"Compensation #{followup.number} ({followup.status.lower()}), paid by the house: "
            f"{amounts}."
        )
        if followup.words:
            words += f" Reason: {followup.words}"
        if followup.icm is not None:
            policy, icm = followup.icm
            words += (
                f" It was proposed from the ICM comparison: this settlement pays you "
                f"{unit_amount(policy, 'cash', currency)}, while the Independent Chip Model "
                f"valued your chips at {unit_amount(icm, 'cash', currency)}."
            )
        return words
    words = (
        f"Prize given in error ({followup.words}): decision #{followup.number}, "
        f"{followup.status.lower()}."
    )
    if followup.amounts:
        taken = " + ".join(unit_amount(-a, u, currency) for u, a in followup.amounts)
        words += f" {taken} is taken back from what you are owed."
    return words


# --- Payments ---------------------------------------------------------------------------------


def _day(payment: PaymentFacts) -> str:
    # Statements are read wherever the player is: the wallet's day in UTC, said so.
    moment = payment.at.astimezone(UTC)
    return f"{moment.day} {moment:%b %Y} (UTC)"


def payment_words(payment: PaymentFacts, *, keys: bool = False) -> str:
    """Where the payment of one line stands, as a sentence's end ("paid on …"). The desk's own
    pages name the lines' keys (``keys``); what a player reads does not: a key means nothing
    to them, the wallet's reference does."""
    answered = f", wallet reference {payment.reference}" if payment.reference else ""
    match payment.state:
        case "not_sent":
            return "not sent to the wallet yet: it is not approved"
        case "withdrawn":
            return "not to be paid: the case was withdrawn as loaded in error"
        case "unconfirmed":
            sent_as = f" as {payment.key}" if keys else ""
            return f"sent to the wallet{sent_as}, not yet confirmed"
        case "paid":
            return f"paid on {_day(payment)}{answered}"
        case "failed":
            return f"the wallet could not pay it on {_day(payment)}{answered}; not paid yet"
        case "reissued":
            then = payment_words(payment.then, keys=keys) if payment.then else "sent to the wallet"
            if keys:
                again = payment.reissued_as
                return f"the wallet could not pay {payment.key}; paid again as {again}: {then}"
            return f"the wallet could not pay it at first; paid again: {then}"
    raise ValueError(f"unknown payment state {payment.state!r}")


def payment_document(payment: PaymentFacts | None) -> dict | None:
    """A line's payment as JSON for the statements' exports and API."""
    if payment is None:
        return None
    return {
        "state": payment.state,
        "key": payment.key or None,
        "reference": payment.reference or None,
        "at": payment.at.astimezone(UTC).isoformat().replace("+00:00", "Z") if payment.at else None,
        "reissued_as": payment.reissued_as or None,
        "reissue": payment_document(payment.then),
        "words": payment_words(payment),
    }
