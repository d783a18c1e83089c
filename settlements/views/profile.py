"""The signed-in user's own settings.

GET/POST /settings/                 the time zone their pages show times in
GET/POST /settings/digest           how often they are emailed what waits for them, or never
GET      /settings/sessions/        where they are signed in
POST     /settings/sessions/end     end one of those sessions (``session``) or all (``all``)

Only for the desk roles, like every other page: the cashier and a user without a role open
no page, so a settings page would only tell them the desk exists.
"""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe

from settlements.access import roles
from settlements.access.decorators import role_required
from settlements.errors import DomainError, NotAllowed
from settlements.forms import DomainErrorsMixin
from settlements.middleware import remember_time_zone
from settlements.models import DigestEvery
from settlements.selectors import digests
from settlements.selectors.profiles import profile_time_zone, signed_in_sessions
from settlements.services import profiles, sessions
from settlements.views.rendering import go_to, render_invalid, render_page


class TimeZoneForm(DomainErrorsMixin, forms.Form):
    time_zone = forms.ChoiceField(
        required=False,
        label="Time zone",
        help_text="Every date and time on your pages is shown in this zone, with its name. "
        "Exports and the API stay in UTC.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["time_zone"].choices = [
            ("", f"The site's zone ({settings.TIME_ZONE})"),
            *((name, name) for name in profiles.time_zone_names()),
        ]


@role_required(*roles.DESK_ROLES)
def user_settings(request):
    chosen = profile_time_zone(request.user)
    form = TimeZoneForm(request.POST or None, initial={"time_zone": chosen})
    context = {
        "form": form,
        "now": timezone.now(),
        "digest_form": DigestForm(initial={"digest_every": digests.digest_every(request.user)}),
        "email": request.user.email,
    }
    template = "settlements/user_settings.html"
    if request.method != "POST":
        return render_page(request, template, context, partial="settings_form")
    if form.is_valid():
        try:
            profile = profiles.profile_set_time_zone(
                user=request.user, actor=request.user, time_zone=form.cleaned_data["time_zone"]
            )
        except DomainError as error:
            form.add_domain_error(error)
        else:
            remember_time_zone(request, profile.time_zone)
            zone = profile.time_zone or settings.TIME_ZONE
            messages.success(request, f"Times are now shown in {zone} time.")
            return go_to(request, reverse("user_settings"))
    return render_invalid(request, template, context, partial="settings_form")


class DigestForm(DomainErrorsMixin, forms.Form):
    digest_every = forms.TypedChoiceField(
        coerce=int,
        choices=DigestEvery.choices,
        label="Email me what waits for me",
        help_text="When something starts waiting for you (a settlement to approve, a decision "
        "to make…), one email lists it with a link to where you answer it. Never more often "
        "than you choose here.",
    )


@role_required(*roles.DESK_ROLES)
def user_digest(request):
    """The email digest's setting: how often at most, or never."""
    every = digests.digest_every(request.user)
    form = DigestForm(request.POST or None, initial={"digest_every": every})
    context = {"digest_form": form, "email": request.user.email}
    template = "settlements/user_settings.html"
    if request.method != "POST":
        return render_page(request, template, context, partial="digest_form")
    if form.is_valid():
        try:
            profiles.profile_set_digest(
                user=request.user, actor=request.user, every=form.cleaned_data["digest_every"]
            )
        except DomainError as error:
            form.add_domain_error(error)
        else:
            label = DigestEvery(form.cleaned_data["digest_every"]).label
            messages.success(request, f"Email digests: {label[0].lower()}{label[1:]}.")
            return go_to(request, reverse("user_settings"))
    return render_invalid(request, template, context, partial="digest_form")


@require_safe
@role_required(*roles.DESK_ROLES)
def user_sessions(request):
    context = {
        "sessions": signed_in_sessions(request.user),
        "current": request.session.session_key,
    }
    return render_page(request, "settlements/user_sessions.html", context, partial="sessions")


@require_POST
@role_required(*roles.DESK_ROLES)
def user_sessions_end(request):
    if request.POST.get("all"):
        sessions.user_sessions_end(user=request.user, actor=request.user)
        # This browser's session went with the others: start it afresh, signed out.
        request.session.flush()
        return go_to(request, reverse("login"))
    key = request.POST.get("session", "")
    try:
        sessions.session_end(user=request.user, session_key=key)
    except NotAllowed as refusal:
        messages.error(request, refusal.message)
        return go_to(request, reverse("user_sessions"))
    if key == request.session.session_key:
        request.session.flush()
        return go_to(request, reverse("login"))
    messages.success(request, "That browser is signed out.")
    return go_to(request, reverse("user_sessions"))
