"""The decision previews as the pages read them: the engine's settling of every option is
costly for a large field, so what it gives is kept in Django's cache under keys that hold
everything that decides it (selectors.preview_keys), and computed only when missing."""

from django.core.cache import cache

from settlements import selectors
from settlements.models import Case


def decision_previews(case: Case) -> list[selectors.DecisionPreview]:
    """A preview of every option the case's decision offers, in the rules' order."""
    return _decision_reads(case, compare=False).previews


def decision_page_reads(case: Case) -> selectors.DecisionReads:
    """The previews and, for a choice between two options, the per-player comparison."""
    return _decision_reads(case, compare=True)


def _decision_reads(case: Case, *, compare: bool) -> selectors.DecisionReads:
    keys = selectors.preview_keys(case, compare=compare)
    if not keys:
        return selectors.DecisionReads([], None)
    found = cache.get_many(list(keys.values()))
    missing = [name for name, key in keys.items() if key not in found]
    if missing:
        computed = {
            keys[name]: value
            for name, value in selectors.decision_reads_computed(case, missing).items()
        }
        cache.set_many(computed, selectors.PREVIEW_CACHE_SECONDS)
        found.update(computed)
    options = list(case.decision_options)
    return selectors.DecisionReads(
        previews=[found[keys[option]] for option in options],
        comparison=found.get(keys.get(selectors.COMPARISON, "")),
    )
