"""The event log is a hash chain that seals the ledgers, items and snapshots it refers to."""

import hashlib
import json

import pytest
from django.core.management import call_command
from django.db import connection
from msgspec.structs import astuple

from settlements import audit_log, seal_formats, seals
from settlements.models import CasePlayer, Event, Settlement, SettlementPayout
from settlements.rules import Line
from settlements.services.compensation import CompensationEntry, compensation_propose
from settlements.services.incidents import incident_report
from settlements.services.settlements import SETTLEMENT_PAYOUT_FIELDS
from settlements.services.snapshots import ENTRANT_ROW
from tests.services.helpers import approved, load
from tests.services.test_concurrency import race

pytestmark = pytest.mark.django_db


@pytest.fixture
def settled(users, snapshot_factory) -> Settlement:
    settlement = approved(users["operator"], users["tournament_manager"], snapshot_factory)
    compensation_propose(
        case=settlement.case,
        actor=users["operator"],
        reason="lag",
        entries=[CompensationEntry(player="p000001", amount=250)],
    )
    return settlement


def test_events_are_numbered_and_chained_from_the_genesis(settled):
    events = list(Event.objects.order_by("seq"))
    assert [event.seq for event in events] == list(range(1, len(events) + 1))
    previous = audit_log.GENESIS
    for event in events:
        assert event.prev_hash == previous
        assert event.hash == hashlib.sha256(audit_log.canonical(event)).hexdigest()
        previous = event.hash
    assert audit_log.head() == (len(events), previous)


def test_an_event_seals_the_ledger_it_refers_to(settled):
    lines = settled.lines.order_by("line_no").values_list(
        "line_no", "player", "kind", "unit", "amount", "source", "reversal"
    )
    ledger = audit_log.ledger_digest(lines)
    assert settled.ledger_digest == ledger
    approval = Event.objects.get(type="settlement_approved")
    assert approval.subject_facts["ledger"] == ledger
    assert approval.subject_facts["totals"] == settled.totals
    loaded = Event.objects.get(type="snapshot_loaded")
    assert loaded.subject_facts["snapshot"] == settled.case.snapshot.sha256
    proposal = Event.objects.get(type="compensation_proposed")
    assert proposal.subject_facts["totals"] == {"cash": 250}


def test_the_ledger_digest_tells_field_boundaries_apart():
    one = audit_log.ledger_digest([(1, "ab", "prize", "cash", 5, "pool", False)])
    other = audit_log.ledger_digest([(1, "a", "bprize", "cash", 5, "pool", False)])
    assert one != other
    assert audit_log.ledger_digest([]) == hashlib.sha256(b"").hexdigest()


def test_a_new_settlements_ledger_digest_is_the_digest_of_its_rows():
    # More lines than one chunk, and ids with a tab and a colon, which the length prefix keeps.
    lines = [
        Line(player=f"p\t{i}:x", kind="prize", unit="cash", amount=i + 1, source="pool")
        for i in range(20_001)
    ]
    rows = [(no, *astuple(line), False) for no, line in enumerate(lines, start=1)]
    assert audit_log.new_ledger_digest(lines) == audit_log.ledger_digest(rows)
    # The bytes themselves, as every settlement was sealed with.
    first = "1\t5:p\t0:x\tprize\tcash\t1\tpool\t0\n"
    assert audit_log.new_ledger_digest(lines[:1]) == hashlib.sha256(first.encode()).hexdigest()
    assert audit_log.new_ledger_digest([]) == audit_log.ledger_digest([])


def test_verify_audit_prints_the_count_and_the_head(settled, capsys):
    call_command("verify_audit")
    count, head = audit_log.head()
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"{count} events verified; head {head}"
    assert printed[1].startswith("Read: the whole chain read. Checkpoint #")


def test_verification_from_a_verified_event_checks_only_what_follows(settled, users):
    count, head = audit_log.head()
    incident_report(actor=users["operator"], title="later", started_at=settled.prepared_at)
    result = audit_log.verify(after=(count, head))
    assert result.ok and result.count == count + 1
    assert not audit_log.verify(after=(count, "f" * 64)).ok


def test_canonical_content_covers_every_field(settled):
    event = Event.objects.get(type="settlement_approved")
    content = json.loads(audit_log.canonical(event))
    assert set(content) == {
        "seq",
        "prev",
        "type",
        "at",
        "actor",
        "incident",
        "case",
        "tournament",
        "subject",
        "reason",
        "data",
        "facts",
        "seal_format",
    }


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="writers overlap on PostgreSQL only")
def test_concurrent_writers_extend_one_chain(users, snapshot_factory):
    outcomes = race(
        *[
            lambda n=n: load(users["operator"], snapshot_factory, tournament_id=f"RACE-{n}")
            for n in range(6)
        ]
    )
    assert not [outcome for outcome in outcomes if isinstance(outcome, Exception)]
    result = audit_log.verify()
    assert result.ok, result.problem
    assert result.count == Event.objects.count()


def test_an_event_seals_the_rows_it_rests_on_as_digests_of_the_rows(settled):
    """What the services digest as they write is what the rows give back when read: in the
    current seal format, each value tagged and length-prefixed; in format 1, as the reprs of
    the rows (what events sealed before formats were recorded, verified as format 1)."""
    case = settled.case
    rows = case.entries.order_by("position").values_list("case", *seals.ENTRANT_FIELDS)
    current = seal_formats.get()
    text = current.header(seal_formats.ENTRANTS) + "".join(map(seal_formats.encode_row, rows))
    loaded = Event.objects.get(type="snapshot_loaded")
    assert loaded.seal_format == current.version
    assert loaded.subject_facts["entrant_rows"] == hashlib.sha256(text.encode()).hexdigest()
    assert seals.entrant_digests([case.pk]) == {case.pk: loaded.subject_facts["entrant_rows"]}
    digest = seals.Digest(repr)
    for row in rows:
        digest.add(row)
    assert seals.entrant_digests([case.pk], 1) == {case.pk: digest.hexdigest()}
    prepared = Event.objects.get(type="settlement_prepared")
    assert seals.payout_digests([settled.pk]) == {settled.pk: prepared.subject_facts["payout_rows"]}
    approval = Event.objects.get(type="settlement_approved")
    assert approval.subject_facts["approved_by"] == settled.approved_by_id
    assert approval.subject_facts["release"]["line_count"] == settled.line_count
    assert set(approval.subject_facts["history"]) == {
        f"settlement:{settled.pk}",
        f"case:{case.pk}",
    }


@pytest.mark.parametrize(
    ("model", "fields", "row"),
    [
        (CasePlayer, ENTRANT_ROW, (7, 0, 'it\'s \\ "é"', 10**15, 3, 1, 0)),
        (
            SettlementPayout,
            SETTLEMENT_PAYOUT_FIELDS,
            (9, 2, "p'1", 0, 125, 0, 1, 0, None, "1/3", "", True, -1, "2/5", 4, None),
        ),
    ],
)
def test_a_row_is_written_for_its_digest_as_its_repr(model, fields, row):
    """Seals taken with repr before the columns' format was read off the schema still match."""
    assert seals.row_repr(model, fields)(row) == repr(row)


# Three chunks of the digest and a short fourth.
PASSING = [(n, f"p{(n * 7919) % 65_003}") for n in range(65_003)]


def digest_of(rows) -> str:
    digest = seals.Digest(repr)
    for row in rows:
        digest.add(row)
    return digest.hexdigest()


def test_rows_passing_a_digest_come_out_unchanged_and_are_digested_a_chunk_ahead():
    digest = seals.Digest(repr)
    passing = digest.passing(iter(PASSING))
    first = next(passing)
    # Hashed a chunk at a time beside the rows, not all before the first goes to the database.
    assert 0 < digest.count < len(PASSING)
    assert [first, *passing] == PASSING
    assert digest.hexdigest() == digest_of(PASSING)


def test_rows_passing_a_digest_can_be_sealed_in_another_order():
    by_player = sorted(PASSING, key=lambda row: row[1])
    digest = seals.Digest(repr)
    assert list(digest.passing(by_player, digested=PASSING)) == by_player
    assert digest.hexdigest() == digest_of(PASSING) != digest_of(by_player)


@pytest.mark.parametrize("digested", [PASSING[:-1], [*PASSING, (0, "p0")]], ids=["fewer", "more"])
def test_rows_passing_a_digest_refuse_a_different_number_to_seal(digested):
    with pytest.raises(ValueError, match="rows to digest than rows passing"):
        list(seals.Digest(repr).passing(PASSING, digested=digested))


def test_a_digest_tells_types_and_field_boundaries_apart():
    def one(*row):
        digest = seals.Digest()
        digest.add(row)
        return digest.hexdigest()

    assert one("a\tb", "c") != one("a", "b\tc")
    assert one(None) != one("") != one("~")
    assert one(True) != one(1)
    assert one({"cash": 1}) != one('{"cash":1}')
