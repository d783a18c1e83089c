"""The access review's forms (views.access_review): the period it covers, and the note that
completes it. Apart from ``forms`` only for that module's length; the same rules hold."""

from datetime import date, timedelta

from django import forms
from django.conf import settings
from django.utils import timezone

from settlements import bounds
from settlements.forms import DomainErrorsMixin
from settlements.services.access_review import NOTE_MAX_LENGTH

DATE_INPUT = forms.DateInput(attrs={"type": "date"})


def default_period(last_review) -> tuple[date, date]:
    """From the day after the period the last review covered (or ACCESS_REVIEW_DAYS back, when
    there was none) to today."""
    today = timezone.localdate()
    if last_review is not None:
        start = date.fromisoformat(last_review.data["to"]) + timedelta(days=1)
    else:
        start = today - timedelta(days=settings.ACCESS_REVIEW_DAYS)
    return min(start, today), today


class AccessPeriodForm(DomainErrorsMixin, forms.Form):
    """The days whose grants and revocations are listed (both whole); read with GET."""

    start = forms.DateField(label="From", widget=DATE_INPUT)
    end = forms.DateField(label="To (inclusive)", widget=DATE_INPUT)

    def clean_start(self):
        return self._day("start")

    def clean_end(self):
        return self._day("end")

    def _day(self, name: str):
        day = self.cleaned_data[name]
        if problem := bounds.date_problem(day):
            raise forms.ValidationError(f"The day {problem}.")
        return day

    def clean(self):
        cleaned = super().clean()
        start, end = cleaned.get("start"), cleaned.get("end")
        if start and end and start > end:
            self.add_error("end", "The end date is before the start date.")
        return cleaned


class AccessReviewForm(AccessPeriodForm):
    note = forms.CharField(
        label="What you found",
        max_length=NOTE_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Kept with the review in the event log: what you checked, what you changed.",
    )
