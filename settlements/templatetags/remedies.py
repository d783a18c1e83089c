"""Words for the engine's remedy and decision-option codes (SNAPSHOT.md names the codes), and
the remedy of a case or settlement described for its type and stage (settlements.wording)."""

from django import template
from django.urls import reverse

from settlements import wording
from settlements.models import Case, Settlement

register = template.Library()


@register.filter
def remedy_label(code: str) -> str:
    return wording.remedy_label(code)


@register.filter
def option_label(code: str) -> str:
    return wording.option_label(code)


@register.filter
def options_sentence(codes) -> str:
    """["reschedule", "chip_equity"] -> "Reschedule or Split by chip equity"."""
    labels = [option_label(code) for code in codes]
    if len(labels) <= 1:
        return "".join(labels)
    return ", ".join(labels[:-1]) + " or " + labels[-1]


def _cell(subject: Case | Settlement) -> tuple[str, str, str | None, str | None]:
    """(type, stage, remedy, decision) of a crash case or of a settlement."""
    if isinstance(subject, Settlement):
        case = subject.case
        return case.tournament.type, subject.stage, subject.remedy, subject.decision or None
    return subject.tournament.type, subject.stage, wording.case_remedy(subject), subject.decision


@register.simple_tag
def remedy_wording(subject: Case | Settlement) -> str:
    """{% remedy_wording case %} or {% remedy_wording settlement %}: what it pays, in words."""
    kind, stage, remedy, decision = _cell(subject)
    return wording.describe(kind, stage, remedy, decision=decision or None)


@register.simple_tag
def policy_url(subject: Case | Settlement) -> str:
    """The crash policy page at the section on this case's type and stage."""
    kind, stage, _, _ = _cell(subject)
    return f"{reverse('policy')}#{wording.policy_anchor(kind, stage)}"


@register.simple_tag
def split_cap(settlement: Settlement) -> str:
    """{% split_cap settlement as cap %}: what its split capped payouts at, if anything."""
    kind, stage, remedy, _ = _cell(settlement)
    return wording.cap_name(kind, stage, remedy)
