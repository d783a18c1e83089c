"""The review page's second opinion: policy against ICM for the Tournament Manager and the
auditor only, who loses most first, paged, flagged by the site's threshold, with its chart."""

import pytest
from django.core.cache import caches
from django.urls import reverse

from settlements import site_policy
from settlements.models import IcmValue, Job
from settlements.selectors.icm import icm_chart_points
from settlements.services import compensation as compensation_services
from settlements.services.settlements import settlement_prepare
from tests.views.conftest import HTMX, assert_full_page, assert_partial, signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def late(operator, load_case):
    # RULES.md §7's shape: three players left, all in the money; the chip leader is capped
    # nowhere near their ICM value's lead, so the policy pays them less than ICM.
    case = load_case(type="regular", stage="late", entrants=20, tournament_id="T-ICM")
    return settlement_prepare(case=case, actor=operator)


def review(settlement, **query):
    url = reverse("settlement_review", args=[settlement.pk])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def test_managers_see_each_remaining_player_who_loses_most_first(as_manager, late, settings):
    settings.ICM_FLAG_PERCENT, settings.ICM_FLAG_MIN_AMOUNT = 1, 1
    html = assert_full_page(as_manager.get(review(late)))
    assert 'id="second-opinion"' in html
    rows = list(IcmValue.objects.filter(valuation__settlement=late).order_by("difference"))
    table = html[html.index('id="icm-table"') :]
    positions = [table.index(row.player) for row in rows]
    assert positions == sorted(positions)
    assert "Exactly, over every order" in html
    assert 'class="series series--icm"' in html
    flagged = [row for row in rows if row.difference < 0 and -row.difference * 100 >= row.amount]
    assert f"{len(flagged)} player" in html
    assert html.count("badge badge--warn") == len(flagged)


def test_the_auditor_sees_it_and_others_do_not(as_auditor, as_operator, as_marketing, late):
    assert 'id="second-opinion"' in as_auditor.get(review(late)).content.decode()
    for client in (as_operator, as_marketing):
        assert 'id="second-opinion"' not in client.get(review(late)).content.decode()
        response = client.get(
            review(late, icm_page=1), headers={"HX-Target": "second-opinion"}, **HTMX
        )
        assert response.status_code == 200
        assert 'id="second-opinion"' not in response.content.decode()


def test_the_panel_pages_alone_over_htmx(as_manager, operator, load_case, settings):
    settings.ICM_SAMPLES = 200
    case = load_case(type="regular", stage="middle", entrants=120, tournament_id="T-BIG")
    settlement = settlement_prepare(case=case, actor=operator)
    response = as_manager.get(
        review(settlement, icm_page=2), headers={"HX-Target": "second-opinion"}, **HTMX
    )
    html = assert_partial(response, "second-opinion")
    assert "Page 2 of 3" in html
    assert "Estimated from 200 finishing orders" in html
    assert "±" in html


def test_a_valuation_still_running_says_so(as_manager, operator, load_case, settings):
    # Queued for a worker, not run in the request: the panel points at the job's progress.
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    case = load_case(type="regular", stage="middle", entrants=120, tournament_id="T-RUN")
    settlement = settlement_prepare(case=case, actor=operator)
    html = as_manager.get(review(settlement)).content.decode()
    assert "still being worked out" in html
    job = Job.objects.get(kind=Job.Kind.ICM)
    assert job.incident is None  # started by the prepare, not among the incident's bulk work
    assert reverse("job_detail", args=[job.pk]) in html
    assert 'id="icm-table"' not in html
    progress = assert_full_page(as_manager.get(reverse("job_detail", args=[job.pk])))
    assert "Samples 101–200" in progress


def test_proposing_from_the_comparison_fills_the_form_with_the_differences(
    as_manager, late, settings, tournament_manager, second_manager
):
    settings.ICM_FLAG_PERCENT, settings.ICM_FLAG_MIN_AMOUNT = 1, 1
    flagged = [
        row
        for row in IcmValue.objects.filter(valuation__settlement=late).order_by("difference")
        if row.difference < 0 and -row.difference * 100 >= row.amount
    ]
    assert flagged
    assert "?from=icm" in as_manager.get(review(late)).content.decode()
    url = reverse("compensation_new", args=[late.case_id])
    html = assert_full_page(as_manager.get(url + "?from=icm"))
    assert "Filled in from the ICM second opinion" in html
    for row in flagged:
        assert f"{row.player} {-row.difference // 100}.{-row.difference % 100:02d}" in html
    # The manager edits an amount and proposes; the proposal keeps the figures.
    first = flagged[0]
    response = as_manager.post(
        url, {"entries": f"{first.player} 1.00", "reason": "short of ICM", "from_icm": "True"}
    )
    assert response.status_code == 302
    compensation = late.case.compensations.get()
    assert list(compensation.icm_figures["players"]) == [first.player]
    detail = as_manager.get(response.url).content.decode()
    assert 'id="compensation-from-icm"' in detail
    # Approved by another manager, the player's statement explains where it came from.
    compensation_services.compensation_approve(
        compensation=compensation, actor=second_manager, reason="ok"
    )
    statement = reverse("settlement_statement", args=[late.pk]) + f"?player={first.player}"
    text = as_manager.get(statement).content.decode()
    assert "It was proposed from the ICM comparison" in text


def test_an_ordinary_proposal_records_no_figures(as_manager, late):
    url = reverse("compensation_new", args=[late.case_id])
    html = as_manager.get(url).content.decode()
    assert "Filled in from the ICM second opinion" not in html
    player = IcmValue.objects.filter(valuation__settlement=late).first().player
    response = as_manager.post(
        url, {"entries": f"{player} 1.00", "reason": "lag", "from_icm": "False"}
    )
    assert response.status_code == 302
    assert late.case.compensations.get().icm_figures == {}


def test_a_satellites_shortfall_is_proposed_in_tdollars(as_manager, operator, load_case, settings):
    settings.ICM_FLAG_PERCENT, settings.ICM_FLAG_MIN_AMOUNT = 0, 1
    # Pool 20 x 10.00: three seats of 60.00 and 20.00 in T$ for fourth, four players left. By
    # rank the short stack gets the 20.00; by ICM it might still have won a seat.
    stacks = [9000, 7000, 5000, 3000] + [0] * 16
    players = [{"id": f"p{n:06d}", "chips": chips} for n, chips in enumerate(stacks, start=1)]
    case = load_case(
        type="satellite",
        stage="late",
        entrants=20,
        seat_value=6000,
        players=players,
        tournament_id="S-ICM",
    )
    settlement = settlement_prepare(case=case, actor=operator)
    losers = IcmValue.objects.filter(valuation__settlement=settlement, difference__lt=0)
    assert losers.exists()
    url = reverse("compensation_new", args=[case.pk]) + "?from=icm"
    html = as_manager.get(url).content.decode()
    for row in losers:
        assert f"{row.player} {-row.difference // 100}.{-row.difference % 100:02d} T$" in html


def _icm_chart(client, settlement) -> str:
    html = client.get(review(settlement)).content.decode()
    panel = html[html.index('id="second-opinion"') :]
    return panel[panel.index('<figure class="chart">') : panel.index("</figure>")]


def test_the_icm_chart_is_drawn_once_for_every_process(as_manager, late, monkeypatch):
    """Its fragment is kept in each process's memory and its figures in the shared cache: a
    process that has not drawn it reads them rather than reading every value again."""
    reads = []
    real = icm_chart_points
    monkeypatch.setattr(
        "settlements.selectors.icm.icm_chart_points", lambda v: reads.append(v.pk) or real(v)
    )
    first = _icm_chart(as_manager, late)
    assert "<svg" in first
    assert len(reads) == 1
    caches["pages"].clear()
    assert _icm_chart(as_manager, late) == first
    assert len(reads) == 1


def test_a_knock_outs_bounties_are_shown_apart_from_the_comparison(as_manager, operator, load_case):
    case = load_case(type="regular", stage="late", entrants=20, rebuys=True, tournament_id="T-KO")
    settlement = settlement_prepare(case=case, actor=operator)
    html = assert_full_page(as_manager.get(review(settlement)))
    table = html[html.index('id="icm-table"') :]
    assert "The policy pays from the pool" in table
    assert "Bounties, paid besides" in table


def test_a_tournament_without_bounties_has_no_bounty_column(as_manager, late):
    html = assert_full_page(as_manager.get(review(late)))
    assert "Bounties, paid besides" not in html
    assert "The policy pays</th>" in html


def test_the_approver_sees_the_icm_figures_and_who_the_proposer_added(
    late, second_manager, tournament_manager, settings
):
    settings.ICM_FLAG_PERCENT, settings.ICM_FLAG_MIN_AMOUNT = 1, 1
    rows = list(IcmValue.objects.filter(valuation__settlement=late).order_by("difference"))
    loser, other = rows[0], rows[-1]
    assert loser.difference < 0
    compensation = compensation_services.compensation_propose(
        case=late.case,
        actor=tournament_manager,
        reason="short of ICM",
        entries=[
            compensation_services.CompensationEntry(player=loser.player, amount=-loser.difference),
            compensation_services.CompensationEntry(player=other.player, amount=500),
        ],
        from_icm=True,
    )
    html = assert_full_page(
        signed_in(second_manager).get(reverse("compensation_detail", args=[compensation.pk]))
    )
    table = html[html.index('id="compensation-items"') :]
    assert "ICM value" in table
    flagged_row = table[table.index(loser.player) :].split("</tr>")[0]
    assert "Flagged" in flagged_row
    added_row = table[table.index(other.player) :].split("</tr>")[0]
    assert "added by the proposer" in added_row


def test_a_player_added_by_hand_is_not_given_the_shortfall_reason(
    as_manager, late, settings, tournament_manager, second_manager
):
    settings.ICM_FLAG_PERCENT, settings.ICM_FLAG_MIN_AMOUNT = 1, 1
    rows = list(IcmValue.objects.filter(valuation__settlement=late).order_by("difference"))
    loser, other = rows[0], rows[-1]
    url = reverse("compensation_new", args=[late.case_id])
    html = assert_full_page(as_manager.get(url + "?from=icm"))
    shortfall = "less than their stacks&#x27; ICM value by at least 1 % and 0.01 USD"
    assert shortfall in html
    # The manager keeps the filled-in reason, adds a player by hand and a word about them.
    reason = (
        "The settlement pays these players less than their stacks' ICM value by at least "
        "1 % and 0.01 USD; compensated for the difference."
    )
    entries = f"{loser.player} {-loser.difference / 100:.2f}\n{other.player} 5.00"
    response = as_manager.post(url, {"entries": entries, "reason": reason, "from_icm": "True"})
    assert response.status_code == 302
    compensation = late.case.compensations.get()
    compensation_services.compensation_approve(
        compensation=compensation, actor=second_manager, reason="ok"
    )

    def also(player):
        page = as_manager.get(reverse("settlement_statement", args=[late.pk]), {"player": player})
        text = page.content.decode()
        return text[text.index("Also on record") :].split("</ul>")[0]

    assert "stacks&#x27; ICM value" in also(loser.player)
    assert "It was proposed from the ICM comparison" in also(loser.player)
    added = also(other.player)
    assert f"Compensation #{compensation.pk}" in added
    assert "ICM" not in added and "Reason" not in added


def test_a_player_added_by_hand_keeps_the_words_written_for_them(
    as_manager, late, settings, tournament_manager, second_manager
):
    settings.ICM_FLAG_PERCENT, settings.ICM_FLAG_MIN_AMOUNT = 1, 1
    rows = list(IcmValue.objects.filter(valuation__settlement=late).order_by("difference"))
    loser, other = rows[0], rows[-1]
    shortfall = site_policy.icm_flag().shortfall_reason("USD")
    compensation = compensation_services.compensation_propose(
        case=late.case,
        actor=tournament_manager,
        reason=f"{shortfall} Another player lost their seat at the crash.",
        entries=[
            compensation_services.CompensationEntry(player=loser.player, amount=-loser.difference),
            compensation_services.CompensationEntry(player=other.player, amount=500),
        ],
        from_icm=True,
    )
    compensation_services.compensation_approve(
        compensation=compensation, actor=second_manager, reason="ok"
    )
    page = as_manager.get(reverse("settlement_statement", args=[late.pk]), {"player": other.player})
    text = page.content.decode()
    added = text[text.index("Also on record") :].split("</ul>")[0]
    assert "Reason: Another player lost their seat at the crash." in added
    assert "ICM" not in added
