"""Server-rendered SVG charts: the stage bar and payout by chip rank.

Pure functions from numbers to the geometry of a chart (coordinates, labels and a text
alternative); the markup is in templates/settlements/charts/. Floats appear here only as
pixel positions; amounts stay integers and are labelled with the money formatting used
everywhere else.
"""

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    width: float
    height: float

    @property
    def right(self) -> float:
        return self.x + self.width

    @property
    def bottom(self) -> float:
        return self.y + self.height

    @property
    def center_x(self) -> float:
        return self.x + self.width / 2

    @property
    def middle_y(self) -> float:
        return self.y + self.height / 2


@dataclass(frozen=True)
class Mark:
    """A vertical line across the bar, with its label."""

    x: float
    y1: float
    y2: float
    label_y: float
    anchor: str  # the label's text-anchor
    label: str


@dataclass(frozen=True)
class StageBand:
    stage: str
    label: str
    box: Box
    label_x: float | None  # None when the band is too narrow for its name


@dataclass(frozen=True)
class StageBar:
    """What templates/settlements/charts/stage_bar.html draws, and its text alternative."""

    title_id: str
    title: str
    text: str
    eliminated_pct: str
    width: int
    height: int
    frame: Box
    bands: list[StageBand]
    band_label_y: float
    thresholds: list[Mark]
    money: Mark  # where the paid places begin
    case: Mark
    marker_y: float  # the tip of the case's arrow


def _px(value: float) -> float:
    # A tenth of a pixel is finer than any screen draws and keeps the markup short.
    return round(float(value), 1)


def stage_bar(
    *,
    entrants: int,
    eliminated: int,
    paid_places: int,
    policy: Policy,
    started: bool = True,
    title_id: str = "stage-bar",
) -> StageBar:
    """A horizontal bar of % eliminated: stage bands, the policy's two thresholds, the
    in-the-money point and this case's position, with a title and a description."""
    width, left, right = 720, 12, 12
    bar_top, bar_height = 34, 26
    inner = width - left - right

    def x_at(count_num: int, count_den: int) -> float:
        return left + inner * (count_num / count_den if count_den else 0)

    bands = []
    for segment in stage_segments(entrants=entrants, paid_places=paid_places, policy=policy):
        x0 = x_at(segment.start, entrants)
        x1 = x_at(min(segment.end, entrants), entrants)
        bands.append(
            StageBand(
                stage=segment.stage,
                label=STAGE_LABELS.get(segment.stage, segment.stage),
                box=Box(_px(x0), bar_top, _px(max(x1 - x0, 0)), bar_height),
                label_x=_px((x0 + x1) / 2) if x1 - x0 > 44 else None,
            )
        )
    thresholds = [
        Mark(
            x=_px(x_at(pct, 100)),
            y1=bar_top - 6,
            y2=bar_top + bar_height + 6,
            label_y=bar_top - 10,
            anchor="middle",
            label=f"{pct} %",
        )
        for pct in sorted({policy.pre_pct, policy.early_pct})
    ]
    money_count = max(entrants - paid_places, 0)
    x_money = x_at(money_count, entrants)
    x_case = x_at(eliminated, entrants)
    eliminated_pct = percent_text(eliminated, entrants)
    return StageBar(
        title_id=title_id,
        title=f"Stage bar: {eliminated_pct} eliminated",
        text=_stage_text(
            entrants=entrants,
            eliminated=eliminated,
            paid_places=paid_places,
            policy=policy,
            started=started,
        ),
        eliminated_pct=eliminated_pct,
        width=width,
        height=110,
        frame=Box(left, bar_top, inner, bar_height),
        bands=bands,
        band_label_y=bar_top + bar_height / 2 + 4,
        thresholds=thresholds,
        money=Mark(
            x=_px(x_money),
            y1=bar_top,
            y2=bar_top + bar_height + 10,
            label_y=bar_top + bar_height + 24,
            anchor=_anchor(x_money, width),
            label=f"In the money ({percent_text(money_count, entrants)})",
        ),
        case=Mark(
            x=_px(x_case),
            y1=bar_top - 2,
            y2=bar_top + bar_height + 2,
            label_y=bar_top + bar_height + 40,
            anchor=_anchor(x_case, width),
            label=f"This case: {eliminated_pct}",
        ),
        marker_y=bar_top + bar_height,
    )


def _stage_text(
    *,
    entrants: int,
    eliminated: int,
    paid_places: int,
    policy: Policy,
    started: bool,
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


@dataclass(frozen=True)
class Tick:
    amount: int  # minor units
    y: float
    label_y: float


@dataclass(frozen=True)
class PayoutChart:
    """What templates/settlements/charts/payout.html draws, and its text alternative."""

    title_id: str
    title: str
    text: str
    currency: str
    count: int  # players paid, the last rank
    width: int
    height: int
    plot: Box
    ticks: list[Tick]
    tick_label_x: float
    rank_label_y: float
    caption_y: float
    axis_title_x: float
    series: str  # polyline points, "x,y x,y ..."; empty when nobody is paid
    area: str  # the same points closed along the x axis


def payout_chart(
    points: Sequence[ChartPoint],
    *,
    count: int,
    currency: str,
    title: str = "Payout by chip rank",
    title_id: str = "payout-chart",
) -> PayoutChart:
    """Each player's payout against their chip rank (1 = most chips), from points already
    sampled by rank (see ``sample_by_rank``), for `count` players in all; the first and the
    last rank should be among the points."""
    width, height = 720, 260
    left, right, top, bottom = 96, 16, 24, 48
    plot = Box(left, top, width - left - right, height - top - bottom)
    highest = max((p.amount for p in points), default=0)

    def x_at(rank: int) -> float:
        return left + (plot.width * (rank - 1) / (count - 1) if count > 1 else plot.width / 2)

    def y_at(amount: int) -> float:
        return plot.bottom - (plot.height * amount / highest if highest else 0)

    ticks = []
    for numerator in (0, 1, 2):
        amount = highest * numerator // 2
        ticks.append(Tick(amount, _px(y_at(amount)), _px(y_at(amount) + 4)))
    series = area = ""
    if points:
        series = " ".join(f"{_px(x_at(p.rank))},{_px(y_at(p.amount))}" for p in points)
        area = f"{series} {_px(x_at(points[-1].rank))},{plot.bottom} {_px(x_at(1))},{plot.bottom}"
    return PayoutChart(
        title_id=title_id,
        title=title,
        text=_payout_text(points, count=count, currency=currency),
        currency=currency,
        count=count,
        width=width,
        height=height,
        plot=plot,
        ticks=ticks,
        tick_label_x=left - 6,
        rank_label_y=plot.bottom + 16,
        caption_y=height - 8,
        axis_title_x=14,
        series=series,
        area=area,
    )


def _payout_text(points: Sequence[ChartPoint], *, count: int, currency: str) -> str:
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
    "PayoutChart",
    "StageBar",
    "StageSegment",
    "payout_chart",
    "percent_text",
    "sample_by_rank",
    "stage_bar",
    "stage_segments",
]
