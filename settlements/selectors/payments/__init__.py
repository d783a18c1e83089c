"""The payments reads, by what they answer: ``lines`` (the approved lines in the feed's order,
and the lines named by their idempotency keys), ``reconciliation`` (totals, the tallies, what
became of each line, paid exactly once), ``queues`` (failed lines, overdue releases, proposed
re-issues, prizes taken back) and ``states`` (each line's payment state, a player's totals).
Callers import the module that holds a read.
"""
