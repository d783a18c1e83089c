"""Error reports and slow transactions to Sentry, when SENTRY_DSN is set (settings.py).

What leaves the site is scrubbed first (``scrub``): no player ids, no tokens or secrets, no
amounts. A report keeps what finds the fault (the exception's type, the stack's files, lines and
functions, the view, the URL's path) and loses what belongs to players and the wallet: request
bodies, query strings, cookies, credentials, the stack's local variables, and every number or
quoted text in a message (where a player id or an amount would be).
"""

import re
from typing import Any

import sentry_sdk
from sentry_sdk.integrations.django import DjangoIntegration

FILTERED = "[Filtered]"

# Keys whose values are never sent, wherever they are in an event.
_SECRET_KEYS = re.compile(
    r"player|entrant|amount|cash|tdollars|tickets|fpp|pool|payout|prize|chips|reference|"
    r"idempotency|token|authorization|cookie|session|csrf|password|secret|passwd|api_?key|"
    r"dsn|signature|email|params|query",
    re.IGNORECASE,
)
# Headers that say nothing of a person or a credential.
_SAFE_HEADERS = {"content-type", "content-length", "user-agent", "accept", "host", "x-request-id"}
_TEXT = [
    # API tokens (cdk_...) and any credential after a scheme word.
    (re.compile(r"\bcdk_[A-Za-z0-9_\-]+"), FILTERED),
    (re.compile(r"(?i)\b(bearer|basic|token)\s+\S+"), rf"\1 {FILTERED}"),
    # Quoted text: player ids and tournament ids are quoted in messages ('p000017').
    (re.compile(r"'[^']*'|\"[^\"]*\""), f"'{FILTERED}'"),
    # Numbers: amounts, chips, and ids written without quotes (p000017 keeps its letter).
    (re.compile(r"\d[\d,._]*"), "#"),
]


def init(*, dsn: str, environment: str, release: str, traces_sample_rate: float) -> None:
    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        release=release,
        integrations=[DjangoIntegration()],
        traces_sample_rate=traces_sample_rate,
        # What the SDK collects by itself is kept to the least; ``scrub`` removes the rest.
        data_collection={
            "user_info": False,
            "http_bodies": [],
            "database_query_data": False,
            "stack_frame_variables": False,
        },
        max_request_body_size="never",
        before_send=scrub,
        before_send_transaction=scrub,
        before_breadcrumb=_scrub_breadcrumb,
    )


def scrub(event: dict, hint: Any = None) -> dict:
    """``event`` as it may leave the site (see the module's docstring)."""
    event.pop("user", None)
    request = event.get("request")
    if isinstance(request, dict):
        event["request"] = _request(request)
    for exception in (event.get("exception") or {}).get("values") or []:
        if isinstance(exception.get("value"), str):
            exception["value"] = scrub_text(exception["value"])
        for frame in (exception.get("stacktrace") or {}).get("frames") or []:
            frame.pop("vars", None)
    logentry = event.get("logentry")
    if isinstance(logentry, dict):
        # The message's template is kept; the values it was formatted with are not.
        logentry.pop("params", None)
        if isinstance(logentry.get("formatted"), str):
            logentry["formatted"] = scrub_text(logentry["formatted"])
        if isinstance(logentry.get("message"), str):
            logentry["message"] = scrub_text(logentry["message"])
    if isinstance(event.get("message"), str):
        event["message"] = scrub_text(event["message"])
    for span in event.get("spans") or []:
        if isinstance(span.get("description"), str):
            span["description"] = scrub_text(span["description"])
        span["data"] = _scrubbed(span.get("data") or {})
    if "extra" in event:
        event["extra"] = _scrubbed(event["extra"])
    # The SDK's own contexts and tags (versions, trace ids) are kept, their secret keys not.
    for field in ("contexts", "tags"):
        if field in event:
            event[field] = _scrubbed(event[field], text=False)
    crumbs = event.get("breadcrumbs")
    values = crumbs.get("values") if isinstance(crumbs, dict) else crumbs
    for crumb in values or []:
        _scrub_breadcrumb(crumb)
    return event


def scrub_text(text: str) -> str:
    for pattern, replacement in _TEXT:
        text = pattern.sub(replacement, text)
    return text


def _scrub_breadcrumb(crumb: dict, hint: Any = None) -> dict:
    if isinstance(crumb.get("message"), str):
        crumb["message"] = scrub_text(crumb["message"])
    crumb["data"] = _scrubbed(crumb.get("data") or {})
    return crumb


def _request(request: dict) -> dict:
    headers = request.get("headers") or {}
    return {
        "method": request.get("method"),
        "url": scrub_text(str(request.get("url", "")).split("?", 1)[0]),
        "headers": {
            name: value for name, value in headers.items() if name.lower() in _SAFE_HEADERS
        },
    }


def _scrubbed(value: Any, *, text: bool = True) -> Any:
    """``value`` with the values of secret keys filtered and, with ``text``, every string
    scrubbed."""
    if isinstance(value, dict):
        return {
            key: FILTERED if _SECRET_KEYS.search(str(key)) else _scrubbed(item, text=text)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_scrubbed(item, text=text) for item in value]
    if isinstance(value, str) and text:
        return scrub_text(value)
    return value
