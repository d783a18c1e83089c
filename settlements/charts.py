"""Server-rendered SVG charts: the stage bar and payout by chip rank.

Pure functions from numbers to a safe SVG string (every piece of text escaped), so templates
only place the result. Floats appear here only as pixel geometry; amounts stay integers and
are labelled with the same money formatting as everywhere else.
"""

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from settlements.money import format_minor_units
from settlements.rules import Policy
from settlements.rules.stage import STAGES, classify

STAGE_LABELS = {"pre": "Pre", "early": "Early", "middle": "Middle", "late": "Late"}

# The most points a payout chart draws; larger settlements are sampled evenly by rank.
MAX_CHART_POINTS = 200


def percent_text(part: int, whole: int) -> str:
    """part/whole as a percentage with one decimal, rounded half up, in integer arithmetic."""
    if whole <= 0:
        return "0 %"
    tenths = (2000 * part + whole) // (2 * whole)
    whole_pct, tenth = divmod(tenths, 10)
    return f"{whole_pct}.{tenth} %" if tenth else f"{whole_pct} %"


@dataclass(frozen=True)
class StageSegment:
    stage: str
    start: int  # eliminated count where the segment begins
    end: int  # first eliminated count past the segment


def _classify(
    *, entrants: int, eliminated: int, paid_places: int, policy: Policy, started: bool = True
) -> str:
    return classify(
        started=started,
        entrants=entrants,
        eliminated=eliminated,
        remaining=entrants - eliminated,
        paid_places=paid_places,
        policy=policy,
    )


def stage_segments(*, entrants: int, paid_places: int, policy: Policy) -> list[StageSegment]:
    """Split 0..entrants eliminated into runs of one stage each, as the engine classifies them."""

    def rank(eliminated: int) -> int:
        stage = _classify(
            entrants=entrants, eliminated=eliminated, paid_places=paid_places, policy=policy
        )
        return STAGES.index(stage)

    # Knocking players out never takes a tournament back to an earlier stage, so the first
    # count of each stage is found by bisecting the engine's own answers: a few dozen calls,
    # even for 300,000 entrants, and no second copy of the thresholds here.
    counts = range(entrants + 1)
    segments: list[StageSegment] = []
    for index, stage in enumerate(STAGES):
        start = bisect_left(counts, index, key=rank)
        end = bisect_left(counts, index + 1, key=rank)
        if start < end:
            segments.append(StageSegment(stage, start, end))
    return segments


def stage_bar_svg(
    *,
    entrants: int,
    eliminated: int,
    paid_places: int,
    policy: Policy,
    started: bool = True,
    title_id: str = "stage-bar",
) -> SafeString:
    """A horizontal bar of % eliminated: stage bands, the policy's two thresholds, the
    in-the-money point and this case's position, with a title and a description."""
    width, left, right = 720, 12, 12
    bar_top, bar_height = 34, 26
    inner = width - left - right
    height = 110

    def x_at(count_num: int, count_den: int) -> float:
        return left + inner * (count_num / count_den if count_den else 0)

    parts: list[str] = []
    for segment in stage_segments(entrants=entrants, paid_places=paid_places, policy=policy):
        x0 = x_at(segment.start, entrants)
        x1 = x_at(min(segment.end, entrants), entrants)
        parts.append(
            format_html(
                '<rect class="stage-{}" x="{}" y="{}" width="{}" height="{}"></rect>',
                segment.stage,
                f"{x0:.1f}",
                bar_top,
                f"{max(x1 - x0, 0):.1f}",
                bar_height,
            )
        )
        if x1 - x0 > 44:
            parts.append(
                format_html(
                    '<text x="{}" y="{}" text-anchor="middle" class="chart__muted">{}</text>',
                    f"{(x0 + x1) / 2:.1f}",
                    bar_top + bar_height / 2 + 4,
                    STAGE_LABELS.get(segment.stage, segment.stage),
                )
            )
    parts.append(
        format_html(
            '<rect class="bar-frame" x="{}" y="{}" width="{}" height="{}"></rect>',
            left,
            bar_top,
            inner,
            bar_height,
        )
    )
    for pct in sorted({policy.pre_pct, policy.early_pct}):
        x = x_at(pct, 100)
        parts.append(
            format_html(
                '<line class="threshold" x1="{0}" x2="{0}" y1="{1}" y2="{2}"></line>'
                '<text x="{0}" y="{3}" text-anchor="middle">{4} %</text>',
                f"{x:.1f}",
                bar_top - 6,
                bar_top + bar_height + 6,
                bar_top - 10,
                pct,
            )
        )
    itm_count = max(entrants - paid_places, 0)
    x_itm = x_at(itm_count, entrants)
    parts.append(
        format_html(
            '<line class="itm" x1="{0}" x2="{0}" y1="{1}" y2="{2}"></line>'
            '<text x="{0}" y="{3}" text-anchor="{4}">In the money ({5})</text>',
            f"{x_itm:.1f}",
            bar_top,
            bar_top + bar_height + 10,
            bar_top + bar_height + 24,
            _anchor(x_itm, width),
            percent_text(itm_count, entrants),
        )
    )
    x_case = x_at(eliminated, entrants)
    parts.append(
        format_html(
            '<line class="marker-line" x1="{0}" x2="{0}" y1="{1}" y2="{2}"></line>'
            '<path class="marker" d="M {0} {3} l -6 10 h 12 z"></path>'
            '<text x="{0}" y="{4}" text-anchor="{5}" font-weight="700">This case: {6}</text>',
            f"{x_case:.1f}",
            bar_top - 2,
            bar_top + bar_height + 2,
            bar_top + bar_height,
            bar_top + bar_height + 40,
            _anchor(x_case, width),
            percent_text(eliminated, entrants),
        )
    )
    title = f"Stage bar: {percent_text(eliminated, entrants)} eliminated"
    description = stage_bar_text(
        entrants=entrants,
        eliminated=eliminated,
        paid_places=paid_places,
        policy=policy,
        started=started,
    )
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {0} {1}" width="{0}" height="{1}" '
        'role="img" aria-labelledby="{2}-title {2}-desc">'
        '<title id="{2}-title">{3}</title><desc id="{2}-desc">{4}</desc>{5}</svg>',
        width,
        height,
        title_id,
        title,
        description,
        mark_safe("".join(parts)),  # each part was built with format_html above
    )


def stage_bar_text(
    *,
    entrants: int,
    eliminated: int,
    paid_places: int,
    policy: Policy,
    started: bool = True,
) -> str:
    """The stage bar in words, for its description and for readers who cannot see it."""
    stage = _classify(
        entrants=entrants,
        eliminated=eliminated,
        paid_places=paid_places,
        policy=policy,
        started=started,
    )
    label = STAGE_LABELS.get(stage, stage)
    if not started:
        return (
            f"The tournament had not started, so the stage is {label} whatever the counts: "
            f"{entrants} entrants, {eliminated} eliminated."
        )
    return (
        f"{eliminated} of {entrants} entrants eliminated ({percent_text(eliminated, entrants)}); "
        f"the policy's marks are {policy.pre_pct} % and {policy.early_pct} %, and the money "
        f"starts when {max(entrants - paid_places, 0)} are out ({paid_places} paid places). "
        f"Stage: {label}."
    )


def _anchor(x: float, width: int) -> str:
    # Keeps labels near the ends of the bar inside the drawing.
    if x < 90:
        return "start"
    if x > width - 90:
        return "end"
    return "middle"


@dataclass(frozen=True)
class ChartPoint:
    rank: int  # chip rank, 1 = most chips
    amount: int  # minor units


def sample_by_rank(amounts: Sequence[int], limit: int = MAX_CHART_POINTS) -> list[ChartPoint]:
    """Evenly spaced ranks (first and last always kept) from amounts ordered by chip rank."""
    count = len(amounts)
    if count <= limit:
        return [ChartPoint(rank + 1, amount) for rank, amount in enumerate(amounts)]
    indexes = sorted({(step * (count - 1)) // (limit - 1) for step in range(limit)})
    return [ChartPoint(index + 1, amounts[index]) for index in indexes]


def payout_points_chart_svg(
    points: Sequence[ChartPoint],
    *,
    count: int,
    currency: str,
    description: str | None = None,
    title: str = "Payout by chip rank",
    title_id: str = "payout-chart",
) -> SafeString:
    """The payout chart from points already sampled by rank (e.g. thinned in the database),
    for `count` players in all; the first and the last rank should be among the points."""
    width, height = 720, 260
    left, right, top, bottom = 96, 16, 24, 48
    plot_w, plot_h = width - left - right, height - top - bottom
    highest = max((p.amount for p in points), default=0)

    def x_at(rank: int) -> float:
        return left + (plot_w * (rank - 1) / (count - 1) if count > 1 else plot_w / 2)

    def y_at(amount: int) -> float:
        return top + plot_h - (plot_h * amount / highest if highest else 0)

    parts: list[str] = []
    for numerator in (0, 1, 2):
        tick = highest * numerator // 2
        y = y_at(tick)
        parts.append(
            format_html(
                '<line class="grid-line" x1="{0}" x2="{1}" y1="{2}" y2="{2}"></line>'
                '<text x="{3}" y="{4}" text-anchor="end">{5}</text>',
                left,
                left + plot_w,
                f"{y:.1f}",
                left - 6,
                f"{y + 4:.1f}",
                format_minor_units(tick, currency),
            )
        )
    if points:
        coords = " ".join(f"{x_at(p.rank):.1f},{y_at(p.amount):.1f}" for p in points)
        baseline = f"{x_at(points[-1].rank):.1f},{top + plot_h} {x_at(1):.1f},{top + plot_h}"
        parts.append(
            format_html('<polygon class="series-area" points="{} {}"></polygon>', coords, baseline)
        )
        parts.append(format_html('<polyline class="series" points="{}"></polyline>', coords))
    parts.append(
        format_html(
            '<line class="axis" x1="{0}" x2="{1}" y1="{2}" y2="{2}"></line>'
            '<line class="axis" x1="{0}" x2="{0}" y1="{3}" y2="{2}"></line>'
            '<text x="{0}" y="{4}" text-anchor="start">1</text>'
            '<text x="{1}" y="{4}" text-anchor="end">{5}</text>'
            '<text x="{6}" y="{7}" text-anchor="middle" class="chart__muted">'
            "Chip rank (1 = most chips)</text>"
            '<text x="14" y="{8}" text-anchor="middle" class="chart__muted" '
            'transform="rotate(-90 14 {8})">Payout ({9})</text>',
            left,
            left + plot_w,
            top + plot_h,
            top,
            top + plot_h + 16,
            f"{count:,}",
            left + plot_w / 2,
            height - 8,
            top + plot_h / 2,
            currency,
        )
    )
    if description is None:
        description = payout_points_text(points, count=count, currency=currency)
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {0} {1}" width="{0}" height="{1}" '
        'role="img" aria-labelledby="{2}-title {2}-desc">'
        '<title id="{2}-title">{3}</title><desc id="{2}-desc">{4}</desc>{5}</svg>',
        width,
        height,
        title_id,
        title,
        description,
        mark_safe("".join(parts)),  # each part was built with format_html above
    )


def payout_points_text(points: Sequence[ChartPoint], *, count: int, currency: str) -> str:
    """The sampled chart in words: only what the points show for certain (both ends)."""
    if not points:
        return "Nobody is paid."
    shown = "" if len(points) >= count else f" (drawn from {len(points)} ranks)"
    return (
        f"{count:,} players{shown}: the most chips receive "
        f"{format_minor_units(points[0].amount, currency)}, the fewest "
        f"{format_minor_units(points[-1].amount, currency)}."
    )


__all__ = [
    "MAX_CHART_POINTS",
    "ChartPoint",
    "StageSegment",
    "payout_points_chart_svg",
    "payout_points_text",
    "percent_text",
    "sample_by_rank",
    "stage_bar_svg",
    "stage_bar_text",
    "stage_segments",
]
