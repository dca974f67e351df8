"""Elastic replica groups: the job keeps training on the groups that are up (docs/model.md §14).

The job is G replica groups. A share e of failures is group-local: the failed
group drops out and rejoins from a peer after a fixed T_j, and every such
failure pauses the running groups for a quorum change q_p. Throughput is
proportional to the groups up, times (1 − o) for the per-step overhead. The
other 1 − e are whole-job failures, which go through the periodic model (roll
back, restart, all groups up again after it); all G groups down at once is
one too. λ = 1/M with every group up, a down group cannot fail, so a group
fails at ν = eλ/G while up.

Between two whole-job failures each group alternates independently between
up (exponential, rate ν) and down (T_j), starting up. Over running stretches
that end at the whole-job rate w = (1 − e)λ its expected up share is, by the
Laplace transform of that alternating process (p̂(s) = 1/(s + ν − ν·e^{−sT_j})),

    A_w = w / (w + ν·(1 − e^{−w·T_j}))        → 1/(1 + νT_j) as w → 0,

the first-order share of groups up, raised by the restarts that bring every
group back. All groups down strikes at about h = eλ·A·(1 − A)^{G−1} (the last
group up fails), a whole-job failure that brings every group back early (the
one that just failed by T_j, the others by T_j/2 on average), so

    A = A_w + h(A)·T_j·(G + 1)/(2G),   h(A) = eλ·A·(1 − A)^{G−1},   λ_W = w + h(A),

solved by fixed-point iteration from A_w.

A pause follows every group-local failure (rate eλA): π = 1 − e^{−eλA·q_p}
of running time is paused, on (G − 1)/G of the groups up on average. So the
useful share of the periodic process's kept work is

    F = (1 − o)·A·(1 − π·(G − 1)/G)

and the effective time F × the exact periodic model at M_W = 1/λ_W. It is an
approximation: within 0.25 pp of the simulation while under a quarter of the
whole-job failures are all groups down (docs/model.md §14.6).

>>> g = groups_process(groups=8, group_share=0.95, rejoin_s=1800.0, quorum_pause_s=0.0, overhead=0.02,
...                    mtbf_s=11160.0)
>>> round(g.up_share, 5), round(g.whole_job_mtbf_s / 3600, 2), round(g.throughput, 5)
(0.98128, 62.0, 0.96166)
"""

from __future__ import annotations

from ckptcalc.model.arrays import Lib, Num, lib, quiet
from ckptcalc.records import Record

#: Fixed-point steps for the up share: each shrinks the error by a factor of about h·T_j·(G − 1)/(1 − A),
#: far below 1 wherever all groups down is not the common case.
ITERATIONS = 16

#: What ``--groups`` alone assumes, and the elastic lever too: torchft-style groups as issue 22 states them
#: (95 % of failures group-local, a 30-minute rejoin, no quorum pause, a 2 % overhead).
DEFAULT_GROUP_SHARE = 0.95
DEFAULT_REJOIN_S = 1800.0
DEFAULT_QUORUM_PAUSE_S = 0.0
DEFAULT_FT_OVERHEAD = 0.02

#: The slowest whole-job rate kept (1/s): every failure group-local and no group ever all down
#: would otherwise leave an infinite whole-job MTBF.
SLOWEST = 1e-21


class Groups(Record):
    """The groups process of one configuration (or a grid): shares of the periodic process's kept work time.

    ``all_down_share`` is the share of whole-job failures that are all groups down: the approximation
    holds while it is small (docs/model.md §14.6). ``up_share`` A, ``pause_share`` π of running time,
    ``whole_job_mtbf_s`` 1/λ_W, ``throughput`` F; the
    losses ``down`` (1 − A), ``quorum`` (A·π·(G − 1)/G) and ``overhead`` (o·(A − quorum)) sum with F to 1.
    """

    up_share: Num
    pause_share: Num
    whole_job_mtbf_s: Num
    throughput: Num
    down: Num
    quorum: Num
    overhead: Num
    first_order_throughput: Num
    all_down_share: Num  # of whole-job failures, those that are all groups down (h/λ_W)


def _up_share(rate: Num, nu: Num, rejoin: Num, ns: Lib) -> Num:
    """λ_w / (λ_w + ν·(1 − e^{−λ_w·T_j})), the up share of one group over stretches ending at ``rate``."""
    up: Num = rate / (rate - nu * ns.expm1(-rate * rejoin))
    return up


def groups_process(
    *, groups: Num, group_share: Num, rejoin_s: Num, quorum_pause_s: Num, overhead: Num, mtbf_s: Num
) -> Groups:
    """The up share, pauses, whole-job MTBF and useful share of G elastic replica groups (docs/model.md §14)."""
    ns = lib(groups, group_share, rejoin_s, quorum_pause_s, overhead, mtbf_s)
    with quiet(ns):
        lam = 1.0 / mtbf_s
        local = group_share * lam  # eλ: group-local failures with every group up
        nu = local / groups
        rate = ns.maximum((1.0 - group_share) * lam, SLOWEST)
        alone = _up_share(rate, nu, rejoin_s, ns)
        a, early = alone, rejoin_s * (groups + 1.0) / (2.0 * groups)
        for _ in range(ITERATIONS):
            # All down, from the independent groups' law: the last group up fails; each brings every group
            # back early (the one that just failed by T_j, the others by T_j/2 on average).
            down = local * a * (1.0 - a) ** (groups - 1.0)
            a = ns.minimum(alone + down * early, 1.0)
        down = local * a * (1.0 - a) ** (groups - 1.0)
        rate = rate + down
        down_share = down / rate
        pause = -ns.expm1(-local * a * quorum_pause_s)
        quorum = a * pause * (groups - 1.0) / groups
        running = a - quorum
        first = 1.0 / (1.0 + nu * rejoin_s)
        first_throughput = (1.0 - overhead) * first * (1.0 - local * first * quorum_pause_s)
    return Groups(
        up_share=a,
        pause_share=pause,
        whole_job_mtbf_s=1.0 / rate,
        throughput=(1.0 - overhead) * running,
        down=1.0 - a,
        quorum=quorum,
        overhead=overhead * running,
        first_order_throughput=first_throughput,
        all_down_share=down_share,
    )


class Losses(Record):
    """An elastic configuration's result beside the periodic split: ``periodic`` the periodic process's
    effective time, and the groups' losses as shares of elapsed time (effective + these = periodic)."""

    groups: Groups
    periodic: Num
    down: Num
    quorum: Num
    overhead: Num


def losses(groups: Groups, periodic: Num) -> Losses:
    """The groups' losses on a periodic process whose effective time is ``periodic``."""
    return Losses(groups, periodic, periodic * groups.down, periodic * groups.quorum, periodic * groups.overhead)


#: Above this share of whole-job failures from all groups down, the analytic form is warned about.
ALL_DOWN_WARNING = 0.25
