"""Every write of the workflow: one function per business event, one module per part of the
business (incidents, snapshots, decisions, settlements, compensation, individual cases,
payments, tokens).

Each service is atomic, takes keyword-only arguments, locks the rows it moves in the one lock
order below, asks ``settlements.access.permissions`` whether the actor may act on them now
(roles, the four-eyes rule, the state machine of ``settlements.workflow``) and raises its
refusal, records the history user and reason on every versioned row it saves, and writes one
``Event`` row in the same transaction; the structured log line follows once the transaction
commits.

The lock order. Every service takes the locks it needs in this order, skipping those it does
not need, so that no two ever wait on each other in opposite order:

1. a job's items (``jobs.job_claim``, SKIP LOCKED: it never waits), then the business rows
   (a batch of items takes those of all its items first, ``batches.lock_batch``);
2. the incident: shared (FOR KEY SHARE) by whatever points at it, for update to close it;
3. the tournament, when a load registers or updates it;
4. the case: for update (``common.lock_case``, ``lock_case_of``, ``lock_settlement``), or
   shared where only a link to it is written (``common.hold_parents``, which shares the
   incident first);
5. the case's records: its settlements, compensation, prize withdrawals and re-issues;
6. the ledger rows: the payment tallies of releases, in release order;
7. the ledger feed's order (``payments.hold_feed_order``, taken by ``payments.release_lines``)
   held to the commit;
8. last, the event chain's lock (``audit_log.hold_chain``, taken by ``record_event``), held to
   the commit, when the foreign keys written are checked against the rows of 2 to 4, already
   held.

Services return fresh objects: an instance passed in may be stale after the call.
Refusals raise ``DomainError`` subclasses (see ``settlements.errors``); an invalid snapshot
raises the engine's ``InvalidInput`` with every problem and its path.
"""
