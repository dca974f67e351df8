"""Spare nodes and repairs (docs/model.md §15): Erlang's loss formula on plain floats or arrays.

A job runs on N nodes and the cluster holds S spares. Each interruption sends
one node to repair for T_rep; with a spare free the job swaps it in and
restarts, with none free it waits for the first node back. No failure strikes
while the job waits, so the nodes in repair form a loss system with S + 1
servers and offered load a = T_rep / M:

* a failure finds no spare with probability B(S, a) (Erlang B);
* the job waits a share B(S + 1, a) of the time, T_rep / (S + 1) on average
  each time it waits, so B(S, a) · T_rep / (S + 1) per failure;
* waiting freezes the job, so its effective time is the periodic model's
  times the running share 1 − B(S + 1, a), exactly, whatever the repair-time
  distribution; the cluster's counts the idle spares, × N / (N + S).

>>> round(erlang_b(2, 1.0), 6)
0.2
>>> smallest_spares(0.5, 0.01)
4
"""

from __future__ import annotations

from typing import Any

from ckptcalc.model.arrays import scalar
from ckptcalc.records import Record

Num = Any

#: The target P(no spare) when none is stated: 1 %.
DEFAULT_RISK = 0.01

#: The repair time the spares lever assumes when the job states none: 4 h, a node swapped out,
#: diagnosed and returned within a shift (a stated assumption, not a measurement; ``--repair`` replaces it).
LEVER_REPAIR_S = 4 * 3600.0

#: More spares than this is never an answer (a loss system that needs it has a load beyond any cluster).
MOST_SPARES = 100_000


def erlang_b(servers: Num, load: Num) -> Num:
    """Erlang's B formula B(S, a) = (a^S/S!) / Σ_{i≤S} a^i/i!, by the stable recursion
    B(0) = 1, B(k) = a·B(k−1) / (k + a·B(k−1)); ``servers`` whole and at least 0.

    >>> erlang_b(0, 3.0), round(erlang_b(1, 1.0), 6), round(erlang_b(3, 2.0), 6)
    (1.0, 0.5, 0.210526)
    """
    if scalar(servers, load):
        b = 1.0
        for k in range(1, int(servers) + 1):
            b = load * b / (k + load * b)
            if b == 0.0:
                break  # underflowed: it stays 0
        return b
    import numpy

    s, a = numpy.broadcast_arrays(numpy.asarray(servers, dtype=float), numpy.asarray(load, dtype=float))
    found = numpy.ones(s.shape)
    top = int(s.max()) if s.size else 0
    for k in range(1, top + 1):
        found = numpy.where(k <= s, a * found / (k + a * found), found)
        if not found.any():
            break  # every point underflowed: they stay 0
    return found


def smallest_spares(load: float, risk: float) -> int:
    """The fewest spares S with B(S, a) ≤ ``risk`` (B falls as S grows)."""
    b, s = 1.0, 0
    while b > risk and s < MOST_SPARES:
        s += 1
        b = load * b / (s + load * b)
    return s


class Pool(Record):
    """The spare pool's figures (SI units, fractions 0–1; floats, or arrays in a sweep).

    ``p_no_spare`` is the chance a failure finds no spare, ``wait_s`` the expected wait
    per failure, ``running`` the share of time the job is not waiting for a node;
    ``wait_when_none_s`` the mean wait of a failure that finds none; ``spares_for_target``
    the fewest spares that keep ``p_no_spare`` at or below ``risk``. ``periodic_effective`` (the
    periodic model alone) and ``cluster_effective`` (over job and spare nodes) are set by the
    evaluation that counts the pool (:func:`with_effective`).
    """

    nodes: Num
    spares: Num
    repair_s: Num
    risk: Num
    load: Num
    p_no_spare: Num
    wait_s: Num
    wait_when_none_s: Num
    running: Num
    waiting: Num
    spares_for_target: Num
    periodic_effective: Num = None
    cluster_effective: Num = None

    def with_effective(self, periodic: Num) -> Pool:
        """The pool with the effective times that follow from the periodic model's ``periodic``."""
        job = periodic * self.running
        return self.replace(periodic_effective=periodic, cluster_effective=job * cluster_share(self.nodes, self.spares))


def pool(*, nodes: Num, spares: Num, repair_s: Num, mtbf_s: Num, risk: Num = DEFAULT_RISK) -> Pool:
    """The pool of ``spares`` spare nodes beside a job of ``nodes`` nodes (docs/model.md §15.1).

    >>> p = pool(nodes=48, spares=2, repair_s=3600.0, mtbf_s=3600.0)
    >>> round(p.p_no_spare, 6), round(p.running, 6), round(p.wait_s, 1)
    (0.2, 0.9375, 240.0)
    """
    load = repair_s / mtbf_s
    blocked = erlang_b(spares, load)
    waiting = erlang_b(spares + 1, load)
    when_none = repair_s / (spares + 1)
    if scalar(load, risk):
        target: Num = float(smallest_spares(load, risk))
    else:
        import numpy

        a, r = numpy.broadcast_arrays(numpy.asarray(load, dtype=float), numpy.asarray(risk, dtype=float))
        target = numpy.array([smallest_spares(x, y) for x, y in zip(a.flat, r.flat, strict=True)], dtype=float)
        target = target.reshape(a.shape)
    return Pool(
        nodes=nodes,
        spares=spares,
        repair_s=repair_s,
        risk=risk,
        load=load,
        p_no_spare=blocked,
        wait_s=blocked * when_none,
        wait_when_none_s=when_none,
        running=1.0 - waiting,
        waiting=waiting,
        spares_for_target=target,
    )


def cluster_share(nodes: Num, spares: Num) -> Num:
    """The share of the cluster's nodes that run the job, N / (N + S)."""
    return nodes / (nodes + spares)
