"""No page fails: not on a second look, not for any snapshot the checks let in.

The first test renders every page of the app (the URL resolver's, as the permission matrix
walks it, with real objects from a seeded workflow) as every kind of visitor, each page twice:
once with empty caches, once with what the first visit cached. The second loads snapshots
that hypothesis generates within the checks (names and ids in any script, amounts up to the
limits, crash times at both edges of what can be stored) through the API, takes them through
the workflow, and renders everything that shows them, as every role. No answer is a 5xx.
"""

import json
import unicodedata
from datetime import UTC, datetime

import pytest
from django.db import transaction
from django.test import Client
from django.urls import get_resolver, reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from settlements import bounds
from settlements.access import roles
from settlements.models import Case, CasePlayer, Settlement
from settlements.services import settlements as settlement_services
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from settlements.services.tokens import api_token_create
from settlements.workflow import CaseStatus
from tests import test_permission_matrix as matrix
from tests.api.conftest import bearer, post_snapshot
from tests.conftest import build_snapshot, clear_caches
from tests.test_permission_matrix import ALL, ANON, MATRIX, NONE, url_of, walk
from tests.views.conftest import HTMX

pytestmark = pytest.mark.django_db

OP = roles.OPERATOR
# The permission matrix's workflow: one object of every kind a URL can name.
world = matrix.world


@pytest.fixture
def visitors(users) -> dict[str, tuple[Client, dict]]:
    """Every kind of visitor: a client signed in as them, and their API credentials."""
    found = {ANON: (Client(), {})}
    for who in (*ALL, NONE):
        client = Client()
        client.force_login(users[who])
        _, raw = api_token_create(user=users[who], name="pages")
        found[who] = (client, bearer(raw))
    return found


def _get(client: Client, url: str, headers: dict) -> int:
    response = client.get(url, **headers)
    if hasattr(response, "streaming_content"):
        b"".join(response.streaming_content)  # an export fails while it streams, if at all
    return response.status_code


def _extra_urls(world) -> list[str]:
    """Views of the same pages that their URL patterns alone do not reach."""
    return [
        reverse("history") + "?view=events",
        reverse("history_export") + "?view=events",
        reverse("compensation_list") + "?status=approved",
        reverse("compensation_list") + "?status=all",
        reverse("individual_case_list") + "?status=all",
        reverse("case_detail", args=[world.deciding_case.pk]),
        reverse("case_detail", args=[world.individual_case.pk]),
        reverse("case_detail", args=[world.approved_settlement.case_id]),
        reverse("settlement_review", args=[world.approved_settlement.pk]),
        reverse("compensation_detail", args=[world.approved_compensation.pk]),
        reverse("history_record", args=["tournament", world.case.tournament_id]),
        reverse("history_record", args=["settlement", world.approved_settlement.pk]),
        reverse("api:case", args=[world.approved_settlement.case_id]),
    ]


@pytest.mark.slow  # some two thousand pages
def test_every_page_answers_every_visitor_twice_without_a_server_error(world, visitors):
    urls = []
    for name, pattern in sorted(walk(get_resolver().url_patterns)):
        entry = MATRIX[name]
        if set(entry.get.values()) != {405}:  # pages that answer GET
            urls.append((url_of(name, pattern, entry, world), entry.api))
    urls += [(url, url.startswith("/api/")) for url in _extra_urls(world)]

    clear_caches()
    first, failures = {}, []
    for look in ("cold", "warm"):
        for url, is_api in urls:
            for who, (client, token) in visitors.items():
                for variant, headers in (("page", {}), ("htmx", HTMX)):
                    if is_api and variant == "htmx":
                        continue
                    status = _get(client, url, token if is_api else headers)
                    key = (url, who, variant)
                    if status >= 500:
                        failures.append(f"{look}: GET {url} ({variant}) as {who}: {status}")
                    elif look == "warm" and status != first[key]:
                        failures.append(f"GET {url} as {who}: {first[key]}, then {status}")
                    first.setdefault(key, status)
    assert not failures, "\n".join(failures)


# --- Generated snapshots -----------------------------------------------------------------------

# Letters, digits, punctuation and symbols of any script: what ids and names may hold.
PRINTABLE = st.characters(
    categories=["L", "N", "P", "S"], exclude_characters="\x00", max_codepoint=0x2FFFF
)
TIMES = st.one_of(
    st.sampled_from(
        [
            "0001-01-02T00:00:00Z",
            "0001-01-02T15:59:00+15:59",
            # The desk refuses a crash in the future, so the latest it lets in is about now.
            "2025-12-31T23:59:59.999999Z",
            "2025-12-31T08:00:00-15:59",
            "2016-12-31T23:59:60Z",
        ]
    ),
    st.datetimes(
        min_value=bounds.EARLIEST.replace(tzinfo=None),
        max_value=datetime(2025, 12, 31),
    ).map(lambda moment: moment.replace(tzinfo=UTC).isoformat().replace("+00:00", "Z")),
    st.none(),
)


def _text(min_size: int, max_size: int):
    return st.text(PRINTABLE, min_size=min_size, max_size=max_size).map(
        lambda text: unicodedata.normalize("NFC", text)
    )


@st.composite
def snapshots(draw) -> dict:
    type_ = draw(st.sampled_from(["regular", "freeroll", "satellite"]))
    entrants = draw(st.integers(8, 24))
    buy_in = draw(st.sampled_from([0, 1, 999, 10**15 // entrants]))
    guarantees = [10**6, 10**15] if buy_in == 0 else [None, 10**6, 10**15]
    doc = build_snapshot(
        type=type_,
        stage=draw(st.sampled_from(["pre", "early", "middle", "late"])),
        entrants=entrants,
        tournament_id=draw(_text(1, 40)),
        name=draw(_text(0, 60)),
        currency=draw(st.sampled_from(["USD", "EUR", "JPY", "BHD", "XXX"])),
        buy_in=buy_in,
        fee=draw(st.sampled_from([0, 1, 10**15])),
        guarantee=draw(st.sampled_from(guarantees)),
        prize_pool=draw(st.sampled_from([10, 10_000, 10**15])),
        fpp_buy_in=draw(st.sampled_from([0, 10**15])),
        crashed_at=draw(TIMES),
    )
    # Ids in any script, told apart by a number so that no two look alike.
    prefix = draw(_text(1, 12))
    scale = draw(st.sampled_from([1, 10**9, 10**13]))
    for number, player in enumerate(doc["players"]):
        player["id"] = f"{prefix}{number}"
        player["chips"] *= scale
    return doc


def _pages(case: Case, settlement: Settlement | None, compensation) -> list[tuple[str, bool]]:
    first_player = CasePlayer.objects.filter(case=case, position=0).values_list(
        "player", flat=True
    )[0]
    urls = [
        reverse("dashboard"),
        reverse("case_detail", args=[case.pk]),
        reverse("case_withdraw", args=[case.pk]),
        reverse("case_decision", args=[case.pk]),
        reverse("compensation_new", args=[case.pk]),
        reverse("incident_timeline", args=[case.incident_id]),
        reverse("history") + f"?case={case.pk}",
        reverse("history") + f"?case={case.pk}&view=events",
        reverse("history_export") + f"?case={case.pk}",
        reverse("history_export") + f"?case={case.pk}&view=events",
        reverse("history_record", args=["case", case.pk]),
        reverse("history_record", args=["tournament", case.tournament_id]),
        reverse("history_record", args=["incident", case.incident_id]),
    ]
    if settlement is not None:
        urls += [
            reverse("settlement_review", args=[settlement.pk]),
            reverse("settlement_player", args=[settlement.pk]) + f"?player={first_player}",
            reverse("settlement_ledger", args=[settlement.pk]),
            reverse("history_record", args=["settlement", settlement.pk]),
        ]
    if compensation is not None:
        urls += [
            reverse("compensation_detail", args=[compensation.pk]),
            reverse("compensation_ledger", args=[compensation.pk]),
            reverse("compensation_list") + "?status=all",
        ]
    api = [reverse("api:cases"), reverse("api:case", args=[case.pk])]
    return [(url, False) for url in urls] + [(url, True) for url in api]


# Each example renders some ninety pages, so it runs a tenth of the examples the hypothesis
# profile gives a property (3 locally, 50 in CI where the profile says 500).
@pytest.mark.slow
@settings(
    max_examples=max(3, settings.default.max_examples // 10),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(doc=snapshots(), workflow=st.sampled_from(["loaded", "prepared", "approved"]))
def test_every_snapshot_the_checks_let_in_can_be_shown_to_every_role(
    users, visitors, doc, workflow
):
    operator, manager = users[OP], users["second_manager"]
    api, operator_token = Client(), visitors[OP][1]["HTTP_AUTHORIZATION"].removeprefix("Bearer ")
    body = json.dumps(doc, ensure_ascii=False).encode()
    with transaction.atomic():
        response = post_snapshot(api, operator_token, body)
        assert response.status_code == 201, response.content.decode()[:2000]
        case = Case.objects.get(pk=response.json()["case"])
        settlement = compensation = None
        if workflow != "loaded" and case.status == CaseStatus.READY:
            settlement = settlement_services.settlement_prepare(case=case, actor=operator)
            if workflow == "approved":
                settlement = settlement_services.settlement_approve(
                    settlement=settlement_services.settlement_submit(
                        settlement=settlement, actor=operator
                    ),
                    actor=manager,
                )
                compensation = compensation_approve(
                    compensation=compensation_propose(
                        case=case,
                        actor=operator,
                        reason=doc["tournament"]["name"] or "lag",
                        entries=[CompensationEntry(doc["players"][0]["id"], 10**15)],
                    ),
                    actor=manager,
                )
        failures = []
        for url, is_api in _pages(case, settlement, compensation):
            for who in ALL:  # a user without a role is refused everything (the first test)
                client, token = visitors[who]
                status = _get(client, url, token if is_api else {})
                if status >= 500:
                    failures.append(f"GET {url} as {who}: {status}")
        transaction.set_rollback(True)
    assert not failures, "\n".join(failures)


def test_the_generated_times_reach_the_earliest_edge():
    """The strategy's earliest time is the bound itself, so the two cannot drift apart; the
    latest is the desk's refusal of crashes in the future, tested with the snapshot checks."""
    assert bounds.parse_rfc3339("0001-01-02T15:59:00+15:59") == bounds.EARLIEST
