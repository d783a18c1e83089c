"""Permission checks every view applies on the server (hiding a button is never enough)."""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils.http import urlencode
from django_htmx.http import HttpResponseClientRedirect

from settlements.access.roles import has_role


def role_required(*allowed: str):
    """Let through signed-in users holding one of ``allowed``; others get 403.

    Anonymous visitors are sent to the login page, coming back here afterwards. An htmx
    request from an expired session asks the browser to navigate there, rather than swapping
    a login form into part of a page.
    """
    if not allowed:
        raise ValueError("role_required needs at least one role")

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return _to_sign_in(request)
            if not has_role(request.user, *allowed):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


def _to_sign_in(request):
    if request.htmx:
        back_to = request.htmx.current_url_abs_path or "/"
        return HttpResponseClientRedirect(f"{reverse('login')}?{urlencode({'next': back_to})}")
    return redirect_to_login(request.get_full_path())
