"""Words for the engine's remedy and decision-option codes (SNAPSHOT.md names the codes)."""

from django import template

register = template.Library()

REMEDY_LABELS = {
    "refund": "Refund everyone",
    "refund_even_split": "Refund and even split",
    "fpp_refund": "FPP refund",
    "reschedule": "Reschedule",
    "chip_equity": "Chip equity split",
    "chip_proportional": "Chip proportional split",
    "chip_position": "Chip position split",
    "satellite_rank": "Seats by chip rank",
}

REMEDY_TEXT = {
    "refund": (
        "Every entrant, eliminated or not, gets the buy-in and the fee back. Nothing else is "
        "paid, so no overlay either."
    ),
    "refund_even_split": (
        "Each player still in gets the buy-in and fee back, then the rest of the prize pool "
        "(the busted players' buy-ins and any overlay) is shared out equally among them. "
        "Busted players get nothing."
    ),
    "fpp_refund": "Every entrant gets the FPP they paid to enter back; no prize is paid.",
    "reschedule": (
        "The freeroll is run again on a new date for the invited players; nothing is paid now."
    ),
    "chip_equity": (
        "Each player still in first gets any guaranteed amount (the buy-in in the middle "
        "stage, the next payout once in the money); what is left of the pool is split half in "
        "proportion to chips and half equally, and nobody gets more than the first prize."
    ),
    "chip_proportional": (
        "The pool is split in proportion to chips among the players still in, and nobody gets "
        "more than one seat's value."
    ),
    "chip_position": (
        "Each player still in first gets the next payout; the rest is split half by the prize "
        "of each player's chip rank and half equally, capped at the first prize."
    ),
    "satellite_rank": (
        "Players still in are ranked by chips: the top ranks get a seat each, the next rank "
        "gets the leftover cash as T$, and players tied in chips share what their ranks are "
        "worth."
    ),
}

OPTION_LABELS = {
    "reschedule": "Reschedule",
    "no_reschedule": "Do not reschedule",
    "chip_equity": "Split by chip equity",
    "chip_proportional": "Split in proportion to chips",
}


@register.filter
def remedy_label(code: str) -> str:
    return REMEDY_LABELS.get(code, code)


@register.filter
def remedy_text(code: str) -> str:
    return REMEDY_TEXT.get(code, "")


@register.filter
def option_label(code: str) -> str:
    return OPTION_LABELS.get(code, code)


@register.filter
def options_sentence(codes) -> str:
    """["reschedule", "chip_equity"] -> "Reschedule or Split by chip equity"."""
    labels = [option_label(code) for code in codes]
    if len(labels) <= 1:
        return "".join(labels)
    return ", ".join(labels[:-1]) + " or " + labels[-1]
