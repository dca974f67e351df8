"""Cost of the tier search (docs/model.md §8.5) from one to five tiers.

For each stack of tiers, runs ``model.search.best`` (τ₁ and the whole multiples
m₂ … m_L jointly) and prints the number of exact evaluations of the
effective time it made, its wall time (best of ROUNDS), and that time in
units of the floor: one exact evaluation of the same stack, timed in the
same run. Then the ratios of five tiers to two, in evaluations and in time
(target: at most 3×).

Two families: the shipped presets (llama3-405b, gemini-inmemory,
llama3-405b-tiered) grown to four and five tiers by a GPU-memory snapshot
below and a burst buffer between NVMe and remote storage; and a synthetic
five-tier stack with its top one to four tiers (the failures a dropped
tier served go to the lowest one kept).

    python benchmarks/tier_search.py [ROUNDS]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from ckptcalc import api
from ckptcalc.model import search, tiers
from ckptcalc.model.evaluation import _base
from ckptcalc.model.one_level import Split
from ckptcalc.model.tiers import Tiers

CALLS = [0]
EXACT = tiers.effective


def counted(schedule: Tiers, mtbf_s: float) -> Split:
    CALLS[0] += 1
    return EXACT(schedule, mtbf_s)


def preset(name: str) -> tuple[Tiers, float]:
    config = api.job(name).config
    return _base(config), float(config.mtbf_s)


def grown(t: Tiers, below: tuple[float, float, float] | None, between: tuple[float, float, float] | None) -> Tiers:
    """``t`` with a tier (stall, share taken from the lowest tier, restart) below its lowest and one
    (stall, share taken from the top, restart) just below its top."""
    stalls, shares, restarts = list(t.stalls), list(t.shares), list(t.restarts)
    if below is not None:
        stall, share, restart = below
        shares[0] -= share
        stalls, shares, restarts = [stall, *stalls], [share, *shares], [restart, *restarts]
    if between is not None:
        stall, share, restart = between
        shares[-1] -= share
        stalls.insert(-1, stall)
        shares.insert(-1, share)
        restarts.insert(-1, restart)
    count = len(stalls)
    return t.replace(every=(1.0,) * (count - 1), stalls=tuple(stalls), shares=tuple(shares), restarts=tuple(restarts))


def presets() -> list[tuple[str, Tiers, float]]:
    one, m1 = preset("llama3-405b")
    two, m2 = preset("gemini-inmemory")
    three, m3 = preset("llama3-405b-tiered")
    # A GPU-memory snapshot (20 ms, serving a quarter of the failures, restart 5 min) and a burst buffer
    # (1 s, serving 1 %, restart 600.5 s): assumptions, in the ranges of the shipped tiers.
    four = grown(three, (0.02, 0.25, 300.0), None)
    five = grown(three, (0.02, 0.25, 300.0), (1.0, 0.01, 600.5))
    return [
        ("llama3-405b", one, m1),
        ("gemini-inmemory", two, m2),
        ("llama3-405b-tiered", three, m3),
        ("+ GPU snapshot", four, m3),
        ("+ burst buffer", five, m3),
    ]


def synthetic() -> list[tuple[str, Tiers, float]]:
    stalls = (0.02, 0.0633, 0.2637, 1.0, 3.24)
    shares = (0.30, 0.55, 0.10, 0.03, 0.02)
    restarts = (300.0, 600.06, 600.13, 600.5, 603.24)
    found = []
    for count in range(1, 6):
        kept = list(shares[-count:])
        kept[0] += sum(shares[:-count])
        t = Tiers(
            tau1_s=1.0, every=(1.0,) * (count - 1), stalls=stalls[-count:], lag_s=0.0, shares=tuple(kept),
            restarts=restarts[-count:],
        )  # fmt: skip
        found.append((f"synthetic, top {count}", t, 11_160.0))
    return found


def best_time(run: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    search.effective = counted  # type: ignore[assignment]  # count the search's exact evaluations
    for family in (presets(), synthetic()):
        print(f"{'stack':<22} {'tiers':>5} {'evaluations':>11} {'search':>10} {'one eval':>10} {'in evals':>9}")
        rows: dict[int, tuple[int, float]] = {}
        for label, t, mtbf in family:
            CALLS[0] = 0
            found = search.best(t, mtbf)
            evaluations = CALLS[0]
            wall = best_time(lambda t=t, mtbf=mtbf: search.best(t, mtbf), rounds)
            floor = best_time(lambda found=found, mtbf=mtbf: EXACT(found, mtbf), 20 * rounds)
            rows[t.count] = (evaluations, wall)
            print(
                f"{label:<22} {t.count:>5} {evaluations:>11} {wall * 1e3:>8.2f}ms {floor * 1e6:>8.1f}µs"
                f" {wall / floor:>8.0f}x"
            )
        (e2, w2), (e5, w5) = rows[2], rows[5]
        verdict = "ok" if e5 <= 3 * e2 else "over"
        print(f"five tiers / two: {e5 / e2:.2f}x evaluations ({verdict}, target at most 3x), {w5 / w2:.2f}x time")
        print()


if __name__ == "__main__":
    main()
