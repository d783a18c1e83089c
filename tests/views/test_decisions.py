"""The Marketing Manager's decision page: previews side by side, reason, confirmation."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from settlements.models import Decision
from settlements.money import format_minor_units
from settlements.rules import Policy, parse_snapshot, settle
from settlements.services.decisions import decision_record
from settlements.services.settlements import settlement_prepare
from settlements.templatetags.review import payout_text
from settlements.views import cached_previews
from settlements.workflow import CaseStatus
from tests.views.conftest import HISTORY_RESTORE, HTMX, assert_full_page, assert_partial

pytestmark = pytest.mark.django_db


def url(case):
    return reverse("case_decision", args=[case.pk])


def in_a_week() -> str:
    return (timezone.localtime() + timedelta(days=7)).strftime("%Y-%m-%dT%H:%M")


def test_the_options_are_previewed_side_by_side_with_the_engines_figures(as_marketing, load_case):
    case = load_case(type="satellite", stage="middle", entrants=40, tournament_id="S-PRE")
    html = assert_full_page(as_marketing.get(url(case)))
    assert "Split in proportion to chips" in html and "Split by chip equity" in html
    assert html.index('id="option-chip_proportional"') < html.index('id="option-chip_equity"')
    for option in ("chip_proportional", "chip_equity"):
        engine = settle(
            parse_snapshot(case.snapshot.text), decision=option, policy=Policy(**case.policy)
        )
        assert f"<div><dt>Players paid</dt><dd>{len(engine.payouts)}</dd></div>" in html
        assert f'aria-labelledby="preview-{option}-title"' in html
        top = next(row for row in engine.payouts if row.player == "p000001")
        assert payout_text(top, "USD") in html
    # 40 entrants x 10.00: a 400.00 USD pool split among the 20 players left, none of whom
    # reaches a seat (100.00), so all of it is paid as T$.
    assert html.count('<span class="amount">400.00 USD in T$</span>') == 2
    assert 'type="radio" name="option" value="chip_proportional"' in html
    assert "Review the decision" in html


def test_the_previews_differ_where_the_formulas_do(as_marketing, load_case):
    case = load_case(type="satellite", stage="middle", entrants=40, tournament_id="S-DIFF")
    proportional, equity = cached_previews.decision_previews(case)
    assert proportional.option == "chip_proportional" and equity.option == "chip_equity"
    assert proportional.biggest != equity.biggest or proportional.smallest != equity.smallest
    html = as_marketing.get(url(case)).content.decode()
    for preview in (proportional, equity):
        assert payout_text(preview.smallest, "USD") in html


def test_the_two_option_charts_share_one_y_scale(as_marketing, load_case):
    case = load_case(type="satellite", stage="middle", entrants=40, tournament_id="S-SCALE")
    previews = cached_previews.decision_previews(case)
    tops = {max(point.amount for point in preview.chart) for preview in previews}
    assert len(tops) == 2  # the options' biggest payouts differ...
    html = as_marketing.get(url(case)).content.decode()
    ticks = re.findall(r'class="tick-label">([^<]+)</text>', html)
    assert len(ticks) == 6
    assert ticks[:3] == ticks[3:]  # ...yet both charts run up to the same amount
    assert ticks[2] == format_minor_units(max(tops), "USD")


def test_a_freeroll_reschedule_shows_the_remaining_players_as_invitees(as_marketing, load_case):
    case = load_case(type="freeroll", stage="middle", entrants=60, tournament_id="F-INV")
    html = assert_full_page(as_marketing.get(url(case)))
    assert "Invited by default: the 30 remaining players" in html
    assert "<dt>Players paid</dt><dd>none now</dd>" in html  # a reschedule pays nothing
    assert "p000001" in html and "p000020" in html
    assert "p000021" not in html  # 20 a page
    assert "Page 1 of 2" in html
    page2 = assert_partial(
        as_marketing.get(url(case) + "?invite_page=2", **HTMX, HTTP_HX_TARGET="invitees"),
        "invitees",
    )
    assert "p000021" in page2 and "p000030" in page2 and "p000031" not in page2
    assert "Choose an option" not in page2


def test_an_early_freeroll_invites_every_entrant_by_default(as_marketing, load_case):
    case = load_case(type="freeroll", stage="early", entrants=20, tournament_id="F-EARLY")
    html = as_marketing.get(url(case)).content.decode()
    assert "Invited by default: all 20 entrants" in html
    assert "Do not reschedule" in html
    # Either answer refunds the FPP buy-in to every entrant.
    assert html.count("20 × 250 FPP") == 0 and html.count("5,000 FPP") >= 2


def test_the_form_is_a_partial_under_htmx_and_whole_on_history_restore(as_marketing, load_case):
    case = load_case(type="satellite", stage="middle", tournament_id="S-HX")
    partial = assert_partial(
        as_marketing.get(url(case), **HTMX, HTTP_HX_TARGET="decision-form"), "decision-form"
    )
    assert "Decision for case" not in partial
    assert_full_page(as_marketing.get(url(case), **HISTORY_RESTORE))


def test_option_and_reason_are_required(as_marketing, load_case):
    case = load_case(type="satellite", stage="middle", tournament_id="S-REQ")
    response = as_marketing.post(url(case), {"reason": " "}, **HTMX)
    assert response.status_code == 422
    html = assert_partial(response, "decision-form")
    assert html.count("This field is required.") == 2
    assert not Decision.objects.exists()


def test_a_valid_choice_is_restated_before_anything_is_recorded(as_marketing, load_case):
    case = load_case(type="satellite", stage="middle", entrants=40, tournament_id="S-CONF")
    data = {"option": "chip_equity", "reason": "Closer to what players expect"}
    response = as_marketing.post(url(case), data, **HTMX)
    assert response.status_code == 200
    html = assert_partial(response, "decision-form")
    assert f"Decide case #{case.pk} (S-CONF): <strong>Split by chip equity</strong>." in html
    preview = cached_previews.decision_previews(case)[1]
    assert f"{preview.players_paid} players will be paid; from the prize pool" in html
    assert "Your reason: “Closer to what players expect”" in html
    assert 'type="hidden" name="option" value="chip_equity"' in html
    assert 'name="step" value="confirm"' in html and "button--danger" in html
    assert not Decision.objects.exists()

    back = as_marketing.post(url(case), {**data, "step": "edit"}, **HTMX)
    html = assert_partial(back, "decision-form")
    assert 'value="chip_equity" id="id_option_1" required checked>' in html
    assert "Check before recording" not in html
    assert "Closer to what players expect</textarea>" in html
    assert not Decision.objects.exists()


def test_confirming_records_the_decision_and_returns_to_the_case(
    as_marketing, marketing_manager, load_case
):
    case = load_case(type="satellite", stage="middle", tournament_id="S-REC")
    data = {"option": "chip_proportional", "reason": "Site custom", "step": "confirm"}
    response = as_marketing.post(url(case), data)
    assert response.status_code == 302 and response.url == reverse("case_detail", args=[case.pk])
    decision = Decision.objects.get()
    assert (decision.option, decision.reason, decision.decided_by) == (
        "chip_proportional",
        "Site custom",
        marketing_manager,
    )
    case.refresh_from_db()
    assert case.status == CaseStatus.READY and case.decision == "chip_proportional"

    htmx = as_marketing.post(url(case), {**data, "option": "chip_equity"}, **HTMX)
    assert htmx.headers["HX-Redirect"] == reverse("case_detail", args=[case.pk])
    assert Decision.objects.count() == 2


def test_a_reschedule_needs_a_future_date(as_marketing, load_case):
    case = load_case(type="freeroll", stage="middle", tournament_id="F-DATE")
    data = {"option": "reschedule", "reason": "Players asked for it", "step": "confirm"}
    response = as_marketing.post(url(case), data, **HTMX)
    assert response.status_code == 422
    assert "A reschedule needs the new date." in response.content.decode()
    past = (timezone.localtime() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    response = as_marketing.post(url(case), {**data, "reschedule_at": past}, **HTMX)
    assert "The new date must be in the future." in response.content.decode()
    assert not Decision.objects.exists()


def test_a_reschedule_is_restated_with_its_date_and_invitees_then_recorded(as_marketing, load_case):
    case = load_case(type="freeroll", stage="middle", entrants=60, tournament_id="F-RES")
    data = {"option": "reschedule", "reason": "Players asked for it", "reschedule_at": in_a_week()}
    html = as_marketing.post(url(case), data, **HTMX).content.decode()
    assert "The freeroll runs again on" in html
    assert "Invited: the 30 remaining players." in html
    assert "Nothing is paid now." in html
    as_marketing.post(url(case), {**data, "step": "confirm"})
    decision = Decision.objects.get()
    assert decision.option == "reschedule"
    assert decision.invite_scope == Decision.InviteScope.REMAINING
    assert decision.reschedule_at is not None


def test_a_hand_picked_invitation_list_goes_to_the_service(as_marketing, load_case):
    case = load_case(type="freeroll", stage="middle", entrants=20, tournament_id="F-PICK")
    data = {
        "option": "reschedule",
        "reason": "Only the table that crashed",
        "reschedule_at": in_a_week(),
        "invited": "p000001\np000002, p000003",
    }
    html = as_marketing.post(url(case), data, **HTMX).content.decode()
    assert "Invited: the 3 players you listed." in html
    as_marketing.post(url(case), {**data, "step": "confirm"})
    decision = Decision.objects.get()
    assert decision.invite_scope == Decision.InviteScope.CUSTOM
    assert decision.invited_players == ["p000001", "p000002", "p000003"]


@pytest.mark.parametrize("step", ["", "confirm"])
def test_an_unknown_invitee_is_refused_next_to_the_field(as_marketing, load_case, step):
    case = load_case(type="freeroll", stage="middle", entrants=20, tournament_id="F-BAD")
    data = {
        "option": "reschedule",
        "reason": "r",
        "reschedule_at": in_a_week(),
        "invited": "p000001 nobody",
        "step": step,
    }
    response = as_marketing.post(url(case), data, **HTMX)
    assert response.status_code == 422
    html = response.content.decode()
    field = html[html.index('<div class="field field--error">') :]
    field = field[: field.index("</div>")]
    assert 'id="id_invited"' in field
    assert "Only entrants can be invited; not entrants: nobody." in field
    assert "Check before recording" not in html
    assert not Decision.objects.exists()


def test_a_case_past_its_decision_cannot_be_decided_again(
    as_marketing, marketing_manager, operator, load_case
):
    case = load_case(type="satellite", stage="middle", tournament_id="S-LATE")
    decision_record(case=case, actor=marketing_manager, option="chip_equity", reason="first")
    settlement_prepare(case=case, actor=operator)
    html = as_marketing.get(url(case)).content.decode()
    assert f"Cannot record a decision on Case #{case.pk} (S-LATE): it is prepared." in html
    assert "Review the decision" not in html
    # One message, and the choice shown as made, not offered.
    assert html.count('class="alert') == 1
    assert "A new decision replaces it" not in html
    assert "<strong>Split by chip equity</strong> is in force, decided by marketing" in html
    radios = re.findall(r'<input type="radio" name="option"[^>]*>', html)
    assert len(radios) == 2 and all(" disabled" in radio for radio in radios)
    assert "checked" in next(radio for radio in radios if 'value="chip_equity"' in radio)
    response = as_marketing.post(
        url(case), {"option": "chip_proportional", "reason": "r", "step": "confirm"}, **HTMX
    )
    assert response.status_code == 422
    assert Decision.objects.count() == 1


def test_only_marketing_managers_decide(client, as_operator, as_manager, as_auditor, load_case):
    case = load_case(type="satellite", stage="middle", tournament_id="S-ROLE")
    response = client.get(url(case))
    assert response.status_code == 302 and response.url.startswith(reverse("login"))
    for other in (as_operator, as_manager, as_auditor):
        assert other.get(url(case)).status_code == 403
        data = {"option": "chip_equity", "reason": "r", "step": "confirm"}
        assert other.post(url(case), data).status_code == 403
    assert not Decision.objects.exists()


def test_a_case_without_a_decision_says_so(as_marketing, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-NONE")
    html = as_marketing.get(url(case)).content.decode()
    assert f"Case #{case.pk} (T-NONE) needs no decision: the rules settle it without one." in html
    assert "Review the decision" not in html


def test_the_case_page_links_the_marketing_manager_to_the_decision(
    as_marketing, as_operator, load_case
):
    case = load_case(type="satellite", stage="middle", tournament_id="S-LINK")
    page = reverse("case_detail", args=[case.pk])
    assert f'href="{url(case)}"' in as_marketing.get(page).content.decode()
    assert f'href="{url(case)}"' not in as_operator.get(page).content.decode()


def test_the_recorded_decision_is_announced_in_words(as_marketing, load_case):
    case = load_case(type="satellite", stage="middle", tournament_id="S-WORDS")
    data = {"option": "chip_proportional", "reason": "Site custom", "step": "confirm"}
    page = as_marketing.post(url(case), data, follow=True).content.decode()
    assert f"Decision recorded for case #{case.pk}: Split in proportion to chips." in page
    assert "chip_proportional." not in page


def test_a_locked_reschedule_shows_its_date_and_list_disabled(
    as_marketing, marketing_manager, operator, load_case
):
    case = load_case(type="freeroll", stage="middle", entrants=20, tournament_id="F-LOCK")
    decision_record(
        case=case,
        actor=marketing_manager,
        option="reschedule",
        reason="rerun",
        reschedule_at=timezone.now() + timedelta(days=3),
        invited_players=["p000001"],
    )
    settlement_prepare(case=case, actor=operator)
    html = as_marketing.get(url(case)).content.decode()
    date = re.search(r'<input type="datetime-local" name="reschedule_at"[^>]*>', html)[0]
    assert " disabled" in date and 'value="' in date
    assert re.search(r'<textarea name="invited"[^>]*disabled[^>]*>\s*p000001</textarea>', html)


def test_the_comparison_lists_the_largest_differences_first(as_marketing, load_case):
    case = load_case(type="satellite", stage="middle", entrants=40, tournament_id="S-CMP")
    html = as_marketing.get(url(case)).content.decode()
    assert 'id="comparison-title">Who gains and who loses' in html
    policy = Policy(**case.policy)
    snapshot = parse_snapshot(case.snapshot.text)
    first, second = (
        {row.player: row for row in settle(snapshot, decision=option, policy=policy).payouts}
        for option in ("chip_proportional", "chip_equity")
    )
    # T$ only here (no share reaches a seat at this seat value), so worth is T$.
    gaps = {player: second[player].tdollars - first[player].tdollars for player in first}
    more_equity = sum(gap > 0 for gap in gaps.values())
    more_proportional = sum(gap < 0 for gap in gaps.values())
    assert (
        f"{more_equity} players get more with <strong>Split by chip equity</strong>, "
        f"{more_proportional} more with <strong>Split in proportion to chips</strong>"
    ) in html
    table = html[html.index('id="comparison-table"') :]
    shown = re.findall(r'<td class="mono">(p\d+)</td>', table)
    expected = sorted(
        (player for player in gaps if gaps[player]),
        key=lambda player: (-abs(gaps[player]), -snapshot_chips(snapshot, player), player),
    )[:20]
    assert shown == expected
    leader = shown[0]
    row = table[table.index(f">{leader}<") :]
    row = row[: row.index("</tr>")]
    assert payout_text(first[leader], "USD") in row and payout_text(second[leader], "USD") in row
    gainer = "Split by chip equity" if gaps[leader] > 0 else "Split in proportion to chips"
    assert f"<td>{gainer}</td>" in row
    assert format_minor_units(abs(gaps[leader]), "USD") in row


def snapshot_chips(snapshot, player: str) -> int:
    return next(entry.chips for entry in snapshot.players if entry.id == player)


def test_options_that_pay_the_same_say_so(as_marketing, load_case):
    case = load_case(type="freeroll", stage="early", entrants=20, tournament_id="F-SAME")
    html = as_marketing.get(url(case)).content.decode()
    assert "Both options pay every player exactly the same." in html
    assert 'id="comparison-table"' not in html


def test_each_satellite_option_says_how_many_seats_it_gives(as_marketing, load_case):
    case = load_case(
        type="satellite", stage="middle", entrants=40, seat_value=3000, tournament_id="S-SEAT"
    )
    html = as_marketing.get(url(case)).content.decode()
    previews = cached_previews.decision_previews(case)
    # The two options differ here: proportional gives the leaders seats, equity none.
    assert {bool(p.totals.by_source["pool"].get("tickets")) for p in previews} == {True, False}
    for preview in previews:
        line = html[html.index(f'id="seats-{preview.option}"') :]
        line = line[: line.index("</p>")]
        seats = preview.totals.by_source["pool"].get("tickets", 0)
        if seats:
            assert f"<strong>{seats} seat{'s' if seats > 1 else ''}</strong>" in line
            assert "an entry to the target tournament, worth 30.00 USD" in line
            assert f"Together {format_minor_units(seats * 3000, 'USD')} of the 400.00 USD" in line
        else:
            assert "<strong>No seats.</strong>" in line
            assert "A seat (an entry to the target tournament) is worth 30.00 USD" in line
            assert "all of the 400.00 USD pool is paid in T$" in line


def test_a_refused_form_lists_its_problems_at_the_top_for_the_focus(as_marketing, load_case):
    case = load_case(type="satellite", stage="middle", tournament_id="S-SUMMARY")
    response = as_marketing.post(url(case), {"reason": ""}, **HTMX)
    html = assert_partial(response, "decision-form")
    summary = re.search(r"<div [^>]*data-error-summary[^>]*>(.*?)</div>", html, re.S)
    assert 'tabindex="-1"' in summary[0] and 'role="alert"' in summary[0]
    assert "Not sent: 2 fields need attention." in summary[1]
    assert '<a href="#id_option_0">Option</a>' in summary[1]
    assert '<a href="#id_reason">Why this option</a>' in summary[1]
    assert 'id="id_reason"' in html and 'id="id_option_0"' in html


def test_a_knock_out_satellites_previews_show_the_bounties_each_option_pays(
    as_marketing, load_case
):
    case = load_case(type="satellite", stage="middle", entrants=40, rebuys=True)
    html = assert_full_page(as_marketing.get(url(case)))
    for option in ("chip_proportional", "chip_equity"):
        engine = settle(
            parse_snapshot(case.snapshot.text), decision=option, policy=Policy(**case.policy)
        )
        bounties = sum(line.amount for line in engine.lines if line.kind == "bounty")
        assert bounties > 0
        shown = format_minor_units(bounties, "USD")
        section = html.split(f'id="option-{option}"')[1]
        assert (
            "<dt>Bounties of the players still in, paid back to them</dt>"
            f'<dd><span class="amount">{shown}' in section
        )


def test_a_reschedule_is_compared_as_a_replay_not_as_nobody_gaining(as_marketing, load_case):
    # "35 players get more with Split, 0 with Reschedule" read as if a replay were worth nothing.
    case = load_case(type="freeroll", stage="middle", entrants=60, tournament_id="F-REPLAY")
    html = assert_full_page(as_marketing.get(url(case)))
    section = html[html.index('id="comparison"') :]
    assert "more with" not in section and "Better off with" not in section
    assert re.search(r"With <strong>[^<]+</strong>, 30 players are paid now\.", section)
    assert "nobody is paid now" in section and "a seat in the replay" in section
    table = section[section.index('id="comparison-table"') : section.index("</table>")]
    assert table.count("<td>A seat in the replay</td>") == 20


def test_an_fpp_refund_is_described_without_chip_ranks(as_marketing, load_case, incident):
    # Every entrant gets their FPP back whatever their chips: a chip rank says nothing of it.
    case = load_case(type="freeroll", stage="early", entrants=20, tournament_id="F-FPP")
    for page in (url(case), reverse("incident_decide", args=[incident.pk])):
        html = assert_full_page(as_marketing.get(page))
        assert "chip rank" not in html, page
        assert "gets back the 250 FPP they paid to enter" in html, page
