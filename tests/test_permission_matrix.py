"""Who may open what: every URL of the app and the API, with every role, GET and POST.

The test walks the URL resolver, so a URL added without an entry in ``MATRIX`` fails it (and
so does an entry whose URL is gone). Pages are visited with a signed-in session; the API
with a bearer token of the same user (anonymous: no credentials at all). Each request runs
in a savepoint that is rolled back, so a permitted POST (sent with an empty form) changes
nothing for the requests after it. The admin has its own rules (staff only) and a test of
its own below.

Statuses: 200 page, 302 to the login page (anonymous) or onward after a POST, 401 the API
without a token, 403 refused, 405 wrong method, 422 form re-shown with errors, 400 API
refusal of an empty body.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from settlements.access import roles
from settlements.selectors.payments.lines import approved_lines, releases_of
from settlements.selectors.rulebooks import simulation_cases
from settlements.services import jobs
from settlements.services import settlements as settlement_services
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from settlements.services.incidents import incident_report
from settlements.services.individual_cases import individual_case_open, prize_withdrawal_decide
from settlements.services.payments import ConfirmationEntry, payment_confirm
from settlements.services.reissues import reissue_propose
from settlements.services.rulebooks import rulebook_version_propose, simulation_start
from settlements.services.snapshots import case_load_snapshot
from settlements.services.tokens import api_token_create
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

ANON = "anonymous"
OP, MM, TM, AU = (
    roles.OPERATOR,
    roles.MARKETING_MANAGER,
    roles.TOURNAMENT_MANAGER,
    roles.AUDITOR,
)
CA = roles.CASHIER
NONE = "none"
WHO = (ANON, OP, MM, TM, AU, CA, NONE)
# The desk's roles; the cashier has no page and must be refused wherever "none" is.
ALL = (OP, MM, TM, AU)
SIGNED_IN = (*ALL, CA, NONE)


def by_role(allowed, yes: int, *, no: int = 403, anonymous: int = 302) -> dict[str, int]:
    """``yes`` for the roles in ``allowed``, ``no`` for the other signed-in users."""
    return {ANON: anonymous, **{who: yes if who in allowed else no for who in SIGNED_IN}}


def everyone(status: int) -> dict[str, int]:
    return dict.fromkeys(WHO, status)


@dataclass(frozen=True)
class Entry:
    get: dict[str, int]
    post: dict[str, int]
    # World attribute for each URL argument, when not the argument's name without "_id".
    args: dict[str, str] = field(default_factory=dict)
    query: str = ""
    api: bool = False


def page(*allowed: str, post: dict[str, int] | None = None, **kwargs) -> Entry:
    """A page the roles in ``allowed`` may read; by default it answers GET and HEAD only."""
    return Entry(by_role(allowed, 200), post or everyone(405), **kwargs)


def form(*allowed: str, get: int = 200, post: int = 422, **kwargs) -> Entry:
    """A page with a form; an empty POST from a permitted user is re-shown with errors."""
    return Entry(by_role(allowed, get), by_role(allowed, post), **kwargs)


def action(*allowed: str, post: int, exceptions: dict[str, int] | None = None, **kwargs) -> Entry:
    """POST only; ``exceptions`` for a role that the service refuses on this object."""
    return Entry(everyone(405), {**by_role(allowed, post), **(exceptions or {})}, **kwargs)


def api(*allowed: str, get: int | None = None, post: int | None = None, **kwargs) -> Entry:
    def answers(status):
        if status is None:
            return everyone(405)
        return by_role(allowed, status, anonymous=401)

    return Entry(answers(get), answers(post), api=True, **kwargs)


def second_factor(get: int, post: int, **kwargs) -> Entry:
    """One of django-allauth's second-factor pages: the same answer for every signed-in user
    (each manages their own factors), the sign-in page for anonymous visitors."""
    return Entry(
        {ANON: 302, **dict.fromkeys(SIGNED_IN, get)},
        {ANON: 302, **dict.fromkeys(SIGNED_IN, post)},
        **kwargs,
    )


MATRIX: dict[str, Entry] = {
    # Probes and sign-in.
    "healthz": Entry(everyone(200), everyone(405)),
    # Prometheus' page: none without METRICS_TOKEN set, as here (tests/views/test_metrics.py).
    "metrics": Entry(everyone(404), everyone(405)),
    "login": Entry({**everyone(302), ANON: 200}, {**everyone(302), ANON: 200}),
    "logout": Entry(everyone(405), {}),  # POST signs out; covered by the layout tests.
    # The same two views under the names django-allauth's pages link to.
    "account_login": Entry({**everyone(302), ANON: 200}, {**everyone(302), ANON: 200}),
    "account_logout": Entry(everyone(405), {}),
    # The second factor (tests/test_second_factor.py). These users' sessions have proved a
    # factor they do not have: adding or proving one asks for the password first (302), and
    # there is no TOTP or recovery code to show or remove (404). An empty password is re-shown.
    "account_reauthenticate": second_factor(200, 200),
    "mfa_index": second_factor(200, 405),
    # Only during allauth's own sign-in, which CrashDesk does not use: back to the sign-in.
    "mfa_authenticate": Entry(everyone(302), everyone(302)),
    "mfa_reauthenticate": second_factor(302, 302),
    "mfa_activate_totp": second_factor(302, 302),
    "mfa_deactivate_totp": second_factor(404, 404),
    "mfa_view_recovery_codes": second_factor(404, 405),
    "mfa_generate_recovery_codes": second_factor(302, 302),
    "mfa_download_recovery_codes": second_factor(404, 404),
    "mfa_list_webauthn": second_factor(200, 405),
    "mfa_add_webauthn": second_factor(302, 302),
    "mfa_reauthenticate_webauthn": second_factor(302, 302),
    "mfa_edit_webauthn": second_factor(302, 302, args={"pk": "incident"}),
    "mfa_remove_webauthn": second_factor(302, 302, args={"pk": "incident"}),
    # Single sign-on (tests/sso/): no provider is configured here, so there is no such page.
    "openid_connect_login": Entry(everyone(404), everyone(404)),
    "openid_connect_callback": Entry(everyone(404), everyone(404)),
    # The API (bearer tokens); its OpenAPI document needs none.
    "api:openapi": Entry(everyone(200), everyone(405), api=True),
    "api:snapshots": api(OP, post=400),
    "api:cases": api(*ALL, get=200),
    "api:case": api(*ALL, get=200),
    # The cashier's feed and confirmations; an empty body is not a batch (400).
    "api:ledger": api(CA, get=200),
    "api:ledger_confirmations": api(CA, post=400),
    # The players' statements, for the roles that may see amounts (not the cashier).
    "api:settlement_statements": api(*ALL, get=200),
    # The ICM second opinion's figures, to the same roles.
    "api:settlement_icm": api(TM, AU, get=200),
    "api:incident_record": api(AU, get=200),
    # Dashboard and the report-a-crash wizard.
    "dashboard": Entry(by_role(ALL, 200), by_role(ALL, 200)),
    "policy": page(*ALL),  # the crash policy, for every role
    # Each desk role's own settings; the cashier and a user without a role open no page.
    "user_settings": form(*ALL),
    "user_digest": form(*ALL),
    # Where they are signed in; ending no session of theirs says so on that page (302).
    "user_sessions": page(*ALL),
    "user_sessions_end": action(*ALL, post=302),
    # An empty POST shows the empty form again, as a GET would.
    "incident_new": form(OP, post=200),
    "incident_tournaments": Entry(by_role(ALL, 200), by_role(ALL, 200)),
    "incident_upload": form(OP),
    # The bulk path. Without files, a reason or a choice, a form is re-shown (422); a bulk
    # action with nothing to do says so on the incident page (302), as does one that starts.
    "incident_upload_many": form(OP),
    # A bulk prepare or submit restates what it will do; only the confirming post starts it.
    "incident_prepare_ready": form(OP, post=200),
    "incident_submit_prepared": form(OP, post=200),
    "incident_approve": form(TM),
    "incident_decide": form(MM),
    "incident_close": form(OP, TM),
    "job_detail": page(*ALL),
    "queue": page(OP, args={"name": "queue_name"}),
    # The lists behind the dashboard's counts, which every role sees.
    "case_queue": page(*ALL),
    "incident_queue": page(*ALL),
    # Only the person who started the work may run it again; others are refused.
    "job_retry": action(*ALL, post=302, exceptions={MM: 403, TM: 403, AU: 403}),
    # Cases, decisions, settlements.
    "case_detail": Entry(by_role(ALL, 200), by_role(ALL, 200)),
    "case_prepare": action(OP, post=302, args={"case_id": "ready_case"}),
    "case_decision": form(MM, args={"case_id": "deciding_case"}),
    # Without a reason the withdrawal is re-shown with the error (422).
    "case_withdraw": form(OP, TM, args={"case_id": "ready_case"}),
    "settlement_review": page(*ALL),
    "settlement_player": page(*ALL, query="?player=p000001"),
    # Already submitted: refused with the form re-shown. A Tournament Manager may submit
    # adjustments only, so for a settlement proper the service refuses them (403).
    "settlement_submit": action(OP, TM, post=422, exceptions={TM: 403}),
    "settlement_approve": form(TM),
    "settlement_reject": form(TM),
    "settlement_ledger": page(*ALL, args={"settlement_id": "approved_settlement"}),
    # Answering players: every role that may see amounts (permissions.AMOUNT_READERS).
    "players": page(*ALL, query="?q=p000001"),
    "settlement_statement": page(*ALL, query="?player=p000001"),
    "settlement_statement_print": page(*ALL, query="?player=p000001"),
    "settlement_statements_jsonl": page(*ALL),
    "settlement_statements_csv": page(*ALL),
    "incident_statements_jsonl": page(*ALL),
    "incident_statements_csv": page(*ALL),
    # Compensation, prize withdrawals, individual cases.
    "compensation_list": page(OP, TM, AU),
    "compensation_new": form(OP, TM),
    "compensation_detail": page(OP, TM, AU),
    "compensation_approve": form(TM),
    "compensation_reject": form(TM),
    "compensation_ledger": page(*ALL, args={"compensation_id": "approved_compensation"}),
    "prize_withdrawal_new": form(TM),
    # Taking a prize back, proposed by another Tournament Manager: answered by a second one.
    "prize_withdrawal_approve": form(TM),
    "prize_withdrawal_reject": form(TM),
    "individual_case_list": page(OP, TM, AU),
    "individual_case_new": form(TM),
    "individual_case_resolve": form(TM, args={"case_id": "individual_case"}),
    # Payments after approval: the queue, re-issues, the auditor's answer, the batch.
    "payments": page(OP, TM, AU),
    "reissue_new": form(OP, TM, args={"key": "failed_key"}),
    "reissue_approve": form(TM),
    "reissue_reject": form(TM),
    "payments_audit": page(OP, TM, AU),
    "payments_audit_export": page(OP, TM, AU),
    # The batch is approved lines: read by whoever reads the ledger (permissions.ledger_read).
    "incident_payments_csv": page(*ALL),
    "incident_payments_json": page(*ALL),
    # The auditor's history browser.
    "history": page(AU),
    "history_export": page(AU),
    "audit_head": page(AU),
    # Starts the background verification of the event log, then follows its job.
    "audit_verify": action(AU, post=302),
    # The auditor's access review; an empty review is re-shown with its errors.
    "access_review": page(AU),
    "access_review_users_csv": page(AU),
    "access_review_changes_csv": page(AU),
    "access_review_complete": action(AU, post=422),
    # The checkpoints verifications left, and an incident's sealed record to take away.
    "audit_checkpoints": page(AU),
    "incident_record": page(AU),
    # A case's own history: the Tournament Managers who approve it read it too.
    "history_record": page(TM, AU, args={"model": "history_model", "pk": "case_pk"}),
    "incident_timeline": page(TM, AU),
    # Rulebooks: every desk role reads; Tournament Managers propose, approve (another's
    # proposal), withdraw and simulate. An empty body or form is re-shown or refused.
    "rulebook_list": page(*ALL),
    "rulebook_detail": page(*ALL),
    "rulebook_version": page(*ALL),
    "rulebook_version_new": form(TM),
    "rulebook_version_approve": form(TM),
    "rulebook_version_withdraw": form(TM),
    "rulebook_version_simulate": action(TM, post=302),
    "simulation_detail": page(*ALL),
    "simulation_csv": page(*ALL),
    "api:rulebooks": api(*ALL, get=200),
    "api:rulebook": api(*ALL, get=200),
    "api:rulebook_versions": api(TM, post=400),
    "api:rulebook_version_approve": api(TM, post=400),
    "api:rulebook_version_withdraw": api(TM, post=400),
    "api:rulebook_version_simulations": api(TM, post=400),
    "api:simulation": api(*ALL, get=200),
}


# --- The URLs and the objects their arguments name -------------------------------------------


def walk(patterns, prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    """(name with namespaces, pattern) of every URL, the admin's excepted."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if pattern.app_name == "admin":
                continue
            namespace = f"{prefix}{pattern.namespace}:" if pattern.namespace else prefix
            yield from walk(pattern.url_patterns, namespace)
        else:
            yield f"{prefix}{pattern.name or pattern.pattern}", pattern


@dataclass
class World:
    """One object of each kind a URL can name, in the state its pages expect."""

    incident: object
    case: object
    ready_case: object
    deciding_case: object
    individual_case: object
    settlement: object
    approved_settlement: object
    compensation: object
    approved_compensation: object
    withdrawal: object
    job: object
    reissue: object
    failed_key: str
    simulation: object = None
    history_model: str = "case"
    queue_name: str = "to_prepare"
    provider: str = "sso"
    # A version proposed by the other Tournament Manager: the matrix's one answers it.
    key: str = "eu-main"
    number: int = 1

    @property
    def case_pk(self) -> int:
        return self.case.pk


@pytest.fixture
def world(users, snapshot_factory) -> World:
    operator, manager, other_manager = users[OP], users[TM], users["second_manager"]
    incident = incident_report(
        actor=operator, title="Matrix", started_at=timezone.now() - timedelta(hours=1)
    )

    def load(**kwargs):
        return case_load_snapshot(
            actor=operator, snapshot=snapshot_factory(**kwargs), incident=incident
        )

    def submitted(case):
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
        return settlement_services.settlement_submit(settlement=settlement, actor=operator)

    case = load(tournament_id="M-1", stage="late")
    settlement = submitted(case)
    paid_case = load(tournament_id="M-2", stage="late")
    approved = settlement_services.settlement_approve(
        settlement=submitted(paid_case), actor=other_manager
    )

    def proposal(number):
        return compensation_propose(
            case=paid_case,
            actor=operator,
            reason=f"lag {number}",
            entries=[CompensationEntry("p000001", 100 + number)],
        )

    approved_compensation = compensation_approve(compensation=proposal(1), actor=other_manager)
    prepared = load(tournament_id="M-5", stage="late")
    job = jobs.job_start(
        kind="prepare",
        actor=operator,
        target="matrix",
        items=[jobs.NewItem(str(prepared.pk), str(prepared))],
    )
    # The cashier could not pay two lines; one of them is proposed for a re-issue.
    first, second = list(approved_lines(releases_of(settlement=approved.pk)))[:2]
    payment_confirm(
        actor=users[CA],
        confirmations=[
            ConfirmationEntry(line.key, "failed", "closed", timezone.now(), line.amount)
            for line in (first, second)
        ],
    )
    reissue = reissue_propose(actor=operator, idempotency_key=first.key, reason="fixed")
    version = rulebook_version_propose(
        key="eu-main",
        parameters={},
        text="Matrix.",
        effective_from=timezone.now() + timedelta(days=7),
        actor=other_manager,
        reason="matrix",
    )
    simulation = simulation_start(
        version=version, actor=other_manager, cases=simulation_cases(), selection={}
    )
    return World(
        simulation=simulation,
        job=job,
        reissue=reissue,
        failed_key=second.key,
        incident=incident,
        case=case,
        ready_case=load(tournament_id="M-3", stage="late"),
        deciding_case=load(tournament_id="M-4", type="freeroll", stage="middle"),
        individual_case=individual_case_open(
            actor=manager,
            tournament=paid_case.tournament,
            players=["p000002"],
            description="kicked at the final table",
        ),
        settlement=settlement,
        approved_settlement=approved,
        compensation=proposal(2),
        approved_compensation=approved_compensation,
        withdrawal=prize_withdrawal_decide(
            case=paid_case,
            actor=other_manager,
            player="p000002",
            prize="a seat paid twice",
            outcome="withdraw",
            reason="paid twice",
            amount=100,
            unit="cash",
        ),
    )


def url_of(name: str, pattern: URLPattern, entry: Entry, world: World) -> str:
    kwargs = {}
    # An argument of an enclosing include() (allauth's passkey pages) is named by entry.args.
    for argument in {**pattern.pattern.converters, **entry.args}:
        attribute = entry.args.get(argument, argument.removesuffix("_id"))
        value = getattr(world, attribute, None)
        assert value is not None, f"{name}: no object for the URL argument {argument!r}"
        kwargs[argument] = getattr(value, "pk", value)
    return reverse(name, kwargs=kwargs) + entry.query


@pytest.fixture
def clients(users) -> dict[str, tuple[Client, dict]]:
    """For each kind of visitor: a client with its session, and its API credentials."""
    visitors = {ANON: (Client(), {})}
    for who in SIGNED_IN:
        client = Client()
        client.force_login(users[who])
        _, raw = api_token_create(user=users[who], name="matrix")
        visitors[who] = (client, {"HTTP_AUTHORIZATION": f"Bearer {raw}"})
    return visitors


def visit(client: Client, method: str, url: str, entry: Entry, token: dict) -> int:
    with transaction.atomic():
        if method == "get":
            response = client.get(url, **(token if entry.api else {}))
        elif entry.api:
            response = client.post(
                url, b"", content_type="application/json", CONTENT_LENGTH="0", **token
            )
        else:
            response = client.post(url, {})
        transaction.set_rollback(True)
    return response.status_code


# --- The test ------------------------------------------------------------------------------


def test_every_url_answers_every_role_as_the_matrix_says(world, clients):
    patterns = dict(walk(get_resolver().url_patterns))
    assert not patterns.keys() - MATRIX.keys(), (
        "URLs without an entry in MATRIX (add one): "
        + ", ".join(sorted(patterns.keys() - MATRIX.keys()))
    )
    assert not MATRIX.keys() - patterns.keys(), "MATRIX entries without a URL: " + ", ".join(
        sorted(MATRIX.keys() - patterns.keys())
    )

    wrong = []
    for name, pattern in sorted(patterns.items()):
        entry = MATRIX[name]
        url = url_of(name, pattern, entry, world)
        for method, expected in (("get", entry.get), ("post", entry.post)):
            for who, status in expected.items():
                client, token = clients[who]
                got = visit(client, method, url, entry, token)
                if got != status:
                    wrong.append(f"{method.upper()} {url} as {who}: {got}, expected {status}")
    assert not wrong, "\n".join(wrong)


def test_anonymous_visitors_are_sent_to_sign_in_and_come_back(world, clients):
    client, _ = clients[ANON]
    url = reverse("case_detail", args=[world.case.pk])
    response = client.get(url)
    assert response["Location"] == f"{reverse('login')}?next={url}"


@pytest.mark.parametrize("who", WHO)
def test_the_admin_is_for_staff_only(clients, who, django_user_model):
    client, _ = clients[who]
    response = client.get(reverse("admin:index"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))
    staff = make_user(django_user_model, "admin-staff", is_staff=True, is_superuser=True)
    client.force_login(staff)
    assert client.get(reverse("admin:index")).status_code == 200


def test_the_walk_sees_nested_and_namespaced_urls():
    names = dict(walk(get_resolver().url_patterns))
    assert {"api:snapshots", "dashboard", "healthz"} <= names.keys()
    assert not any(name.startswith("admin:") for name in names)
