"""The JSON API's answers, refusals included, for the API and for the middleware that refuses
API requests before any view runs.

A refusal is ``{"errors": [{"path": ..., "message": ...}]}`` where ``path`` is the snapshot
path of the problem ("$" for the whole document), ``?name`` for a query parameter, or
``Authorization`` for the credentials; a problem in a snapshot's player row also names the
player. This module imports no view and no part of the API, so the middleware can use it.
"""

from collections.abc import Iterable

from django.http import HttpRequest, JsonResponse
from django.utils.cache import patch_cache_control

from settlements.rules import Problem

API_PREFIX = "/api/"


def is_api_request(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def json_response(data: dict, *, status: int = 200) -> JsonResponse:
    response = JsonResponse(data, status=status, json_dumps_params={"ensure_ascii": False})
    # Cases and settlements are confidential and change: no cache may keep them.
    patch_cache_control(response, no_store=True, private=True)
    return response


def errors(problems: Iterable[Problem]) -> list[dict]:
    """``problems`` as the envelope's ``errors``: also each refused item's, in a batch answered
    item by item (the cashier's confirmations)."""
    listed = []
    for problem in problems:
        error = {"path": problem.path, "message": problem.message}
        if problem.player is not None:
            error["player"] = problem.player
        listed.append(error)
    return listed


def problems_response(status: int, problems: Iterable[Problem], **extra) -> JsonResponse:
    """The refusal listing ``problems``, with ``extra`` top-level fields after ``errors``."""
    return json_response({"errors": errors(problems), **extra}, status=status)


def refusal(status: int, path: str, message: str, **extra) -> JsonResponse:
    """The refusal for one problem at ``path``."""
    return problems_response(status, [Problem(path, message)], **extra)


def snapshot_too_large(size: int, limit: int) -> JsonResponse:
    return refusal(413, "$", f"The snapshot is {size:,} bytes; the limit is {limit:,} bytes.")
