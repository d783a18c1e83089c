"""The remedy in words on the case page, the settlement review, the decision page and a
player's detail: one wording (settlements.wording) for the case's type, stage and decision,
with a "Why?" link to the policy page's section on that cell."""

import html as html_lib

import pytest
from django.template import Context, Template
from django.urls import reverse

from settlements import wording
from settlements.services.decisions import decision_record
from settlements.services.settlements import settlement_prepare

pytestmark = pytest.mark.django_db


def why_link(kind: str, stage: str) -> str:
    return f'<a href="{reverse("policy")}#{wording.policy_anchor(kind, stage)}">Why?'


def page(client, name: str, pk: int) -> str:
    return html_lib.unescape(client.get(reverse(name, args=[pk])).content.decode())


@pytest.mark.parametrize(
    ("kind", "stage", "remedy"),
    [
        ("regular", "pre", "refund"),
        ("regular", "early", "refund_even_split"),
        ("regular", "middle", "chip_equity"),
        ("regular", "late", "chip_equity"),
        ("freeroll", "pre", "fpp_refund"),
        ("freeroll", "late", "chip_equity"),
        ("satellite", "early", "refund_even_split"),
        ("satellite", "late", "satellite_rank"),
    ],
)
def test_the_case_page_words_the_remedy_for_its_type_and_stage(
    as_operator, load_case, kind, stage, remedy
):
    case = load_case(type=kind, stage=stage, tournament_id=f"W-{kind}-{stage}")
    html = page(as_operator, "case_detail", case.pk)
    assert wording.describe(kind, stage, remedy) in html
    assert why_link(kind, stage) in html


@pytest.mark.parametrize(
    ("kind", "stage", "option"),
    [
        ("freeroll", "early", "no_reschedule"),
        ("freeroll", "middle", "chip_equity"),
        ("satellite", "middle", "chip_proportional"),
        ("satellite", "middle", "chip_equity"),
    ],
)
def test_after_a_decision_the_case_page_words_the_option_chosen(
    as_operator, marketing_manager, load_case, kind, stage, option
):
    case = load_case(type=kind, stage=stage, tournament_id=f"D-{kind}-{stage}-{option}")
    decision_record(case=case, actor=marketing_manager, option=option, reason="Custom")
    html = page(as_operator, "case_detail", case.pk)
    assert wording.option_description(kind, stage, option) in html
    assert why_link(kind, stage) in html


def test_a_decided_freeroll_middle_split_no_longer_promises_a_buy_in(
    as_operator, marketing_manager, load_case
):
    case = load_case(type="freeroll", stage="middle", tournament_id="F-NOFLOOR")
    decision_record(
        case=case, actor=marketing_manager, option="chip_equity", reason="Players asked"
    )
    html = page(as_operator, "case_detail", case.pk)
    next_step = html[html.index('id="case-next-step"') : html.index('id="case-settlements"')]
    assert "buy-in back" not in next_step and "every buy-in" not in next_step
    assert "first gets" not in next_step
    assert "Nobody gets more than the first prize" in next_step


def test_a_case_awaiting_its_decision_shows_no_remedy_words(as_operator, load_case):
    case = load_case(type="satellite", stage="middle", tournament_id="S-WAIT")
    html = page(as_operator, "case_detail", case.pk)
    assert "Nobody gets more than" not in html
    assert "Why?" not in html


def test_the_settlement_review_words_its_remedy_with_a_why_link(
    as_auditor, operator, marketing_manager, load_case
):
    case = load_case(type="satellite", stage="middle", entrants=40, tournament_id="S-REVW")
    decision_record(case=case, actor=marketing_manager, option="chip_proportional", reason="Custom")
    settlement = settlement_prepare(case=case, actor=operator)
    html = page(as_auditor, "settlement_review", settlement.pk)
    text = wording.option_description("satellite", "middle", "chip_proportional")
    assert text in html and "Nobody gets more than the value of one seat" in text
    assert why_link("satellite", "middle") in html


def test_a_satellite_players_cap_is_one_seat_and_a_regulars_the_first_prize(
    as_auditor, operator, marketing_manager, load_case
):
    satellite = load_case(type="satellite", stage="middle", entrants=40, tournament_id="S-CAP")
    decision_record(case=satellite, actor=marketing_manager, option="chip_equity", reason="Custom")
    regular = load_case(type="regular", stage="middle", tournament_id="T-CAP")
    for case, expected in (
        (satellite, "<dt>Capped at the value of one seat</dt>"),
        (regular, "<dt>Capped at the first prize</dt>"),
    ):
        settlement = settlement_prepare(case=case, actor=operator)
        url = reverse("settlement_player", args=[settlement.pk]) + "?player=p000001"
        assert expected in as_auditor.get(url).content.decode()


def test_the_decision_page_words_each_option_from_the_same_source(as_marketing, load_case):
    case = load_case(type="freeroll", stage="early", tournament_id="F-OPTS")
    html = page(as_marketing, "case_decision", case.pk)
    for option in ("reschedule", "no_reschedule"):
        assert wording.option_description("freeroll", "early", option) in html
    assert f'href="{reverse("policy")}#cell-freeroll-early"' in html


def test_the_tags_take_a_case_or_a_settlement(operator, load_case):
    case = load_case(type="regular", stage="late", tournament_id="T-TAG")
    settlement = settlement_prepare(case=case, actor=operator)
    template = Template("{% load remedies %}{% remedy_wording subject %}|{% policy_url subject %}")
    for subject in (case, settlement):
        words, url = template.render(Context({"subject": subject})).split("|")
        assert html_lib.unescape(words) == wording.describe("regular", "late", "chip_equity")
        assert url == f"{reverse('policy')}#cell-regular-late"


def test_a_rebuy_case_promises_back_every_buy_in_not_the_buy_in(as_operator, load_case):
    # Players who rebought paid several buy-ins: the words must not speak of a single one.
    case = load_case(stage="middle", entrants=30, tournament_id="KO-WORDS", rebuys=True)
    html = page(as_operator, "case_detail", case.pk)
    next_step = html[html.index('id="case-next-step"') : html.index('id="case-settlements"')]
    assert "first gets back every buy-in they paid" in next_step
    assert "the buy-in back" not in next_step
