"""``manage.py seed_demo``: demo users and an outage with cases at every step of the workflow.

Everything is made through the services, exactly as people would make it, so the demo data
has its history and events. Running it again changes nothing but the demo users' passwords
(reset to the one printed) and adds whatever is missing.

It refuses to run unless DEBUG is on: it makes a superuser whose password is in this file and
the README, which on a production site would be an open door.
"""

import time
from dataclasses import dataclass
from datetime import UTC, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from settlements.access import roles, second_factor
from settlements.demo import snapshot_bytes
from settlements.models import (
    Case,
    Compensation,
    Incident,
    PrizeWithdrawal,
    Rulebook,
    RulebookVersion,
    Tournament,
)
from settlements.selectors.rulebooks import simulation_cases
from settlements.services import rulebooks
from settlements.services import settlements as settlement_services
from settlements.services.compensation import CompensationEntry, compensation_propose
from settlements.services.decisions import decision_record
from settlements.services.incidents import incident_report
from settlements.services.individual_cases import individual_case_open, prize_withdrawal_decide
from settlements.services.snapshots import case_load_snapshot
from settlements.tasks import run_job

DEFAULT_PASSWORD = "crashdesk-demo"
# The demo's published TOTP secret (base32), given to every demo user who must have a second
# factor, so that a newcomer can sign in: add it to an authenticator app, or print the current
# code with `manage.py demo_totp_code`.
DEMO_TOTP_SECRET = "CRASHDESKDEMO2FACRASHDESKDEMO2FA"
EU_MAIN_TEXT = """# EU main: crashed tournaments

If a tournament crashes, you get your **buy-in and fee** back before the money, and from the
middle stage your fee too. At a final table of nine or fewer, what is left is shared by each
stack's ICM value.
"""
DEFAULT_V2_TEXT = """# Crashed tournaments

If a tournament crashes before a fifth of the field is out, you get your buy-in and fee back.
Later, the prize money still in play is shared by the chips you held.
"""
INCIDENT_TITLE = "Demo: data-centre power loss"

# username -> (role, display name)
USERS = {
    "operator": (roles.OPERATOR, "Olivia Operator"),
    "marketing": (roles.MARKETING_MANAGER, "Marco Marketing"),
    "manager": (roles.TOURNAMENT_MANAGER, "Tara Manager"),
    "manager2": (roles.TOURNAMENT_MANAGER, "Tom Second-Manager"),
    "auditor": (roles.AUDITOR, "Aude Auditor"),
    # The wallet system's user: it works through the API only, with a token of its own.
    "cashier": (roles.CASHIER, "Wally Wallet"),
}


@dataclass(frozen=True)
class DemoCase:
    tournament_id: str
    type: str
    stage: str
    entrants: int
    goal: str  # how far through the workflow the demo takes it
    currency: str = "USD"
    rebuys: bool = False  # a rebuy knock-out tournament (crash-snapshot/2, RULES.md §8)
    decision: str = ""  # the Marketing Manager's option, recorded before it is settled
    # A rulebook other than `default`: the tournament starts once its version takes effect.
    rulebook: str = ""


CASES = [
    DemoCase("DEMO-REG-MIDDLE", "regular", "middle", 240, "awaiting_approval"),
    DemoCase("DEMO-FREE-MIDDLE", "freeroll", "middle", 180, "awaiting_decision"),
    DemoCase("DEMO-SAT-MIDDLE", "satellite", "middle", 120, "awaiting_decision"),
    DemoCase("DEMO-REG-LATE", "regular", "late", 90, "approved"),
    DemoCase("DEMO-FREE-EARLY", "freeroll", "early", 400, "awaiting_decision"),
    DemoCase("DEMO-REG-EARLY", "regular", "early", 150, "ready", currency="EUR"),
    DemoCase("DEMO-SAT-LATE", "satellite", "late", 60, "prepared"),
    DemoCase("DEMO-REG-PRE", "regular", "pre", 75, "rejected"),
    DemoCase("DEMO-KO-MIDDLE", "regular", "middle", 150, "awaiting_approval", rebuys=True),
    # Settled to the ledger, so the feed and the statements show bounties from the bounty money
    # (and the API fuzzer, which runs on this desk, checks those answers too).
    DemoCase("DEMO-KO-LATE", "regular", "late", 60, "approved", rebuys=True),
    # Settled under eu-main: its final table shared by ICM, the fees refunded.
    DemoCase("DEMO-EU-LATE", "regular", "late", 45, "approved", currency="EUR", rulebook="eu-main"),
    # A settlement that pays nobody: the players are invited to the new date instead.
    DemoCase("DEMO-FREE-RESCHEDULED", "freeroll", "middle", 100, "approved", decision="reschedule"),
]


class Command(BaseCommand):
    help = "Create demo users (one per role) and an outage with cases at every workflow step."

    def add_arguments(self, parser):
        parser.add_argument(
            "--password",
            default=DEFAULT_PASSWORD,
            help=f"password for every demo user (default: {DEFAULT_PASSWORD})",
        )

    def handle(self, *args, password: str, **options):
        if not settings.DEBUG:
            raise CommandError(
                "seed_demo only runs with DEBUG on: it creates a superuser and demo users "
                "with a published password, which must never exist on a production site. "
                "Nothing was written."
            )
        self._seed(password)
        # Outside the seeding transaction, as a worker runs it (never inside one).
        self._simulation()

    @transaction.atomic
    def _seed(self, password: str) -> None:
        people = {
            name: self._user(name, role, full, password) for name, (role, full) in USERS.items()
        }
        admin = self._admin(password)
        incident = self._incident(people["operator"])
        # Before the cases: one of them is settled under eu-main.
        self._rulebooks(people)
        created = [
            demo.tournament_id for demo in CASES if self._case(demo, incident, people) is not None
        ]
        self._individual_case(incident, people)
        self._compensation(people)

        self.stdout.write("Demo users (sign in at /accounts/login/):")
        for name, (role, _full) in USERS.items():
            self.stdout.write(f"  {name:<10} {password:<18} {roles.LABELS[role]}")
        self.stdout.write(f"  {admin.username:<10} {password:<18} site administrator (/admin/)")
        self.stdout.write(
            "Tournament Managers, the auditor and admin also give a second factor: the TOTP "
            f"secret {DEMO_TOTP_SECRET} (add it to an authenticator app, or run "
            "'manage.py demo_totp_code' for the current code)"
        )
        self.stdout.write(
            "  (cashier opens no page: give it a token with "
            "'manage.py api_token create cashier' and call /api/v1/ledger)"
        )
        # The individual case is a player's complaint on a tournament that also has its crash
        # case, so the incident lists that tournament twice: said here, not left to puzzle.
        crash = incident.cases.filter(kind=Case.Kind.CRASH).count()
        individual = incident.cases.filter(kind=Case.Kind.INDIVIDUAL).count()
        self.stdout.write(
            f"{incident}: {crash} tournaments hit, a crash case each"
            + (f" (new: {', '.join(created)})" if created else " (already there)")
            + f"; {individual} individual case{'' if individual == 1 else 's'}, a player's"
            " complaint on DEMO-REG-LATE, which is why that tournament is listed twice"
        )

    def _user(self, username: str, role: str, full_name: str, password: str):
        first, _, last = full_name.partition(" ")
        user, _ = get_user_model().objects.get_or_create(
            username=username,
            # The demo's digests are printed by the console email backend (docs/operations.md).
            defaults={"first_name": first, "last_name": last, "email": f"{username}@demo.invalid"},
        )
        _set_password(user, password)
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        roles.forget_roles(user)
        if second_factor.second_factor_required(user):
            second_factor.set_totp_secret(user=user, secret=DEMO_TOTP_SECRET)
        return user

    def _admin(self, password: str):
        admin, _ = get_user_model().objects.get_or_create(
            username="admin", defaults={"is_staff": True, "is_superuser": True}
        )
        _set_password(admin, password)
        second_factor.set_totp_secret(user=admin, secret=DEMO_TOTP_SECRET)
        return admin

    def _incident(self, operator) -> Incident:
        incident = Incident.objects.filter(title=INCIDENT_TITLE).order_by("pk").first()
        if incident is None:
            incident = incident_report(
                actor=operator,
                title=INCIDENT_TITLE,
                started_at=timezone.now() - timedelta(hours=2),
                description=(
                    "Both game servers in the primary rack lost power at once; every "
                    "tournament running on them stopped. Snapshots exported on restart."
                ),
            )
        return incident

    def _case(self, demo: DemoCase, incident: Incident, people) -> Case | None:
        if Case.objects.filter(
            tournament__operator_id=demo.tournament_id, kind=Case.Kind.CRASH
        ).exists():
            return None
        operator = people["operator"]
        manager, manager2 = people["manager"], people["manager2"]
        case = case_load_snapshot(
            actor=operator,
            incident=incident,
            snapshot=snapshot_bytes(
                type=demo.type,
                stage=demo.stage,
                entrants=demo.entrants,
                tournament_id=demo.tournament_id,
                name=f"Demo {'rebuy knock-out' if demo.rebuys else demo.type} ({demo.stage} stage)",
                currency=demo.currency,
                rebuys=demo.rebuys,
                **_under(demo.rulebook),
            ),
        )
        # Decisions are left for the Marketing Manager to make in the demo.
        if demo.goal in ("awaiting_decision", "ready"):
            return case
        if demo.decision:
            decision_record(
                case=case,
                actor=people["marketing"],
                option=demo.decision,
                reason="The players are invited to the same tournament next week.",
                reschedule_at=timezone.now() + timedelta(days=7),
            )
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
        if demo.goal == "prepared":
            return case
        settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
        if demo.goal == "approved":
            settlement_services.settlement_approve(
                settlement=settlement, actor=manager, reason="Checked against the snapshot."
            )
        elif demo.goal == "rejected":
            settlement_services.settlement_reject(
                settlement=settlement,
                actor=manager2,
                reason="The start time looks wrong; please confirm it with the game server.",
            )
        return case

    def _individual_case(self, incident: Incident, people) -> None:
        tournament = Tournament.objects.get(operator_id="DEMO-REG-LATE")
        if Case.objects.filter(tournament=tournament, kind=Case.Kind.INDIVIDUAL).exists():
            return
        individual_case_open(
            tournament=tournament,
            actor=people["manager"],
            players=["p000004"],
            incident=incident,
            description="Player reports being disconnected two hands before the crash.",
        )

    def _rulebooks(self, people) -> None:
        """A second rulebook, approved, and a new version of `default` proposed by one
        manager to take effect in a month, waiting for manager2."""
        if Rulebook.objects.filter(key="eu-main").exists():
            return
        manager, manager2 = people["manager"], people["manager2"]
        now = timezone.now()
        eu = rulebooks.rulebook_version_propose(
            key="eu-main",
            parameters={"middle_fee_refund": True, "final_table_icm": 9},
            text=EU_MAIN_TEXT,
            # In force in a moment: the demo's EU tournament starts under it, then crashes.
            effective_from=now + timedelta(seconds=2),
            actor=manager,
            reason="The EU licence publishes fee refunds and ICM at the final table.",
        )
        rulebooks.rulebook_version_approve(
            version=eu, actor=manager2, reason="Matches the published EU policy."
        )
        rulebooks.rulebook_version_propose(
            key="default",
            parameters={"early_pct": 20},
            text=DEFAULT_V2_TEXT,
            effective_from=now + timedelta(days=30),
            actor=manager,
            reason="A shorter early stage, as the operator's terms now say.",
        )

    def _simulation(self) -> None:
        version = RulebookVersion.objects.filter(rulebook__key="default", status="proposed").first()
        if version is None or version.simulations.exists():
            return
        simulation = rulebooks.simulation_start(
            version=version,
            actor=version.proposed_by,
            cases=simulation_cases(rulebook="default"),
            selection={"rulebook": "default"},
        )
        job = simulation.job
        job.refresh_from_db()
        if job.is_active:
            run_job.call(job.pk)
        self.stdout.write(f"Simulation #{simulation.pk} of {version}, waiting for manager2.")

    def _compensation(self, people) -> None:
        case = Case.objects.get(tournament__operator_id="DEMO-REG-LATE", kind=Case.Kind.CRASH)
        if Compensation.objects.filter(case=case).exists():
            return
        # Proposed by one manager, so the demo shows that only the other one may approve it.
        compensation_propose(
            case=case,
            actor=people["manager"],
            reason="Seat draw error left this player short-stacked at the restart.",
            entries=[CompensationEntry(player="p000002", amount=2500)],
        )
        # Taking a prize back waits for the other manager too.
        prize_withdrawal_decide(
            case=case,
            actor=people["manager"],
            player="p000003",
            prize="Cash paid twice for the same place",
            outcome=PrizeWithdrawal.Outcome.WITHDRAW,
            reason="The wallet paid this prize twice after the restart.",
            amount=1500,
            unit="cash",
        )


def _under(rulebook: str) -> dict:
    """The snapshot's fields for a tournament under ``rulebook`` (none for `default`). A
    rulebook's version is chosen by the tournament's start, and a version takes effect only
    after it is approved: the tournament starts when the first version takes effect, and
    crashes a second later, now (a snapshot's crash is never in the future), which the demo
    waits for on its first run."""
    if not rulebook:
        return {}
    version = (
        RulebookVersion.objects.filter(rulebook__key=rulebook, status="approved")
        .order_by("effective_from")
        .first()
    )
    starts = version.effective_from.astimezone(UTC).replace(microsecond=0) + timedelta(seconds=1)
    time.sleep(max(0.0, (starts + timedelta(seconds=1) - timezone.now()).total_seconds()))
    crashed = timezone.now().astimezone(UTC)
    return {
        "rulebook": rulebook,
        "starts_at": f"{starts:%Y-%m-%dT%H:%M:%SZ}",
        "crashed_at": f"{crashed:%Y-%m-%dT%H:%M:%SZ}",
    }


def _set_password(user, password: str) -> None:
    """Set the demo password unless it is set already: a password change is an event, and a
    second run adds none."""
    if not user.check_password(password):
        user.set_password(password)
        user.save()
