"""The names of the remedies the engine pays by and of the decision options it offers
(SNAPSHOT.md, `remedy` and `decision_options`): the one list of each.

The remedy table (`remedies.TABLE`) and the rulebook's formula keys (`policy`) are written with
these names, and the words, the API's enums and their tests read the lists, so a name added
here fails a test wherever a surface does not handle it yet (`tests/test_vocabularies.py`).
Plain strings rather than an enum: the names are stored, sealed and sent as they are.
"""

REFUND = "refund"
REFUND_EVEN_SPLIT = "refund_even_split"
FPP_REFUND = "fpp_refund"
RESCHEDULE = "reschedule"
CHIP_EQUITY = "chip_equity"
CHIP_PROPORTIONAL = "chip_proportional"
CHIP_POSITION = "chip_position"
ICM = "icm"
SATELLITE_RANK = "satellite_rank"

# In SNAPSHOT.md's order.
REMEDIES = (
    REFUND,
    REFUND_EVEN_SPLIT,
    FPP_REFUND,
    RESCHEDULE,
    CHIP_EQUITY,
    CHIP_PROPORTIONAL,
    CHIP_POSITION,
    ICM,
    SATELLITE_RANK,
)

# An option is named for what it chooses: three of them are also the remedy they lead to.
NO_RESCHEDULE = "no_reschedule"

DECISION_OPTIONS = (RESCHEDULE, NO_RESCHEDULE, CHIP_EQUITY, CHIP_PROPORTIONAL)
