import re
from xml.etree import ElementTree

import pytest

from settlements.charts import (
    MAX_CHART_POINTS,
    payout_chart_svg,
    payout_chart_text,
    percent_text,
    sample_by_rank,
    stage_at,
    stage_bar_svg,
    stage_segments,
)

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ElementTree.Element:
    # Well-formed XML, so browsers and screen readers see what we meant.
    return ElementTree.fromstring(svg)


@pytest.mark.parametrize(
    ("part", "whole", "text"),
    [(5, 20, "25 %"), (1, 3, "33.3 %"), (2, 3, "66.7 %"), (1, 200, "0.5 %"), (0, 7, "0 %")],
)
def test_percent_text_rounds_half_up_to_a_tenth(part, whole, text):
    assert percent_text(part, whole) == text


def test_stage_at_follows_the_rules_order():
    counts = {"entrants": 100, "paid_places": 10, "pre_pct": 5, "early_pct": 25}
    assert stage_at(eliminated=4, **counts) == "pre"
    assert stage_at(eliminated=5, **counts) == "early"
    assert stage_at(eliminated=24, **counts) == "early"
    assert stage_at(eliminated=25, **counts) == "middle"
    assert stage_at(eliminated=89, **counts) == "middle"
    assert stage_at(eliminated=90, **counts) == "late"


def test_segments_cover_every_count_once_and_agree_with_stage_at():
    for entrants, paid, pre, early in [(100, 10, 5, 25), (20, 15, 5, 25), (7, 3, 0, 100)]:
        segments = stage_segments(entrants=entrants, paid_places=paid, pre_pct=pre, early_pct=early)
        assert segments[0].start == 0
        assert segments[-1].end == entrants + 1
        for before, after in zip(segments, segments[1:], strict=False):
            assert before.end == after.start
            assert before.stage != after.stage
        for segment in segments:
            for eliminated in range(segment.start, segment.end):
                assert segment.stage == stage_at(
                    eliminated=eliminated,
                    entrants=entrants,
                    paid_places=paid,
                    pre_pct=pre,
                    early_pct=early,
                )


def test_late_can_begin_before_the_early_threshold():
    # 20 entrants, 18 paid: in the money after 2 eliminations, before 25 % is reached.
    stages = [s.stage for s in stage_segments(entrants=20, paid_places=18, pre_pct=5, early_pct=25)]
    assert stages == ["pre", "early", "late"]


def test_huge_tournaments_are_segmented_without_walking_every_count():
    segments = stage_segments(entrants=300_000, paid_places=45_000, pre_pct=5, early_pct=25)
    assert [(s.stage, s.start) for s in segments] == [
        ("pre", 0),
        ("early", 15_000),
        ("middle", 75_000),
        ("late", 255_000),
    ]


def test_stage_bar_has_title_description_marks_and_the_case():
    svg = stage_bar_svg(
        entrants=20, eliminated=5, paid_places=3, pre_pct=5, early_pct=25, stage="middle"
    )
    root = parse(svg)
    assert root.get("role") == "img"
    assert root.find(f"{SVG}title").text == "Stage bar: 25 % eliminated"
    desc = root.find(f"{SVG}desc").text
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
    svg = stage_bar_svg(
        entrants=10,
        eliminated=0,
        paid_places=3,
        pre_pct=5,
        early_pct=25,
        stage="pre",
        started=False,
    )
    assert "had not started" in parse(svg).find(f"{SVG}desc").text


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
    svg = payout_chart_svg([386700, 326700, 286600], currency="USD")
    root = parse(svg)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "Chip rank (1 = most chips)" in texts
    assert "Payout (USD)" in texts
    assert "3,867.00 USD" in texts
    assert "0.00 USD" in texts
    polyline = root.find(f"{SVG}polyline")
    assert len(polyline.get("points").split()) == 3
    assert "the most chips receive 3,867.00 USD" in root.find(f"{SVG}desc").text


def test_payout_chart_of_a_huge_settlement_draws_at_most_the_limit():
    svg = payout_chart_svg([1000 + i for i in range(300_000, 0, -1)], currency="USD")
    points = parse(svg).find(f"{SVG}polyline").get("points").split()
    assert len(points) == MAX_CHART_POINTS
    assert "(drawn from 200 ranks)" in svg


def test_chart_text_is_escaped():
    svg = payout_chart_svg([100], currency="USD", title='<script>"x"</script>')
    assert "<script>" not in svg
    assert parse(svg).find(f"{SVG}title").text == '<script>"x"</script>'


def test_empty_payout_chart():
    assert payout_chart_text([], currency="USD") == "Nobody is paid."
    assert parse(payout_chart_svg([], currency="USD")).find(f"{SVG}polyline") is None


def test_no_float_noise_in_labels():
    svg = payout_chart_svg([10**20 + 1, 1], currency="USD")
    assert re.search(r"1,000,000,000,000,000,000\.01 USD", svg)
