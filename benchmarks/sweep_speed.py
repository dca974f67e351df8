"""Time a 10^6-point interval sweep through the model, vectorised vs a Python loop.

The vectorised run passes one numpy array to ``model.evaluate`` (the whole
result: per-level terms, totals, effective time, dominant term, caveats).
Two Python loops over the same points serve as floors: one calls the model's
own scalar function ``model.first_order_loss`` per point, the other computes
Young's three terms inline, the cheapest scalar path there is. Prints the
times and the ratios.

    python benchmarks/sweep_speed.py [POINTS]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from ckptcalc import model, presets
from ckptcalc.model import replace
from ckptcalc.scenario import resolve


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
        write, rework, lost = model.first_order_loss(delta, tau_i, mtbf, restart)
        through_model.append(write + rework + lost)
    model_loop = time.perf_counter() - start

    start = time.perf_counter()
    totals = []
    for tau_i in intervals.tolist():
        totals.append(delta / tau_i + tau_i / (2.0 * mtbf) + restart / mtbf)
    loop = time.perf_counter() - start

    assert np.allclose(grid.total, totals, rtol=1e-12)
    assert np.allclose(grid.total, through_model, rtol=1e-12)
    print(f"points:               {points:,}")
    print(f"vectorised:           {best_vector * 1e3:8.1f} ms  (best of 5, model.evaluate on one array)")
    print(f"loop through model:   {model_loop * 1e3:8.1f} ms  (model.first_order_loss per point)")
    print(f"loop, inline terms:   {loop * 1e3:8.1f} ms  (plain arithmetic per point)")
    print(f"ratio, model loop:    {model_loop / best_vector:8.1f}x")
    print(f"ratio, inline loop:   {loop / best_vector:8.1f}x")


if __name__ == "__main__":
    main()
