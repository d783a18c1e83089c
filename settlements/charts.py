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


# Charts stretch to the width of their panel while their text keeps the stylesheet's size:
# horizontal positions are percentages of the width, vertical ones pixels, and there is no
# viewBox, so nothing is scaled (a scaled 720-pixel drawing rendered its 12-pixel labels at 8
# in a half-width panel, and a fixed 720 pixels left wide panels half empty).

# Labels are drawn where they fit at this width; below it the stylesheet hides the stage
# names inside the bar (the legend under it says the same).
NARROWEST_PX = 640
# About how wide one character of chart text is, in pixels, for fitting labels.
CHAR_PX = 7.5


@dataclass(frozen=True)
class Mark:
    """A vertical line across the bar at ``x`` % of the width, with its label."""

    x: float
    y1: int
    y2: int
    label_y: int
    anchor: str  # the label's text-anchor
    label: str


@dataclass(frozen=True)
class StageBand:
    stage: str
    label: str
    x: float  # percent of the width
    width: float  # percent of the width
    range_text: str  # the eliminated share it covers, for the legend
    label_x: float | None  # None when no stretch of the band clear of marks fits its name


@dataclass(frozen=True)
class StageBar:
    """What templates/settlements/charts/stage_bar.html draws, and its text alternative."""

    title_id: str
    title: str
    text: str
    eliminated_pct: str
    height: int
    bar_x: float  # percent
    bar_width: float  # percent
    bar_y: int
    bar_height: int
    bands: list[StageBand]
    band_label_y: int
    thresholds: list[Mark]
    money: Mark  # where the paid places begin
    case: Mark
    marker_y: int  # the top of the case's arrow


def _pct(value: float) -> float:
    # A hundredth of a percent is finer than any screen draws and keeps the markup short.
    return round(float(value), 2)


# The bar's ends, in percent of the width, leaving room for the case's arrow at 0 % or 100 %.
BAR_LEFT, BAR_RIGHT = 1.5, 98.5
# The bar's top and height, in pixels of the drawing.
BAR_Y, BAR_HEIGHT = 24, 26


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
    money_count = max(entrants - paid_places, 0)
    x_money = _x_at(money_count, entrants)
    x_case = _x_at(eliminated, entrants)
    marks = sorted({policy.pre_pct, policy.early_pct})
    lines = [_x_at(pct, 100) for pct in marks] + [x_money, x_case]
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
        height=96,
        bar_x=BAR_LEFT,
        bar_width=_pct(BAR_RIGHT - BAR_LEFT),
        bar_y=BAR_Y,
        bar_height=BAR_HEIGHT,
        bands=_stage_bands(entrants, paid_places, policy, lines),
        band_label_y=BAR_Y + BAR_HEIGHT // 2 + 5,
        thresholds=[_threshold_mark(pct) for pct in marks],
        money=Mark(
            x=_pct(x_money),
            y1=BAR_Y,
            y2=BAR_Y + BAR_HEIGHT + 10,
            label_y=BAR_Y + BAR_HEIGHT + 22,
            anchor=_anchor(x_money, edge=20),
            label=f"In the money ({percent_text(money_count, entrants)})",
        ),
        case=Mark(
            x=_pct(x_case),
            y1=BAR_Y - 2,
            y2=BAR_Y + BAR_HEIGHT + 2,
            label_y=BAR_Y + BAR_HEIGHT + 40,
            anchor=_anchor(x_case, edge=15),
            label=f"This case: {eliminated_pct}",
        ),
        marker_y=BAR_Y + BAR_HEIGHT,
    )


def _x_at(count: int, whole: int) -> float:
    """Where ``count`` out of ``whole`` falls on the bar, in percent of the width."""
    share = count / whole if whole else 0
    return BAR_LEFT + (BAR_RIGHT - BAR_LEFT) * share


def _stage_bands(
    entrants: int, paid_places: int, policy: Policy, lines: list[float]
) -> list[StageBand]:
    """One band per stage, its name placed clear of the marks drawn at ``lines``.

    A band begins at the share of entrants eliminated where the rules begin its stage (the
    policy's percentages, or where the paid places begin), not at the first whole count past
    it: a band drawn to the count (under 6.7 % of 30 for a 5 % rule) ran past its own mark."""
    segments = stage_segments(entrants=entrants, paid_places=paid_places, policy=policy)
    money_count = max(entrants - paid_places, 0)
    starts = [_share_start(segment, money_count, entrants, policy) for segment in segments]
    ends = [*starts[1:], (1, 1)]
    bands = []
    for segment, start, end in zip(segments, starts, ends, strict=True):
        x0, x1 = _x_at(*start), _x_at(*end)
        label = STAGE_LABELS.get(segment.stage, segment.stage)
        bands.append(
            StageBand(
                stage=segment.stage,
                label=label,
                x=_pct(x0),
                width=_pct(max(x1 - x0, 0)),
                range_text=_range_text(segment, entrants, start, end),
                label_x=_label_spot(x0, x1, lines, len(label)),
            )
        )
    return bands


def _share_start(
    segment: StageSegment, money_count: int, entrants: int, policy: Policy
) -> tuple[int, int]:
    """Where the rules begin ``segment``'s stage, as a share (part, whole) of the entrants
    eliminated (RULES.md §2): pre from none, early from pre_pct, middle from early_pct, late
    where the paid places begin, or from pre_pct when the money comes before it."""
    if segment.start == 0:
        return (0, 1)
    if segment.stage == "early":
        return (policy.pre_pct, 100)
    if segment.stage == "middle":
        return (policy.early_pct, 100)
    if segment.start == money_count:
        return (money_count, entrants)
    return (policy.pre_pct, 100)


def _threshold_mark(pct: int) -> Mark:
    """The mark of one of the policy's thresholds (% eliminated)."""
    x = _x_at(pct, 100)
    return Mark(
        x=_pct(x),
        y1=BAR_Y - 6,
        y2=BAR_Y + BAR_HEIGHT + 6,
        label_y=BAR_Y - 10,
        anchor=_anchor(x, edge=8),
        label=f"{pct} %",
    )


def _label_spot(x0: float, x1: float, lines: list[float], characters: int) -> float | None:
    """The middle of the widest stretch of the band [x0, x1] that no mark crosses, if the
    label fits there at the narrowest width drawn; else None."""
    if x1 <= x0:
        return None
    cuts = sorted({x0, x1, *(x for x in lines if x0 < x < x1)})
    start, end = max(zip(cuts, cuts[1:], strict=False), key=lambda gap: gap[1] - gap[0])
    room_px = (end - start) / 100 * NARROWEST_PX
    if room_px < characters * CHAR_PX + 12:
        return None
    return _pct((start + end) / 2)


def _range_text(
    segment: StageSegment, entrants: int, start: tuple[int, int], end: tuple[int, int]
) -> str:
    """The share eliminated a band covers, as its marks show it, and the counts of players
    knocked out that fall in it (the counts are what the engine reads)."""
    last = min(segment.end, entrants + 1) - 1
    if segment.start == last:
        counts = f"{last:,} of {entrants:,} players out"
    else:
        counts = f"{segment.start:,} to {last:,} of {entrants:,} players out"
    low, high = _share_text(*start), _share_text(*end)
    if segment.end > entrants:
        return f"from {low} eliminated ({counts})"
    if segment.start == 0:
        return f"under {high} eliminated ({counts})"
    return f"{low} to under {high} ({counts})"


def _share_text(part: int, whole: int) -> str:
    return f"{part} %" if whole == 100 else percent_text(part, whole)


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
            f"{entrants:,} entrants, {eliminated:,} eliminated."
        )
    return (
        f"{eliminated:,} of {entrants:,} entrants eliminated "
        f"({percent_text(eliminated, entrants)}); the policy's marks are {policy.pre_pct} % and "
        f"{policy.early_pct} %, and the money starts when {max(entrants - paid_places, 0):,} are "
        f"out ({paid_places:,} paid places). Stage: {label}."
    )


def _anchor(x: float, *, edge: float) -> str:
    # A label within `edge` % of an end of the drawing grows inwards, so it stays inside.
    if x < edge:
        return "start"
    if x > 100 - edge:
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
    y: int  # pixels from the top of the drawing
    label_y: int


# The series is drawn in a nested drawing stretched over the plot: x from 0 to SERIES_WIDTH
# along the ranks, y in pixels. Its lines keep their width (non-scaling stroke).
SERIES_WIDTH = 1000


@dataclass(frozen=True)
class PayoutChart:
    """What templates/settlements/charts/payout.html draws, and its text alternative."""

    title_id: str
    title: str
    text: str
    currency: str
    count: int  # players paid, the last rank
    height: int
    left: float  # percent of the width where the plot begins
    width: float  # percent of the width the plot spans
    top: int  # pixels
    plot_height: int
    ticks: list[Tick]
    rank_label_y: int
    caption_y: int
    axis_title_y: int
    series_width: int
    series: str  # polyline points in the nested drawing; empty when nobody is paid
    area: str  # the same points closed along the x axis

    @property
    def right(self) -> float:
        return _pct(self.left + self.width)

    @property
    def bottom(self) -> int:
        return self.top + self.plot_height


def payout_chart(
    points: Sequence[ChartPoint],
    *,
    count: int,
    currency: str,
    title: str = "Payout by chip rank",
    title_id: str = "payout-chart",
    scale_top: int = 0,
) -> PayoutChart:
    """Each player's payout against their chip rank (1 = most chips), from points already
    sampled by rank (see ``sample_by_rank``), for `count` players in all; the first and the
    last rank should be among the points.

    The y axis runs from 0 to the highest payout, or to ``scale_top`` if that is higher: charts
    meant to be compared side by side pass the same ``scale_top`` so that one height means one
    amount in all of them."""
    height, top, plot_height = 236, 28, 172
    left, width = 1.0, 98.0
    highest = max(scale_top, max((p.amount for p in points), default=0))

    def x_at(rank: int) -> float:
        if count <= 1:
            return SERIES_WIDTH / 2
        return SERIES_WIDTH * (rank - 1) / (count - 1)

    def y_at(amount: int) -> float:
        return plot_height - (plot_height * amount / highest if highest else 0)

    ticks = []
    for numerator in (0, 1, 2):
        amount = highest * numerator // 2
        y = top + round(y_at(amount))
        ticks.append(Tick(amount, y, y - 5))
    series = area = ""
    if points:
        series = " ".join(f"{_px(x_at(p.rank))},{_px(y_at(p.amount))}" for p in points)
        area = f"{series} {_px(x_at(points[-1].rank))},{plot_height} {_px(x_at(1))},{plot_height}"
    return PayoutChart(
        title_id=title_id,
        title=title,
        text=_payout_text(points, count=count, currency=currency),
        currency=currency,
        count=count,
        height=height,
        left=left,
        width=width,
        top=top,
        plot_height=plot_height,
        ticks=ticks,
        rank_label_y=top + plot_height + 18,
        caption_y=height - 4,
        axis_title_y=14,
        series_width=SERIES_WIDTH,
        series=series,
        area=area,
    )


@dataclass(frozen=True)
class IcmChart:
    """The policy's amounts (``chart``, with its axes) and the ICM values (``icm_series``) by
    chip rank, on one scale."""

    chart: PayoutChart
    icm_series: str
    text: str


def icm_chart(
    policy: Sequence[ChartPoint],
    icm: Sequence[ChartPoint],
    *,
    count: int,
    currency: str,
) -> IcmChart:
    """Both series over the ranks of the `count` remaining players, drawn as the payout chart
    is and on one scale (``scale_top``: the higher of the two), so one height is one amount."""
    top = max(0, *(p.amount for p in policy), *(p.amount for p in icm))
    chart = payout_chart(
        policy,
        count=count,
        currency=currency,
        title="The policy against ICM by chip rank",
        title_id="icm-chart",
        scale_top=top,
    )
    icm_only = payout_chart(icm, count=count, currency=currency, scale_top=top)
    shown = [
        format_minor_units(p.amount, currency) for p in (policy[0], icm[0], policy[-1], icm[-1])
    ]
    text = (
        f"{count:,} players: the most chips are paid {shown[0]} by the policy against an ICM "
        f"value of {shown[1]}; the fewest {shown[2]} against {shown[3]}."
    )
    return IcmChart(chart=chart, icm_series=icm_only.series, text=text)


def _px(value: float) -> float:
    # A tenth of a unit is finer than any screen draws and keeps the markup short.
    return round(float(value), 1)


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
    "IcmChart",
    "PayoutChart",
    "StageBar",
    "StageSegment",
    "icm_chart",
    "payout_chart",
    "percent_text",
    "sample_by_rank",
    "stage_bar",
    "stage_segments",
]
