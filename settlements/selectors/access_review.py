"""The access review: who holds which access, how they prove who they are, and every grant and
revocation over a period, for the auditor's periodic review (views.access_review)."""

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from allauth.mfa.models import Authenticator
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from settlements.access import roles
from settlements.models import ApiToken, Event

# What changes someone's access: their roles, flags and password, the admin's changes, tokens.
ACCESS_EVENTS = (
    Event.Type.USER_ACCESS_CHANGED,
    Event.Type.ADMIN_ACTION,
    Event.Type.API_TOKEN_CREATED,
    Event.Type.API_TOKEN_REVOKED,
    Event.Type.API_TOKEN_ROTATED,
)
FACTOR_NAMES = {
    Authenticator.Type.TOTP: "authenticator app",
    Authenticator.Type.WEBAUTHN: "passkey",
    Authenticator.Type.RECOVERY_CODES: "recovery codes",
}
# Recovery codes stand in for a lost factor; alone they are no second factor.
SIGN_IN_FACTORS = (Authenticator.Type.TOTP, Authenticator.Type.WEBAUTHN)


@dataclass(frozen=True)
class TokenHeld:
    name: str
    prefix: str
    scopes: list[str]
    age_days: int
    expires_at: datetime
    last_used_at: datetime | None


@dataclass(frozen=True)
class UserAccess:
    username: str
    full_name: str
    active: bool
    roles: list[str]
    staff: bool
    superuser: bool
    password: bool
    single_sign_on: bool
    factors: list[str]
    last_login: datetime | None
    tokens: list[TokenHeld]

    @property
    def second_factor(self) -> bool:
        return any(FACTOR_NAMES[kind] in self.factors for kind in SIGN_IN_FACTORS)

    @property
    def sign_in(self) -> str:
        ways = [("password", self.password), ("single sign-on", self.single_sign_on)]
        return " and ".join(name for name, held in ways if held) or "cannot sign in"


def access_by_user() -> list[UserAccess]:
    """Every user, active or not, with what they hold; by username."""
    now = timezone.now()
    live_tokens = ApiToken.objects.filter(revoked_at__isnull=True, expires_at__gt=now)
    users = (
        get_user_model()
        .objects.order_by("username")
        .prefetch_related(
            "groups",
            "authenticator_set",
            "socialaccount_set",
            Prefetch("api_tokens", queryset=live_tokens, to_attr="live_tokens"),
        )
    )
    return [_access(user, now) for user in users]


def _access(user, now: datetime) -> UserAccess:
    held = {group.name for group in user.groups.all()}
    kinds = {authenticator.type for authenticator in user.authenticator_set.all()}
    return UserAccess(
        username=user.get_username(),
        full_name=user.get_full_name(),
        active=user.is_active,
        roles=[roles.LABELS[role] for role in roles.KNOWN_ROLES if role in held],
        staff=user.is_staff,
        superuser=user.is_superuser,
        password=user.has_usable_password(),
        single_sign_on=bool(user.socialaccount_set.all()),
        factors=[name for kind, name in FACTOR_NAMES.items() if kind in kinds],
        last_login=user.last_login,
        tokens=[
            TokenHeld(
                name=token.name,
                prefix=token.prefix,
                scopes=list(token.scopes),
                age_days=(now - token.created_at).days,
                expires_at=token.expires_at,
                last_used_at=token.last_used_at,
            )
            for token in user.live_tokens
        ],
    )


def access_changes(start: date, end: date) -> QuerySet:
    """Every grant and revocation from ``start`` to ``end`` (both days whole, in the current
    time zone), oldest first."""
    zone = timezone.get_current_timezone()
    since = datetime.combine(start, datetime.min.time(), tzinfo=zone)
    until = datetime.combine(end + timedelta(days=1), datetime.min.time(), tzinfo=zone)
    return (
        Event.objects.filter(type__in=ACCESS_EVENTS, at__gte=since, at__lt=until)
        .select_related("actor")
        .only("type", "at", "actor__username", "reason", "data", "seq")
        .order_by("at", "seq")
    )


@dataclass(frozen=True)
class ReviewDue:
    last: Event | None
    due: date

    @property
    def overdue(self) -> bool:
        return self.due <= timezone.localdate()


def access_review_due() -> ReviewDue:
    """When the next review is due: ACCESS_REVIEW_DAYS after the last one, or today if none
    was ever recorded."""
    last = (
        Event.objects.filter(type=Event.Type.ACCESS_REVIEW_COMPLETED)
        .select_related("actor")
        .order_by("-at", "-seq")
        .first()
    )
    if last is None:
        return ReviewDue(None, timezone.localdate())
    days = timedelta(days=settings.ACCESS_REVIEW_DAYS)
    return ReviewDue(last, timezone.localdate(last.at) + days)
