"""Players across incidents: finding them by id, the cases they were in with what each owed
them, and their statements (settlements.statements) from the stored settlements.

A player id is matched exactly and by prefix in code-point order, the order the rules use, on
an index of (player COLLATE "C", case) (migration 0010), so a search costs a few index probes
whether the desk holds one incident or a thousand and however many cases share an id.
"""

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from django.db import connection
from django.db.models import Q, QuerySet, Sum
from django.db.models.functions import Collate

from settlements import site_policy, statements
from settlements.models import (
    Case,
    CasePlayer,
    CompensationItem,
    Decision,
    Incident,
    PrizeWithdrawal,
    Settlement,
    SettlementLine,
    SettlementPayout,
)
from settlements.money import UNIT_ORDER
from settlements.rules import DEFAULT_POLICY, Basis
from settlements.selectors.common import lean
from settlements.selectors.payments.states import (
    compensation_line_payments,
    settlement_line_payments,
)
from settlements.workflow import PrizeWithdrawalStatus, SettlementStatus

# Entrants read per round trip when every statement of a settlement is written out.
STATEMENT_CHUNK = 2000
# A case's JSON the players page does not show (a snapshot's policy, options, named players).
_BULKY_CASE_FIELDS = ("policy", "decision_options", "players")


def _collation() -> str:
    # PostgreSQL's "C" and SQLite's BINARY both compare code points (UTF-8 bytes).
    return "C" if connection.vendor == "postgresql" else "BINARY"


def by_code_point(column: str = "player") -> Collate:
    return Collate(column, _collation())


def prefix_end(prefix: str) -> str:
    """The first string after every string that starts with ``prefix``, in code-point order
    (the prefix with its last character moved one code point on)."""
    while prefix:
        code = ord(prefix[-1]) + 1
        if 0xD800 <= code <= 0xDFFF:  # surrogates are not characters; skip past them
            code = 0xE000
        if code <= 0x10FFFF:
            return prefix[:-1] + chr(code)
        prefix = prefix[:-1]
    return ""


# --- Finding players ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayerSearch:
    """The ids matching a search: ``exact`` when some record names the id searched; then
    ``others``, ids that start with it, in code-point order after ``after``."""

    query: str
    exact: bool
    others: list[str]
    more: bool  # ids beyond ``others`` start with the search too


def player_search(
    query: str, *, after: str = "", limit: int = 20, named: dict[str, set[int]] | None = None
) -> PlayerSearch:
    """Player ids equal to ``query``, then starting with it, from every record that names a
    player: crash snapshots, individual cases and prizes given in error (``named``, see
    ``named_players``, when the caller has it already)."""
    if not query:
        return PlayerSearch(query, False, [], False)
    end = prefix_end(query)
    start = max(query, after) if after else query
    found = set(_entrant_ids(start, end, exclusive=bool(after), limit=limit + 2))
    found.update(
        player
        for player in (named if named is not None else named_players())
        if (player > start if after else player >= start) and (not end or player < end)
    )
    ordered = sorted(found)
    exact = not after and bool(ordered) and ordered[0] == query
    others = [player for player in ordered if player != query]
    return PlayerSearch(query, exact, others[:limit], len(others) > limit)


def _entrant_ids(start: str, end: str, *, exclusive: bool, limit: int) -> list[str]:
    """Distinct entrant ids from ``start`` to before ``end`` in code-point order: a loose
    index scan (one probe per id) rather than a DISTINCT over every matching row, since the
    same id may be an entrant of thousands of cases."""
    table = CasePlayer._meta.db_table
    collation = connection.ops.quote_name(_collation())
    key = f"player COLLATE {collation}"
    first = ">" if exclusive else ">="
    below = f"AND {key} < %s" if end else ""
    sql = f"""
        WITH RECURSIVE ids(player) AS (
            SELECT (
                SELECT {key} FROM {table} WHERE {key} {first} %s {below} ORDER BY {key} LIMIT 1
            )
            UNION ALL
            SELECT (
                SELECT {key} FROM {table} AS e
                WHERE e.{key} > ids.player {below} ORDER BY e.{key} LIMIT 1
            )
            FROM ids WHERE ids.player IS NOT NULL
        )
        SELECT player FROM ids WHERE player IS NOT NULL LIMIT %s
    """
    params = [start, *([end] if end else []), *([end] if end else []), limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def named_players() -> dict[str, set[int]]:
    """Player id -> ids of the cases that name them without a snapshot listing them:
    individual cases and prizes given in error. Records made one at a time by a Tournament
    Manager, few enough to read whole (two queries)."""
    named: dict[str, set[int]] = defaultdict(set)
    for pk, players in Case.objects.filter(kind=Case.Kind.INDIVIDUAL).values_list("id", "players"):
        for player in players:
            named[player].add(pk)
    for player, case_id in PrizeWithdrawal.objects.values_list("player", "case"):
        named[player].add(case_id)
    return named


# --- One player's cases ------------------------------------------------------------------------


def player_entries(player: str, offset: int, limit: int) -> list[CasePlayer]:
    """``limit`` of the crash cases with ``player`` among the entrants, newest first, from the
    ``offset``-th (an id may be in thousands of cases). The page is picked on the index of
    (player, case) alone, then only its rows are joined to their cases: an OFFSET over the
    joined rows sorted every case of the desk first (180 ms for page 100 of a player in 4,000
    cases)."""
    by_id = CasePlayer.objects.alias(by_id=by_code_point()).filter(by_id=player)
    page = by_id.order_by("-case_id").values("case_id")[offset : offset + limit]
    entries = by_id.filter(case_id__in=page).select_related("case__tournament", "case__incident")
    entries = entries.defer(*(f"case__{name}" for name in _BULKY_CASE_FIELDS))
    return list(lean(entries, "case__tournament").order_by("-case_id"))


def player_other_cases(player: str, *, named: dict[str, set[int]] | None = None) -> list[Case]:
    """Cases that name ``player`` without a snapshot listing them: individual cases, and
    cases with a prize given in error to them; newest first."""
    ids = (named if named is not None else named_players()).get(player, set())
    if not ids:
        return []
    cases = Case.objects.filter(pk__in=ids).exclude(pk__in=_entrant_case_ids(player))
    cases = cases.select_related("tournament", "incident").defer(*_BULKY_CASE_FIELDS)
    return list(lean(cases, "tournament").order_by("-id"))


def player_case_ids(player: str) -> QuerySet:
    """The ids of every case that concerns ``player``, as a subquery (the history filter)."""
    named = named_players().get(player, set())
    cases = Q(pk__in=_entrant_case_ids(player)) | Q(pk__in=named)
    return Case.objects.filter(cases).values("pk")


def _entrant_case_ids(player: str) -> QuerySet:
    by_id = CasePlayer.objects.alias(by_id=by_code_point()).filter(by_id=player)
    return by_id.values_list("case_id", flat=True)


@dataclass
class PlayerCase:
    """One case of a player, with what it owed them and what followed."""

    case: Case
    chips: int | None  # None: named by an individual case or a prize withdrawal only
    settlement: Settlement | None = None  # the case's latest settlement proper
    owed: list[tuple[str, str, int]] = field(default_factory=list)  # (unit, source, amount)
    adjustments: list[tuple[Settlement, list[tuple[str, int]]]] = field(default_factory=list)
    compensations: list[tuple[int, str, str, list[tuple]]] = field(
        default_factory=list
    )  # (id, status code, status words, [(unit, amount, payment or None)])
    withdrawals: list[PrizeWithdrawal] = field(default_factory=list)
    # The settlement's lines for the player, each with where its payment stands.
    payments: list[tuple[str, str, int, statements.PaymentFacts]] = field(
        default_factory=list
    )  # (kind, unit, signed amount, payment)


def player_cases(player: str, entries: Sequence[CasePlayer], others: Sequence[Case] = ()):
    """PlayerCase rows for a page of ``player_entries`` (and the other cases naming them):
    eight queries at most (four for where the lines stand), however many rows."""
    rows = [PlayerCase(entry.case, entry.chips) for entry in entries]
    rows += [PlayerCase(case, None) for case in others]
    by_case = {row.case.pk: row for row in rows}
    if not by_case:
        return rows
    settlements = (
        Settlement.objects.filter(case__in=list(by_case))
        .only("id", "case_id", "kind", "corrects_id", "status")
        .order_by("prepared_at", "id")
    )
    adjustments: dict[int, list[Settlement]] = defaultdict(list)
    for settlement in settlements:
        if settlement.is_adjustment:
            adjustments[settlement.corrects_id].append(settlement)
        else:
            by_case[settlement.case_id].settlement = settlement
    current = {row.settlement.pk: row for row in rows if row.settlement is not None}
    corrections = {
        adjustment.pk: (current[corrected], adjustment)
        for corrected, listed in adjustments.items()
        if corrected in current
        for adjustment in listed
    }
    sums = (
        SettlementLine.objects.filter(settlement__in=[*current, *corrections], player=player)
        .values_list("settlement", "unit", "source", "reversal")
        .annotate(total=Sum("amount"))
        .order_by("settlement", "unit", "source", "reversal")
    )
    corrected: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for settlement_id, unit, source, reversal, total in sums:
        if settlement_id in current:
            current[settlement_id].owed.append((unit, source, total))
        else:
            corrected[settlement_id].append((unit, -total if reversal else total))
    for adjustment_id, (row, adjustment) in corrections.items():
        if adjustment_id in corrected:
            row.adjustments.append((adjustment, corrected[adjustment_id]))
    for row in rows:
        row.owed.sort(key=lambda item: (UNIT_ORDER.index(item[0]), item[1]))
    # The adjustments' lines are paid like the settlement's: listed with it, in the same column.
    _add_payments(
        player,
        {pk: (row, row.settlement) for pk, row in current.items()} | dict(corrections),
    )
    items = list(
        CompensationItem.objects.filter(player=player, compensation__case__in=list(by_case))
        .select_related("compensation")
        .order_by("compensation_id", "line_no")
    )
    paid = compensation_line_payments(
        {item.compensation_id: item.compensation.status for item in items},
        [(item.compensation_id, item.line_no) for item in items],
    )
    for item in items:
        compensation = item.compensation
        listed = by_case[compensation.case_id].compensations
        if not listed or listed[-1][0] != compensation.pk:
            listed.append(
                (compensation.pk, compensation.status, compensation.get_status_display(), [])
            )
        payment = paid.get((compensation.pk, item.line_no))
        listed[-1][3].append((item.unit, item.amount, payment))
    withdrawals = PrizeWithdrawal.objects.filter(player=player, case__in=list(by_case))
    for withdrawal in withdrawals.order_by("decided_at", "id"):
        by_case[withdrawal.case_id].withdrawals.append(withdrawal)
    return rows


def _add_payments(player: str, records: dict[int, tuple[PlayerCase, Settlement]]) -> None:
    """The lines for ``player`` of each settlement or adjustment in ``records`` (id -> the
    case's row, the record), each with where its payment stands: four queries at most."""
    if not records:
        return
    lines = list(
        SettlementLine.objects.filter(settlement__in=list(records), player=player)
        .order_by("settlement_id", "line_no")
        .values_list("settlement_id", "line_no", "kind", "unit", "amount", "reversal")
    )
    paid = settlement_line_payments(
        [record for _, record in records.values()], [(pk, line_no) for pk, line_no, *_ in lines]
    )
    for settlement_id, line_no, kind, unit, amount, reversal in lines:
        records[settlement_id][0].payments.append(
            (kind, unit, -amount if reversal else amount, paid[settlement_id, line_no])
        )


# --- Statements --------------------------------------------------------------------------------


def settlement_facts(settlement: Settlement) -> statements.SettlementFacts:
    """What every statement of ``settlement`` shares; one query for a reschedule's decision.
    ``settlement`` comes with its case, tournament and incident (selectors.settlement_detail)."""
    case = settlement.case
    decision = None
    if settlement.decision == "reschedule":
        decision = (
            Decision.objects.filter(
                case=case, option="reschedule", decided_at__lte=settlement.prepared_at
            )
            .order_by("-decided_at", "-id")
            .first()
        )
    return statements.SettlementFacts(
        settlement_id=settlement.pk,
        case_id=case.pk,
        incident_id=case.incident_id,
        status=settlement.status,
        status_label=settlement.get_status_display(),
        tournament_id=case.tournament.operator_id,
        tournament_name=case.tournament.name,
        currency=settlement.currency,
        stage=settlement.stage,
        remedy=settlement.remedy or None,
        decision=settlement.decision or None,
        entrants=settlement.entrants,
        eliminated=settlement.eliminated,
        remaining=settlement.remaining,
        pool=settlement.pool,
        pre_pct=settlement.policy.get("pre_pct", DEFAULT_POLICY.pre_pct),
        early_pct=settlement.policy.get("early_pct", DEFAULT_POLICY.early_pct),
        basis=Basis.from_dict(settlement.basis) if settlement.basis else None,
        started=case.started,
        crashed_at=case.crashed_at,
        reschedule_at=decision.reschedule_at if decision else None,
        invite_scope=decision.invite_scope if decision else "",
        invited=frozenset(decision.invited_players) if decision else frozenset(),
        tournament_type=case.tournament.type,
        rulebook=(version.rulebook.key, version.number)
        if (version := case.rulebook_version) is not None
        else None,
    )


def explained(payout: SettlementPayout | None) -> statements.Explained | None:
    """A stored payout row's explanation, or None where the row has none (refunds)."""
    if payout is None or not payout.exact:
        return None
    places = None
    if payout.place_first is not None:
        places = (payout.place_first, payout.place_last)
    return statements.Explained(
        guaranteed=payout.guaranteed or 0,
        exact=Fraction(payout.exact),
        capped=bool(payout.capped),
        rounding_cent=payout.rounding_cent or 0,
        weight=Fraction(payout.weight) if payout.weight else None,
        places=places,
    )


def player_statement(settlement: Settlement, player: str) -> statements.Statement | None:
    """The statement of ``player`` in ``settlement`` (an adjustment answers for the settlement
    it corrects); None when they were not an entrant of its tournament."""
    if settlement.is_adjustment:
        settlement = settlement.corrects
    entry = CasePlayer.objects.filter(case=settlement.case_id, player=player).first()
    if entry is None:
        return None
    payout = SettlementPayout.objects.filter(settlement=settlement, player=player).first()
    lines = _line_facts(
        settlement,
        SettlementLine.objects.filter(settlement=settlement, player=player).order_by("line_no"),
    )
    return statements.build(
        settlement_facts(settlement),
        statements.PlayerFacts(
            player=player,
            chips=entry.chips,
            explained=explained(payout),
            lines=tuple(lines),
            followups=tuple(_followups(settlement, player)),
            entries=entry.entries,
            add_ons=entry.add_ons,
        ),
    )


def settlement_statements(
    settlement: Settlement, *, after: str | None = None, chunk_size: int = STATEMENT_CHUNK
) -> Iterator[statements.Statement]:
    """Every entrant's statement of ``settlement`` (those whose id comes after ``after``), in
    code-point order of their ids, read in chunks (three queries per ``chunk_size`` entrants,
    three more for the payments of an approved settlement's lines), so a 300,000-entrant
    settlement streams in constant memory. Follow-ups (adjustments, compensation) are left to
    the single statements."""
    facts = settlement_facts(settlement)
    entrants = CasePlayer.objects.filter(case=settlement.case_id).alias(by_id=by_code_point())
    while True:
        chunk = entrants.order_by("by_id")
        if after is not None:
            chunk = chunk.filter(by_id__gt=after)
        chunk = list(chunk.values_list("player", "chips", "entries", "add_ons")[:chunk_size])
        if not chunk:
            return
        after = chunk[-1][0]
        players = [player for player, *_ in chunk]
        payouts = {
            payout.player: payout
            for payout in SettlementPayout.objects.filter(settlement=settlement, player__in=players)
        }
        lines: dict[str, list[statements.LineFacts]] = defaultdict(list)
        rows = SettlementLine.objects.filter(settlement=settlement, player__in=players).order_by(
            "line_no"
        )
        rows = list(
            rows.values_list("player", "line_no", "kind", "unit", "amount", "source", "reversal")
        )
        paid = settlement_line_payments(
            [settlement], [(settlement.pk, line_no) for _, line_no, *_ in rows]
        )
        for player, line_no, kind, unit, amount, source, reversal in rows:
            lines[player].append(
                statements.LineFacts(
                    kind,
                    unit,
                    -amount if reversal else amount,
                    source,
                    paid[settlement.pk, line_no],
                )
            )
        for player, chips, entries, add_ons in chunk:
            yield statements.build(
                facts,
                statements.PlayerFacts(
                    player,
                    chips,
                    explained(payouts.get(player)),
                    tuple(lines[player]),
                    entries=entries,
                    add_ons=add_ons,
                ),
            )
        if len(chunk) < chunk_size:
            return  # the last chunk: no need to ask for one more


def statement_settlements(incident: Incident) -> list[Settlement]:
    """The approved settlements of an incident's cases, whose statements may go to players."""
    settlements = Settlement.objects.filter(
        case__incident=incident,
        kind=Settlement.Kind.SETTLEMENT,
        status=SettlementStatus.APPROVED,
    ).select_related("case__tournament", "case__incident", "case__rulebook_version__rulebook")
    return list(lean(settlements, "case__tournament").order_by("case_id"))


def incident_statements(incident: Incident) -> Iterator[statements.Statement]:
    for settlement in statement_settlements(incident):
        yield from settlement_statements(settlement)


def settlement_unpaid_entrants(settlement: Settlement, *, search: str, limit: int = 20):
    """(player, chips) of entrants of the settlement's tournament whose id contains ``search``
    and whom it pays nothing (knocked out, or rounded to nothing): what the review shows when
    no payout matches a search."""
    entries = list(
        CasePlayer.objects.filter(case=settlement.case_id, player__icontains=search)
        .order_by("player")
        .values_list("player", "chips")[:limit]
    )
    paid = set(
        SettlementPayout.objects.filter(
            settlement=settlement, player__in=[player for player, _ in entries]
        ).values_list("player", flat=True)
    )
    return [(player, chips) for player, chips in entries if player not in paid]


def _line_facts(
    settlement: Settlement, lines: Iterable[SettlementLine]
) -> list[statements.LineFacts]:
    lines = list(lines)
    paid = settlement_line_payments([settlement], [(settlement.pk, line.line_no) for line in lines])
    return [
        statements.LineFacts(
            line.kind, line.unit, line.signed_amount, line.source, paid[settlement.pk, line.line_no]
        )
        for line in lines
    ]


def _followups(settlement: Settlement, player: str) -> Iterator[statements.Followup]:
    """Adjustments of the settlement, compensation and prizes given in error on its case
    that name ``player``: three queries."""
    lines = (
        SettlementLine.objects.filter(
            settlement__corrects=settlement,
            settlement__kind=Settlement.Kind.ADJUSTMENT,
            player=player,
        )
        .select_related("settlement")
        .order_by("settlement_id", "line_no")
    )
    by_adjustment: dict[int, tuple[Settlement, dict[str, int]]] = {}
    for line in lines:
        adjustment, amounts = by_adjustment.setdefault(line.settlement_id, (line.settlement, {}))
        amounts[line.unit] = amounts.get(line.unit, 0) + line.signed_amount
    for adjustment, amounts in by_adjustment.values():
        yield statements.Followup(
            "adjustment",
            adjustment.pk,
            adjustment.get_status_display(),
            tuple(amounts.items()),
            adjustment.note,
        )
    items = (
        CompensationItem.objects.filter(player=player, compensation__case=settlement.case_id)
        .select_related("compensation")
        .order_by("compensation_id", "line_no")
    )
    by_compensation: dict[int, list[CompensationItem]] = defaultdict(list)
    for item in items:
        by_compensation[item.compensation_id].append(item)
    for listed in by_compensation.values():
        compensation = listed[0].compensation
        reason, icm = _compensation_reason(compensation, player)
        yield statements.Followup(
            "compensation",
            compensation.pk,
            compensation.get_status_display(),
            tuple((item.unit, item.amount) for item in listed),
            reason,
            icm=(icm["policy"], icm["icm"]) if icm else None,
        )
    withdrawals = PrizeWithdrawal.objects.filter(case=settlement.case_id, player=player)
    for withdrawal in withdrawals.order_by("decided_at", "id"):
        decided = withdrawal.get_outcome_display()
        if withdrawal.status != PrizeWithdrawalStatus.RECORDED:
            # A prize taken back is collected only once a second manager approves it.
            decided = f"{decided}: {withdrawal.get_status_display().lower()}"
        # Once approved, the amount is a debit on what the player is owed: the statement says
        # how much, signed as the cashier collects it.
        taken = withdrawal.status == PrizeWithdrawalStatus.APPROVED and withdrawal.amount
        yield statements.Followup(
            "prize_withdrawal",
            withdrawal.pk,
            decided,
            ((withdrawal.unit, -withdrawal.amount),) if taken else (),
            words=withdrawal.prize,
        )


def _compensation_reason(compensation, player: str) -> tuple[str, dict | None]:
    """The reason and ICM figures ``player``'s statement gives for ``compensation``. A player
    the proposer added by hand to a proposal from the second opinion was not flagged: the
    reason the form was filled with (a shortfall) is not theirs, nor are the ICM figures."""
    figures = compensation.icm_figures
    icm = figures.get("players", {}).get(player)
    if "flag" not in figures:
        return compensation.reason, icm
    flag = site_policy.IcmFlag(**figures["flag"])
    if icm is not None and flag.flags(icm["difference"], icm["icm"]):
        return compensation.reason, icm
    shortfall = flag.shortfall_reason(compensation.currency)
    return compensation.reason.replace(shortfall, "").strip(), None
