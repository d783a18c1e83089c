"""Hands the cashier what was approved before the ledger feed existed: every approved
settlement, adjustment and compensation, and every prize withdrawn with a known amount, gets
its release, in the order of approval, so the feed starts with the desk's whole history."""

from django.db import migrations

# Spelled out rather than imported: a migration must keep working if the code changes.
APPROVED = "approved"


def release_history(apps, schema_editor):
    settlement_model = apps.get_model("settlements", "Settlement")
    compensation_model = apps.get_model("settlements", "Compensation")
    withdrawal_model = apps.get_model("settlements", "PrizeWithdrawal")
    release_model = apps.get_model("settlements", "LedgerRelease")
    tally_model = apps.get_model("settlements", "PaymentTally")

    records = []
    for settlement in settlement_model.objects.filter(status=APPROVED).select_related("case"):
        totals = {
            unit: sum(by_source.values()) for unit, by_source in (settlement.totals or {}).items()
        }
        records.append(
            (
                settlement.reviewed_at,
                settlement.kind,
                {"settlement": settlement},
                settlement.case,
                settlement.currency,
                settlement.line_count,
                totals,
                settlement.approved_by_id,
            )
        )
    for compensation in compensation_model.objects.filter(status=APPROVED).select_related("case"):
        records.append(
            (
                compensation.reviewed_at,
                "compensation",
                {"compensation": compensation},
                compensation.case,
                compensation.currency,
                compensation.items.count(),
                dict(compensation.totals or {}),
                compensation.approved_by_id,
            )
        )
    withdrawn = withdrawal_model.objects.filter(outcome="withdraw", amount__gt=0).exclude(unit="")
    for withdrawal in withdrawn.select_related("case__tournament"):
        records.append(
            (
                withdrawal.decided_at,
                "prize_withdrawal",
                {"prize_withdrawal": withdrawal},
                withdrawal.case,
                withdrawal.case.tournament.currency,
                1,
                {withdrawal.unit: -withdrawal.amount},
                withdrawal.decided_by_id,
            )
        )
    records.sort(key=lambda record: record[0])
    position = 1
    for at, record, link, case, currency, count, totals, by in records:
        if count == 0:
            continue
        release = release_model.objects.create(
            record=record,
            first_position=position,
            last_position=position + count - 1,
            line_count=count,
            case=case,
            incident_id=case.incident_id,
            currency=currency,
            totals=totals,
            released_by_id=by,
            released_at=at,
            **link,
        )
        tally_model.objects.create(release=release)
        position += count


class Migration(migrations.Migration):
    dependencies = [("settlements", "0010_payments_ledger_releases_and_confirmations")]

    operations = [migrations.RunPython(release_history, migrations.RunPython.noop)]
