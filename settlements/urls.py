from allauth.account import views as allauth_views
from django.contrib.auth import views as auth_views
from django.urls import include, path

from settlements.access import sso
from settlements.views import (
    access_review,
    audit,
    bulk,
    cases,
    compensation,
    dashboard,
    decisions,
    history,
    incidents,
    individual_cases,
    jobs,
    payments,
    players,
    policy,
    prize_withdrawals,
    profile,
    queues,
    rulebooks,
    settlement_review,
    sign_on,
)

urlpatterns = [
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(
            redirect_authenticated_user=True, extra_context={"sign_on": sso.offered}
        ),
        name="login",
    ),
    # Sign-out is a POST form in the top bar; Django's LogoutView refuses GET.
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # The names django-allauth's pages link to for signing in and out: the same two views.
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True),
        name="account_login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="account_logout"),
    # django-allauth's second-factor pages (access.second_factor), and the password
    # confirmation they ask for before a factor is added or removed. Nothing else of allauth:
    # no sign-up, no e-mail, no password reset by mail.
    path("accounts/reauthenticate/", allauth_views.reauthenticate, name="account_reauthenticate"),
    path("accounts/2fa/", include("allauth.mfa.urls")),
    # Single sign-on (views.sign_on): allauth's OpenID Connect views, with the ID token's
    # signature always checked; the names are allauth's, which it reverses.
    path("accounts/oidc/<str:provider_id>/login/", sign_on.login, name="openid_connect_login"),
    path(
        "accounts/oidc/<str:provider_id>/login/callback/",
        sign_on.callback,
        name="openid_connect_callback",
    ),
    path("", dashboard.dashboard, name="dashboard"),
    path("policy/", policy.crash_policy, name="policy"),
    path("rulebooks/", rulebooks.rulebook_list, name="rulebook_list"),
    path("rulebooks/propose/", rulebooks.rulebook_version_new, name="rulebook_version_new"),
    path("rulebooks/<str:key>/", rulebooks.rulebook_detail, name="rulebook_detail"),
    path(
        "rulebooks/<str:key>/versions/<int:number>/",
        rulebooks.rulebook_version,
        name="rulebook_version",
    ),
    path(
        "rulebooks/<str:key>/versions/<int:number>/approve/",
        rulebooks.rulebook_version_approve,
        name="rulebook_version_approve",
    ),
    path(
        "rulebooks/<str:key>/versions/<int:number>/withdraw/",
        rulebooks.rulebook_version_withdraw,
        name="rulebook_version_withdraw",
    ),
    path(
        "rulebooks/<str:key>/versions/<int:number>/simulate/",
        rulebooks.rulebook_version_simulate,
        name="rulebook_version_simulate",
    ),
    path("simulations/<int:simulation_id>/", rulebooks.simulation_detail, name="simulation_detail"),
    path("simulations/<int:simulation_id>.csv", rulebooks.simulation_csv, name="simulation_csv"),
    path("settings/", profile.user_settings, name="user_settings"),
    path("settings/digest", profile.user_digest, name="user_digest"),
    path("settings/sessions/", profile.user_sessions, name="user_sessions"),
    path("settings/sessions/end", profile.user_sessions_end, name="user_sessions_end"),
    path("incidents/new/", incidents.incident_new, name="incident_new"),
    path(
        "incidents/<int:incident_id>/tournaments/",
        incidents.incident_tournaments,
        name="incident_tournaments",
    ),
    path("incidents/<int:incident_id>/upload/", incidents.incident_upload, name="incident_upload"),
    # The bulk path through an outage (views/bulk.py), its jobs' progress (views/jobs.py) and
    # the close of the incident.
    path(
        "incidents/<int:incident_id>/upload-many/",
        bulk.incident_upload_many,
        name="incident_upload_many",
    ),
    path(
        "incidents/<int:incident_id>/prepare-ready/",
        bulk.incident_prepare_ready,
        name="incident_prepare_ready",
    ),
    path(
        "incidents/<int:incident_id>/submit-prepared/",
        bulk.incident_submit_prepared,
        name="incident_submit_prepared",
    ),
    path("incidents/<int:incident_id>/approve/", bulk.incident_approve, name="incident_approve"),
    path("incidents/<int:incident_id>/decide/", bulk.incident_decide, name="incident_decide"),
    path("incidents/<int:incident_id>/close/", incidents.incident_close, name="incident_close"),
    path("jobs/<int:job_id>/", jobs.job_detail, name="job_detail"),
    # The lists behind the dashboard's counts, before the per-role queues that share the prefix.
    path("queues/cases/", queues.case_queue, name="case_queue"),
    path("queues/incidents/", queues.incident_queue, name="incident_queue"),
    path("queues/<str:name>/", queues.queue, name="queue"),
    path("jobs/<int:job_id>/retry/", jobs.job_retry, name="job_retry"),
    path("cases/<int:case_id>/", cases.case_detail, name="case_detail"),
    path("cases/<int:case_id>/prepare/", cases.case_prepare, name="case_prepare"),
    path("cases/<int:case_id>/decision/", decisions.case_decision, name="case_decision"),
    path("cases/<int:case_id>/withdraw/", cases.case_withdraw, name="case_withdraw"),
    # Settlement review, approval and the ledger.
    path(
        "settlements/<int:settlement_id>/",
        settlement_review.settlement_review,
        name="settlement_review",
    ),
    path(
        "settlements/<int:settlement_id>/player/",
        settlement_review.settlement_player,
        name="settlement_player",
    ),
    path(
        "settlements/<int:settlement_id>/submit/",
        settlement_review.settlement_submit,
        name="settlement_submit",
    ),
    path(
        "settlements/<int:settlement_id>/approve/",
        settlement_review.settlement_approve,
        name="settlement_approve",
    ),
    path(
        "settlements/<int:settlement_id>/reject/",
        settlement_review.settlement_reject,
        name="settlement_reject",
    ),
    path(
        "settlements/<int:settlement_id>/ledger.csv",
        settlement_review.settlement_ledger,
        name="settlement_ledger",
    ),
    # Answering players: their cases across incidents and their statements.
    path("players/", players.players, name="players"),
    path(
        "settlements/<int:settlement_id>/statement/",
        players.settlement_statement,
        name="settlement_statement",
    ),
    path(
        "settlements/<int:settlement_id>/statement/print/",
        players.settlement_statement_print,
        name="settlement_statement_print",
    ),
    path(
        "settlements/<int:settlement_id>/statements.jsonl",
        players.settlement_statements_jsonl,
        name="settlement_statements_jsonl",
    ),
    path(
        "settlements/<int:settlement_id>/statements.csv",
        players.settlement_statements_csv,
        name="settlement_statements_csv",
    ),
    path(
        "incidents/<int:incident_id>/statements.jsonl",
        players.incident_statements_jsonl,
        name="incident_statements_jsonl",
    ),
    path(
        "incidents/<int:incident_id>/statements.csv",
        players.incident_statements_csv,
        name="incident_statements_csv",
    ),
    # Compensation, prizes given in error, individual cases.
    path("compensation/", compensation.compensation_list, name="compensation_list"),
    path(
        "cases/<int:case_id>/compensation/new/",
        compensation.compensation_new,
        name="compensation_new",
    ),
    path(
        "compensation/<int:compensation_id>/",
        compensation.compensation_detail,
        name="compensation_detail",
    ),
    path(
        "compensation/<int:compensation_id>/approve/",
        compensation.compensation_approve,
        name="compensation_approve",
    ),
    path(
        "compensation/<int:compensation_id>/reject/",
        compensation.compensation_reject,
        name="compensation_reject",
    ),
    path(
        "compensation/<int:compensation_id>/ledger.csv",
        compensation.compensation_ledger,
        name="compensation_ledger",
    ),
    path(
        "cases/<int:case_id>/prize-withdrawal/",
        prize_withdrawals.prize_withdrawal_new,
        name="prize_withdrawal_new",
    ),
    path(
        "prize-withdrawals/<int:withdrawal_id>/approve/",
        prize_withdrawals.prize_withdrawal_approve,
        name="prize_withdrawal_approve",
    ),
    path(
        "prize-withdrawals/<int:withdrawal_id>/reject/",
        prize_withdrawals.prize_withdrawal_reject,
        name="prize_withdrawal_reject",
    ),
    path("individual-cases/", individual_cases.individual_case_list, name="individual_case_list"),
    path("individual-cases/new/", individual_cases.individual_case_new, name="individual_case_new"),
    path(
        "cases/<int:case_id>/resolve/",
        individual_cases.individual_case_resolve,
        name="individual_case_resolve",
    ),
    # The auditor's history browser (read-only).
    path("history/", history.history, name="history"),
    path("history/export.csv", history.history_export, name="history_export"),
    # After approval: what the cashier paid, failed to pay or has not confirmed.
    path("payments/", payments.payments_queue, name="payments"),
    path("payments/lines/<str:key>/reissue/", payments.reissue_new, name="reissue_new"),
    path(
        "payments/reissues/<int:reissue_id>/approve/",
        payments.reissue_approve,
        name="reissue_approve",
    ),
    path(
        "payments/reissues/<int:reissue_id>/reject/", payments.reissue_reject, name="reissue_reject"
    ),
    path("payments/audit/", payments.payments_audit, name="payments_audit"),
    path("payments/audit.csv", payments.payments_audit_export, name="payments_audit_export"),
    path(
        "incidents/<int:incident_id>/payments.csv",
        payments.incident_payments_csv,
        name="incident_payments_csv",
    ),
    path(
        "incidents/<int:incident_id>/payments.json",
        payments.incident_payments_json,
        name="incident_payments_json",
    ),
    path("history/audit-head.json", history.audit_head, name="audit_head"),
    path("history/verify/", audit.audit_verify, name="audit_verify"),
    path("history/checkpoints/", audit.audit_checkpoints, name="audit_checkpoints"),
    path(
        "history/incidents/<int:incident_id>/record.zip",
        audit.incident_record,
        name="incident_record",
    ),
    # The auditor's access review (views.access_review).
    path("access-review/", access_review.access_review, name="access_review"),
    path(
        "access-review/users.csv",
        access_review.access_review_users_csv,
        name="access_review_users_csv",
    ),
    path(
        "access-review/changes.csv",
        access_review.access_review_changes_csv,
        name="access_review_changes_csv",
    ),
    path(
        "access-review/complete",
        access_review.access_review_complete,
        name="access_review_complete",
    ),
    path(
        "history/incidents/<int:incident_id>/",
        history.incident_timeline,
        name="incident_timeline",
    ),
    path("history/<str:model>/<int:pk>/", history.history_record, name="history_record"),
]
