"""A record outlives the release that wrote it: each event is verified under the seal format it
was written in (settlements.seal_formats), so a later release that adds a column to a sealed
model, or renames a field a format names, leaves the old record verifying.

The "old record" here is written by the app with format 1 as its current format, which is what
every release before seal formats wrote (the demo desk seeded by such a release and migrated
verifies, docs/operations.md); the columns are added and renamed with the schema editor, as a
migration of that later release would, and the models are told of the change as that
release's models would know it."""

import hashlib
from contextlib import contextmanager

import pytest
from django.apps import apps
from django.core.exceptions import FieldDoesNotExist
from django.db import connection, models

from settlements import audit_log, seal_formats, seals
from settlements.models import Event, Tournament
from settlements.services.history_sweep import history_sweep
from tests.db.conftest import behind_the_apps_back, postgresql_only
from tests.services.helpers import approved

pytestmark = pytest.mark.django_db


@pytest.fixture
def old_record(monkeypatch, users, snapshot_factory):
    """A settlement approved while format 1 was current, then one approved under format 2."""
    operator, manager = users["operator"], users["tournament_manager"]
    before = Event.objects.count()
    with monkeypatch.context() as older_release:
        older_release.setattr(seal_formats, "CURRENT", 1)
        old = approved(operator, manager, snapshot_factory, tournament_id="T-OLD")
    middle = Event.objects.count()
    # The versions format 1 did not seal (the ICM valuation's), sealed by the sweep an upgrade
    # runs (docs/operations.md, "History versions written outside the services").
    history_sweep(reason="upgraded")
    new = approved(operator, manager, snapshot_factory, tournament_id="T-NEW")
    formats = Event.objects.filter(seq__gt=before).order_by("seq")
    assert set(formats.filter(seq__lte=middle).values_list("seal_format", flat=True)) == {1}
    assert set(formats.filter(seq__gt=middle).values_list("seal_format", flat=True)) == {2}
    return {"old": old, "new": new, "last_old_event": middle}


def assert_verifies():
    result = audit_log.verify()
    assert result.ok, result.problem
    assert result.count == Event.objects.count()


def test_events_of_both_formats_verify_each_under_its_own(old_record):
    assert_verifies()
    old = Event.objects.get(seq=old_record["last_old_event"])
    new = Event.objects.filter(seal_format=2).order_by("seq").last()
    # Format 1 events are hashed as they were before the format was recorded.
    assert b"seal_format" not in audit_log.canonical(old)
    assert b'"seal_format":2' in audit_log.canonical(new)
    # The same rows digest differently in the two formats: each event is checked in its own.
    case = old_record["old"].case_id
    assert seals.entrant_digests([case], 1) != seals.entrant_digests([case], 2)
    loaded = Event.objects.get(type="snapshot_loaded", case_id=case)
    assert loaded.subject_facts["entrant_rows"] == seals.entrant_digests([case], 1)[case]


@postgresql_only
@pytest.mark.parametrize("to_format", [2, 1], ids=["old event claims 2", "new event claims 1"])
def test_an_event_claiming_another_format_is_caught(old_record, to_format):
    """Changing the recorded format would verify an event under another format's reading:
    from format 2 on the format is under the event's hash, and a format 1 event claiming 2
    no longer hashes as it did."""
    event = Event.objects.filter(seal_format=3 - to_format, type="settlement_approved").first()
    behind_the_apps_back(
        "UPDATE settlements_event SET seal_format = %s WHERE id = %s", [to_format, event.pk]
    )
    result = audit_log.verify()
    assert result.event_id == event.pk
    assert "was changed after it was written" in result.problem


@contextmanager
def added_column(model, name: str, field: models.Field):
    """``field`` added to ``model`` and its history table, as a release's migration would add
    it, and known to both models as that release's would be; taken away after."""
    added = [(model, field), (model.history.model, field.clone())]
    try:
        for owner, column in added:
            column.contribute_to_class(owner, name)
            with connection.schema_editor() as editor:
                editor.add_field(owner, column)
        yield
    finally:
        for owner, column in added:
            if column in owner._meta.local_fields:
                with connection.schema_editor() as editor:
                    editor.remove_field(owner, column)
                owner._meta.local_fields.remove(column)
            if name in vars(owner):
                delattr(owner, name)
        apps.clear_cache()


@contextmanager
def renamed_column(model, old: str, new: str):
    """``old`` renamed ``new`` in ``model`` and its history table, as a release's migration
    would rename it, and in both models; named back after."""
    owners = (model, model.history.model)
    fields = [owner._meta.get_field(old) for owner in owners]
    done = []
    try:
        for owner, field in zip(owners, fields, strict=True):
            renamed = field.clone()
            renamed.set_attributes_from_name(new)
            with connection.schema_editor() as editor:
                editor.alter_field(owner, field, renamed)
            rename(field, new)
            done.append((owner, field, renamed))
        apps.clear_cache()
        yield
    finally:
        for owner, field, renamed in done:
            original = renamed.clone()
            original.set_attributes_from_name(old)
            with connection.schema_editor() as editor:
                editor.alter_field(owner, renamed, original)
            rename(field, old)
        apps.clear_cache()


def rename(field: models.Field, name: str) -> None:
    field.name = None  # set_attributes_from_name keeps a name already given
    field.set_attributes_from_name(name)


# The schema is changed as a migration changes it, committed: no check of the app's is left
# deferred to the commit, as PostgreSQL alters no table with one pending.
@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_a_column_added_by_a_later_release_leaves_the_old_record_verifying(
    old_record, users, snapshot_factory
):
    """Before seal formats, a version was digested over every plain column its table had at
    the time of verifying: this column changed every old version's digest."""
    region = models.CharField(max_length=8, default="EU")
    with added_column(Tournament, "region", region):
        history_columns = [f.attname for f in Tournament.history.model._meta.concrete_fields]
        assert "region" in history_columns
        assert_verifies()
        # The later release writes on, its versions holding the new column.
        later = approved(
            users["operator"], users["tournament_manager"], snapshot_factory, tournament_id="T-3"
        )
        assert later.case.tournament.history.latest().region == "EU"
        assert_verifies()
        # What the formats seal is what they name: the new column is sealed once a new format
        # names it (docs/operations.md), and the old fields stay sealed as before.
        behind_the_apps_back(
            "UPDATE settlements_historicaltournament SET currency = 'EUR' WHERE id = %s",
            [old_record["old"].case.tournament_id],
        )
        assert "history of tournament" in audit_log.verify().problem


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_a_field_renamed_by_a_later_release_is_read_under_the_name_the_formats_give_it(
    old_record, monkeypatch
):
    with renamed_column(Tournament, "name", "display_name"):
        # Without the formats' map from the old name, nothing reads it.
        with pytest.raises(FieldDoesNotExist):
            audit_log.verify()
        monkeypatch.setitem(seal_formats.RENAMED, ("tournament", "name"), "display_name")
        assert_verifies()
        behind_the_apps_back(
            "UPDATE settlements_historicaltournament SET display_name = 'renamed' WHERE id = %s",
            [old_record["new"].case.tournament_id],
        )
        assert "history of tournament" in audit_log.verify().problem


def test_a_writer_whose_rows_are_not_the_formats_is_refused():
    with pytest.raises(ValueError, match="not the entrants seal format 2 names"):
        seals.rows_digest(seal_formats.ENTRANTS, fields=("case", "player", "position"))


def test_a_format_2_digest_is_the_documented_encoding_of_the_rows(old_record):
    settlement = old_record["new"]
    fields = seal_formats.get(2).fields[seal_formats.PAYOUTS]
    rows = settlement.payouts.order_by("position").values_list(*fields)
    text = seal_formats.get(2).header(seal_formats.PAYOUTS) + "".join(
        map(seal_formats.encode_row, rows)
    )
    prepared = Event.objects.get(type="settlement_prepared", subject_id=settlement.pk)
    assert prepared.seal_format == 2
    assert prepared.subject_facts["payout_rows"] == hashlib.sha256(text.encode()).hexdigest()
