"""What every endpoint shares: the endpoint decorator, bearer-token authentication, the link to
the next page, and the site's 404 and 500 handlers, which answer JSON under /api/.

Clients authenticate with ``Authorization: Bearer TOKEN`` (``manage.py api_token``) and
nothing else: a session cookie is ignored here, which is why these views are exempt from
CSRF (a browser cannot be tricked into sending a bearer token).
"""

import logging
from dataclasses import dataclass, field
from functools import wraps

import msgspec
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import patch_cache_control
from django.utils.http import urlencode
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt

from settlements import problems
from settlements.access import permissions, refusals, roles
from settlements.errors import SecondFactorStale
from settlements.rules import InvalidInput
from settlements.services.tokens import api_token_authenticate

log = logging.getLogger("crashdesk.api")

# A token is 56 characters; anything much longer is not worth hashing.
MAX_CREDENTIAL_LENGTH = 256


@dataclass(frozen=True)
class Operation:
    """What the OpenAPI document (``openapi``) says of an endpoint, declared beside its view:
    the msgspec types of its query, body and answers (by status), and the links from an
    answer's fields to other endpoints' parameters (``{status: {name: (route name,
    {parameter: runtime expression})}}``), and an example of the body."""

    methods: tuple[str, ...]
    allowed: tuple[str, ...]
    answers: dict[int, type]
    query: type | None = None
    body: type | None = None
    links: dict[int, dict[str, tuple[str, dict[str, str]]]] = field(default_factory=dict)
    example: dict | None = None
    scope: str = ""  # the TokenScope a call needs; none for the document itself


def api_endpoint(
    *methods: str,
    scope: str,
    allowed: tuple[str, ...],
    answers: dict[int, type] | None = None,
    query: type | None = None,
    body: type | None = None,
    links: dict | None = None,
    example: dict | None = None,
):
    """Method check (405), bearer authentication (401), the token's ``scope`` (a TokenScope)
    and its user's role (403), a 400 listing the
    problems of an ``InvalidInput`` the view raises, and a JSON answer even for an unexpected
    error (500). The view receives the token's user. The rest describes the endpoint in the
    OpenAPI document (``Operation``); the refusals above are added to ``answers`` there. An
    endpoint that declares no ``answers`` is not described, which the tests report."""
    operation = answers and Operation(
        methods, allowed, answers, query, body, links or {}, example, scope
    )

    def decorator(view):
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs):
            try:
                if request.method not in methods:
                    return _method_not_allowed(request, methods)
                raw = _bearer_token(request)
                token = api_token_authenticate(raw=raw) if raw else None
                if token is None:
                    return _unauthenticated(request, offered=raw is not None)
                if scope not in token.scopes:
                    return _out_of_scope(request, token, scope)
                if not roles.has_role(token.user, *allowed):
                    return _forbidden(token.user, allowed)
                # A token proves no second factor: what asks for a fresh one is refused.
                setattr(token.user, permissions.PROVED_AT, None)
                return view(request, token.user, *args, **kwargs)
            except InvalidInput as invalid:
                return problems.problems_response(400, invalid.problems)
            except SecondFactorStale as stale:
                return problems.refusal(
                    403, "Authorization", f"{stale} An API token has no second factor."
                )
            except Exception:
                log.exception("API request failed: %s %s", request.method, request.path)
                return _server_error_response()

        if operation:
            wrapper.operation = operation
        return csrf_exempt(wrapper)

    return decorator


def answer(data: dict, answer_type: type, *, status: int = 200) -> HttpResponse:
    """``data`` sent as its declared ``answer_type``, the type the OpenAPI document describes:
    a field more or missing, or a value the type does not offer, fails here (a 500, logged)
    rather than reaching a client unlike the document."""
    body = msgspec.json.encode(msgspec.convert(data, answer_type))
    response = HttpResponse(body, status=status, content_type="application/json")
    # Cases and settlements are confidential and change: no cache may keep them.
    patch_cache_control(response, no_store=True, private=True)
    return response


def _method_not_allowed(request: HttpRequest, methods: tuple[str, ...]) -> JsonResponse:
    response = problems.refusal(405, "$", f"Use {' or '.join(methods)} here, not {request.method}.")
    response["Allow"] = ", ".join(methods)
    return response


def _bearer_token(request: HttpRequest) -> str | None:
    scheme, _, credentials = request.headers.get("Authorization", "").strip().partition(" ")
    credentials = credentials.strip()
    if scheme.lower() != "bearer" or not credentials or len(credentials) > MAX_CREDENTIAL_LENGTH:
        return None
    return credentials


def _unauthenticated(request: HttpRequest, *, offered: bool) -> JsonResponse:
    if offered:
        refusals.refused(
            refusals.API_TOKEN_INVALID, path=request.path, client=request.META.get("REMOTE_ADDR")
        )
        message = "This token is not valid: unknown, revoked, expired, or its user is deactivated."
        challenge = 'Bearer realm="crashdesk", error="invalid_token"'
    else:
        message = "Send your API token as 'Authorization: Bearer TOKEN'."
        challenge = 'Bearer realm="crashdesk"'
    response = problems.refusal(401, "Authorization", message)
    response["WWW-Authenticate"] = challenge
    return response


def _out_of_scope(request: HttpRequest, token, scope: str) -> JsonResponse:
    refusals.refused(
        refusals.API_TOKEN_OUT_OF_SCOPE, path=request.path, token=token.prefix, scope=scope
    )
    return problems.refusal(
        403,
        "Authorization",
        f"This token may not do this: it needs the scope {scope}, and it has "
        f"{', '.join(token.scopes) or 'none'}.",
    )


def _forbidden(user, allowed: tuple[str, ...]) -> JsonResponse:
    needed = " or ".join(roles.LABELS[role] for role in allowed)
    return problems.refusal(
        403,
        "Authorization",
        f"The user of this token ({user.get_username()}) may not do this; it needs the role "
        f"of {needed}.",
    )


def next_page(request: HttpRequest, *, after: str) -> str:
    """The absolute URL of the page after this one: the same query with ``after`` replaced."""
    query = request.GET.copy()
    query["after"] = after
    return request.build_absolute_uri(f"{request.path}?{urlencode(query, doseq=True)}")


# --- Error pages for /api/ paths -----------------------------------------------------------------


def _server_error_response() -> JsonResponse:
    return problems.refusal(500, "$", "Something went wrong on our side; it has been logged.")


def server_error(request: HttpRequest, *args, **kwargs):
    """handler500: JSON for API clients, the usual page for people."""
    if problems.is_api_request(request):
        return _server_error_response()
    return defaults.server_error(request, *args, **kwargs)


def page_not_found(request: HttpRequest, exception, *args, **kwargs):
    """handler404: JSON for API clients, the usual page for people."""
    if problems.is_api_request(request):
        return problems.refusal(404, "$", f"There is no API endpoint {request.path}.")
    return defaults.page_not_found(request, exception, *args, **kwargs)
