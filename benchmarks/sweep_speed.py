"""Time a 10^6-point interval sweep through the model, vectorised vs a Python loop.

The vectorised run passes one numpy array to ``model.evaluate`` (the whole
result: the exact split, effective time, the exact optimum, first order
beside it, dominant term, caveats). Two Python loops over the same points
serve as floors: one calls the exact model's own scalar function
``tiers.effective`` per point, the other computes Daly's exact form inline,
the cheapest scalar path there is. Prints the times and the ratios.

    python benchmarks/sweep_speed.py [POINTS]
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from ckptcalc.inputs import presets
from ckptcalc.inputs.scenario import resolve
from ckptcalc.model import evaluation as model
from ckptcalc.model import tiers
from ckptcalc.model.evaluation import replace


def main() -> None:
    points = int(float(sys.argv[1])) if len(sys.argv) > 1 else 1_000_000
    config = resolve(presets.load("llama3-405b")).config
    tau = float(model.evaluate(config).optimal_interval_s)
    intervals = np.geomspace(tau / 10, tau * 10, points)

    best_vector = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        grid = model.evaluate(replace(config, interval_s=intervals))
        best_vector = min(best_vector, time.perf_counter() - start)

    delta, mtbf, restart = float(config.write_s), float(config.mtbf_s), float(config.restart_s)
    start = time.perf_counter()
    through_model = []
    for tau_i in intervals.tolist():
        schedule = tiers.single(interval_s=tau_i, stall_s=delta, lag_s=0.0, restart_s=restart)
        through_model.append(tiers.effective(schedule, mtbf).effective)
    model_loop = time.perf_counter() - start

    start = time.perf_counter()
    effective = []
    scale = math.exp(restart / mtbf) * mtbf
    for tau_i in intervals.tolist():
        effective.append(tau_i / (scale * math.expm1((tau_i + delta) / mtbf)))
    loop = time.perf_counter() - start

    assert np.allclose(grid.effective, effective, rtol=1e-12)
    assert np.allclose(grid.effective, through_model, rtol=1e-12)
    print(f"points:               {points:,}")
    print(f"vectorised:           {best_vector * 1e3:8.1f} ms  (best of 5, model.evaluate on one array)")
    print(f"loop through model:   {model_loop * 1e3:8.1f} ms  (tiers.effective per point)")
    print(f"loop, inline formula: {loop * 1e3:8.1f} ms  (Daly's exact form per point)")
    print(f"ratio, model loop:    {model_loop / best_vector:8.1f}x")
    print(f"ratio, inline loop:   {loop / best_vector:8.1f}x")


if __name__ == "__main__":
    main()
