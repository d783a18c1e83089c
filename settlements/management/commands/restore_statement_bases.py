"""`manage.py restore_statement_bases`: put back the figures behind the statements of
settlements prepared before CrashDesk kept them (services.bases).

    manage.py restore_statement_bases [ID ...]            restore those settlements (or every
                                                          one without figures not yet tried
                                                          with this engine)
    manage.py restore_statement_bases --dry-run [ID ...]  say what would happen; write nothing

Figures are kept only if today's engine, run again on its snapshot, decision and
policy, gives exactly its stored ledger lines and payouts; otherwise it is left as it is and
the event says why. Run it as the tables' owner (MIGRATE_DATABASE_URL), like `migrate`: it
writes past the guard that keeps an approved settlement final, which the app's role cannot.
Recorded without a CrashDesk user as the actor, as an administrator's action on the server.
Exit status 1 when some settlement could not be restored (or, with --dry-run, would not be).
"""

from django.core.management.base import BaseCommand, CommandError

from settlements.errors import DomainError
from settlements.models import Settlement
from settlements.services import bases


class Command(BaseCommand):
    help = "Restore the statement figures of settlements prepared before they were kept."

    def add_arguments(self, parser):
        parser.add_argument("ids", nargs="*", type=int, metavar="ID", help="settlement ids")
        parser.add_argument(
            "--dry-run", action="store_true", help="compare only; write nothing, record nothing"
        )

    def handle(self, *args, ids: list[int], dry_run: bool, **options):
        restored = refused = 0
        if ids:
            found = bases.settlements_without_basis().filter(pk__in=ids)
        else:
            found = bases.settlements_awaiting_basis()
        # Ids first: each settlement is restored in a transaction of its own.
        for pk in list(found.values_list("pk", flat=True)):
            settlement = Settlement.objects.get(pk=pk)
            try:
                if dry_run:
                    check = bases.settlement_basis_check(settlement)
                else:
                    check = bases.settlement_basis_restore(settlement=settlement)
            except DomainError as refusal:
                raise CommandError(refusal.message) from refusal
            if check.matches:
                restored += 1
                verb = "would be restored" if dry_run else "restored"
                self.stdout.write(f"{settlement}: {verb}.")
            else:
                refused += 1
                self.stdout.write(f"{settlement}: left as it is, since {check.difference}.")
        would = "would be " if dry_run else ""
        self.stdout.write(
            f"{restored} settlement{'s' if restored != 1 else ''} {would}restored, "
            f"{refused} left without figures."
        )
        if refused:
            raise CommandError(
                "Some settlements keep no figures: their statements show no working.", returncode=1
            )
