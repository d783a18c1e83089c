"""Bad proofs of identity, counted and logged: a wrong or replayed second-factor code, a
recovery code used before, an API token that is unknown, revoked, expired or asked for what
its scopes do not cover, a single sign-on callback that does not hold up (a forged state, a
tampered or expired ID token, another client's token).

Each is refused where it arrives (allauth's forms, the API's decorator, the sign-on adapter);
here each is written as one log line and counted in ``/metrics`` as
``crashdesk_access_refusals_total{kind=...}``, so that a run of them (someone guessing codes,
a leaked token in use after its end) shows on a dashboard and can raise an alert.
"""

import logging

from allauth.mfa.models import Authenticator
from allauth.mfa.recovery_codes.internal.auth import RecoveryCodes
from allauth.mfa.signals import authentication_failed
from allauth.mfa.totp.internal.auth import validate_totp_code
from allauth.mfa.utils import decrypt
from django.dispatch import receiver
from prometheus_client import Counter

log = logging.getLogger("crashdesk.access")

SECOND_FACTOR_WRONG = "second_factor_wrong"
TOTP_REPLAYED = "totp_replayed"
RECOVERY_CODE_REUSED = "recovery_code_reused"
API_TOKEN_INVALID = "api_token_invalid"
API_TOKEN_OUT_OF_SCOPE = "api_token_out_of_scope"
SIGN_ON_REFUSED = "sign_on_refused"

# The log line of each kind.
KINDS = {
    SECOND_FACTOR_WRONG: "Second factor refused: wrong code",
    TOTP_REPLAYED: "Second factor refused: a TOTP code used before",
    RECOVERY_CODE_REUSED: "Second factor refused: a recovery code used before",
    API_TOKEN_INVALID: "API request with an unknown, revoked or expired token",
    API_TOKEN_OUT_OF_SCOPE: "API request outside its token's scopes",
    SIGN_ON_REFUSED: "Single sign-on refused",
}

# Registered by ``monitoring.exposition`` (and found by its multiprocess collector).
REFUSALS = Counter(
    "crashdesk_access_refusals",
    "Proofs of identity refused, by kind: second-factor codes, API tokens, sign-on callbacks.",
    ["kind"],
    registry=None,
)
for _kind in KINDS:
    # Every kind shows from the start, at zero, so that an alert on its rate has a series.
    REFUSALS.labels(_kind)


def refused(kind: str, **details) -> None:
    """Count a refusal of ``kind`` and log it as one line with ``details``."""
    REFUSALS.labels(kind).inc()
    log.warning(KINDS[kind], extra={"refusal": kind, **details})


def code_refusal_kind(user, code: str) -> str:
    """Why allauth refused ``code`` from ``user``: a recovery code they already used, a TOTP
    code still current (so refused only because it was used before), or simply wrong."""
    code = "".join(code.split())
    for authenticator in Authenticator.objects.filter(user=user):
        if authenticator.type == Authenticator.Type.RECOVERY_CODES:
            codes = RecoveryCodes(authenticator)
            if code in codes.generate_codes() and code not in codes.get_unused_codes():
                return RECOVERY_CODE_REUSED
        elif authenticator.type == Authenticator.Type.TOTP and validate_totp_code(
            decrypt(authenticator.data["secret"]), code
        ):
            return TOTP_REPLAYED
    return SECOND_FACTOR_WRONG


@receiver(authentication_failed, dispatch_uid="crashdesk-second-factor-refused")
def _second_factor_refused(sender, request, user, reauthentication=False, **kwargs) -> None:
    code = request.POST.get("code", "") if request is not None else ""
    refused(
        code_refusal_kind(user, code),
        user=user.get_username(),
        step_up=reauthentication,
    )
