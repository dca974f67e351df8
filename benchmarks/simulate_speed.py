"""Time a 10^7-cycle single-level simulation against numpy's own draws.

The floor is ``Generator.standard_exponential`` filling a preallocated buffer
of the same number of float64 values (``rng.standard_exponential(out=buf)``),
in the same process: a simulation draws one failure time per cycle, so it
cannot do with less. Both are warmed up, then timed best of 5, interleaved.
Prints both times, the ratio (target: at most 3x), and cycles per second; then,
for scale, the same number of cycles of memory + storage (gemini-inmemory), whose
epochs run side by side, one cycle per step.

    python benchmarks/simulate_speed.py [CYCLES]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

from ckptcalc.inputs import presets
from ckptcalc.inputs.scenario import resolve
from ckptcalc.simulation import timeline as simulate

RUNS = 5


def main() -> None:
    cycles = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10_000_000
    config = resolve(presets.load("llama3-405b")).config
    two = resolve(presets.load("gemini-inmemory")).config
    failures = simulate.Failures(float(config.mtbf_s))
    rng = np.random.default_rng(1)
    buffer = np.empty(cycles)

    def floor() -> None:
        rng.standard_exponential(out=buffer)

    def run() -> None:
        simulate.run(config, failures, cycles=cycles, seed=1)

    def run_two() -> None:
        simulate.run(two, simulate.Failures(float(two.mtbf_s)), cycles=cycles, seed=1)

    best: dict[Callable[[], None], float] = {floor: float("inf"), run: float("inf"), run_two: float("inf")}
    floor()  # warm up: page in the buffer
    run()
    for _ in range(RUNS):
        for work in (floor, run, run_two):
            start = time.perf_counter()
            work()
            best[work] = min(best[work], time.perf_counter() - start)
    floor_s, run_s = best[floor], best[run]
    print(f"cycles:            {cycles:,}  (warm, best of {RUNS}, interleaved)")
    print(f"numpy draws:       {floor_s * 1e3:8.1f} ms  (standard_exponential(out=buf), {cycles:,} float64)")
    print(f"simulate.run:      {run_s * 1e3:8.1f} ms  (llama3-405b, one synchronous level)")
    print(f"ratio to floor:    {run_s / floor_s:8.2f}x  (target: at most 3x)")
    print(f"cycles per second: {cycles / run_s:,.0f}")
    print(f"two levels:        {best[run_two] * 1e3:8.1f} ms  (gemini-inmemory, memory + storage)")


if __name__ == "__main__":
    main()
