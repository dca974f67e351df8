"""Recovery that loses (almost) no work: just-in-time recovery and failures with notice (docs/model.md §13).

Both are failure classes of the one recursion of :mod:`ckptcalc.model.tiers`:

* **just-in-time**: a share p_j of failures is recovered in place from a healthy data-parallel
  replica. It loses the work since the last step boundary and restarts in c_j = r + δ_j (the
  restart plus the save from the replica, δ_j = size / its bandwidth). That is a tier whose
  interval is one step and whose stall is zero, under the periodic tiers, with share p_j and
  restart c_j: :func:`with_recovery` puts it there.
* **notice**: a share p_n comes with enough notice to write a checkpoint first (δ), then restarts
  (r) and loses nothing: a class that goes back nowhere, ``Tiers.notice_share``.

The periodic tiers serve the rest, 1 − p_j − p_n, each its own part of it (a replica that survives
a share q of the failures that roll back serves q·(1 − p_j − p_n) of all of them).

>>> t = Tiers(tau1_s=1.0, every=(), stalls=(3.24,), lag_s=0.0, shares=(0.1,), restarts=(600.0,))
>>> j = with_recovery(t, step_s=10.0, jit_share=0.9, jit_restart_s=603.24, notice_share=0.0, notice_restart_s=603.24)
>>> j.stalls, j.shares, j.tau1_s
((0.0, 3.24), (0.9, 0.1), 10.0)
"""

from __future__ import annotations

from ckptcalc.model.arrays import Num, lib, scalar
from ckptcalc.model.tiers import Tiers


def periodic_share(jit_share: Num, notice_share: Num) -> Num:
    """The share of failures that roll back to a periodic checkpoint: 1 − p_j − p_n, 0 where the two
    shares sum to 1 within rounding (0.9 + 0.1 leaves −3e-17).

    >>> periodic_share(0.9, 0.1), periodic_share(0.5, 0.2)
    (0.0, 0.3)
    """
    rest = 1.0 - jit_share - notice_share
    if scalar(rest):
        return rest if rest > 1e-12 else 0.0
    ns = lib(rest)
    found: Num = ns.where(rest > 1e-12, rest, 0.0)
    return found


def with_recovery(
    periodic: Tiers,
    *,
    step_s: Num,
    jit_share: Num | None,
    jit_restart_s: Num,
    notice_share: Num | None,
    notice_restart_s: Num,
) -> Tiers:
    """The schedule ``periodic`` (its shares of all failures, summing to 1 − p_j − p_n) with the
    just-in-time tier below it (interval one step, stall 0; when ``jit_share`` is given) and the
    failures with notice (when ``notice_share`` is). τ₁ is then the step and the first multiple the
    periodic interval in steps (1 as a placeholder)."""
    found = periodic
    if notice_share is not None:
        found = found.replace(notice_share=notice_share, notice_restart_s=notice_restart_s)
    if jit_share is None:
        return found
    return found.replace(
        tau1_s=step_s,
        every=(1.0, *periodic.every),
        stalls=(0.0, *periodic.stalls),
        shares=(jit_share, *periodic.shares),
        restarts=(jit_restart_s, *periodic.restarts),
    )


def without_jit(t: Tiers) -> Tiers:
    """The periodic tiers of a schedule built by :func:`with_recovery` with a just-in-time tier:
    τ₁ the fastest periodic interval, the multiples above it."""
    return t.replace(
        tau1_s=t.tau1_s * t.every[0],
        every=t.every[1:],
        stalls=t.stalls[1:],
        shares=t.shares[1:],
        restarts=t.restarts[1:],
    )


def in_place_only(*, step_s: Num, jit_restart_s: Num, mtbf_s: Num) -> Num:
    """Effective time when every failure is recovered in place: Daly's exact form with τ = t_step,
    δ = 0 and r = c_j, t_step·e^{−c_j/M} / (M·(e^{t_step/M} − 1)). No periodic checkpoint is needed.

    >>> round(in_place_only(step_s=10.0, jit_restart_s=603.24, mtbf_s=11160.0), 6)
    0.946957
    """
    ns = lib(step_s, jit_restart_s, mtbf_s)
    found: Num = step_s * ns.exp(-jit_restart_s / mtbf_s) / (mtbf_s * ns.expm1(step_s / mtbf_s))
    return found


def first_order_terms(
    *, step_s: Num, jit_share: Num, jit_restart_s: Num, notice_share: Num, notice_restart_s: Num, mtbf_s: Num
) -> tuple[Num, Num]:
    """The (rework, restart) first order charges the failures recovered in place or met with notice:
    p_j·t_step/2M and p_j·c_j/M + p_n·(δ + r)/M."""
    rework = jit_share * step_s / (2.0 * mtbf_s)
    restart = (jit_share * jit_restart_s + notice_share * notice_restart_s) / mtbf_s
    return rework, restart
