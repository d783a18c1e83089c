"""The pages a desk opens on its way through a large outage, timed against the 200 ms goal.

Each page is fetched whole (as a browser's first view, not an htmx swap) three times in a row
and its median kept. The CPU they cost is kept apart, so that the figures of the outage's
steps stay the steps' own.
"""

import statistics
import time

GOAL_MS = 200
TIMES = 3


class PageCheck:
    def __init__(self, meter):
        self.meter = meter
        self.rows: list[tuple[str, str, float, float, int]] = []
        self.cpu: dict[str, float] = {}

    def check(self, moment: str, pages: list[tuple[str, object, str]]) -> None:
        """Time ``pages`` ((label, client, path), ...) at ``moment`` of the outage."""
        before = self.meter.so_far()
        for label, client, path in pages:
            times = []
            for _ in range(TIMES):
                started = time.perf_counter()
                status, _, body = client.get(path)
                times.append((time.perf_counter() - started) * 1000)
                if status != 200:
                    raise SystemExit(f"{label} ({path}): HTTP {status}\n{body[:800]!r}")
            self.rows.append((moment, label, statistics.median(times), max(times), len(body)))
        for group, cpu in self.meter.so_far().items():
            self.cpu[group] = self.cpu.get(group, 0.0) + cpu - before[group]

    def add(self, moment: str, label: str, times_ms: list[float], size: int = 0) -> None:
        """Requests timed elsewhere (a confirmation posted, the job pages polled)."""
        if times_ms:
            self.rows.append((moment, label, statistics.median(times_ms), max(times_ms), size))

    def report(self) -> None:
        print(f"\npages on the way (median of {TIMES} whole-page views; goal {GOAL_MS} ms):")
        for moment, label, median, worst, size in self.rows:
            flag = "" if median < GOAL_MS else "  OVER"
            kb = f"{size / 1024:6.0f} KB" if size else " " * 9
            print(f"  {moment:<16} {label:<42} {median:6.0f} ms (max {worst:5.0f}) {kb}{flag}")
        over = [row for row in self.rows if row[2] >= GOAL_MS]
        print(f"  {len(self.rows) - len(over)} of {len(self.rows)} under {GOAL_MS} ms")
