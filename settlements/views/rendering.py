"""How every view answers: the whole page for a normal request, one partial for htmx.

A page template defines one ``{% partialdef %}`` per swap target. An htmx request gets
``"page.html#partial"``; a history-restore request (the browser going back to a URL whose
page htmx did not keep) gets the whole page, because htmx swaps it in as the page body.

A page with several swap targets passes ``partial`` as a mapping from the target element's
id (htmx sends it as HX-Target) to the partial's name; the first entry is the default.
"""

from collections.abc import Mapping

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import patch_vary_headers
from django_htmx.http import HttpResponseClientRedirect


def wants_partial(request: HttpRequest) -> bool:
    return bool(request.htmx) and not request.htmx.history_restore_request


def render_page(
    request: HttpRequest,
    template_name: str,
    context: dict,
    *,
    partial: str | Mapping[str, str],
    status: int = 200,
) -> HttpResponse:
    if wants_partial(request):
        if isinstance(partial, Mapping):
            partial = partial.get(request.htmx.target or "", next(iter(partial.values())))
        template_name = f"{template_name}#{partial}"
    response = render(request, template_name, context, status=status)
    # The same URL answers with a page or a fragment; caches must keep them apart.
    patch_vary_headers(response, ["HX-Request"])
    return response


def render_invalid(
    request: HttpRequest, template_name: str, context: dict, *, partial: str | Mapping[str, str]
) -> HttpResponse:
    """Re-render a form with its errors: 422, which htmx is configured to swap in."""
    return render_page(request, template_name, context, partial=partial, status=422)


def go_to(request: HttpRequest, url: str) -> HttpResponse:
    """After a successful POST, navigate to ``url`` (a full page load, so the URL and the
    browser history follow the step)."""
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)
