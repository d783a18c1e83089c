"""People and systems: a person's settings, API tokens, the sessions they signed in with."""

import hashlib
import hmac
import secrets

import pgtrigger
from django.db import models
from django.utils import timezone

from settlements.models.base import USER, audited
from settlements.triggers import AccountedByEvent


class DigestEvery(models.IntegerChoices):
    """How often, at most, a person is emailed what waits for them (minutes; 0 for never)."""

    NEVER = 0, "Never: I look at the dashboard"
    QUARTER_HOUR = 15, "At most every 15 minutes"
    HOUR = 60, "At most every hour"
    FOUR_HOURS = 240, "At most every 4 hours"
    DAY = 1440, "At most once a day"


class Profile(models.Model):
    """A user's own settings. A user without one sees the site's defaults."""

    user = models.OneToOneField(USER, on_delete=models.PROTECT, related_name="profile")
    # An IANA zone name ("Europe/Paris"); empty for the site's TIME_ZONE.
    time_zone = models.CharField(max_length=64, blank=True)
    digest_every = models.PositiveIntegerField(choices=DigestEvery, default=DigestEvery.HOUR)
    # The last digest sent and the waiting records it named ("queue:id"): the sender's own
    # bookkeeping, written with update() and kept out of the history like a token's last use.
    digest_sent_at = models.DateTimeField(null=True, blank=True)
    digest_told = models.JSONField(default=list, blank=True)

    history = audited(excluded_fields=["digest_sent_at", "digest_told"])

    def __str__(self) -> str:
        return f"Profile of {self.user}"


TOKEN_TAG = "cdk_"


TOKEN_PREFIX_LENGTH = 8


class TokenScope(models.TextChoices):
    """What a token may call, by group of endpoints; its user's roles still decide the rest."""

    SNAPSHOTS_WRITE = "snapshots:write", "Post snapshots"
    CASES_READ = "cases:read", "Read cases"
    LEDGER_READ = "ledger:read", "Read the ledger feed"
    CONFIRMATIONS_WRITE = "confirmations:write", "Confirm payments"
    STATEMENTS_READ = "statements:read", "Read statements"
    ICM_READ = "icm:read", "Read the ICM second opinion"
    RULEBOOKS_READ = "rulebooks:read", "Read rulebooks and simulations"
    RULEBOOKS_WRITE = "rulebooks:write", "Propose, review and simulate rulebook versions"


class ApiToken(models.Model):
    """A bearer token of a game server; only its SHA-256 is stored.

    Record use with ``ApiToken.objects.filter(pk=...).update(last_used_at=...)`` so that
    routine use does not add a history version per request.
    """

    user = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="api_tokens")
    name = models.CharField(max_length=100)
    # The token's public part, stored in clear: it finds the candidate rows and names the token
    # in listings and revocations without revealing the secret part.
    prefix = models.CharField(max_length=16, db_index=True, blank=True)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # After it the token no longer works. Every token has an end (services.tokens; migration
    # 0047 gave one to those issued before); only versions older than that hold none.
    expires_at = models.DateTimeField(null=True)
    # TokenScope values; a call outside them is refused whatever the user's roles.
    scopes = models.JSONField(default=list)

    history = audited(excluded_fields=["last_used_at"])

    class Meta:
        ordering = ["-created_at", "-id"]
        # A token is issued and revoked only with its event (services.tokens), and never
        # deleted: whose it is and whether it still works are part of the record.
        triggers = [
            AccountedByEvent(
                name="issued_with_event",
                subject="id",
                subject_type="apitoken",
                event_types=("api_token_created",),
                event_table="settlements_event",
                operation=pgtrigger.Insert,
            ),
            AccountedByEvent(
                name="changed_with_event",
                subject="id",
                subject_type="apitoken",
                event_types=("api_token_revoked", "api_token_rotated"),
                event_table="settlements_event",
                operation=pgtrigger.Update,
                condition=pgtrigger.AnyChange(
                    "user", "prefix", "token_hash", "revoked_at", "expires_at", "scopes"
                ),
            ),
            pgtrigger.Protect(name="never_deleted", operation=pgtrigger.Delete),
        ]

    def __str__(self) -> str:
        return f"API token {self.name} ({self.user})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and self.expires_at > timezone.now()

    @staticmethod
    def hash(raw: str) -> str:
        return hashlib.sha256(raw.encode()).hexdigest()

    @staticmethod
    def new_raw() -> tuple[str, str]:
        """A fresh token and its prefix: "cdk_" + 8 hex characters + "_" + 43 random ones."""
        prefix = secrets.token_hex(4)
        return f"{TOKEN_TAG}{prefix}_{secrets.token_urlsafe(32)}", prefix

    @staticmethod
    def prefix_of(raw: str) -> str | None:
        """The prefix of a token in our format, else None (then no row can match)."""
        start = len(TOKEN_TAG)
        end = start + TOKEN_PREFIX_LENGTH
        if not raw.startswith(TOKEN_TAG) or raw[end : end + 1] != "_":
            return None
        prefix = raw[start:end]
        return prefix if all(c in "0123456789abcdef" for c in prefix) else None

    def matches(self, raw: str) -> bool:
        # Constant-time, so response timing tells nothing about how much of a guess was right.
        return hmac.compare_digest(self.token_hash, self.hash(raw))


class SignedInSession(models.Model):
    """A session a user signed in with, so that signing out can end every one of them, and a
    person can see and end each (services.sessions). Goes with its
    session row (``clearsessions`` included). Not business data, so not audited."""

    session = models.OneToOneField("sessions.Session", on_delete=models.CASCADE, primary_key=True)
    user = models.ForeignKey(USER, on_delete=models.CASCADE, related_name="signed_in_sessions")
    # What the person is shown to tell their sessions apart (the settings page).
    signed_in_at = models.DateTimeField(default=timezone.now)
    user_agent = models.CharField(max_length=200, blank=True)
    ip_address = models.GenericIPAddressField(null=True, blank=True)

    def __str__(self) -> str:
        return f"Session of user #{self.user_id}"
