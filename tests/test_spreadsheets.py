"""settlements.exports.spreadsheets: the one place every exported CSV row is written."""

import csv
import io

import pytest
from django.urls import reverse

from settlements.exports import spreadsheets
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from tests.services.helpers import approved
from tests.views.conftest import signed_in


def test_rows_leave_in_pieces_and_the_header_is_read_at_once():
    def rows():
        yield ("a", "b")
        yield from ((n, f"x,{n}") for n in range(10))

    pieces = list(spreadsheets.csv_chunks(rows(), rows_per_chunk=4))
    assert [piece.count("\r\n") for piece in pieces] == [5, 4, 2]
    assert list(csv.reader(io.StringIO("".join(pieces))))[1] == ["0", "x,0"]

    def refusing():
        raise LookupError("not exportable")
        yield ()

    with pytest.raises(LookupError):
        spreadsheets.csv_chunks(refusing())


@pytest.mark.django_db
def test_every_export_writes_its_rows_through_one_function(
    operator, tournament_manager, auditor, snapshot_factory, monkeypatch
):
    written: list[tuple] = []
    write = spreadsheets.write_row
    monkeypatch.setattr(
        spreadsheets,
        "write_row",
        lambda writer, row: (written.append(tuple(row)), write(writer, row)),
    )
    settlement = approved(operator, tournament_manager, snapshot_factory, stage="late")
    compensation = compensation_propose(
        case=settlement.case, actor=operator, reason="r", entries=[CompensationEntry("p000001", 5)]
    )
    compensation_approve(compensation=compensation, actor=tournament_manager)
    client = signed_in(auditor)
    for url in (
        reverse("settlement_ledger", args=[settlement.pk]),
        reverse("compensation_ledger", args=[compensation.pk]),
        reverse("history_export") + "?view=changes",
        reverse("history_export") + "?view=events",
    ):
        written.clear()
        response = client.get(url)
        assert response.status_code == 200, url
        body = b"".join(response.streaming_content).decode()
        expected = io.StringIO()
        csv.writer(expected).writerows(written)
        assert len(written) > 1, url
        assert body == expected.getvalue(), url
