"""Reads of rulebooks: the version in force at a time, the versions waiting for approval."""

from datetime import datetime

from django.db.models import Prefetch

from settlements.models import Rulebook, RulebookVersion
from settlements.workflow import RulebookVersionStatus


def version_in_force(key: str, at: datetime) -> RulebookVersion | None:
    """The approved version of rulebook ``key`` in force at ``at``, or None (unknown rulebook,
    or ``at`` before its first version)."""
    return (
        RulebookVersion.objects.select_related("rulebook")
        .filter(
            rulebook__key=key,
            status=RulebookVersionStatus.APPROVED,
            effective_from__lte=at,
        )
        .order_by("-effective_from")
        .first()
    )


def latest_approved_version(rulebook: Rulebook) -> RulebookVersion | None:
    """The approved version of ``rulebook`` taking effect last, whether or not it has yet."""
    return (
        rulebook.versions.filter(status=RulebookVersionStatus.APPROVED)
        .order_by("-effective_from")
        .first()
    )


def rulebook_list():
    """Every rulebook with its versions and who proposed, approved or withdrew each."""
    versions = RulebookVersion.objects.select_related(
        "proposed_by", "approved_by", "withdrawn_by"
    ).order_by("-number")
    return Rulebook.objects.prefetch_related(Prefetch("versions", queryset=versions)).order_by(
        "key"
    )


def versions_awaiting_approval(user):
    """Proposed versions someone other than ``user`` proposed: theirs to approve."""
    return (
        RulebookVersion.objects.select_related("rulebook", "proposed_by")
        .filter(status=RulebookVersionStatus.PROPOSED)
        .exclude(proposed_by=user)
        .order_by("effective_from")
    )
