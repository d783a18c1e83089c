"""What a case pays, in words, built from the engine's own table of cells and split terms.

One source for every page that explains a remedy (the case page, the settlement review, the
decision page and the crash policy page): the words follow the tournament type, the stage, the
remedy and the decision, and every guarantee or limit they mention is read from
``settlements.rules.split_terms`` rather than restated here, so a split is never described
with a floor or a cap the engine does not apply.
"""

from settlements.rules import Policy, SplitTerms, remedy_for, split_terms

# A label for each name of the engine's registry (rules.remedy_names), no more: held to it by
# tests/test_vocabularies.py.
REMEDY_LABELS = {
    "refund": "Refund everyone",
    "refund_even_split": "Refund and even split",
    "fpp_refund": "FPP refund",
    "reschedule": "Reschedule",
    "chip_equity": "Chip equity split",
    "chip_proportional": "Chip proportional split",
    "chip_position": "Chip position split",
    "satellite_rank": "Seats by chip rank",
    "icm": "ICM split",
}

OPTION_LABELS = {
    "reschedule": "Reschedule",
    "no_reschedule": "Do not reschedule",
    "chip_equity": "Split by chip equity",
    "chip_proportional": "Split in proportion to chips",
}

_STILL_IN = "player still holding chips"

_TICKETS = (
    "A prize worth at least one seat is paid as one seat ticket plus the excess in T$ (never "
    "more than one seat); a smaller prize is paid in T$."
)

_HOW = {
    "chip_equity": "half in proportion to chips and half equally",
    "chip_proportional": "in proportion to chips",
    "chip_position": "half by the prize each player's chip rank would win and half equally",
}

_FLOOR = {
    # "every buy-in": with rebuys a player paid several, and gets each of them back (§8).
    "buy_in": f"Each {_STILL_IN} first gets back every buy-in they paid.",
    "next_payout": (
        f"Each {_STILL_IN} first gets the prize of the lowest place still in play, which is "
        "what the next player knocked out would have won."
    ),
}

# Why nobody is guaranteed anything before a split without a floor, per tournament type.
_NO_FLOOR = {
    "freeroll": "Nothing is guaranteed before the split: a freeroll has no buy-in to give back.",
    "satellite": "Nothing is guaranteed before the split: no buy-in is given back.",
}

_CAP = {
    "first_prize": "the first prize",
    "one_seat": "the value of one seat",
}

_POOL = {
    "prize_pool": "the prize pool",
    "late_pool": (
        "the prize pool (less the prizes the tournament already paid to players knocked out "
        "in the money)"
    ),
}


def remedy_label(code: str | None) -> str:
    return REMEDY_LABELS.get(code or "", code or "")


def option_label(code: str | None) -> str:
    return OPTION_LABELS.get(code or "", code or "")


def policy_summary(policy: dict) -> str:
    """A recorded policy ({"pre_pct": 5, "early_pct": 25, "late_formula": "chip_equity"}) in
    words: "stage marks at 5 % and 25 %, late stage by chip equity split"."""
    words = [f"stage marks at {policy.get('pre_pct')} % and {policy.get('early_pct')} %"]
    if policy.get("late_formula"):
        words.append(f"late stage by {remedy_label(policy['late_formula']).lower()}")
    if icm_from := policy.get("final_table_icm"):
        words.append(f"ICM from {icm_from} players left in the money")
    # A recorded policy holds the other rulebook keys only where they differ from the default.
    words += [
        phrase
        for key, (value, phrase) in _RULEBOOK_PHRASES.items()
        if key in policy and policy[key] == value
    ]
    return ", ".join(words)


# RULES.md §9's keys with a single value other than the default: that value, in words.
_RULEBOOK_PHRASES = {
    "late_registration": ("refund", "full refund while late registration is open"),
    "guarantee_before_itm": ("house", "a guarantee's overlay paid only in the money"),
    "middle_formula": ("chip_proportional", "middle stage in proportion to chips"),
    "middle_floor": ("none", "no buy-in guaranteed in the middle stage"),
    "middle_fee_refund": (True, "fees back in the middle stage"),
    "bounty_refund": ("entry", "one entry's bounty back"),
    "satellite_prizes": ("cash", "satellite seats paid in cash"),
}


def policy_anchor(tournament_type: str, stage: str) -> str:
    """The id of a cell's section on the crash policy page."""
    return f"cell-{tournament_type}-{stage}"


def case_remedy(case) -> str | None:
    """The remedy the rules give a crash case, following its decision and its recorded policy;
    None while its decision is pending, and for an individual case."""
    if not case.is_crash or not case.stage:
        return None
    return remedy_for(
        case.tournament.type,
        case.stage,
        decision=case.decision or None,
        policy=Policy(**case.policy),
    )


def cap_name(tournament_type: str, stage: str, remedy: str | None) -> str:
    """ "the first prize" or "the value of one seat" where this remedy's split is capped, else
    an empty string."""
    terms = split_terms(tournament_type, stage, remedy) if remedy else None
    return _CAP[terms.cap] if terms and terms.cap else ""


def option_description(tournament_type: str, stage: str, option: str) -> str:
    """What choosing ``option`` pays, for the person who chooses it."""
    remedy = remedy_for(tournament_type, stage, decision=option)
    return describe(tournament_type, stage, remedy, decision=option)


def describe(
    tournament_type: str, stage: str, remedy: str | None, *, decision: str | None = None
) -> str:
    """Plain words for what ``remedy`` pays a ``tournament_type`` crashed at ``stage``.

    ``decision`` matters where two options lead to the same payments (a freeroll's early
    stage). An empty string for a remedy not chosen yet.
    """
    if not remedy:
        return ""
    terms = split_terms(tournament_type, stage, remedy)
    if remedy == "refund":
        return (
            "The tournament is called off as if it never ran: every entrant, including the "
            "players already knocked out, gets back in cash every buy-in and fee they paid, "
            "rebuys and add-ons included. No prize is paid, so no overlay from a guarantee is "
            "paid either."
        )
    if remedy == "fpp_refund":
        return _fpp_refund(stage, decision)
    if remedy == "reschedule":
        return (
            "Nothing is paid now, and the FPP buy-in is not given back: the freeroll is played "
            "again on a new date. By default the players who still had chips are invited."
        )
    if remedy == "satellite_rank":
        return (
            "The players still holding chips are ranked by chips. The top places, as many as "
            "the prize pool buys seats, are worth one seat each; the next place is worth the "
            "cash the seats leave over (if any); lower places are worth nothing. Players tied "
            "in chips share equally what their places are worth together. " + _TICKETS + " "
            "Players already knocked out get nothing, and no fee is given back."
        )
    if remedy == "icm":
        return (
            "The players still holding chips share the prizes of the places still in play by "
            "the Independent Chip Model: each gets the prize they would win on average if the "
            "tournament were played out, each player's chance of finishing first being their "
            "share of the chips, and so on down the places. Nobody gets less than the lowest "
            "of those prizes or more than the first. The amounts are exact, then rounded to "
            "the cent so that they add up to the prizes."
        )
    if terms.fees_refunded:
        words = (
            f"Each {_STILL_IN} gets back in cash every buy-in and fee they paid. What the "
            "prize pool holds beyond those buy-ins (the knocked-out players' buy-ins and any "
            "overlay) is then shared equally among them, with no cap. Players already knocked "
            "out get nothing."
        )
        return words + (" " + _TICKETS if tournament_type == "satellite" else "")
    return _split(tournament_type, stage, remedy, terms)


def _fpp_refund(stage: str, decision: str | None) -> str:
    if stage == "pre":
        return (
            "The freeroll is called off as if it never ran: every entrant, including the players "
            "already knocked out, gets back the FPP paid to enter. No prize is paid."
        )
    words = (
        "Every entrant, including the players already knocked out, gets back the FPP paid to "
        "enter, and no prize is paid."
    )
    if decision == "reschedule":
        return words + (
            " The freeroll is announced again for a new date; every entrant is invited unless "
            "the Marketing Manager names the players."
        )
    if decision == "no_reschedule":
        return words + " The freeroll is not announced again."
    return words + " The Marketing Manager decides whether the freeroll is announced again."


def _split(tournament_type: str, stage: str, remedy: str, terms: SplitTerms) -> str:
    sentences = []
    pool = _POOL[terms.pool]
    if terms.floor:
        sentences.append(_FLOOR[terms.floor])
        sentences.append(f"The rest of {pool} is then shared among them, {_HOW[remedy]}.")
    else:
        sentences.append(_NO_FLOOR[tournament_type])
        sentences.append(
            f"All of {pool} is shared among the players still holding chips, {_HOW[remedy]}."
        )
    if terms.cap:
        sentences.append(
            f"Nobody gets more than {_CAP[terms.cap]}; what a capped player would have had "
            "above it is shared among the others in the same way."
        )
    if tournament_type == "satellite":
        sentences.append(_TICKETS)
    if stage == "late":
        sentences.append(
            "Players knocked out in the money keep what the tournament paid them and are not "
            "paid again."
        )
    else:
        sentences.append("Players already knocked out get nothing.")
    if tournament_type == "freeroll":
        sentences.append("No FPP is given back.")
    elif not terms.fees_refunded:
        sentences.append("No fee is given back.")
    return " ".join(sentences)
