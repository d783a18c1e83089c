"""Status and stage badges: a colour and always the word, never colour alone."""

from django import template
from django.utils.html import format_html

from settlements.workflow import CaseStatus, CompensationStatus, SettlementStatus

register = template.Library()

# Waiting on a person is amber, waiting on approval blue, done green, refused red; withdrawn
# (loaded in error, no longer in force) stays grey.
_TONES = {
    CaseStatus.AWAITING_DECISION: "warn",
    CaseStatus.READY: "neutral",
    CaseStatus.PREPARED: "neutral",
    CaseStatus.AWAITING_APPROVAL: "info",
    CaseStatus.APPROVED: "ok",
    CaseStatus.REJECTED: "danger",
    CaseStatus.OPEN: "warn",
    CaseStatus.RESOLVED: "ok",
    CaseStatus.WITHDRAWN: "neutral",
    CompensationStatus.PROPOSED: "info",
    # A background item's outcome (models.JobItem): a failure stands out in a long list.
    "failed": "danger",
    "done": "ok",
}
_LABELS = {
    **dict(CaseStatus.choices),
    **dict(SettlementStatus.choices),
    **dict(CompensationStatus.choices),
}


@register.simple_tag
def status_badge(record_or_status, label: str = ""):
    """{% status_badge case %} or {% status_badge "approved" %}: a badge for a status."""
    status = getattr(record_or_status, "status", record_or_status)
    display = getattr(record_or_status, "get_status_display", None)
    text = label or (display() if display else _LABELS.get(status, status))
    return format_html(
        '<span class="badge badge--{}" data-status="{}">{}</span>',
        _TONES.get(status, "neutral"),
        status,
        text,
    )


@register.simple_tag
def stage_badge(stage: str):
    if not stage:
        return ""
    return format_html(
        '<span class="badge badge--stage-{0}" data-stage="{0}">{1} stage</span>',
        stage,
        stage.capitalize(),
    )
