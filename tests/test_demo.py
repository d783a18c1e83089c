"""The demo's snapshot builder, which the seed, the benchmarks and most tests rely on."""

from hypothesis import given
from hypothesis import strategies as st

from settlements.demo import snapshot_bytes
from settlements.rules.snapshot import parse_snapshot


@given(
    type_=st.sampled_from(["regular", "freeroll", "satellite"]),
    stage=st.sampled_from(["pre", "early", "middle", "late"]),
    entrants=st.integers(8, 40),
    buy_in=st.integers(0, 10**6),
    prize_pool=st.integers(1, 10**6),
    rebuys=st.booleans(),
)
def test_every_snapshot_it_builds_passes_the_checks(
    type_, stage, entrants, buy_in, prize_pool, rebuys
):
    # Small pools once built prizes that grew from second to third place (9 paid 4, 2, 3).
    parse_snapshot(
        snapshot_bytes(
            type=type_,
            stage=stage,
            entrants=entrants,
            buy_in=buy_in,
            fee=0,
            prize_pool=prize_pool,
            guarantee=10**6 if buy_in == 0 and type_ != "freeroll" else None,
            rebuys=rebuys and type_ != "freeroll",
        )
    )
