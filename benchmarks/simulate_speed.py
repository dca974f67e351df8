"""Time a 10^7-cycle single-level simulation against numpy's own draws.

The floor is ``Generator.exponential`` producing the same number of draws in
the same process: a simulation cannot do with fewer. Prints both times, the
ratio, and cycles per second.

    python benchmarks/simulate_speed.py [CYCLES]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from ckptcalc import presets, simulate
from ckptcalc.scenario import resolve


def best_of(runs: int, work: object) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        work()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    cycles = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10_000_000
    config = resolve(presets.load("llama3-405b")).config
    failures = simulate.Failures(float(config.mtbf_s))

    def floor() -> None:
        np.random.default_rng(1).exponential(float(config.mtbf_s), cycles)

    def run() -> None:
        simulate.run(config, failures, cycles=cycles, seed=1)

    run()  # warm up
    floor_s = best_of(3, floor)
    run_s = best_of(3, run)
    print(f"cycles:            {cycles:,}")
    print(f"numpy draws:       {floor_s * 1e3:8.1f} ms  (Generator.exponential, {cycles:,} draws)")
    print(f"simulate.run:      {run_s * 1e3:8.1f} ms  (llama3-405b, one synchronous level)")
    print(f"ratio to floor:    {run_s / floor_s:8.2f}x")
    print(f"cycles per second: {cycles / run_s:,.0f}")


if __name__ == "__main__":
    main()
