"""The roles and who may do what: the one place each role set is written.

Roles are Django groups named after the constants below (created by data migrations);
``access.roles`` reads a user's roles, ``access.permissions`` answers each action from the sets
here, and the pages, the navigation and the state machines' queues name these sets rather than
listing roles again. Standard library only, so the state machines may import it too.

Every set is written out role by role: a role added to ``DESK_ROLES`` is a person at the desk
and nothing more until a set below names it.
"""

OPERATOR = "operator"
MARKETING_MANAGER = "marketing_manager"
TOURNAMENT_MANAGER = "tournament_manager"
AUDITOR = "auditor"
# The wallet system's own user: it reads the ledger feed and confirms payments through the API.
CASHIER = "cashier"

LABELS = {
    OPERATOR: "Operator",
    MARKETING_MANAGER: "Marketing Manager",
    TOURNAMENT_MANAGER: "Tournament Manager",
    AUDITOR: "Auditor",
    CASHIER: "Cashier",
}

# The people at the desk: who signs in to the pages (the dashboard, the policy, their jobs).
DESK_ROLES = (OPERATOR, MARKETING_MANAGER, TOURNAMENT_MANAGER, AUDITOR)
# Every role the desk knows, the cashier's system account included.
KNOWN_ROLES = (*DESK_ROLES, CASHIER)

# Who reads the ledger, what is paid to whom line by line, wherever it is shown (the review
# page, statements, exports, the case API's documents): every desk person reviews settlements.
# The cashier reads lines through its feed alone.
LEDGER_READERS = (OPERATOR, MARKETING_MANAGER, TOURNAMENT_MANAGER, AUDITOR)
# What each player is paid is their lines summed: the same people, named for the pages that
# show amounts (the review page, its explain panel, the players page).
AMOUNT_READERS = LEDGER_READERS
# Who follows payments on the pages (reconciliation, the payments queue, the batch download).
PAYMENT_READERS = (OPERATOR, TOURNAMENT_MANAGER, AUDITOR)
# Who reports a crash and loads its snapshots, prepares settlements from them and sends them
# for approval; the bulk work over those steps too (a sampled ICM second opinion is part of a
# prepare).
INCIDENT_REPORTERS = (OPERATOR,)
SNAPSHOT_LOADERS = (OPERATOR,)
SETTLEMENT_PREPARERS = (OPERATOR,)
SETTLEMENT_SUBMITTERS = (OPERATOR,)
# Who registers tournaments and closes incidents whose cases are done.
TOURNAMENT_REGISTRARS = (OPERATOR, TOURNAMENT_MANAGER)
INCIDENT_CLOSERS = (OPERATOR, TOURNAMENT_MANAGER)
# Who prepares an adjustment of an approved settlement and sends it for approval: a wider set
# than a settlement's, so the submit page lets in both and the permission tells them apart.
ADJUSTERS = (OPERATOR, TOURNAMENT_MANAGER)
# Who records the decision a case's options need (RULES.md: the Marketing Manager's choice).
DECISION_MAKERS = (MARKETING_MANAGER,)
# Who approves or rejects what moves money (settlements, adjustments, compensation, re-issues,
# prize withdrawals), never their own work (access.permissions: the four-eyes rule).
APPROVERS = (TOURNAMENT_MANAGER,)
# Who decides on a prize given in error, and opens and resolves individual cases.
PRIZE_WITHDRAWAL_DECIDERS = (TOURNAMENT_MANAGER,)
INDIVIDUAL_CASE_HANDLERS = (TOURNAMENT_MANAGER,)
# Who reads compensation proposals and their answers.
COMPENSATION_READERS = (OPERATOR, TOURNAMENT_MANAGER, AUDITOR)
# Who reads individual cases (their list and their compensation).
INDIVIDUAL_CASE_READERS = (OPERATOR, TOURNAMENT_MANAGER, AUDITOR)
COMPENSATION_PROPOSERS = (OPERATOR, TOURNAMENT_MANAGER)
CASE_WITHDRAWERS = (OPERATOR, TOURNAMENT_MANAGER)
REISSUE_PROPOSERS = (OPERATOR, TOURNAMENT_MANAGER)
# The wallet system reads the feed and confirms; nobody else does either.
CASHIERS = (CASHIER,)
# Who weighs the policy's amounts against the stacks' ICM values: the Tournament Manager, who
# judges injustice (RULES.md §6), and the auditor, who checks that judgement.
ICM_READERS = (TOURNAMENT_MANAGER, AUDITOR)
# Who reads the event log and its history pages, verifies the log and exports an incident's
# sealed record.
HISTORY_READERS = (AUDITOR,)
# Who reviews who holds which access (the access review), and records each review done.
ACCESS_REVIEWERS = (AUDITOR,)
# Who reads the history of a case's records (their versions) and its incident's timeline: the
# auditor, and the Tournament Managers, who approve what those records hold.
CASE_HISTORY_READERS = (TOURNAMENT_MANAGER, AUDITOR)
# Who reads the rulebooks, their versions and simulations: every desk person, as every case is
# settled under one. Tournament Managers propose, approve (another's) and withdraw versions.
RULEBOOK_READERS = (OPERATOR, MARKETING_MANAGER, TOURNAMENT_MANAGER, AUDITOR)
RULEBOOK_WRITERS = (TOURNAMENT_MANAGER,)
# Who must prove a second factor to sign in: those who approve money or read the whole record
# (superusers too, whatever their roles).
SECOND_FACTOR_HOLDERS = (TOURNAMENT_MANAGER, AUDITOR)
