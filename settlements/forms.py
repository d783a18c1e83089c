"""Forms of the web screens: they read and tidy what a person typed; the services decide.

A service refusal (``DomainError``) carries the field it concerns, so views hand it back to
the form with ``add_domain_error`` and the message appears next to that field.
"""

from django import forms
from django.conf import settings
from django.utils import timezone

from settlements.errors import DomainError


class DomainErrorsMixin:
    def add_domain_error(self, error: DomainError) -> None:
        field = error.field if error.field in self.fields else None
        self.add_error(field, error.message)


class IncidentForm(DomainErrorsMixin, forms.Form):
    title = forms.CharField(
        max_length=200,
        help_text="What went down, e.g. “Game server cluster B outage”.",
    )
    started_at = forms.DateTimeField(
        label="Started at",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M"],
    )
    description = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Optional: what is known so far, ticket numbers, who is investigating.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The browser sends a wall-clock time without a zone; it is read in the site's zone,
        # which every page also shows times in, so say which one that is.
        self.fields[
            "started_at"
        ].help_text = (
            f"When players were first cut off, in {timezone.get_current_timezone_name()} time."
        )

    def clean_started_at(self):
        started_at = self.cleaned_data["started_at"]
        if started_at > timezone.now():
            raise forms.ValidationError("An incident cannot start in the future.")
        return started_at


class SnapshotForm(DomainErrorsMixin, forms.Form):
    """A snapshot as a file or as pasted JSON; exactly one of the two."""

    file = forms.FileField(
        required=False,
        label="Snapshot file",
        help_text="The JSON file the game server exported at the crash.",
        widget=forms.ClearableFileInput(attrs={"accept": ".json,application/json"}),
    )
    text = forms.CharField(
        required=False,
        strip=False,
        label="Or paste the snapshot",
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false", "autocomplete": "off"}),
    )

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("file")
        text = cleaned.get("text") or ""
        if upload and text.strip():
            raise forms.ValidationError(
                "Give the snapshot once: choose a file or paste it, not both."
            )
        if not upload and not text.strip():
            raise forms.ValidationError("Choose the snapshot file or paste its JSON.")
        limit = settings.SNAPSHOT_MAX_BYTES
        size = upload.size if upload else len(text.encode())
        if size > limit:
            raise forms.ValidationError(
                f"The snapshot is {size:,} bytes; the limit is {limit:,} bytes."
            )
        return cleaned

    @property
    def snapshot(self) -> bytes | str:
        """The document to hand to the service (call after is_valid())."""
        upload = self.cleaned_data.get("file")
        if upload:
            return b"".join(upload.chunks())
        return self.cleaned_data["text"]

    @property
    def source_name(self) -> str:
        upload = self.cleaned_data.get("file") if hasattr(self, "cleaned_data") else None
        return upload.name if upload else ""
