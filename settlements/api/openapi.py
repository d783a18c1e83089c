"""GET /api/v1/openapi.json: the API described as OpenAPI 3.1, generated on each request from
the route table (``urls``) and what each endpoint declares with ``api_endpoint`` (its roles and
the msgspec types it reads and answers with, ``answers``), so it cannot fall behind the code.

A route whose view declares nothing is left out, and ``tests/api/test_openapi.py`` fails on it.
"""

import inspect
import re
from functools import cache

import msgspec
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, get_resolver
from django.utils.cache import patch_cache_control
from django.views.decorators.csrf import csrf_exempt

from settlements import problems
from settlements.access import roles
from settlements.api.answers import Refusal
from settlements.api.base import Operation

PREFIX = "/api/v1/"
_REFS = "#/components/schemas/{name}"
_PARAMETER = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")
# Django's converters, as JSON Schema. An int matches digits only, so it is never negative.
_CONVERTERS = {"int": {"type": "integer", "minimum": 0}, "str": {"type": "string"}}

# Refusals any endpoint may give, besides those it declares.
_COMMON = {
    400: "The request does not fit: each problem at its path.",
    401: "No bearer token, or one that is unknown, revoked, or of a deactivated user.",
    403: "The token's user does not have a role this endpoint needs.",
    405: "Another method than those described here (the Allow header lists them).",
    500: "Something failed on the desk's side; it is logged.",
}
_DESCRIPTIONS = {
    200: "Done.",
    201: "Created.",
    404: "There is no such record.",
    409: "The request conflicts with what is on record.",
    411: "The Content-Length header is missing.",
    413: "The body is larger than the endpoint accepts.",
}

_INTRODUCTION = """\
The JSON API of CrashDesk for game servers, the cashier (the wallet system) and CRM or mailer
integrations. Every endpoint but this document needs `Authorization: Bearer TOKEN` (a token made
with `manage.py api_token create USER`); what a token may do is its user's role, given for each
operation (`x-roles`). Every refusal is `{"errors": [{"path", "message"}]}` (`Refusal`). Retry
rules, ordering and exactly-once guarantees are in the project's docs/api.md.
"""


@cache
def _document(server_url: str) -> bytes:
    # The routes are read from Django's resolver by the urlconf's name: the routes route to this
    # module's view, so importing them here would make a cycle.
    patterns = get_resolver("settlements.api.urls").url_patterns
    return msgspec.json.encode(build(patterns, server_url=server_url))


# Exempt so that another method is answered 405, not refused by the CSRF check: the document is
# only read, and the API takes no cookie.
@csrf_exempt
def openapi(request: HttpRequest) -> HttpResponse:
    """This API, described as OpenAPI 3.1.

    Anyone may read it: it holds no data of the desk."""
    if request.method not in ("GET", "HEAD"):
        response = problems.refusal(405, "$", f"Use GET here, not {request.method}.")
        response["Allow"] = "GET, HEAD"
        return response
    response = HttpResponse(
        _document(request.build_absolute_uri(PREFIX).rstrip("/")),
        content_type="application/json",
    )
    patch_cache_control(response, no_cache=True)
    return response


openapi.operation = Operation(("GET", "HEAD"), (), {200: dict})


def build(patterns: list[URLPattern], *, server_url: str) -> dict:
    """The OpenAPI document of the endpoints routed by ``patterns`` (under ``PREFIX``)."""
    types: list[type] = [Refusal]
    paths: dict[str, dict] = {}
    names = {pattern.name: path_of(pattern)[0] for pattern in patterns}
    for pattern in patterns:
        operation = getattr(pattern.callback, "operation", None)
        if operation is None:
            continue
        path, parameters = path_of(pattern)
        item = paths.setdefault(path, {})
        for method in operation.methods:
            item[method.lower()] = _operation(pattern, operation, parameters, method, types, names)
    schemas = _components(types)
    return {
        "openapi": "3.1.0",
        "info": {"title": "CrashDesk API", "version": "1", "description": _INTRODUCTION},
        "servers": [{"url": server_url}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A token from `manage.py api_token create USER`.",
                }
            },
        },
        "security": [{"bearer": []}],
    }


def path_of(pattern: URLPattern) -> tuple[str, list[dict]]:
    """The OpenAPI path of a route (``cases/<int:case_id>`` -> ``/cases/{case_id}``), and its
    path parameters."""
    route = str(pattern.pattern)
    parameters = [
        {
            "name": match["name"],
            "in": "path",
            "required": True,
            "schema": _CONVERTERS[match["converter"] or "str"],
        }
        for match in _PARAMETER.finditer(route)
    ]
    return "/" + _PARAMETER.sub(r"{\g<name>}", route), parameters


def _operation(pattern, operation: Operation, path_parameters, method, types, names) -> dict:
    view = pattern.callback
    summary, _, details = (inspect.getdoc(view) or "").partition("\n\n")
    needs = [roles.LABELS[role] for role in operation.allowed]
    description = "\n\n".join(
        part
        for part in (
            details.replace("``", "`"),
            f"Needs a token with the scope `{operation.scope}` and the role of "
            f"{' or '.join(needs)}."
            if needs
            else "Needs no token.",
        )
        if part
    )
    answers = dict(operation.answers)
    if operation.allowed:
        answers = {status: Refusal for status in _COMMON} | answers
    result = {
        "operationId": pattern.name if method != "HEAD" else f"{pattern.name}_head",
        "summary": " ".join(summary.replace("``", "`").split()).rstrip("."),
        "description": description,
        "x-roles": list(operation.allowed),
        "x-scope": operation.scope,
        "parameters": path_parameters + _query_parameters(operation.query),
        "responses": {
            str(status): _response(status, type_, method, operation, types, names)
            for status, type_ in sorted(answers.items())
        },
    }
    if not operation.allowed:
        result["security"] = []
    if operation.body is not None:
        types.append(operation.body)
        content = {"schema": {"$ref": _ref(operation.body)}}
        if operation.example is not None:
            content["example"] = operation.example
        result["requestBody"] = {"required": True, "content": {"application/json": content}}
    return result


def _response(status, type_, method, operation, types, names) -> dict:
    response: dict = {"description": _COMMON.get(status) or _DESCRIPTIONS.get(status, "")}
    if method != "HEAD" and (media_type := getattr(type_, "media_type", None)):
        response["content"] = {media_type: {"schema": {"type": "string", "format": "binary"}}}
    elif method != "HEAD":
        if type_ is dict:
            schema = {"type": "object"}
        else:
            types.append(type_)
            schema = {"$ref": _ref(type_)}
        response["content"] = {"application/json": {"schema": schema}}
    links = operation.links.get(status) if method != "HEAD" else None
    if links:
        response["links"] = {
            name: {"operationId": target, "parameters": parameters}
            for name, (target, parameters) in links.items()
            if target in names
        }
    return response


def _query_parameters(query: type | None) -> list[dict]:
    if query is None:
        return []
    (schema,), components = msgspec.json.schema_components([query], ref_template=_REFS)
    struct = components[schema["$ref"].rsplit("/", 1)[1]] if "$ref" in schema else schema
    required = set(struct.get("required", ()))
    return [
        {
            "name": name,
            "in": "query",
            "required": name in required,
            "schema": _inline(prop, components),
            **({"description": prop["description"]} if "description" in prop else {}),
        }
        for name, prop in struct["properties"].items()
    ]


def _inline(schema: dict, components: dict) -> dict:
    """A parameter's schema with its references replaced by what they name (a parameter's
    choices read better in place), and without null: a parameter left out is the null."""
    if "$ref" in schema:
        return _inline(components[schema["$ref"].rsplit("/", 1)[1]], components)
    kept = {key: value for key, value in schema.items() if key not in ("default", "title")}
    if schema.get("default") is not None:
        kept["default"] = schema["default"]
    if "anyOf" in kept:
        options = [_inline(item, components) for item in kept.pop("anyOf")]
        options = [option for option in options if option.get("type") != "null"]
        if len(options) == 1:
            return options[0] | kept
        kept["anyOf"] = options
    return kept


def _components(types: list[type]) -> dict:
    unique = list(dict.fromkeys(types))
    _, components = msgspec.json.schema_components(unique, ref_template=_REFS)
    renamed = {
        _name(name): schema | ({"title": _name(schema["title"])} if "title" in schema else {})
        for name, schema in components.items()
    }
    return msgspec.json.decode(_rename_refs(msgspec.json.encode(renamed), components))


def _rename_refs(encoded: bytes, components: dict) -> bytes:
    text = encoded.decode()
    for name in components:
        text = text.replace(f'"{_REFS.format(name=name)}"', f'"{_REFS.format(name=_name(name))}"')
    return text.encode()


def _ref(type_: type) -> str:
    (schema,), _ = msgspec.json.schema_components([type_], ref_template=_REFS)
    return _REFS.format(name=_name(schema["$ref"].rsplit("/", 1)[1]))


def _name(name: str) -> str:
    """A component's public name: the parser's private document types (``_SnapshotDoc``) are
    named for what they describe (``Snapshot``)."""
    return name.lstrip("_").removesuffix("Doc")
