"""The API's routes, under /api/v1/ (crashdesk/urls.py)."""

from django.urls import path

from settlements.api import cases, icm, ledger, openapi, snapshots, statements

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
]
