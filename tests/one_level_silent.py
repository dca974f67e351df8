"""One synchronous level with silent events, stepped by the package's silent stepper: the tests' short
way to the stepper without a whole Config (the package itself reaches it through timeline.run_silent)."""

from __future__ import annotations

from ckptcalc.mechanisms.silent.stepper import Silent, Tiers, run


def simulate(
    *,
    interval_s: float,
    stall_s: float,
    restart_s: float,
    mtbf_s: float,
    silent_mtbf_s: float,
    latency_s: float,
    skip_s: float,
    keep: int | None,
    keep_every: int | None,
    cycles: int,
    seed: int,
) -> Silent:
    """``cycles`` fail-stop failure cycles of one level with silent events; ``keep_every`` counts
    checkpoints (every p-th is kept for good)."""
    tiers = Tiers(interval_s=interval_s, every=(), stalls=(stall_s,), restarts=(restart_s,), shares=(1.0,))
    return run(tiers, mtbf_s=mtbf_s, silent_mtbf_s=silent_mtbf_s, latency_s=latency_s, skip_s=skip_s,
               keep=keep, keep_every=keep_every, cycles=cycles, seed=seed)  # fmt: skip
