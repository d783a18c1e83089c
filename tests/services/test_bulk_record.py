"""The bulk path writes the record one tournament's settlement writes: the same events, sealing
the same things, and the same history versions with their user and reason."""

import pytest
from django.utils import timezone

from settlements import audit_log
from settlements.models import Case, Event, IcmValuation, Job, Settlement
from settlements.services import jobs
from settlements.services import settlements as settlement_services
from settlements.services.incidents import incident_report
from settlements.services.snapshots import case_load_snapshot

pytestmark = pytest.mark.django_db

STAGES = ("late", "middle", "early")


def outage(operator, title):
    return incident_report(actor=operator, title=title, started_at=timezone.now())


def snapshots(snapshot_factory, prefix):
    return [
        snapshot_factory(stage=stage, tournament_id=f"{prefix}{number}")
        for number, stage in enumerate(STAGES)
    ]


def settled_one_by_one(operator, manager, incident, files):
    for snapshot in files:
        case = case_load_snapshot(actor=operator, snapshot=snapshot, incident=incident)
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
        settlement_services.settlement_submit(settlement=settlement, actor=operator)
        settlement_services.settlement_approve(
            settlement=settlement, actor=manager, reason="outage checked"
        )


def settled_in_bulk(operator, manager, incident, files):
    def run(kind, actor, items, params=None):
        job = jobs.job_start(
            kind=kind,
            actor=actor,
            target=f"incident:{incident.pk}",
            items=items,
            incident=incident,
            params=params,
        )
        assert jobs.job_progress(job).done == len(items)

    run(
        Job.Kind.UPLOAD,
        operator,
        [jobs.NewItem(key=f"{n}.json", label=str(n), payload=f) for n, f in enumerate(files)],
    )
    cases = Case.objects.filter(incident=incident).order_by("pk")
    run(Job.Kind.PREPARE, operator, [jobs.NewItem(str(case.pk), str(case)) for case in cases])
    settled = Settlement.objects.filter(case__incident=incident).order_by("pk")
    items = [jobs.NewItem(str(s.pk), str(s)) for s in settled]
    run(Job.Kind.SUBMIT, operator, items)
    run(Job.Kind.APPROVE, manager, items, {"reason": "outage checked"})


def described(incident) -> list:
    """Each tournament's record with its ids (and its snapshot's, which names it) left out:
    its events in order (type, actor, reason, what each seals and which records' versions)
    and the versions of its case and settlement (kind of change, user, reason, status)."""
    record = []
    cases = Case.objects.filter(incident=incident).select_related("tournament", "snapshot")
    for case in cases:
        settlement = Settlement.objects.get(case=case)
        labels = {
            str(case): "<case>",
            str(settlement): "<settlement>",
            case.snapshot.sha256[:12]: "<snapshot>",
            f"case:{case.pk}": "case",
            f"settlement:{settlement.pk}": "settlement",
        }
        # The ICM valuation's versions are sealed with the settlement's events.
        for valuation in IcmValuation.objects.filter(settlement=settlement):
            labels[f"icmvaluation:{valuation.pk}"] = "icmvaluation"

        def plain(text, labels=labels):
            for label, kept in labels.items():
                text = text.replace(label, kept)
            return text

        events = [
            (
                event.type,
                event.actor.username,
                plain(event.reason),
                sorted(event.subject_facts),
                sorted(plain(label) for label in event.subject_facts.get("history", {})),
            )
            for event in Event.objects.filter(case=case).order_by("seq")
        ]
        versions = [
            (v.history_type, v.history_user.username, plain(v.history_change_reason), v.status)
            for row in (case, settlement)
            for v in row.history.order_by("history_id")
        ]
        record.append((case.tournament.operator_id[1:], events, versions))
    return sorted(record)


def test_the_bulk_path_writes_the_record_one_by_one_writes(
    settings, operator, tournament_manager, snapshot_factory
):
    settings.JOB_WORKERS_PER_JOB = 1  # every item of a step in one batch
    alone, bulk = outage(operator, "one by one"), outage(operator, "in bulk")
    settled_one_by_one(operator, tournament_manager, alone, snapshots(snapshot_factory, "A"))
    settled_in_bulk(operator, tournament_manager, bulk, snapshots(snapshot_factory, "B"))
    assert described(bulk) == described(alone)
    first = described(alone)[0]
    assert len(first[1]) >= 4 and all(event[4] for event in first[1][1:])
    # Each event's seals of the versions so far still match the versions as they are.
    assert audit_log.verify().ok
