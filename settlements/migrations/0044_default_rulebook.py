"""The policy moves from the environment to the record: `default` version 1 is the policy the
CRASH_POLICY_* settings give (or the engine's defaults), in force from the start of time, and
every existing case is linked to a version whose parameters equal the policy it was settled
with. A case settled with another policy (the settings changed since) gets a version of its own,
in force from the first such case's creation, so that the history reads in order."""

import pgtrigger
from django.db import migrations
from django.utils import timezone

from settlements.bounds import EARLIEST
from settlements.rules import parse_policy
from settlements.site_policy import site_policy

TEXT = (
    "Crashed tournaments are settled by the published crash policy: by the stage the "
    "tournament had reached, with the remedy chosen by the Tournament Manager where the "
    "policy offers a choice."
)
REASON = "Made from the crash policy settings when rulebooks became records."


def forwards(apps, schema_editor):
    Rulebook = apps.get_model("settlements", "Rulebook")
    RulebookVersion = apps.get_model("settlements", "RulebookVersion")
    Case = apps.get_model("settlements", "Case")
    now = timezone.now()
    current = site_policy().parameters
    # Each distinct policy of the cases, by its first case's creation.
    first_use: dict[str, tuple] = {}
    for pk, policy, created_at in (
        Case.objects.exclude(policy={})
        .order_by("created_at", "id")
        .values_list("pk", "policy", "created_at")
    ):
        parameters = parse_policy(policy).parameters
        key = repr(sorted(parameters.items()))
        first_use.setdefault(key, (parameters, created_at, []))[2].append(pk)
    used = list(first_use.values())
    if not used or used[-1][0] != current:
        used.append((current, now, []))
    rulebook = Rulebook.objects.create(key="default")
    # These versions were approved by nobody: the settings were the policy. The workflow's
    # guard, which holds every version the desk writes to its proposer and approver, is lifted
    # for them alone (the tables' owner runs the migrations).
    with pgtrigger.ignore("settlements.RulebookVersion:follows_workflow"):
        for number, (parameters, since, case_ids) in enumerate(used, start=1):
            version = RulebookVersion.objects.create(
                rulebook=rulebook,
                number=number,
                status="approved",
                parameters=parameters,
                text=TEXT,
                effective_from=EARLIEST if number == 1 else since,
                proposed_at=now,
                proposal_reason=REASON,
                approved_at=now,
            )
            Case.objects.filter(pk__in=case_ids).update(rulebook_version=version)


class Migration(migrations.Migration):
    dependencies = [("settlements", "0043_rulebooks")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop, elidable=False)]
