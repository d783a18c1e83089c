"""The charts: the stage bar drawn from the engine's classification, payouts by chip rank and
a simulation's per-player differences."""

import re
from itertools import pairwise
from xml.etree import ElementTree

import pytest
from django.template.loader import render_to_string
from hypothesis import given
from hypothesis import strategies as st

from settlements.charts import (
    MAX_CHART_POINTS,
    ChartPoint,
    payout_chart,
    percent_text,
    sample_by_rank,
    stage_bar,
    stage_segments,
)
from settlements.difference_chart import MAX_BINS, bin_width, difference_bins, difference_chart
from settlements.rules import DEFAULT_POLICY, Policy
from settlements.rules.stage import classify

SVG = "{http://www.w3.org/2000/svg}"

# Thresholds at both ends and in between, equal and apart.
POLICIES = [DEFAULT_POLICY, Policy(0, 0), Policy(0, 100), Policy(10, 10), Policy(50, 60)]


def parse(svg: str) -> ElementTree.Element:
    # Well-formed XML, so browsers and screen readers see what we meant.
    return ElementTree.fromstring(svg)


def percent(value: str) -> float:
    assert value.endswith("%"), value
    return float(value[:-1])


def engine_stage(entrants: int, eliminated: int, paid_places: int, policy: Policy) -> str:
    return classify(
        started=True,
        entrants=entrants,
        eliminated=eliminated,
        remaining=entrants - eliminated,
        paid_places=paid_places,
        policy=policy,
    )


def band_holding(segments, eliminated: int):
    return next(s for s in segments if s.start <= eliminated < s.end)


def draw_stage_bar(**counts) -> str:
    html = render_to_string("settlements/charts/stage_bar.html", {"bar": stage_bar(**counts)})
    # The legend under the bar is HTML, not part of the drawing.
    return html[: html.index("</svg>", html.rindex("</text>")) + len("</svg>")].strip()


def draw_payout_chart(points, *, count, currency="USD", **labels) -> str:
    chart = payout_chart(points, count=count, currency=currency, **labels)
    return render_to_string("settlements/charts/payout.html", {"chart": chart})


def draw_payouts(amounts, **labels) -> str:
    return draw_payout_chart(sample_by_rank(amounts), count=len(amounts), **labels)


@pytest.mark.parametrize(
    ("part", "whole", "text"),
    [(5, 20, "25 %"), (1, 3, "33.3 %"), (2, 3, "66.7 %"), (1, 200, "0.5 %"), (0, 7, "0 %")],
)
def test_percent_text_rounds_half_up_to_a_tenth(part, whole, text):
    assert percent_text(part, whole) == text


@pytest.mark.parametrize("policy", POLICIES)
def test_the_bands_cover_every_count_once_with_the_engines_stage(policy):
    for entrants in range(1, 41):
        for paid in range(entrants + 2):
            segments = stage_segments(entrants=entrants, paid_places=paid, policy=policy)
            assert segments[0].start == 0
            assert segments[-1].end == entrants + 1
            for before, after in zip(segments, segments[1:], strict=False):
                assert before.end == after.start
                assert before.stage != after.stage
            for eliminated in range(entrants + 1):
                assert band_holding(segments, eliminated).stage == engine_stage(
                    entrants, eliminated, paid, policy
                )


@given(
    thresholds=st.lists(st.integers(0, 100), min_size=2, max_size=2).map(sorted),
    entrants=st.integers(1, 300_000),
    data=st.data(),
)
def test_the_band_under_any_count_is_the_engines_stage(thresholds, entrants, data):
    policy = Policy(*thresholds)
    paid = data.draw(st.integers(0, entrants + 1))
    eliminated = data.draw(st.integers(0, entrants))
    segments = stage_segments(entrants=entrants, paid_places=paid, policy=policy)
    assert band_holding(segments, eliminated).stage == engine_stage(
        entrants, eliminated, paid, policy
    )


@pytest.mark.parametrize(("entrants", "paid"), [(1, 0), (3, 1), (20, 3), (20, 18), (100, 10)])
@pytest.mark.parametrize("policy", [DEFAULT_POLICY, Policy(10, 10)])
def test_the_drawn_band_under_the_case_marker_is_the_engines_stage(entrants, paid, policy):
    for eliminated in range(entrants + 1):
        counts = {"entrants": entrants, "eliminated": eliminated, "paid_places": paid}
        root = parse(draw_stage_bar(**counts, policy=policy))
        marker = percent(root.find(f"{SVG}line[@class='marker-line']").get("x1"))
        bands = [r for r in root.findall(f"{SVG}rect") if r.get("class").startswith("stage-")]
        under = [band for band in bands if percent(band.get("x")) <= marker][-1]
        expected = engine_stage(entrants, eliminated, paid, policy)
        assert under.get("class") == f"stage-{expected}"
        assert f"Stage: {expected.title()}." in stage_bar(**counts, policy=policy).text


def test_late_can_begin_before_the_early_threshold():
    # 20 entrants, 18 paid: in the money after 2 eliminations, before 25 % is reached.
    stages = [s.stage for s in stage_segments(entrants=20, paid_places=18, policy=Policy(5, 25))]
    assert stages == ["pre", "early", "late"]


def test_huge_tournaments_are_segmented_without_walking_every_count():
    segments = stage_segments(entrants=300_000, paid_places=45_000, policy=Policy(5, 25))
    assert [(s.stage, s.start) for s in segments] == [
        ("pre", 0),
        ("early", 15_000),
        ("middle", 75_000),
        ("late", 255_000),
    ]


def test_stage_bar_has_title_description_marks_and_the_case():
    svg = draw_stage_bar(entrants=20, eliminated=5, paid_places=3, policy=Policy(5, 25))
    root = parse(svg)
    assert root.get("role") == "img"
    assert root.find(f"{SVG}title").text == "Stage bar: 25 % eliminated"
    # Named by its title; its summary is the figure's caption, so no <desc> repeats it.
    assert root.get("aria-labelledby") == "stage-bar-title"
    assert root.find(f"{SVG}desc") is None
    desc = stage_bar(entrants=20, eliminated=5, paid_places=3, policy=Policy(5, 25)).text
    assert "5 of 20 entrants eliminated (25 %)" in desc
    assert "Stage: Middle" in desc
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "5 %" in texts and "25 %" in texts
    assert "In the money (85 %)" in texts
    assert "This case: 25 %" in texts
    assert len(root.findall(f"{SVG}line[@class='threshold']")) == 2
    assert {r.get("class") for r in root.findall(f"{SVG}rect")} >= {
        "stage-pre",
        "stage-early",
        "stage-middle",
        "stage-late",
    }
    assert "style=" not in svg


def test_stage_bar_says_when_the_tournament_had_not_started():
    svg = draw_stage_bar(
        entrants=10, eliminated=0, paid_places=3, policy=Policy(5, 25), started=False
    )
    assert parse(svg).find(f"{SVG}desc") is None
    bar = stage_bar(entrants=10, eliminated=0, paid_places=3, policy=Policy(5, 25), started=False)
    assert "had not started" in bar.text


def test_sample_keeps_small_series_and_thins_large_ones_evenly():
    assert [p.amount for p in sample_by_rank([30, 20, 10])] == [30, 20, 10]
    amounts = list(range(100_000, 0, -1))
    points = sample_by_rank(amounts)
    assert len(points) == MAX_CHART_POINTS
    assert points[0].rank == 1 and points[0].amount == 100_000
    assert points[-1].rank == 100_000 and points[-1].amount == 1
    gaps = {b.rank - a.rank for a, b in zip(points, points[1:], strict=False)}
    assert max(gaps) - min(gaps) <= 1


def test_payout_chart_axes_labels_and_money_ticks():
    svg = draw_payouts([386700, 326700, 286600])
    root = parse(svg)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "Chip rank (1 = most chips)" in texts
    assert "Payout (USD)" in texts
    assert "3,867.00 USD" in texts
    assert "0.00 USD" in texts
    polyline = root.find(f".//{SVG}polyline")
    assert len(polyline.get("points").split()) == 3
    assert root.find(f"{SVG}desc") is None
    chart = payout_chart(sample_by_rank([386700, 326700, 286600]), count=3, currency="USD")
    assert "the most chips receive 3,867.00 USD" in chart.text


def test_payout_chart_of_a_huge_settlement_draws_at_most_the_limit():
    amounts = [1000 + i for i in range(300_000, 0, -1)]
    svg = draw_payouts(amounts)
    points = parse(svg).find(f".//{SVG}polyline").get("points").split()
    assert len(points) == MAX_CHART_POINTS
    chart = payout_chart(sample_by_rank(amounts), count=len(amounts), currency="USD")
    assert "(drawn from 200 ranks)" in chart.text


def test_chart_text_is_escaped():
    svg = draw_payouts([100], title='<script>"x"</script>')
    assert "<script>" not in svg
    assert parse(svg).find(f"{SVG}title").text == '<script>"x"</script>'


def test_empty_payout_chart():
    assert payout_chart([], count=0, currency="USD").text == "Nobody is paid."
    assert parse(draw_payouts([])).find(f".//{SVG}polyline") is None


def test_no_float_noise_in_labels():
    svg = draw_payouts([10**20 + 1, 1])
    assert re.search(r"1,000,000,000,000,000,000\.01 USD", svg)


def test_a_sampled_chart_labels_the_full_rank_range():
    points = [ChartPoint(1, 5000), ChartPoint(150_000, 1200), ChartPoint(300_000, 100)]
    svg = draw_payout_chart(points, count=300_000)
    assert ">300,000</text>" in svg and "5,000.00 USD" not in svg  # ticks: 0, 25.00, 50.00
    assert payout_chart(points, count=300_000, currency="USD").text == (
        "300,000 players (drawn from 3 ranks): the most chips receive 50.00 USD, "
        "the fewest 1.00 USD."
    )


# --- Responsive drawings: positions in percent, text never scaled -------------------------------


@pytest.mark.parametrize(
    "svg",
    [
        draw_stage_bar(entrants=40, eliminated=20, paid_places=3, policy=Policy(5, 25)),
        draw_payouts([386700, 326700, 286600]),
    ],
)
def test_charts_fill_their_panel_without_scaling_their_text(svg):
    root = parse(svg)
    assert root.get("width") == "100%"
    assert root.get("viewBox") is None
    for text in root.iter(f"{SVG}text"):
        assert text.get("x").endswith("%") or text.get("x") == "0"


@pytest.mark.parametrize(("entrants", "paid"), [(40, 3), (20, 18), (1000, 150), (300_000, 45_000)])
@pytest.mark.parametrize("policy", POLICIES)
def test_no_mark_crosses_a_stage_name_at_the_narrowest_width(entrants, paid, policy):
    from settlements.charts import CHAR_PX, NARROWEST_PX

    for eliminated in (0, entrants // 20, entrants // 4, entrants // 2, entrants - paid, entrants):
        bar = stage_bar(entrants=entrants, eliminated=eliminated, paid_places=paid, policy=policy)
        marks = [m.x for m in bar.thresholds] + [bar.money.x, bar.case.x]
        for band in bar.bands:
            if band.label_x is None:
                continue
            half = (len(band.label) * CHAR_PX / 2 + 4) / NARROWEST_PX * 100
            left, right = band.label_x - half, band.label_x + half
            assert band.x <= left and right <= band.x + band.width
            assert not any(left < x < right for x in marks), (band, marks)


def test_a_pre_stage_wide_enough_for_its_name_keeps_it_clear_of_the_mark():
    # 20 % of the bar is pre: its name fits between the bar's start and the 20 % mark.
    bar = stage_bar(entrants=100, eliminated=50, paid_places=10, policy=Policy(20, 40))
    pre = bar.bands[0]
    assert (pre.stage, pre.label_x) == ("pre", pytest.approx((1.5 + bar.thresholds[0].x) / 2))


def test_the_legend_gives_every_stage_its_range():
    html = render_to_string(
        "settlements/charts/stage_bar.html",
        {"bar": stage_bar(entrants=40, eliminated=20, paid_places=3, policy=Policy(5, 25))},
    )
    legend = re.sub(r"<[^>]+>", "", html[html.index('<ul class="chart-legend"') :])
    assert "Pre: under 5 % eliminated" in legend
    assert "Early: 5 % to under 25 %" in legend
    assert "Middle: 25 % to under 92.5 %" in legend
    assert "Late: from 92.5 % eliminated" in legend


def test_charts_compared_side_by_side_share_their_scale():
    low = payout_chart(sample_by_rank([4762, 2000]), count=2, currency="USD", scale_top=5000)
    high = payout_chart(sample_by_rank([5000, 2000]), count=2, currency="USD", scale_top=5000)
    assert [t.amount for t in low.ticks] == [t.amount for t in high.ticks] == [0, 2500, 5000]
    # The same amount is drawn at the same height in both.
    assert low.series.split()[1].split(",")[1] == high.series.split()[1].split(",")[1] == "103.2"


def test_the_nested_drawings_are_not_images_of_their_own():
    # Screen readers and role queries must find one image per chart, not its parts.
    for svg in (
        draw_stage_bar(entrants=40, eliminated=20, paid_places=3, policy=Policy(5, 25)),
        draw_payouts([386700, 326700, 286600]),
    ):
        nested = parse(svg).findall(f".//{SVG}svg")
        assert nested and all(inner.get("aria-hidden") == "true" for inner in nested)


def test_the_legend_and_the_bands_agree_with_the_marks_when_counts_fall_between():
    # 30 entrants: 5 % is 1.5 players. The rule is a share (100·E < 5·N), so the pre band ends
    # at the 5 % mark, not at 2 players (6.7 %), and the legend says 5 %, with the counts.
    bar = stage_bar(entrants=30, eliminated=10, paid_places=3, policy=Policy(5, 25))
    html = render_to_string("settlements/charts/stage_bar.html", {"bar": bar})
    legend = re.sub(r"<[^>]+>", "", html[html.index('<ul class="chart-legend"') :])
    assert "Pre: under 5 % eliminated (0 to 1 of 30 players out)" in legend
    assert "Early: 5 % to under 25 % (2 to 7 of 30 players out)" in legend
    assert "Middle: 25 % to under 90 % (8 to 26 of 30 players out)" in legend
    assert "Late: from 90 % eliminated (27 to 30 of 30 players out)" in legend
    assert "6.7 %" not in legend and "26.7 %" not in legend
    pre, early, middle, late = bar.bands
    five, twenty_five = (mark.x for mark in bar.thresholds)
    assert pre.x + pre.width == pytest.approx(five, abs=0.02) == early.x
    assert early.x + early.width == pytest.approx(twenty_five, abs=0.02) == middle.x
    assert late.x == bar.money.x


# The histogram of a simulation's per-player differences (settlements/difference_chart.py).


def draw_differences(differences, **options) -> str:
    chart = difference_chart(differences, **({"unit": "cash", "currency": "USD"} | options))
    html = render_to_string("settlements/charts/differences.html", {"chart": chart})
    return html


def drawing_of(html: str) -> str:
    return html[: html.index("</svg>") + len("</svg>")].strip()


@given(st.lists(st.integers(-(10**12), 10**12), min_size=1, max_size=200))
def test_every_difference_falls_in_exactly_one_bar(differences):
    bins = difference_bins(differences)
    assert len(bins) <= MAX_BINS
    assert sum(count for _, _, count in bins) == len(differences)
    # The bars follow one another without gaps, and the players unchanged have their own.
    assert all(high + 1 == low for (_, high, _), (low, _, _) in pairwise(bins))
    assert (0, 0, differences.count(0)) in bins
    widths = {high - low + 1 for low, high, _ in bins if (low, high) != (0, 0)}
    assert len(widths) <= 1
    for low, high, count in bins:
        assert count == sum(1 for d in differences if low <= d <= high)


@pytest.mark.parametrize(
    ("lowest", "highest", "width"),
    [(0, 0, 1), (-3, 7, 1), (-4, 7, 2), (-1000, 250, 200), (0, 99_999, 10_000), (-1, 0, 1)],
)
def test_bars_are_a_round_width(lowest, highest, width):
    assert bin_width(lowest, highest) == width


def test_a_chart_labels_its_bars_with_money_and_says_who_gains_and_loses():
    chart = difference_chart(
        [-1000, -1, 0, 0, 1, 250, 5], unit="cash", currency="USD", unit_label="Cash"
    )
    assert [b.label for b in chart.bins][4:7] == [
        "-2.00 USD to -0.01 USD",
        "Unchanged",
        "+0.01 USD to +2.00 USD",
    ]
    assert [b.kind for b in chart.bins] == ["loss"] * 5 + ["same"] + ["gain"] * 2
    assert [e.text for e in chart.edges] == ["-10.00 USD", "+4.00 USD"]
    assert chart.text == (
        "Cash: of 7 players, 2 worse off (the largest loss -10.00 USD), 2 unchanged, "
        "3 better off (the largest gain +2.50 USD)."
    )
    # The tallest bar fills the plot; an empty bin draws nothing.
    heights = {b.count: b.height for b in chart.bins}
    assert heights[2] == chart.bottom - chart.top and heights[0] == 0
    assert all(b.x >= chart.left and b.x + b.width <= chart.right for b in chart.bins)


def test_a_chart_of_seats_counts_them_and_mixed_currencies_stay_in_minor_units():
    seats = difference_chart([1, 2], unit="tickets", currency="USD")
    assert [b.label for b in seats.bins] == ["Unchanged", "+1 seat", "+2 seats"]
    assert seats.same_label.anchor == "start" and [e.text for e in seats.edges] == ["+2 seats"]
    mixed = difference_chart([-250, 0], unit="cash", currency=None)
    assert mixed.edges[0].text == "-250 in minor units"


def test_no_differences_no_chart():
    assert difference_chart([], unit="cash", currency="USD") is None


def test_a_lone_player_among_many_still_shows():
    chart = difference_chart([0] * 10_000 + [5], unit="cash", currency="USD")
    assert chart.bins[-1].height == 2


def test_the_drawn_histogram_has_a_title_and_a_table_of_its_bars():
    html = draw_differences([-300, 0, 0, 120], unit_label="Cash")
    root = parse(drawing_of(html))
    assert root.get("role") == "img" and root.get("width") == "100%"
    assert root.get("viewBox") is None
    assert root.find(f"{SVG}title").text == "Difference per player, Cash"
    assert len(root.findall(f"{SVG}rect")) == 3  # empty bins are not drawn
    for text in root.iter(f"{SVG}text"):
        assert text.get("x").endswith("%") or text.get("x") == "0"
    # Hidden in a box of its own: a table does not shrink to the hiding class's one pixel.
    box = ElementTree.fromstring(html[html.index('<div class="visually-hidden">') :])
    table = box.find("table")
    rows = [(r.find("th").text, r.find("td").text) for r in table.find("tbody").iter("tr")]
    assert ("Unchanged", "2") in rows and ("-3.00 USD to -2.51 USD", "1") in rows
    assert len(rows) == len(difference_bins([-300, 0, 0, 120]))
