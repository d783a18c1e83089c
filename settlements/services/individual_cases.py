"""Individual cases (players hit while the tournament went on) and prizes given in error: a
prize taken back is a debit, proposed by one Tournament Manager and approved by another before
its line reaches the cashier, like compensation and re-issues."""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from settlements.access import permissions
from settlements.errors import DomainError
from settlements.models import Case, Event, Incident, PrizeWithdrawal, Tournament, Unit
from settlements.selectors.cases import crash_case_in_force
from settlements.services.common import (
    check_amount,
    check_look_alikes,
    check_player_id,
    entrants_among,
    lock_case,
    lock_case_of,
    players_of,
    record_event,
    required_text,
    save_with_history,
)
from settlements.services.incidents import tournament_create
from settlements.services.payments import release_lines
from settlements.workflow import (
    CaseStatus,
    PrizeWithdrawalStatus,
    case_next_status,
    prize_withdrawal_next_status,
)


@dataclass(frozen=True)
class NewTournament:
    """A tournament CrashDesk has not seen (it never crashed, so no snapshot registered it),
    registered with the individual case that concerns it. Amounts in minor units."""

    operator_id: str
    type: str
    currency: str
    buy_in: int | None = None
    fee: int | None = None
    name: str = ""


@transaction.atomic
def individual_case_open(
    *,
    tournament: Tournament | NewTournament,
    actor,
    players: Sequence[str],
    description: str,
    incident: Incident | None = None,
) -> Case:
    """Open a case for one or a few players hit while the tournament went on for the rest;
    a ``NewTournament`` is registered first, in the same transaction."""
    if incident is not None:
        incident = Incident.objects.select_for_update().get(pk=incident.pk)
    permissions.enforce(permissions.individual_case_open(user=actor, incident=incident))
    description = required_text(description, "description")
    players = list(players)
    if not players:
        raise DomainError("Name the player or players concerned.", field="players")
    for player in players:
        check_player_id(player, "A player")
    if len(set(players)) != len(players):
        raise DomainError("A player is named twice.", field="players")
    check_look_alikes(players, field="players")
    if isinstance(tournament, NewTournament):
        if tournament.type == "freeroll" and tournament.buy_in:
            raise DomainError("A freeroll has no buy-in to give.", field="buy_in")
        if tournament.type != "freeroll" and tournament.buy_in is None:
            raise DomainError("Give the tournament's buy-in.", field="buy_in")
        tournament = tournament_create(
            actor=actor,
            operator_id=tournament.operator_id,
            type=tournament.type,
            currency=tournament.currency,
            name=tournament.name,
            buy_in=tournament.buy_in,
            fee=tournament.fee,
        )
    # On a tournament with a snapshot, its entrants are known: name one of them. Without one,
    # the ids typed have passed the same character checks as a snapshot's.
    crash_case = crash_case_in_force(tournament)
    if crash_case is not None:
        outsiders = set(players) - entrants_among(crash_case, players)
        if outsiders:
            raise DomainError(
                f"Not an entrant of {tournament.operator_id} (its snapshot, case "
                f"#{crash_case.pk}): {', '.join(sorted(outsiders)[:5])}.",
                field="players",
            )
    case = Case(
        kind=Case.Kind.INDIVIDUAL,
        incident=incident,
        tournament=tournament,
        status=CaseStatus.OPEN,
        players=players,
        description=description,
        created_by=actor,
    )
    save_with_history(case, actor=actor, reason="Individual case opened")
    record_event(
        Event.Type.INDIVIDUAL_CASE_OPENED,
        actor=actor,
        case=case,
        subject=case,
        reason=description,
        data={"players": players},
    )
    return case


@transaction.atomic
def individual_case_resolve(*, case: Case, actor, outcome: str) -> Case:
    case = lock_case(case)
    permissions.enforce(permissions.individual_case_resolve(case=case, user=actor))
    case.status = case_next_status(case.status, "resolve", label=str(case))
    case.outcome = required_text(outcome, "outcome")
    case.resolved_by = actor
    case.resolved_at = timezone.now()
    save_with_history(case, actor=actor, reason=case.outcome)
    record_event(
        Event.Type.INDIVIDUAL_CASE_RESOLVED,
        actor=actor,
        case=case,
        subject=case,
        reason=case.outcome,
    )
    return case


@transaction.atomic
def prize_withdrawal_decide(
    *,
    case: Case,
    actor,
    player: str,
    prize: str,
    outcome: str,
    reason: str,
    amount: int | None = None,
    unit: str = "",
) -> PrizeWithdrawal:
    """A Tournament Manager's call on a prize given in error: propose to withdraw it (another
    Tournament Manager approves), or leave it (recorded at once: no money moves)."""
    case = lock_case(case)
    permissions.enforce(permissions.prize_withdrawal_decide(case=case, user=actor))
    check_player_id(player, "The player", field="player")
    if not players_of(case, [player]):
        raise DomainError(f"{player} is not a player of {case}.", field="player")
    prize = required_text(prize, "prize", max_length=200)
    if outcome not in PrizeWithdrawal.Outcome.values:
        raise DomainError("Choose to withdraw the prize or to leave it.", field="outcome")
    reason = required_text(reason, "reason")
    check_prize_amount(amount_given=amount is not None, unit=unit, outcome=outcome)
    if amount is not None:
        check_amount(amount, "amount")
    if outcome == PrizeWithdrawal.Outcome.WITHDRAW and not amount:
        raise DomainError("Give the amount to take back and its unit.", field="amount")
    taken = outcome == PrizeWithdrawal.Outcome.WITHDRAW
    withdrawal = PrizeWithdrawal(
        case=case,
        player=player,
        prize=prize,
        unit=unit,
        amount=amount,
        outcome=outcome,
        reason=reason,
        decided_by=actor,
        status=PrizeWithdrawalStatus.PROPOSED if taken else PrizeWithdrawalStatus.RECORDED,
    )
    save_with_history(withdrawal, actor=actor, reason=reason)
    record_event(
        Event.Type.PRIZE_WITHDRAWAL_DECIDED,
        actor=actor,
        case=case,
        subject=withdrawal,
        reason=reason,
        data={
            "player": player,
            "prize": prize,
            "outcome": outcome,
            "amount": amount,
            "unit": unit,
            "status": withdrawal.status,
        },
    )
    return withdrawal


@transaction.atomic
def prize_withdrawal_approve(
    *, withdrawal: PrizeWithdrawal, actor, reason: str = ""
) -> PrizeWithdrawal:
    """Approve taking a prize back: its line joins the cashier's feed. Never the proposer's."""
    return _prize_withdrawal_review(withdrawal, actor, "approve", reason.strip())


@transaction.atomic
def prize_withdrawal_reject(*, withdrawal: PrizeWithdrawal, actor, reason: str) -> PrizeWithdrawal:
    """Reject taking a prize back: nothing is collected."""
    return _prize_withdrawal_review(withdrawal, actor, "reject", required_text(reason, "reason"))


def _prize_withdrawal_review(withdrawal: PrizeWithdrawal, actor, action: str, reason: str):
    # The case first, as every service locks it (services/__init__.py): withdrawing the case
    # voids a proposal still waiting, so the two answer one after the other.
    case = lock_case_of(withdrawal)
    withdrawal = PrizeWithdrawal.objects.select_for_update().get(pk=withdrawal.pk)
    withdrawal.case = case
    check = (
        permissions.prize_withdrawal_approve
        if action == "approve"
        else permissions.prize_withdrawal_reject
    )
    permissions.enforce(check(withdrawal=withdrawal, user=actor))
    if action == "approve":
        permissions.enforce(permissions.step_up(user=actor, action="approve prize withdrawals"))
    withdrawal.status = prize_withdrawal_next_status(
        withdrawal.status, action, label=str(withdrawal)
    )
    if action == "approve":
        withdrawal.approved_by = actor
    else:
        withdrawal.rejected_by = actor
    withdrawal.reviewed_at = timezone.now()
    withdrawal.review_reason = reason
    save_with_history(withdrawal, actor=actor, reason=reason or "Approved")
    if action == "approve":
        release_lines(
            actor=actor,
            case=case,
            currency=case.tournament.currency,
            line_count=1,
            totals={withdrawal.unit: -withdrawal.amount},
            prize_withdrawal=withdrawal,
        )
    record_event(
        Event.Type.PRIZE_WITHDRAWAL_APPROVED
        if action == "approve"
        else Event.Type.PRIZE_WITHDRAWAL_REJECTED,
        actor=actor,
        case=case,
        subject=withdrawal,
        reason=reason,
        data={"player": withdrawal.player, "amount": withdrawal.amount, "unit": withdrawal.unit},
    )
    return withdrawal


def check_prize_amount(*, amount_given: bool, unit: str, outcome: str = "") -> None:
    """An amount comes with its unit, and a unit with an amount; a prize withdrawn says what
    to take back, since the cashier collects exactly that. The prize form asks too: it needs
    the unit to read the amount, and its confirmation step never shows a pair the service
    would refuse."""
    if outcome == PrizeWithdrawal.Outcome.WITHDRAW and not amount_given:
        raise DomainError("Give the amount to take back and its unit.", field="amount")
    if amount_given and unit not in Unit.values:
        raise DomainError("Give the unit of the amount.", field="unit")
    if not amount_given and unit:
        raise DomainError("Give the amount in that unit, or no unit.", field="amount")
