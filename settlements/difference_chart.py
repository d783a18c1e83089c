"""The histogram of what a simulated rulebook version changes for each player: how many
players gain or lose how much, one chart per unit. Pure geometry and text, as in
settlements/charts.py; the markup is templates/settlements/charts/differences.html.

Bins are of one width chosen from 1, 2, 5, 10, 20, 50 … minor units (so their edges read as
round amounts) and are anchored at zero: a loss bin never holds a gain, and players whose
amount did not change have a bar of their own.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from settlements.money import MONEY_UNITS, format_in_unit

# The most bars a chart draws, the bar of players unchanged included.
MAX_BINS = 11


@dataclass(frozen=True)
class DifferenceBin:
    low: int  # the smallest difference it holds, minor units
    high: int  # the largest
    count: int  # players whose difference falls in it
    kind: str  # "loss", "same" or "gain"
    label: str  # the range in words
    x: float  # percent of the width
    width: float  # percent of the width
    y: int  # the bar's top, pixels
    height: int  # pixels; 0 when no player falls in it
    count_y: int  # where its count is written, above the bar

    @property
    def center(self) -> float:
        return _pct(self.x + self.width / 2)


@dataclass(frozen=True)
class AxisLabel:
    x: float  # percent of the width
    anchor: str
    text: str


@dataclass(frozen=True)
class DifferenceChart:
    """What templates/settlements/charts/differences.html draws, and its text alternative."""

    unit: str
    title_id: str
    title: str
    text: str
    height: int
    left: float  # percent of the width
    right: float  # percent of the width
    top: int
    bottom: int  # the baseline, pixels
    bins: list[DifferenceBin]
    axis_title_y: int
    same_label: AxisLabel  # under the bar of players unchanged
    same_label_y: int
    edges: list[AxisLabel]  # the lowest and the highest difference drawn
    edge_label_y: int
    caption_y: int


def bin_width(lowest: int, highest: int, max_bins: int = MAX_BINS) -> int:
    """The narrowest round width (1, 2, 5 × a power of ten) that covers the losses down to
    ``lowest`` and the gains up to ``highest`` in at most ``max_bins`` bars, one of them the
    bar of players unchanged."""
    losses, gains = max(-lowest, 0), max(highest, 0)
    power = 1
    while True:
        for mantissa in (1, 2, 5):
            width = mantissa * power
            if _bins_needed(losses, width) + _bins_needed(gains, width) <= max_bins - 1:
                return width
        power *= 10


def _bins_needed(extent: int, width: int) -> int:
    return -(-extent // width)


def difference_bins(
    differences: Sequence[int], max_bins: int = MAX_BINS
) -> list[tuple[int, int, int]]:
    """(low, high, count) for each bar from the largest loss to the largest gain, both ends
    inclusive; the bar (0, 0, count) of players unchanged is always among them."""
    lowest, highest = min(differences, default=0), max(differences, default=0)
    width = bin_width(lowest, highest, max_bins)
    loss_bins = _bins_needed(max(-lowest, 0), width)
    gain_bins = _bins_needed(max(highest, 0), width)
    losses, gains = [0] * loss_bins, [0] * gain_bins
    same = 0
    for difference in differences:
        if difference < 0:
            losses[(-difference - 1) // width] += 1
        elif difference > 0:
            gains[(difference - 1) // width] += 1
        else:
            same += 1
    bins = [
        (-(index + 1) * width, -index * width - 1, losses[index])
        for index in reversed(range(loss_bins))
    ]
    bins.append((0, 0, same))
    bins += [(index * width + 1, (index + 1) * width, gains[index]) for index in range(gain_bins)]
    return bins


def signed_amount(amount: int, unit: str, currency: str | None) -> str:
    """A difference in its unit, a gain with its plus sign; amounts of money in minor units
    when the cases are in more than one currency (``currency`` None)."""
    sign = "+" if amount > 0 else ""
    if currency is None and unit in MONEY_UNITS:
        return f"{sign}{amount:,} in minor units"
    return sign + format_in_unit(amount, unit, currency or "")


def _range_text(low: int, high: int, unit: str, currency: str | None) -> str:
    if low == high == 0:
        return "Unchanged"
    if low == high:
        return signed_amount(low, unit, currency)
    return f"{signed_amount(low, unit, currency)} to {signed_amount(high, unit, currency)}"


def difference_chart(
    differences: Sequence[int],
    *,
    unit: str,
    currency: str | None,
    unit_label: str | None = None,
    max_bins: int = MAX_BINS,
) -> DifferenceChart | None:
    """The histogram of one unit's per-player differences (under the version minus then), or
    None when there are none. ``currency`` is None when the cases are in several."""
    if not differences:
        return None
    height, top, plot_height = 230, 40, 140
    left, right = 1.0, 99.0
    bottom = top + plot_height
    counted = difference_bins(differences, max_bins)
    tallest = max(count for _, _, count in counted)
    slot = (right - left) / len(counted)
    bins = []
    for index, (low, high, count) in enumerate(counted):
        # A bar of one player among thousands still shows: at least two pixels.
        bar = max(round(plot_height * count / tallest), 2) if count else 0
        bins.append(
            DifferenceBin(
                low=low,
                high=high,
                count=count,
                kind="loss" if high < 0 else "gain" if low > 0 else "same",
                label=_range_text(low, high, unit, currency),
                x=_pct(left + slot * index + slot * 0.1),
                width=_pct(slot * 0.8),
                y=bottom - bar,
                height=bar,
                count_y=bottom - bar - 5,
            )
        )
    same_index = next(i for i, b in enumerate(bins) if b.kind == "same")
    label = unit_label or unit
    return DifferenceChart(
        unit=unit,
        title_id=f"differences-{unit}",
        title=f"Difference per player, {label}",
        text=_summary_text(differences, unit, currency, label),
        height=height,
        left=left,
        right=right,
        top=top,
        bottom=bottom,
        bins=bins,
        axis_title_y=14,
        same_label=_same_label(same_index, len(bins), left, slot),
        same_label_y=bottom + 18,
        edges=_edges(bins, unit, currency, left, right),
        edge_label_y=bottom + 36,
        caption_y=height - 4,
    )


def _same_label(index: int, count: int, left: float, slot: float) -> AxisLabel:
    # At either end of the chart the label grows inwards, so that it stays inside.
    if index == 0 and count > 1:
        return AxisLabel(_pct(left + slot * 0.1), "start", "Unchanged")
    if index == count - 1 and count > 1:
        return AxisLabel(_pct(left + slot * (index + 0.9)), "end", "Unchanged")
    return AxisLabel(_pct(left + slot * (index + 0.5)), "middle", "Unchanged")


def _edges(
    bins: list[DifferenceBin], unit: str, currency: str | None, left: float, right: float
) -> list[AxisLabel]:
    edges = []
    if bins[0].kind == "loss":
        edges.append(AxisLabel(left, "start", signed_amount(bins[0].low, unit, currency)))
    if bins[-1].kind == "gain":
        edges.append(AxisLabel(right, "end", signed_amount(bins[-1].high, unit, currency)))
    return edges


def _summary_text(differences: Sequence[int], unit: str, currency: str | None, label: str) -> str:
    """The chart in words: how many lose, keep and gain, and the extremes."""
    worse = sum(1 for d in differences if d < 0)
    better = sum(1 for d in differences if d > 0)
    same = len(differences) - worse - better
    parts = [f"{worse:,} worse off"]
    if worse:
        parts[-1] += f" (the largest loss {signed_amount(min(differences), unit, currency)})"
    parts.append(f"{same:,} unchanged")
    parts.append(f"{better:,} better off")
    if better:
        parts[-1] += f" (the largest gain {signed_amount(max(differences), unit, currency)})"
    players = "player" if len(differences) == 1 else "players"
    return f"{label}: of {len(differences):,} {players}, {', '.join(parts)}."


def _pct(value: float) -> float:
    # A hundredth of a percent is finer than any screen draws and keeps the markup short.
    return round(float(value), 2)


__all__ = [
    "MAX_BINS",
    "DifferenceBin",
    "DifferenceChart",
    "bin_width",
    "difference_bins",
    "difference_chart",
    "signed_amount",
]
