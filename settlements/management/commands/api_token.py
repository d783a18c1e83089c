"""`manage.py api_token`: issue, revoke and list the bearer tokens of the game servers and of
the cashier (the wallet system).

    manage.py api_token create USERNAME [--name NAME] [--scope SCOPE ...] [--days N]
                                        prints the new token (only this once)
    manage.py api_token rotate ID | PREFIX | TOKEN [--days N]
                                        a new token like it; the old one works a few days more
    manage.py api_token revoke ID | PREFIX | TOKEN
    manage.py api_token list [USERNAME] [--expiring DAYS]

Only a token's SHA-256 is stored, so a lost token cannot be shown again: revoke it and issue
a new one. Issuing and revoking are audited like every business event; being run on the
server by an administrator, they are recorded without a CrashDesk user as the actor.
"""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from settlements import bounds
from settlements.access import permissions, roles
from settlements.errors import DomainError
from settlements.models import TOKEN_PREFIX_LENGTH, TOKEN_TAG, ApiToken, TokenScope
from settlements.services import tokens as token_services


class Command(BaseCommand):
    help = "Issue, revoke or list the API tokens that game servers use to post snapshots."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        create = actions.add_parser(
            "create", help="issue a token for a user; it is printed once on standard output"
        )
        create.add_argument("username", metavar="USERNAME")
        create.add_argument(
            "--name",
            default="",
            help="what the token is for, e.g. the game server's name (default: USERNAME)",
        )
        create.add_argument(
            "--scope",
            action="append",
            choices=TokenScope.values,
            dest="scopes",
            help="what the token may call; repeat for several (default: every scope)",
        )
        create.add_argument(
            "--days", type=int, help="how many days it works (default: API_TOKEN_DAYS, 90)"
        )
        rotate = actions.add_parser(
            "rotate",
            help="issue a token like this one; the old one works API_TOKEN_OVERLAP_DAYS more",
        )
        rotate.add_argument("token", metavar="ID|PREFIX|TOKEN")
        rotate.add_argument("--days", type=int, help="how many days the new token works")
        revoke = actions.add_parser("revoke", help="revoke a token at once")
        revoke.add_argument(
            "token",
            metavar="ID|PREFIX|TOKEN",
            help="the token's id or prefix as `list` shows them (cdk_xxxxxxxx), or the token",
        )
        listing = actions.add_parser("list", help="list tokens (all users, or one)")
        listing.add_argument("username", metavar="USERNAME", nargs="?")
        listing.add_argument(
            "--expiring",
            type=int,
            metavar="DAYS",
            help="only the working tokens that stop working within DAYS days",
        )

    def handle(self, *args, action, **options):
        try:
            if action == "create":
                self._create(
                    options["username"], options["name"], options["scopes"], options["days"]
                )
            elif action == "rotate":
                self._rotate(options["token"], options["days"])
            elif action == "revoke":
                self._revoke(options["token"])
            else:
                self._list(options["username"], options["expiring"])
        except DomainError as refusal:
            raise CommandError(refusal.message) from refusal

    def _create(self, username: str, name: str, scopes, days) -> None:
        user = _user(username)
        if not user.is_active:
            raise CommandError(f"User {username} is deactivated; a token of theirs would not work.")
        token, raw = token_services.api_token_create(
            user=user, name=name.strip() or username, scopes=scopes, days=days
        )
        # The token alone on standard output, so that a script can capture it.
        self.stdout.write(raw)
        self.stderr.write(
            f"Issued {_label(token)} (id {token.pk}) for {username}, with the scopes "
            f"{', '.join(token.scopes)}, working until {_when(token.expires_at)}. Store it "
            "now: it cannot be shown again.",
            style_func=str,
        )
        if roles.has_role(user, *permissions.CASHIERS):
            self.stderr.write(
                f"{username} is a Cashier: this token reads the ledger feed and confirms "
                "payments, and nothing else.",
                style_func=str,
            )
        elif not roles.has_role(user, *permissions.SNAPSHOT_LOADERS):
            self.stderr.write(
                self.style.WARNING(
                    f"{username} is not an Operator: this token can read cases but not post "
                    "snapshots."
                )
            )

    def _rotate(self, given: str, days) -> None:
        old = _find(given.strip())
        token, raw = token_services.api_token_rotate(token=old, days=days)
        old.refresh_from_db()
        self.stdout.write(raw)
        self.stderr.write(
            f"Issued {_label(token)} (id {token.pk}) in place of {_label(old)}, which works "
            f"until {_when(old.expires_at)}: give the client the new one before then.",
            style_func=str,
        )

    def _revoke(self, given: str) -> None:
        token = _find(given.strip())
        token_services.api_token_revoke(token=token)
        self.stdout.write(f"Revoked {_label(token)} (id {token.pk}) of {token.user}.")

    def _list(self, username: str | None, expiring: int | None) -> None:
        tokens = ApiToken.objects.select_related("user").order_by("user__username", "id")
        if username is not None:
            tokens = tokens.filter(user=_user(username))
        if expiring is not None:
            now = timezone.now()
            tokens = tokens.filter(
                revoked_at__isnull=True,
                expires_at__gt=now,
                expires_at__lte=now + timedelta(days=expiring),
            )
        rows = [
            (
                str(token.pk),
                TOKEN_TAG + token.prefix,
                token.user.get_username(),
                token.name,
                _when(token.created_at),
                _when(token.last_used_at) if token.last_used_at else "never",
                _status(token),
                " ".join(token.scopes),
            )
            for token in tokens
        ]
        if not rows:
            self.stdout.write("No tokens.")
            return
        header = ("ID", "PREFIX", "USER", "NAME", "CREATED", "LAST USED", "STATUS", "SCOPES")
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            self.stdout.write("  ".join(cells).rstrip())


def _user(username: str):
    try:
        return get_user_model().objects.get_by_natural_key(username)
    except get_user_model().DoesNotExist:
        raise CommandError(f"There is no user {username!r}.") from None


def _when(moment) -> str:
    return moment.strftime("%Y-%m-%d %H:%M")


def _status(token: ApiToken) -> str:
    if token.revoked_at:
        return "revoked " + _when(token.revoked_at)
    if not token.is_active:
        return "expired " + _when(token.expires_at)
    return "works until " + _when(token.expires_at)


def _label(token: ApiToken) -> str:
    return f"token {TOKEN_TAG}{token.prefix}… {token.name!r}"


def _find(given: str) -> ApiToken:
    """A token by id (digits), or by prefix given bare, with its tag, or as the whole token."""
    number = bounds.whole_number(given)
    if number is not None:
        token = ApiToken.objects.select_related("user").filter(pk=number).first()
        if token is not None:
            return token
        # A prefix is 8 hex digits, which are all decimal ones about once in 43 tokens.
        if len(given) != TOKEN_PREFIX_LENGTH:
            raise CommandError(f"There is no token with id {given}.")
    prefix = given.removeprefix(TOKEN_TAG)[:TOKEN_PREFIX_LENGTH]
    if len(prefix) != TOKEN_PREFIX_LENGTH:
        raise CommandError(
            f"Give the token's id, or its prefix of {TOKEN_PREFIX_LENGTH} characters as "
            "`manage.py api_token list` shows it."
        )
    found = list(ApiToken.objects.select_related("user").filter(prefix=prefix)[:10])
    if not found:
        raise CommandError(f"There is no token with the prefix {TOKEN_TAG}{prefix}.")
    active = [token for token in found if token.is_active]
    if len(found) > 1 and len(active) != 1:
        ids = ", ".join(str(token.pk) for token in found)
        raise CommandError(f"Several tokens have the prefix {prefix} (ids {ids}); give the id.")
    return active[0] if active else found[0]
