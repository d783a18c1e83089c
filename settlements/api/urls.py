"""The API's routes, under /api/v1/ (crashdesk/urls.py)."""

from django.urls import path

from settlements.api import (
    cases,
    icm,
    ledger,
    openapi,
    records,
    rulebooks,
    snapshots,
    statements,
)

app_name = "api"
urlpatterns = [
    path("openapi.json", openapi.openapi, name="openapi"),
    path("snapshots", snapshots.snapshots, name="snapshots"),
    path("cases", cases.cases, name="cases"),
    path("cases/<int:case_id>", cases.case, name="case"),
    path("ledger", ledger.ledger, name="ledger"),
    path("ledger/confirmations", ledger.ledger_confirmations, name="ledger_confirmations"),
    path(
        "settlements/<int:settlement_id>/statements",
        statements.settlement_statements,
        name="settlement_statements",
    ),
    path("settlements/<int:settlement_id>/icm", icm.settlement_icm, name="settlement_icm"),
    path("incidents/<int:incident_id>/record", records.incident_record, name="incident_record"),
    path("rulebooks", rulebooks.rulebooks, name="rulebooks"),
    path("rulebooks/<str:key>", rulebooks.rulebook, name="rulebook"),
    path("rulebooks/<str:key>/versions", rulebooks.rulebook_versions, name="rulebook_versions"),
    path(
        "rulebooks/<str:key>/versions/<int:number>/approve",
        rulebooks.rulebook_version_approve,
        name="rulebook_version_approve",
    ),
    path(
        "rulebooks/<str:key>/versions/<int:number>/withdraw",
        rulebooks.rulebook_version_withdraw,
        name="rulebook_version_withdraw",
    ),
    path(
        "rulebooks/<str:key>/versions/<int:number>/simulations",
        rulebooks.rulebook_version_simulations,
        name="rulebook_version_simulations",
    ),
    path("simulations/<int:simulation_id>", rulebooks.simulation, name="simulation"),
]
