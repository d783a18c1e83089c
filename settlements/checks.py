"""System checks: configuration that would make CrashDesk settle by the wrong rules."""

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register
from django.db import connections
from django.db.migrations.recorder import MigrationRecorder

from settlements.desk_roles import KNOWN_ROLES
from settlements.services.bases import settlements_awaiting_basis
from settlements.site_policy import VARIABLES, icm_flag_problems, policy_problems


@register()
def crash_policy_check(app_configs, **kwargs) -> list[Error]:
    """A bad crash policy stops `check`, `migrate` and `runserver` before any case is loaded."""
    return [
        Error(
            problem,
            hint=(
                f"The crash policy comes from {', '.join(VARIABLES.values())}; "
                "unset a variable to keep the published default."
            ),
            id="settlements.E001",
        )
        for problem in policy_problems(settings.CRASH_POLICY)
    ]


@register()
def crash_policy_moved_check(app_configs, **kwargs) -> list[Warning]:
    """Since rulebooks are records, the environment only seeded `default` version 1 when the
    migration ran: a variable still set changes nothing, which whoever set it should know."""
    if not settings.CRASH_POLICY:
        return []
    names = ", ".join(VARIABLES[key] for key in settings.CRASH_POLICY if key in VARIABLES)
    return [
        Warning(
            f"{names or 'CRASH_POLICY'} no longer sets the crash policy.",
            hint=(
                "Cases are settled under the rulebook version in force when their tournament "
                "started; propose a new version of the rulebook instead, and unset the variable."
            ),
            id="settlements.W011",
        )
    ]


@register()
def icm_flag_check(app_configs, **kwargs) -> list[Error]:
    """A threshold the second opinion could not flag by stops the site before a page needs it."""
    return [
        Error(problem, hint="Unset it to keep the default.", id="settlements.E002")
        for problem in icm_flag_problems()
    ]


# The migration that gave settlements their basis: before it, there is nothing to count.
BASIS_MIGRATION = ("settlements", "0013_statement_basis_and_player_search")


@register(Tags.database)
def statement_bases_check(app_configs, databases=None, **kwargs) -> list[Warning]:
    """Settlements whose statements show no working because they were prepared before the
    engine's figures were kept, and that `restore_statement_bases` has not yet tried with this
    engine. A database check: `migrate` and `check --database default` run it."""
    warnings = []
    for alias in databases or ():
        recorder = MigrationRecorder(connections[alias])
        if not recorder.has_table() or BASIS_MIGRATION not in recorder.applied_migrations():
            continue
        waiting = settlements_awaiting_basis().using(alias).count()
        if waiting:
            warnings.append(
                Warning(
                    f"{waiting} settlement{'s' if waiting != 1 else ''} prepared before their "
                    "figures were kept show statements without the working.",
                    hint=(
                        "Run `manage.py restore_statement_bases` as the tables' owner: it puts "
                        "the figures back where the engine, run again, gives the same ledger lines."
                    ),
                    id="settlements.W001",
                )
            )
    return warnings


# A metrics token is a bearer secret sent with every scrape; shorter than this it is within
# reach of guessing, and the figures say how much money is waiting and where.
METRICS_TOKEN_MIN_LENGTH = 32


@register(Tags.security, deploy=True)
def metrics_token_check(app_configs, **kwargs) -> list[Warning]:
    """`check --deploy` flags a METRICS_TOKEN too short to be a secret (unset is fine: then
    /metrics does not exist)."""
    token = settings.METRICS_TOKEN
    if not token or len(token) >= METRICS_TOKEN_MIN_LENGTH:
        return []
    return [
        Warning(
            f"METRICS_TOKEN is {len(token)} characters long, shorter than "
            f"{METRICS_TOKEN_MIN_LENGTH}.",
            hint="Generate one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'",
            id="settlements.W010",
        )
    ]


# A checkpoint key shorter than this is within reach of guessing; then a checkpoint can be forged.
CHECKPOINT_KEY_MIN_LENGTH = 32


@register(Tags.security, deploy=True)
def checkpoint_key_check(app_configs, **kwargs) -> list[Warning]:
    """`check --deploy` asks for a key of the audit checkpoints' own: derived from SECRET_KEY,
    one cannot be replaced without the other, nor handed to whoever checks the checkpoints."""
    key = settings.AUDIT_CHECKPOINT_KEY
    if key and len(key) >= CHECKPOINT_KEY_MIN_LENGTH:
        return []
    problem = (
        f"AUDIT_CHECKPOINT_KEY is {len(key)} characters long, shorter than "
        f"{CHECKPOINT_KEY_MIN_LENGTH}."
        if key
        else "AUDIT_CHECKPOINT_KEY is not set: audit checkpoints are signed with a key derived "
        "from SECRET_KEY."
    )
    return [
        Warning(
            problem,
            hint="Generate one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
            " and keep it outside the database (docs/operations.md).",
            id="settlements.W012",
        )
    ]


@register()
def sign_on_check(app_configs, **kwargs) -> list[Error]:
    """Single sign-on with a client but no issuer, or a group mapped to a role the desk does not
    know, stops the site before anyone signs in with roles nobody meant."""
    problems = [
        f"OIDC_ROLE_GROUPS maps the group {group!r} to {role!r}, which is not a role "
        f"(roles: {', '.join(KNOWN_ROLES)})."
        for group, role in settings.SSO["roles"].items()
        if role not in KNOWN_ROLES
    ]
    if (
        settings.OIDC_ISSUER
        and not settings.SOCIALACCOUNT_PROVIDERS["openid_connect"]["APPS"][0]["client_id"]
    ):
        problems.append("OIDC_ISSUER is set but OIDC_CLIENT_ID is not.")
    return [
        Error(problem, hint="See docs/access.md.", id="settlements.E004") for problem in problems
    ]
