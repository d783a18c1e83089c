"""The vocabularies the records share: tournament types, stages, units, sources, line kinds."""

from django.db import models

from settlements.money import UNITS


class TournamentType(models.TextChoices):
    REGULAR = "regular", "Regular"
    FREEROLL = "freeroll", "Freeroll"
    SATELLITE = "satellite", "Satellite"


class Stage(models.TextChoices):
    PRE = "pre", "Pre"
    EARLY = "early", "Early"
    MIDDLE = "middle", "Middle"
    LATE = "late", "Late"


# The units are money's (money.UNITS, their one list and order): Unit.CASH, Unit.TDOLLARS, …
Unit = models.TextChoices(
    "Unit",
    [(unit.upper(), (unit, label)) for unit, label in UNITS.items()],
    module=__name__,
)


class Source(models.TextChoices):
    POOL = "pool", "Prize pool"
    HOUSE = "house", "House"
    # The bounties on remaining players' heads (RULES.md §8): money the entries paid apart from
    # the prize pool.
    BOUNTY = "bounty", "Bounties"


class LineKind(models.TextChoices):
    REFUND_BUY_IN = "refund_buy_in", "Buy-in refund"
    REFUND_FEE = "refund_fee", "Fee refund"
    REFUND_BOUNTY = "refund_bounty", "Bounty refund"
    REFUND_FPP = "refund_fpp", "FPP refund"
    PRIZE = "prize", "Prize"
    TICKET = "ticket", "Seat ticket"
    BOUNTY = "bounty", "Bounty"
    COMPENSATION = "compensation", "Compensation"
    # A debit: the player gives back a prize given in error (negative in every export).
    PRIZE_WITHDRAWAL = "prize_withdrawal", "Prize withdrawal"
