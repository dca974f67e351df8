"""Elastic replica groups: the job keeps training on the groups that are up (docs/model.md §14).

The job is G replica groups. A share e of failures is group-local: the failed
group drops out and rejoins from a peer after a fixed T_j, and every such
failure pauses the running groups for a quorum change q_p. Throughput is
proportional to the groups up, times (1 − o) for the per-step overhead. The
other 1 − e are whole-job failures, which go through the periodic model (roll
back, restart, all groups up again after it); all G groups down at once is
one too. λ = 1/M with every group up, a down group cannot fail, so a group
fails at ν = eλ/G while up; whole-job failures come at w = (1 − e)λ.

The groups process runs from all up to the next whole-job failure (w, or all
down). By renewal-reward over those stretches, the up share A is the mean
group-time up over G × the mean stretch, and the mean stretch is the
whole-job MTBF M_W (so λ_W = 1/M_W, exactly; and w·M_W = 1 − the all-down
share). These are exact for G = 2 (a two-state chain, closed form) and G = 3
(one group down with residual r: a linear pair of equations in r and
T_j − r, integrated by RK4 over [0, T_j/2]). For G ≥ 4, exactly,
A = A_w·(1 + h·S/G): A_w the up share of independent groups over stretches
ending at w (the Laplace transform of the alternating process), h the
all-down rate and S the discounted down time each all-down failure cuts
off; h = eλ·A·(1 − A)^{G−1} and S are taken at the mean state (the
approximation), solved by fixed-point iteration.

Pauses follow the group-local failures that leave a group up (eλA less the
all-down ones): π of running time, on the groups such a failure leaves up.
The useful share of kept work is F = (1 − o)·(A − quorum loss). Beside it,
the effective time corrects the periodic model at M_W for what the groups
process does differently: restarts are struck at w only, and the work lost
to an all-down failure was done with one group up (:func:`losses`). It is
an approximation: within 0.1 pp of the simulation, or inside its interval,
on every case checked where no warning is given (docs/model.md §14.6).

>>> g = groups_process(groups=8, group_share=0.95, rejoin_s=1800.0, quorum_pause_s=0.0, overhead=0.02,
...                    mtbf_s=11160.0)
>>> round(g.up_share, 5), round(g.whole_job_mtbf_s / 3600, 2), round(g.throughput, 5)
(0.98128, 62.0, 0.96166)
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ckptcalc.model.arrays import Lib, Num, divide, largest, lib, quiet, scalar
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
    groups: Num  # G
    one_up: Num  # (1 − o)/G: the throughput with one group up
    rate: Num  # w = (1 − e)/M: the whole-job failures that are not all groups down (1/s)


def _up_share(rate: Num, nu: Num, rejoin: Num, ns: Lib) -> Num:
    """λ_w / (λ_w + ν·(1 − e^{−λ_w·T_j})), the up share of one group over stretches ending at ``rate``."""
    up: Num = rate / (rate - nu * ns.expm1(-rate * rejoin))
    return up


class Out(Record):
    """How long a failed group stays out (docs/model.md §18.4): ``rejoin_s`` T_j, or with a spare pool
    T_j with probability 1 − ``slow_share`` (a spare swapped in) and ``slow_s`` (the repair) otherwise."""

    rejoin_s: Num
    slow_s: Num | None = None
    slow_share: Num = 0.0

    def mean(self, f: Callable[[Num], Num]) -> Num:
        """E[f(T)] over the time out T: f(T_j), or the mixture of f(T_j) and f(T_rep)."""
        if self.slow_s is None:
            return f(self.rejoin_s)
        return (1.0 - self.slow_share) * f(self.rejoin_s) + self.slow_share * f(self.slow_s)

    def biased(self, f: Callable[[Num], Num]) -> Num:
        """E[f(T)] over the time out of a group found down at a random moment: the mixture weighted by
        length (a long outage is more often the one found)."""
        if self.slow_s is None:
            return f(self.rejoin_s)
        fast, slow = (1.0 - self.slow_share) * self.rejoin_s, self.slow_share * self.slow_s
        return (fast * f(self.rejoin_s) + slow * f(self.slow_s)) / (fast + slow)


def _two_groups(nu: Num, rate: Num, rejoin: Num, ns: Lib, out: Out | None = None) -> tuple[Num, Num, Num]:
    """The exact two-group chain (docs/model.md §14.3): the up share, the mean running stretch between
    whole-job failures and the share of them that are both groups down, by renewal-reward over the cycles
    that start with both up and end at the first whole-job failure. Every figure is linear in the law of
    the time out through E[min(T, Exp(ν + w))], so a time out drawn from ``out`` keeps it exact."""
    both = 1.0 / (2.0 * nu + rate)  # mean time with both up
    drop = 2.0 * nu * both  # a group drops before a whole-job failure
    leave = nu + rate  # with one down: the other fails, or the job does
    # The mean time with one down: E[min(T, Exp(ν + w))], T = T_j or drawn from ``out``.
    one = out.mean(lambda t: -ns.expm1(-leave * t) / leave) if out is not None else -ns.expm1(-leave * rejoin) / leave
    # 1 − drop·e^{−(ν + w)T_j}: the chance a cycle ends, written without cancellation.
    ends = rate * both + drop * leave * one
    stretch = (both + drop * one) / ends
    up: Num = (2.0 * both + drop * one) / (2.0 * (both + drop * one))
    all_down = drop * one * nu / ends
    return up, stretch, all_down


#: RK4 steps over T_j/2 for three groups: at least this many, and 3·(2ν + w)·T_j (a step of β·h ≤ 1/6).
STEPS = 16
MOST_STEPS = 2000
#: The largest β·T_j integrated (beyond it nothing changes in double precision).
STIFF = 600.0


def _three_groups(nu: Num, rate: Num, rejoin: Num, ns: Lib) -> tuple[Num, Num, Num]:
    """The exact three-group process (docs/model.md §14.3): with one group down for residual r, the
    value φ(r) of the time, the group-time up and the chance of all down until the next whole-job
    failure, and ψ(r) = φ(T_j − r), solve a linear pair of equations integrated by RK4 over [0, T_j/2],
    where φ = ψ; the value from all up follows."""
    one, two, three = nu + rate, 2.0 * nu + rate, 3.0 * nu + rate
    # Past β·T_j = 600 a down group is back before the stretch ends with a chance under e^{−300}: the values
    # are those at that T_j (and the growing solution stays finite).
    rejoin = ns.minimum(rejoin, STIFF / two)
    steps = int(min(max(STEPS, math.ceil(3.0 * largest(two * rejoin))), MOST_STEPS))
    h = rejoin / (2.0 * steps)
    # Per value: (reward all up, reward one down, reward two down + ν × the all-down payoff).
    rewards = ((1.0, 1.0, 1.0), (3.0, 2.0, 1.0), (0.0, 0.0, nu))

    def slope(r: Num, y: list[Num]) -> list[Num]:
        near, far = ns.exp(-one * r), ns.exp(-one * (rejoin - r))
        out = [2.0 * nu * near * y[1] - two * y[0], two * y[1] - 2.0 * nu * far * y[0]]
        for k, (_, down, pair) in enumerate(rewards):
            phi, psi = y[2 + 2 * k], y[3 + 2 * k]
            out.append(down + 2.0 * nu * (-pair * ns.expm1(-one * r) / one + near * psi) - two * phi)
            out.append(two * psi - down - 2.0 * nu * (-pair * ns.expm1(-one * (rejoin - r)) / one + far * phi))
        return out

    # The homogeneous pair starts at (3ν/(3ν + w), 1) per unit of φ(T_j); each value at (ρ₀/(3ν + w), 0).
    y: list[Num] = [3.0 * nu / three, 1.0 + 0.0 * nu]
    for up, _, _ in rewards:
        y += [up / three + 0.0 * nu, 0.0 * nu]
    r: Num = 0.0 * h
    for _ in range(steps):
        k1 = slope(r, y)
        k2 = slope(r + h / 2.0, [a + h / 2.0 * b for a, b in zip(y, k1, strict=True)])
        k3 = slope(r + h / 2.0, [a + h / 2.0 * b for a, b in zip(y, k2, strict=True)])
        k4 = slope(r + h, [a + h * b for a, b in zip(y, k3, strict=True)])
        y = [a + h / 6.0 * (b1 + 2.0 * b2 + 2.0 * b3 + b4) for a, b1, b2, b3, b4 in zip(y, k1, k2, k3, k4, strict=True)]
        r = r + h
    values = []
    for k, (up, _, _) in enumerate(rewards):
        end = (y[3 + 2 * k] - y[2 + 2 * k]) / (y[0] - y[1])  # φ(T_j), from φ(T_j/2) = ψ(T_j/2)
        values.append((up + 3.0 * nu * end) / three)
    stretch, time_up, all_down = values
    share: Num = time_up / (3.0 * stretch)
    return share, stretch, all_down


#: Below this w·T_j the uniform residual's discounted mean is summed as a series (cancellation otherwise).
SMALL = 1e-3


def _many_groups(
    local: Num, nu: Num, rate: Num, groups: Num, rejoin: Num, ns: Lib, out: Out | None = None
) -> tuple[Num, Num, Num]:
    """G ≥ 4 (docs/model.md §14.3): A = A_w·(1 + h·S/G), exact given the all-down rate h and the
    discounted down time S an all-down failure cuts off; h and S taken from independent groups at the
    mean state (fixed-point iteration from A_w). A time out drawn from ``out`` (§18.4) enters through
    E[e^{−wT}] (exact for independent groups) and the discounted down times at each T (approximate)."""
    if out is None:
        alone = _up_share(rate, nu, rejoin, ns)
    else:
        alone = rate / (rate - nu * out.mean(lambda t: ns.expm1(-rate * t)))

    def residual(t: Num) -> Num:
        # Over a residual uniform on (0, T): T·(x − 1 + e^{−x})/x², x = wT (a series for small x).
        x = rate * t
        wide = ns.maximum(x, SMALL)
        found: Num = t * ns.where(x < SMALL, 0.5 - x / 6.0 + x * x / 24.0, (wide + ns.expm1(-wide)) / (wide * wide))
        return found

    if out is None:
        last = -ns.expm1(-rate * rejoin) / rate  # (1 − e^{−wT_j})/w: the group that fails last
        other = residual(rejoin)
    else:
        last = out.mean(lambda t: -ns.expm1(-rate * t) / rate)
        other = out.biased(residual)
    cut = alone * (last + (groups - 1.0) * other) / groups
    a = alone
    for _ in range(ITERATIONS):
        # All down, from the independent groups' law: the last group up fails.
        down = local * a * (1.0 - a) ** (groups - 1.0)
        a = ns.minimum(alone + down * cut, 1.0)
    down = local * a * (1.0 - a) ** (groups - 1.0)
    whole = rate + down
    return a, 1.0 / whole, down / whole


def groups_process(
    *,
    groups: Num,
    group_share: Num,
    rejoin_s: Num,
    quorum_pause_s: Num,
    overhead: Num,
    mtbf_s: Num,
    out: Out | None = None,
) -> Groups:
    """The up share, pauses, whole-job MTBF and useful share of G elastic replica groups (docs/model.md §14);
    with ``out``, a failed group stays out for a time drawn from it (a spare pool, §18.4) instead of T_j."""
    ns = lib(groups, group_share, rejoin_s, quorum_pause_s, overhead, mtbf_s)
    if out is not None:
        ns = lib(groups, group_share, rejoin_s, quorum_pause_s, overhead, mtbf_s, out.slow_s, out.slow_share)
    with quiet(ns):
        lam = 1.0 / mtbf_s
        local = group_share * lam  # eλ: group-local failures with every group up
        nu = local / groups
        rate = ns.maximum((1.0 - group_share) * lam, SLOWEST)
        if out is not None:
            # Two groups stay exact; three take the many-groups form (its residual equations need a fixed T_j).
            two = _two_groups(nu, rate, rejoin_s, ns, out)
            many = _many_groups(local, nu, rate, groups, rejoin_s, ns, out)
            found = tuple(ns.where(groups == 2, x, y) for x, y in zip(two, many, strict=True))
        elif scalar(groups):
            exact = _two_groups if groups == 2 else _three_groups if groups == 3 else None
            found = exact(nu, rate, rejoin_s, ns) if exact else _many_groups(local, nu, rate, groups, rejoin_s, ns)
        else:
            two, three = _two_groups(nu, rate, rejoin_s, ns), _three_groups(nu, rate, rejoin_s, ns)
            many = _many_groups(local, nu, rate, groups, rejoin_s, ns)
            found = tuple(
                ns.where(groups == 2, x, ns.where(groups == 3, y, z)) for x, y, z in zip(two, three, many, strict=True)
            )
        a, stretch, down_share = found
        # Pauses follow the group-local failures that leave a group up: all of them (eλA) but the
        # all-down ones (h). Two groups: one up through a pause, which ends early if it fails (exact for
        # q_p ≤ T_j); more: Poisson coverage, with the groups a failure leaves up, size-biased.
        failing = local * a
        pausing = ns.maximum(failing - down_share / stretch, 0.0)
        leave = nu + rate
        if out is None:
            alone = pausing * -ns.expm1(-leave * ns.minimum(quorum_pause_s, rejoin_s)) / leave
        else:
            alone = pausing * out.mean(lambda t: -ns.expm1(-leave * ns.minimum(quorum_pause_s, t))) / leave
        covered = -ns.expm1(-pausing * quorum_pause_s)
        pause = ns.where(groups == 2, alone, covered)
        left = ns.where(groups == 2, 1.0, (groups - 1.0) * a * failing / ns.maximum(pausing, SLOWEST))
        quorum = pause * ns.minimum(left, groups - 1.0) / groups
        running = a - quorum
        first = 1.0 / (1.0 + nu * (rejoin_s if out is None else out.mean(lambda t: t)))
        first_throughput = (1.0 - overhead) * first * ns.maximum(1.0 - local * first * quorum_pause_s, 0.0)
    return Groups(
        up_share=a,
        pause_share=pause,
        whole_job_mtbf_s=stretch,
        throughput=(1.0 - overhead) * running,
        down=1.0 - a,
        quorum=quorum,
        overhead=overhead * running,
        first_order_throughput=first_throughput,
        all_down_share=down_share,
        groups=groups,
        one_up=(1.0 - overhead) / groups,
        rate=rate,
    )


def restart_ratio(groups: Groups, *, shares: tuple[Num, ...], restarts: tuple[Num, ...]) -> Num:
    """The restart time per whole-job failure when only the whole-job failures of rate w strike during a
    restart, over the periodic model's, which lets 1/M_W strike there (docs/model.md §14.4): with
    restarts r_k of shares s_k, T(μ) = Σ s_k·(1 − e^{−μ·r_k}) / (μ·Σ s_k·e^{−μ·r_k})."""
    ns = lib(groups.whole_job_mtbf_s, groups.rate, *shares, *restarts)

    def restarting(rate: Num) -> Num:
        done: Num = 0.0
        fail: Num = 0.0
        for s, r in zip(shares, restarts, strict=True):
            done = done + s * ns.exp(-rate * r)
            fail = fail - s * ns.expm1(-rate * r)
        # Infinite where no restart ever ends in double precision (e^{−μ·r} underflowed to 0).
        return divide(fail, rate * done, ns)

    with quiet(ns):
        mine, periodic = restarting(groups.rate), restarting(1.0 / groups.whole_job_mtbf_s)
        # 1 where no restart takes time (both 0); 0 where only the periodic model's never ends (the slower
        # whole-job rate ends them); 1 where neither does (the effective time is 0 either way).
        usable = ns.isfinite(periodic) & ns.isfinite(mine) & (periodic > 0.0)
        lone = ns.where(ns.isfinite(mine), 0.0, 1.0)
        ratio: Num = ns.where(usable, mine / ns.where(usable, periodic, 1.0), ns.where(periodic > 0.0, lone, 1.0))
    return ratio


class Losses(Record):
    """An elastic configuration's result beside the periodic split (docs/model.md §14.4): ``periodic`` the
    periodic process's effective time and ``write``, ``rework``, ``restart`` its losses, with restarts
    struck only by the whole-job failures of rate w; ``effective`` the useful time; the groups' losses
    as shares of elapsed time (effective + these = periodic, periodic + write + rework + restart = 1)."""

    groups: Groups
    periodic: Num
    down: Num
    quorum: Num
    overhead: Num
    effective: Num
    write: Num
    rework: Num
    restart: Num

    @property
    def whole_job_mtbf_s(self) -> Num:
        """The mean time between whole-job failures, as the groups process has it."""
        return self.groups.whole_job_mtbf_s

    @property
    def throughput(self) -> Num:
        """The share of the whole job's throughput the groups process keeps on average."""
        return self.groups.throughput

    @property
    def groups_loss(self) -> Num:
        """The groups' own losses together: groups down, quorum pauses and the overhead."""
        return self.down + self.quorum + self.overhead

    def leads(self, loss: Num) -> bool:
        """Whether the groups' own losses are larger than ``loss`` (another term of the split)."""
        return bool(self.groups_loss > loss)


def losses(groups: Groups, periodic: Num, *, write: Num, rework: Num, restart: Num, ratio: Num) -> Losses:
    """The groups' losses on a periodic process of effective time ``periodic`` and losses ``write``,
    ``rework``, ``restart`` (shares of its elapsed time, summing to 1 with it): the restarts scaled by
    ``ratio`` (:func:`restart_ratio`) and every share renormalised; the useful time is the useful share
    of the kept work plus the lost tails' part: the work lost to an all-down failure was done with one
    group up (docs/model.md §14.4)."""
    ns = lib(periodic, write, rework, restart, ratio)
    # 1 − restart·(1 − ratio), summed from its parts: it is 0 only where the periodic process keeps
    # nothing and its restarts shrink to nothing (restarts that never end): then all is restart.
    whole = periodic + write + rework + restart * ratio
    with quiet(ns):
        some = whole > 0.0
        scale = ns.where(some, 1.0 / ns.where(some, whole, 1.0), 0.0)
    kept, lost = periodic * scale, rework * scale
    tail = groups.all_down_share * (groups.throughput - groups.one_up) * lost
    useful = kept * groups.throughput + tail
    return Losses(
        groups=groups,
        periodic=kept,
        down=kept * groups.down - tail,
        quorum=kept * groups.quorum,
        overhead=kept * groups.overhead,
        effective=useful,
        write=write * scale,
        rework=lost,
        restart=ns.where(some, restart * ratio * scale, 1.0),
    )


#: With four groups or more (their all-down failures taken at the mean state), above this share of
#: whole-job failures from all groups down the analytic form is warned about (docs/model.md §14.6).
ALL_DOWN_WARNING = 0.05
#: With two or three groups (the groups process exact), above this share: beyond the cases checked.
EXACT_ALL_DOWN_WARNING = 0.95
#: Above this share of running time in quorum pauses (Poisson coverage), the form is warned about too.
PAUSE_WARNING = 0.1


def all_down_warned(groups: Groups) -> Num:
    """Where the all-down failures are common enough for the analytic form to be warned about (§14.6)."""
    ns = lib(groups.groups, groups.all_down_share)
    limit = ns.where(groups.groups <= 3, EXACT_ALL_DOWN_WARNING, ALL_DOWN_WARNING)
    warned: Num = groups.all_down_share > limit
    return warned
