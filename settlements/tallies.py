"""The running payment tallies (``PaymentTally``) counted afresh from the confirmations and
approved re-issues, for ``audit_log.verify``: the pages read the tallies instead of counting
810,000 confirmations, so a tally that drifted from its rows would show wrong figures."""

from collections import defaultdict

from django.db.models import Max, Min

from settlements.models import LedgerRelease, PaymentConfirmation, PaymentTally, Reissue
from settlements.row_stamps import written_since
from settlements.workflow import ReissueStatus

_CHUNK = 20_000
_COUNTS = PaymentTally.FIELDS[: len(PaymentTally.STATES)]


def tally_problem(since: int | None = None) -> str:
    """The first release whose payment tally differs from what its confirmations and approved
    re-issues say, counted afresh; empty when all agree. ``since``: among the releases whose
    tally, a confirmation or a re-issue was written after that horizon (row_stamps)."""
    if since is None:
        return _tally_problem(None)
    for releases in _recent_releases(since):
        if problem := _tally_problem(releases):
            return problem
    return ""


def _recent_releases(since: int) -> list[list[int]]:
    def written(model, field: str) -> set[int]:
        return set(model.objects.filter(written_since(model, since)).values_list(field, flat=True))

    ids = sorted(
        written(PaymentTally, "release_id")
        | written(PaymentConfirmation, "release_id")
        | written(Reissue, "original_release_id")
    )
    return [ids[start : start + _CHUNK] for start in range(0, len(ids), _CHUNK)]


def _tally_problem(releases: list[int] | None) -> str:
    # "paid" sorts after "failed": the greatest status a line was given says whether it was paid.
    confirmations, reissues, stored = (
        PaymentConfirmation.objects.all(),
        Reissue.objects.all(),
        LedgerRelease.objects.all(),
    )
    if releases is not None:
        confirmations = confirmations.filter(release_id__in=releases)
        reissues = reissues.filter(original_release_id__in=releases)
        stored = stored.filter(pk__in=releases)
    per_line = (
        confirmations.values("release_id", "line_no")
        .annotate(said=Max("status"), unit=Min("unit"), amount=Min("amount"))
        .order_by()
        .values_list("release_id", "line_no", "said", "unit", "amount")
    )
    reissued = set(
        reissues.filter(status=ReissueStatus.APPROVED).values_list(
            "original_release_id", "original_line_no"
        )
    )
    counted: dict[int, dict] = defaultdict(_empty_tally)
    for release_id, line_no, said, unit, amount in per_line.iterator(chunk_size=_CHUNK):
        if said == PaymentConfirmation.Status.PAID:
            state = "paid"
        elif (release_id, line_no) in reissued:
            state = "reissued"
        else:
            state = "failed"
        tally = counted[release_id]
        tally[f"{state}_lines"] += 1
        tally[state][unit] = tally[state].get(unit, 0) + amount
    stored = stored.order_by("pk").values_list(
        "pk", "tally__release", *(f"tally__{name}" for name in PaymentTally.FIELDS)
    )
    for release_id, tallied, *kept in stored.iterator(chunk_size=_CHUNK):
        counts = counted.pop(release_id, _empty_tally())
        if tallied is None:
            return f"Release #{release_id} has no payment tally"
        fresh = [counts[name] for name in _COUNTS] + [
            {unit: amount for unit, amount in counts[state].items() if amount}
            for state in PaymentTally.STATES
        ]
        if kept != fresh:
            return (
                f"The payment tally of release #{release_id} does not match its "
                "confirmations and re-issues, counted afresh"
            )
    if counted:
        return f"Confirmations name release #{min(counted)}, which is gone"
    return ""


def _empty_tally() -> dict:
    return dict.fromkeys(_COUNTS, 0) | {state: {} for state in PaymentTally.STATES}
