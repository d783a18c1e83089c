"""The test provider's claims: the user's name, their groups (Django groups of the provider's
own database), and ``amr`` saying a password and a one-time code were checked.

A test makes the provider misbehave by writing a word to the file named by
SSO_PROVIDER_MODE_FILE: ``expired`` (an ID token already past its end), ``audience`` (issued
to another client), ``tampered`` (a claim changed after signing); anything else is normal.
"""

import base64
import json
import os
import time
from pathlib import Path

from oauth2_provider.oauth2_validators import OAuth2Validator


def mode() -> str:
    path = os.environ.get("SSO_PROVIDER_MODE_FILE", "")
    return Path(path).read_text().strip() if path and Path(path).exists() else ""


class Validator(OAuth2Validator):
    # Every claim goes into the ID token whatever scopes were asked for.
    oidc_claim_scope = None

    def get_additional_claims(self, request):
        user = request.user
        return {
            "preferred_username": user.username,
            "groups": sorted(user.groups.values_list("name", flat=True)),
            "amr": ["pwd", "otp"],
        }

    def get_id_token_dictionary(self, token, token_handler, request):
        claims, expiration = super().get_id_token_dictionary(token, token_handler, request)
        if mode() == "expired":
            claims["exp"] = int(time.time()) - 3600
        return claims, expiration

    def finalize_id_token(self, id_token, token, token_handler, request):
        if mode() == "audience":
            id_token["aud"] = "another-client"
        signed = super().finalize_id_token(id_token, token, token_handler, request)
        if mode() != "tampered":
            return signed
        header, payload, signature = signed.split(".")
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        claims["groups"] = [*claims["groups"], "desk-audit"]
        forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
        return f"{header}.{forged}.{signature}"
