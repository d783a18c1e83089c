"""`manage.py api_token`: issue, revoke and list the bearer tokens of the game servers and of
the cashier (the wallet system).

    manage.py api_token create USERNAME [--name NAME]   prints the new token (only this once)
    manage.py api_token revoke ID | PREFIX | TOKEN
    manage.py api_token list [USERNAME]

Only a token's SHA-256 is stored, so a lost token cannot be shown again: revoke it and issue
a new one. Issuing and revoking are audited like every business event; being run on the
server by an administrator, they are recorded without a CrashDesk user as the actor.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from settlements import bounds, services
from settlements.access import roles
from settlements.errors import DomainError
from settlements.models import TOKEN_PREFIX_LENGTH, TOKEN_TAG, ApiToken


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
        revoke = actions.add_parser("revoke", help="revoke a token at once")
        revoke.add_argument(
            "token",
            metavar="ID|PREFIX|TOKEN",
            help="the token's id or prefix as `list` shows them (cdk_xxxxxxxx), or the token",
        )
        listing = actions.add_parser("list", help="list tokens (all users, or one)")
        listing.add_argument("username", metavar="USERNAME", nargs="?")

    def handle(self, *args, action, **options):
        try:
            if action == "create":
                self._create(options["username"], options["name"])
            elif action == "revoke":
                self._revoke(options["token"])
            else:
                self._list(options["username"])
        except DomainError as refusal:
            raise CommandError(refusal.message) from refusal

    def _create(self, username: str, name: str) -> None:
        user = _user(username)
        if not user.is_active:
            raise CommandError(f"User {username} is deactivated; a token of theirs would not work.")
        token, raw = services.api_token_create(user=user, name=name.strip() or username)
        # The token alone on standard output, so that a script can capture it.
        self.stdout.write(raw)
        self.stderr.write(
            f"Issued {_label(token)} (id {token.pk}) for {username}. Store it now: it cannot "
            "be shown again.",
            style_func=str,
        )
        if roles.has_role(user, roles.CASHIER):
            self.stderr.write(
                f"{username} is a Cashier: this token reads the ledger feed and confirms "
                "payments, and nothing else.",
                style_func=str,
            )
        elif not roles.has_role(user, roles.OPERATOR):
            self.stderr.write(
                self.style.WARNING(
                    f"{username} is not an Operator: this token can read cases but not post "
                    "snapshots."
                )
            )

    def _revoke(self, given: str) -> None:
        token = _find(given.strip())
        services.api_token_revoke(token=token)
        self.stdout.write(f"Revoked {_label(token)} (id {token.pk}) of {token.user}.")

    def _list(self, username: str | None) -> None:
        tokens = ApiToken.objects.select_related("user").order_by("user__username", "id")
        if username is not None:
            tokens = tokens.filter(user=_user(username))
        rows = [
            (
                str(token.pk),
                TOKEN_TAG + token.prefix,
                token.user.get_username(),
                token.name,
                token.created_at.strftime("%Y-%m-%d %H:%M"),
                token.last_used_at.strftime("%Y-%m-%d %H:%M") if token.last_used_at else "never",
                "revoked " + token.revoked_at.strftime("%Y-%m-%d %H:%M")
                if token.revoked_at
                else "active",
            )
            for token in tokens
        ]
        if not rows:
            self.stdout.write("No tokens.")
            return
        header = ("ID", "PREFIX", "USER", "NAME", "CREATED", "LAST USED", "STATUS")
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            self.stdout.write("  ".join(cells).rstrip())


def _user(username: str):
    try:
        return get_user_model().objects.get_by_natural_key(username)
    except get_user_model().DoesNotExist:
        raise CommandError(f"There is no user {username!r}.") from None


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
