"""The decision previews as the pages read them: the engine's settling of every option is
costly for a large field, so what it gives is kept in Django's cache under keys that hold
everything that decides it (selectors.preview_keys), and computed only when missing."""

from django.core.cache import cache

from settlements.models import Case
from settlements.selectors import previews


def decision_previews(case: Case) -> list[previews.DecisionPreview]:
    """A preview of every option the case's decision offers, in the rules' order."""
    return decision_previews_of([case])[case.pk]


def decision_previews_of(cases) -> dict[int, list[previews.DecisionPreview]]:
    """``decision_previews`` of each of ``cases`` by id, read from the cache in one go: the
    bulk decision page shows a page of cases, and the cache is a table."""
    return {pk: reads.previews for pk, reads in _decision_reads(cases, compare=False).items()}


def option_totals(cases, option: str) -> previews.OptionTotals:
    """What ``option`` pays over all of ``cases``, from their previews: one read of the cases
    and one of the cache, the engine run only for a case whose preview is not kept yet."""
    cases = list(cases)
    return previews.option_totals(cases, decision_previews_of(cases), option)


def decision_page_reads(case: Case) -> previews.DecisionReads:
    """The previews and, for a choice between two options, the per-player comparison."""
    return _decision_reads([case], compare=True)[case.pk]


def _decision_reads(cases, *, compare: bool) -> dict[int, previews.DecisionReads]:
    keys = {case.pk: previews.preview_keys(case, compare=compare) for case in cases}
    found = cache.get_many([key for of_case in keys.values() for key in of_case.values()])
    computed = {}
    for case in cases:
        missing = [name for name, key in keys[case.pk].items() if key not in found]
        if missing:
            computed.update(
                (keys[case.pk][name], value)
                for name, value in previews.decision_reads_computed(case, missing).items()
            )
    if computed:
        cache.set_many(computed, previews.PREVIEW_CACHE_SECONDS)
        found.update(computed)
    return {
        case.pk: previews.DecisionReads(
            previews=[found[keys[case.pk][option]] for option in case.decision_options],
            comparison=found.get(keys[case.pk].get(previews.COMPARISON, "")),
        )
        for case in cases
    }
