"""The auditor's pages and API for the record: the checkpoints, paginated, and the export of an
incident's sealed record; nobody else reaches them."""

import io
import zipfile

import pytest
from django.urls import reverse

from settlements import checkpoints
from settlements.audit import layout
from settlements.audit.verify import verify
from settlements.services.checkpoints import checkpoint_record
from settlements.services.tokens import api_token_create
from tests.api.conftest import bearer
from tests.services.helpers import approved

pytestmark = pytest.mark.django_db


@pytest.fixture
def settlement(users, snapshot_factory):
    return approved(users["operator"], users["tournament_manager"], snapshot_factory)


def test_the_auditor_sees_the_checkpoints_and_what_each_read(client, users, settlement):
    checkpoint_record(outcome=checkpoints.verify())
    checkpoint_record(outcome=checkpoints.verify(sample=3))
    client.force_login(users["auditor"])
    page = client.get(reverse("audit_checkpoints")).content.decode()
    assert "The whole chain, and the payment tallies counted afresh" in page
    assert "3 older events drawn at random" in page
    assert "Holds" in page and "Altered" not in page


def test_the_checkpoints_are_paginated(client, users, settlement):
    for _ in range(26):
        checkpoint_record(outcome=checkpoints.verify(sample=0))
    client.force_login(users["auditor"])
    first = client.get(reverse("audit_checkpoints")).content.decode()
    assert "Older" in first
    second = client.get(reverse("audit_checkpoints") + "?page=2").content.decode()
    assert "Newer" in second


@pytest.mark.parametrize("role", ["operator", "tournament_manager", "marketing_manager"])
def test_nobody_else_sees_them(client, users, settlement, role):
    client.force_login(users[role])
    incident = settlement.case.incident_id
    assert client.get(reverse("audit_checkpoints")).status_code == 403
    assert client.get(reverse("incident_record", args=[incident])).status_code == 403


def test_the_auditor_exports_an_incident_that_verifies(client, users, settlement, tmp_path):
    client.force_login(users["auditor"])
    timeline = client.get(reverse("incident_timeline", args=[settlement.case.incident_id]))
    url = reverse("incident_record", args=[settlement.case.incident_id])
    assert url in timeline.content.decode()
    response = client.get(url)
    assert response["Content-Type"] == "application/zip"
    path = tmp_path / "record.zip"
    path.write_bytes(b"".join(response.streaming_content))
    assert verify(str(path)).checked["settlements re-settled by the engine, lines equal"] == 1


def test_the_api_hands_the_record_to_auditors_only(client, users, settlement):
    tokens = {
        role: api_token_create(user=users[role], name="auditing")[1]
        for role in ("auditor", "operator")
    }
    url = reverse("api:incident_record", args=[settlement.case.incident_id])
    response = client.get(url, **bearer(tokens["auditor"]))
    assert response.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert layout.MANIFEST in archive.namelist()
    assert client.get(url, **bearer(tokens["operator"])).status_code == 403
    missing = reverse("api:incident_record", args=[settlement.case.incident_id + 999])
    assert client.get(missing, **bearer(tokens["auditor"])).status_code == 404


def test_the_openapi_document_describes_the_download(client):
    document = client.get(reverse("api:openapi")).json()
    operation = document["paths"]["/incidents/{incident_id}/record"]["get"]
    assert "application/zip" in operation["responses"]["200"]["content"]
    assert operation["x-roles"] == ["auditor"]
