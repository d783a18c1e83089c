"""Schemathesis hooks for scripts/fuzz-api: each operation is called with the token of a role
the document says may call it (its ``x-roles``), so the fuzzer reaches the endpoint's own
checks rather than stopping at 403. Tokens come from FUZZ_TOKENS, a JSON object of role to
token written by scripts/fuzz-api."""

import json
import os

import schemathesis

TOKENS = json.loads(os.environ["FUZZ_TOKENS"])


@schemathesis.auth(refresh_interval=None)
class RoleToken:
    def get(self, case, context):
        roles = case.operation.definition.raw.get("x-roles") or []
        return next((TOKENS[role] for role in roles if role in TOKENS), None)

    def set(self, case, data, context):
        if data is not None:
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}
