"""Spare nodes and repairs (docs/model.md §15): a running share, Erlang's loss formula on floats or arrays.

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

This home declares the pool once: its inputs (``--gpus-per-node``, ``--spares`` or ``auto``,
``--repair``, ``--spare-risk``, and the job's ``--nodes``, which it alone reads; the preset table
``[spares]``), its running share of every result, its levers and their break-even, its part of every
document, and its behaviour in the simulations (:class:`SparePool` on the timeline, :class:`RunWaits`
over whole runs).

>>> round(erlang_b(2, 1.0), 6)
0.2
>>> smallest_spares(0.5, 0.01)
4
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ckptcalc.errors import InputError, UnitError
from ckptcalc.mechanisms.base import Cell, Input, Mechanism
from ckptcalc.model.arrays import scalar
from ckptcalc.model.statistics import DEFAULT_GPUS_PER_NODE, node_count
from ckptcalc.records import Record

Num = Any

NODES = "nodes"
PER_NODE = "gpus_per_node"
SPARES = "spares"
REPAIR = "repair_s"
RISK = "spare_risk"
#: The nodes per replica group whose share intact a log's repairs give (``fit --group-nodes``).
GROUP_NODES = "group_nodes"
#: Where the repair time the lever sizes its pool with came from, in words, where a preset's ``[sources]`` says
#: (``fitted from FILE: the mean of 5 repairs``, a log's, docs/model.md §22); None: assumed, or stated bare.
REPAIR_SOURCE = "repair_source"
#: The key of the repair figures in ``fit``'s document (docs/model.md §22).
REPAIRS = "repairs"

#: The unit kind of ``--spares``: a whole count of nodes, or ``auto``.
KIND = "spares"

#: The target P(no spare) when none is stated: 1 %.
DEFAULT_RISK = 0.01

#: The repair time the spares lever assumes when the job states none: 4 h, a node swapped out,
#: diagnosed and returned within a shift (a stated assumption, not a measurement; ``--repair`` replaces it).
LEVER_REPAIR_S = 4 * 3600.0

#: More spares than this is never an answer (a loss system that needs it has a load beyond any cluster).
MOST_SPARES = 100_000

#: What ``spares`` holds for ``auto`` (the fewest spares that meet the target), until the job is resolved:
#: no count a user can write parses to it.
AUTO_SPARES = math.inf

#: The pool's levers: where the job has none, and where it has one.
LEVER_NEW, LEVER_NONE, LEVER_TARGET = "spares", "spares_none", "spares_target"

#: Sweeps that vary the pool: (flag, column, axis label), whole counts where ``_WHOLE`` says.
_SWEEPS = (("spares", "spares", "spare nodes"), ("repair", "repair_s", "repair time"), ("nodes", "nodes", "nodes"))
_WHOLE = {"spares": (True, 0.0), "nodes": (False, 1.0)}  # (evenly spaced by default, the least count)


# ------------------------------------------------------------------ the arithmetic


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


# ------------------------------------------------------------------ repairs measured from a log (§22)
# An incident log that gives each incident's node and its end as well as its start measures how long a node
# stays out. Per node, incidents that overlap are one outage, from the first start to the last end. Each
# outage that ended is one repair r = end − start (mean, median, 90th percentile); the node unavailability
# is u = Σ (the time each outage covers of the window) / (nodes × window), an outage still open at the log's
# end running to the window's end; a replica group of D nodes is whole a share (1 − u)^D of the time, nodes
# failing independently. Erlang B (above) depends on the repair distribution through its mean alone, so the
# mean measured here is the ``[spares] repair`` a preset states, however heavy the log's tail.

#: A node's outage: (node, start, end), the end None while it is still open at the log's end.
Span = tuple[str, float, float | None]


def merged_outages(spans: Iterable[Span]) -> list[Span]:
    """The outages of ``spans``: per node, incidents that overlap or touch joined into one, from the first
    start to the last end (an open one runs on to the log's end), ordered by node and start.

    >>> merged_outages([("a", 5.0, 20.0), ("b", 1.0, 2.0), ("a", 0.0, 10.0), ("a", 25.0, None), ("a", 30.0, 31.0)])
    [('a', 0.0, 20.0), ('a', 25.0, None), ('b', 1.0, 2.0)]
    """
    found: list[Span] = []
    for node, start, end in sorted(spans, key=lambda span: (span[0], span[1])):
        if found and found[-1][0] == node:
            last_node, last_start, last_end = found[-1]
            if last_end is None or start <= last_end:
                joined = None if last_end is None or end is None else max(last_end, end)
                found[-1] = (last_node, last_start, joined)
                continue
        found.append((node, start, end))
    return found


def repair_quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ascending ``ordered``: linear between the order statistics around the position
    (n − 1)·q (what numpy's default gives).

    >>> repair_quantile([1.0, 2.0, 4.0, 10.0], 0.5), round(repair_quantile([1.0, 2.0, 4.0, 10.0], 0.9), 12)
    (3.0, 8.2)
    """
    at = (len(ordered) - 1) * q
    low = math.floor(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def repair_figures(
    spans: Iterable[Span],
    *,
    start_s: float,
    end_s: float,
    nodes: float | None = None,
    group_nodes: float | None = None,
    mtbf_s: float | None = None,
    unmatched_ends: int = 0,
) -> dict[str, Any]:
    """The repair figures of a log's incidents in the window ``start_s`` … ``end_s`` (docs/model.md §22), as
    ``fit``'s document holds them (SI units). The repairs are the outages (:func:`merged_outages`) that ended and
    started in the window; ``nodes`` (the fleet's size) gives the unavailability, ``group_nodes`` the share
    of groups of that many nodes with none out, ``mtbf_s`` (the log's MTBF) the per-node MTBF."""
    outages = merged_outages(spans)
    seen = len({node for node, _, _ in outages})
    window = end_s - start_s
    if nodes is not None and nodes < seen:
        raise InputError(
            f"the log names {seen} nodes with incidents, more than the fleet's {nodes:g}: give the whole fleet",
            where="nodes",
        )
    if nodes is not None and group_nodes is not None and group_nodes > nodes:
        raise InputError(f"a group of {group_nodes:g} nodes is larger than the fleet ({{nodes}} {nodes:g})",
                         where="group_nodes")  # fmt: skip
    repairs = sorted(end - start for node, start, end in outages if end is not None and start_s <= start <= end_s)
    still_open = sum(1 for _, start, end in outages if end is None and start <= end_s)
    down = sum(max(0.0, min(end_s if end is None else end, end_s) - max(start, start_s)) for _, start, end in outages)
    unavailability = None if nodes is None or window <= 0 else down / (nodes * window)
    intact = None if unavailability is None or group_nodes is None else (1.0 - unavailability) ** group_nodes
    return {
        "count": len(repairs),
        "mean_s": sum(repairs) / len(repairs) if repairs else None,
        "median_s": repair_quantile(repairs, 0.5) if repairs else None,
        "p90_s": repair_quantile(repairs, 0.9) if repairs else None,
        "longest_s": repairs[-1] if repairs else None,
        "open": still_open,
        "unmatched_ends": unmatched_ends,
        "nodes_seen": seen,
        "nodes": nodes,
        "down_s": down,
        "window_s": window,
        "unavailability": unavailability,
        "group_nodes": group_nodes,
        "groups_intact": intact,
        "node_mtbf_s": None if nodes is None or mtbf_s is None else nodes * mtbf_s,
    }


def repair_schema() -> dict[str, Any]:
    seconds = {"type": ["number", "null"], "minimum": 0}
    share = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
    count = {"type": "integer", "minimum": 0}
    """The JSON Schema of :func:`repair_figures`' record (without its null)."""
    return {
        "type": "object",
        "description": "Repair times and node availability from incidents with a start and an end per node "
        "(docs/model.md §22); null where the log gives no incident's end.",
        "required": [
            "count",
            "mean_s",
            "median_s",
            "p90_s",
            "longest_s",
            "open",
            "unmatched_ends",
            "nodes_seen",
            "nodes",
            "down_s",
            "window_s",
            "unavailability",
            "group_nodes",
            "groups_intact",
            "node_mtbf_s",
        ],
        "additionalProperties": False,
        "properties": {
            "count": {
                **count,
                "description": "Repairs: outages (overlapping incidents of a node merged) that "
                "started in the window and ended.",
            },
            "mean_s": {**seconds, "description": "Mean repair time (what Erlang B depends on), s."},
            "median_s": {**seconds, "description": "Median repair time, s."},
            "p90_s": {**seconds, "description": "90th percentile of the repair times, s."},
            "longest_s": {**seconds, "description": "Longest repair, s."},
            "open": {**count, "description": "Outages with no end in the log: down until the window's end."},
            "unmatched_ends": {**count, "description": "End rows with no open incident of their node (left out)."},
            "nodes_seen": {**count, "description": "Distinct nodes with an incident."},
            "nodes": {"type": ["number", "null"], "minimum": 1, "description": "The fleet's nodes (--nodes)."},
            "down_s": {"type": "number", "minimum": 0, "description": "Node-seconds out inside the window."},
            "window_s": {"type": "number", "minimum": 0, "description": "The window, s."},
            "unavailability": {**share, "description": "u = down_s / (nodes × window_s); null without nodes."},
            "group_nodes": {"type": ["number", "null"], "minimum": 1, "description": "D, nodes per group."},
            "groups_intact": {
                **share,
                "description": "(1 − u)^D: the share of time a group of D nodes has none out, nodes independent.",
            },
            "node_mtbf_s": {**seconds, "description": "Per-node MTBF: nodes × the log's MTBF, s."},
        },
    }


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

    @property
    def out_s(self) -> Num:
        """How long a failed node stays out when it finds no spare: its repair (an elastic group waits it
        out, docs/model.md §18.4)."""
        return self.repair_s

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


def break_even_load(nodes: float, spares: float, fewer: float = 0.0) -> float | None:
    """The offered load a = T_rep/M at which ``spares`` spares give, over job and spare nodes, what ``fewer``
    give (docs/model.md §15.5): (1 − B(S+1, a))·N/(N + S) = (1 − B(S₀+1, a))·N/(N + S₀). Below it the
    idle spares cost more than the waits they save; None where no load in 10⁻¹²…10¹² balances them. For a
    few spares beside many nodes it is close to (S − S₀)/N: the waits 1/(1 + a) against the idle share.

    >>> round(break_even_load(2048.0, 5.0) * 2048, 9)
    5.0
    """

    def gap(load: float) -> float:
        more = (1.0 - erlang_b(spares + 1, load)) * cluster_share(nodes, spares)
        less = (1.0 - erlang_b(fewer + 1, load)) * cluster_share(nodes, fewer)
        return float(more - less)

    low, high = math.log(1e-12), math.log(1e12)
    if not (gap(math.exp(low)) < 0.0 < gap(math.exp(high))):
        return None
    for _ in range(200):
        middle = (low + high) / 2.0
        if high - low < 1e-13:
            break
        if gap(math.exp(middle)) < 0.0:
            low = middle
        else:
            high = middle
    return math.exp(high)


def parse_spares(raw: str, count: Callable[[str], float]) -> float:
    """A spare count (read by ``count``), or ``auto`` (:data:`AUTO_SPARES`)."""
    if raw.strip().lower() == "auto":
        return AUTO_SPARES
    try:
        return count(raw)
    except UnitError:
        raise UnitError(f"expected a whole number of spare nodes or auto, got {raw!r}") from None


# ------------------------------------------------------------------ the simulations (docs/model.md §15.4)


class SparePool:
    """The spare nodes beside a simulated job (docs/model.md §15.4), carried from one window to the next.

    The failure that ends each cycle sends a node to repair for exactly ``repair_s``. While fewer
    than ``spares`` nodes are in repair a spare takes its place at once; otherwise the job waits for
    the first node back (repairs finish in the order they began) before its restart. No failure
    strikes during a wait: the failure clock runs only while the job does.

    >>> pool = SparePool(1, 100.0)
    >>> pool.waits([30.0, 30.0, 200.0])  # the second failure finds the spare still in repair
    [0.0, 70.0, 0.0]
    """

    def __init__(self, spares: int, repair_s: float) -> None:
        self.spares, self.repair_s = spares, repair_s
        self.now = 0.0  # wall time at the end of the cycles seen so far
        self.back: collections.deque[float] = collections.deque()  # when each node in repair is back
        self.none_free = 0
        self.waited_s = 0.0

    def waits(self, cycles: list[float]) -> list[float]:
        """The wait for a node after each failure, for cycles of these lengths (restart to failure)."""
        found = [self.wait_at(self.now + length) for length in cycles]
        self.waited_s += math.fsum(found)
        return found

    def wait_at(self, now: float) -> float:
        """A failure at wall time ``now`` (not before the last one's end) sends its node to repair: the wait
        for a node when no spare is free (0 otherwise); the wall time moves on past the wait."""
        back = self.back
        while back and back[0] <= now:
            back.popleft()
        back.append(now + self.repair_s)
        wait = 0.0
        if len(back) > self.spares:  # every spare already out: the first node back rejoins the job
            wait = back.popleft() - now
            self.none_free += 1
        self.now = now + wait
        return wait

    def group_out(self, now: float, back_s: float) -> float:
        """How long an elastic group that fails at wall time ``now`` stays out (docs/model.md §18.4): with a
        spare free, it takes the spare (its node goes to repair) and rejoins after ``back_s``, its rejoin; with
        none, it stays out for its node's repair."""
        if sum(1 for t in self.back if t > now) < self.spares:
            self.wait_at(now)
            return back_s
        return self.repair_s


class RunWaits:
    """The spare pool of many whole runs side by side (``plan``, docs/model.md §15.4): each spare's slot
    holds when the node last sent to repair through it is back (every spare free at first)."""

    def __init__(self, spares: int, repair_s: float, runs: int) -> None:
        import numpy

        self.repair_s = repair_s
        self.slots = numpy.full((runs, spares), -math.inf)

    def waits(self, going: Any, now: Any) -> Any:
        """Each run still ``going``'s wait for a node after a failure at ``now``: the failed node takes the
        spare slot that frees first, and the run waits until that slot's node is back (0 when it already
        is). With no spare every failure waits its own repair."""
        import numpy

        self.slots = slots = self.slots[going]
        if slots.shape[1] == 0:
            return numpy.full(now.size, self.repair_s)
        rows = numpy.arange(now.size)
        first = numpy.argmin(slots, axis=1)
        wait = numpy.maximum(slots[rows, first] - now, 0.0)
        slots[rows, first] = now + self.repair_s
        return wait


# ------------------------------------------------------------------ the mechanism


def _whole_count(where: str, value: float) -> None:
    if not float(value).is_integer():
        raise InputError(f"must be a whole number, got {value:g}", where=where)


class Spares(Mechanism):
    name = "spares"
    carried_fields = (REPAIR_SOURCE,)  # where the lever's repair time came from (a log's mean), in words
    kind = "running_share"
    # The job's nodes: a fact of the job any mechanism may read, brought to FIELDS here, where alone it is read
    # today (its key is a plain word, named in other senses elsewhere).
    job_inputs = (
        Input(
            NODES,
            "count",
            "nodes",
            "spares",
            "nodes",
            "Nodes the job runs on (default: GPUs / --gpus-per-node).",
            after="gpu_hour_cost",
        ),
    )
    inputs = (
        Input(
            PER_NODE, "count", "gpus-per-node", "spares", "gpus_per_node", "GPUs per node (default: 8).", after=NODES
        ),
        Input(
            SPARES,
            KIND,
            "spares",
            "spares",
            "spares",
            "Spare nodes kept warm beside the job, or auto: the fewest with P(no spare) ≤ --spare-risk.",
            after=PER_NODE,
        ),
        Input(
            REPAIR,
            "duration",
            "repair",
            "spares",
            "repair",
            "Time a failed node is out for repair, e.g. 4h.",
            after=SPARES,
        ),
        Input(
            RISK,
            "fraction",
            "spare-risk",
            "spares",
            "spare_risk",
            "Target chance that a failure finds no spare, for --spares auto (default: 1%).",
            after=REPAIR,
        ),
    )
    levers = (LEVER_NEW,)
    # Against no spare: the lever's own gain is against a replacement always free (docs/model.md §15.5).
    break_even_words = ((REPAIR, "against none, ", "repair"),)
    levers_with = (LEVER_NONE, LEVER_TARGET)
    panels = (("spares", "Spares"),)
    sweeps = _SWEEPS
    sweeps_after = "notice-share"
    example = ((SPARES, "2"), (REPAIR, "4h"), (RISK, "0.5%"), (PER_NODE, "4"))
    limit = ((SPARES, ""), (REPAIR, ""), (RISK, ""), (PER_NODE, ""))  # no pool: instant replacement
    cells = (
        Cell("P(no spare)", (SPARES, "p_no_spare")),
        Cell("waiting", (SPARES, "waiting_share")),
        Cell("effective, cluster", (SPARES, "cluster_effective")),
    )

    # ------------------------------------------------------------- inputs

    def unit_parsers(self, count: Callable[[str], float]) -> dict[str, Callable[[str], float]]:
        return {KIND: lambda raw: parse_spares(raw, count)}

    def unit_shown(self, kind: str) -> str | None:
        return "count" if kind == KIND else None

    def written(self, kind: str, value: float) -> str | None:
        return "auto" if kind == KIND and value == AUTO_SPARES else None

    def check(self, where: Any, name: str, value: float) -> bool:
        """Spares a whole number from 0 (or auto), the risk inside (0, 1); nodes, GPUs per node and the
        repair are positive, as the core checks every other input (nodes whole: :meth:`resolve`)."""
        if name == SPARES:
            if value == AUTO_SPARES:
                return True
            if not (math.isfinite(value) and value >= 0 and float(value).is_integer()):
                raise InputError(
                    f"must be a whole number of spare nodes from 0, or auto, got {value:g}", where=where(name)
                )
            if value > MOST_SPARES:
                raise InputError(f"must be at most {MOST_SPARES} spare nodes, got {value:g}", where=where(name))
            return True
        if name == RISK:
            if not (math.isfinite(value) and 0 < value < 1):
                raise InputError(f"must be a share strictly between 0 and 1, got {value:g}", where=where(name))
            return True
        return False

    def resolve(self, scenario: Any, config: Any) -> Any:
        """The model's spare pool: none without spares; ``auto`` becomes the fewest spares that meet the risk."""
        for name in (NODES, PER_NODE):
            if getattr(scenario, name) is not None:
                _whole_count(scenario.where(name), getattr(scenario, name))
        spares = getattr(scenario, SPARES)
        if spares is None:
            return config
        repair = getattr(scenario, REPAIR)
        if repair is None:
            raise InputError("spares need the repair time ({repair})", where=scenario.where(SPARES))
        nodes = getattr(scenario, NODES)
        if nodes is None:
            if scenario.gpus is None:
                raise InputError(
                    "spares need the job's node count: give {nodes}, or {gpus} (with {gpus_per_node})",
                    where=scenario.where(SPARES),
                )
            nodes = node_count(scenario.gpus, getattr(scenario, PER_NODE))
        risk = DEFAULT_RISK if getattr(scenario, RISK) is None else getattr(scenario, RISK)
        if spares == AUTO_SPARES:
            spares = float(smallest_spares(repair / config.mtbf_s, risk))
        per_node = getattr(scenario, PER_NODE)
        return config.replace(**{NODES: nodes, PER_NODE: per_node, SPARES: spares, REPAIR: repair, RISK: risk})

    def baseline_notes(self, levers: Any, show: dict[str, Any]) -> list[str]:
        # Without a pool the job as evaluated assumes a replacement node is always free; the lever's value is
        # its effective time with no spare.
        return [
            f"a replacement node always free (no spare pool; with none free, {show['fraction'](lever.value)})"
            for lever in levers
            if lever.key == SPARES and lever.value is not None
        ]

    def defaults_taken(self, scenario: Any, config: Any) -> tuple[tuple[str, float], ...]:
        if getattr(scenario, SPARES) is None:
            return ()
        found: list[tuple[str, float]] = []
        if getattr(scenario, NODES) is None and getattr(scenario, PER_NODE) is None:
            found.append((PER_NODE, float(DEFAULT_GPUS_PER_NODE)))
        risk = getattr(config, RISK, None)
        if getattr(scenario, RISK) is None and risk is not None and getattr(scenario, SPARES) == AUTO_SPARES:
            found.append((RISK, float(risk)))  # the fewest spares meeting it
        return tuple(found)

    def without(self, config: Any) -> Any:
        return config.replace(**{NODES: None, PER_NODE: None, SPARES: None, REPAIR: None, RISK: None})

    # ------------------------------------------------------------- the model (a running share)

    def running(self, config: Any, mtbf_s: Num) -> Pool | None:
        if getattr(config, SPARES) is None:
            return None
        risk = getattr(config, RISK)
        return pool(
            nodes=getattr(config, NODES),
            spares=getattr(config, SPARES),
            repair_s=getattr(config, REPAIR),
            mtbf_s=mtbf_s,
            risk=DEFAULT_RISK if risk is None else risk,
        )

    def approximate(self, config: Any) -> bool:
        """Erlang's formula needs Poisson failures: under Weibull failures the pool is an approximation."""
        return getattr(config, SPARES) is not None and config.shape is not None

    # ------------------------------------------------------------- levers

    def assumed(self, scenario: Any) -> dict[str, Any]:
        """What the lever assumes (docs/model.md §15.5): the job's repair time and risk where stated, else
        4 h and 1 %; its nodes where stated or GPUs / GPUs per node."""
        nodes = getattr(scenario, NODES)
        if nodes is None and scenario.gpus is not None:
            nodes = node_count(scenario.gpus, getattr(scenario, PER_NODE))
        repair, risk = getattr(scenario, REPAIR), getattr(scenario, RISK)
        source = getattr(scenario, "source_of", None)
        return {
            REPAIR: LEVER_REPAIR_S if repair is None else repair,
            RISK: DEFAULT_RISK if risk is None else risk,
            NODES: nodes,
            REPAIR_SOURCE: None if repair is None or source is None else source(REPAIR),
        }

    def running_levers(
        self, config: Any, gpus: float | None, base: float, evaluate: Any, assumed: dict[str, Any] | None
    ) -> list[tuple[str, float, Any, float | None, float]]:
        """The pool's levers (docs/model.md §15.5), over the periodic optimum (a pool never moves it), each
        (key, effective, changed configuration, the effective time with no spare, its gain over job and
        spare nodes in points).

        Without spares (and exponential failures): the fewest spares that keep P(no spare) at the
        assumed risk, at the assumed repair time. With spares: ``spares_none`` (the pool taken away: each
        failure waits its repair) and, when fewer than the risk needs, ``spares_target``."""
        options: list[tuple[str, Any]] = []
        periodic = base  # the periodic model's effective time: spares never move its optimum (§15.2)
        if getattr(config, SPARES) is None:
            mine = None if assumed is None else assumed.get(self.name)
            nodes = None if mine is None else mine[NODES]
            if nodes is None and gpus is not None:
                nodes = node_count(gpus)
            if mine is None or nodes is None or not scalar(config.mtbf_s):
                return []
            if config.shape is not None:
                return []  # Erlang's formula needs Poisson failures: no lever on an approximation
            repair, risk = mine[REPAIR], mine[RISK]
            count = float(smallest_spares(repair / float(config.mtbf_s), risk))
            stated = {NODES: nodes, SPARES: count, REPAIR: repair, RISK: risk, REPAIR_SOURCE: mine.get(REPAIR_SOURCE)}
            options.append((LEVER_NEW, config.replace(**stated)))
            cluster_base = base
        else:
            options.append((LEVER_NONE, config.replace(**{SPARES: 0.0})))
            result = evaluate(config.optimal())
            target = float(result.pool.spares_for_target)
            if target > float(getattr(config, SPARES)):
                options.append((LEVER_TARGET, config.replace(**{SPARES: target})))
            cluster_base = float(result.pool.cluster_effective)
            periodic = float(result.pool.periodic_effective)

        def at(changed: Any, spares: float) -> Pool:
            """The pool of ``spares`` beside the job, with the effective times over the same periodic optimum."""
            mtbf, repair, risk = float(changed.mtbf_s), float(getattr(changed, REPAIR) or 0.0), getattr(changed, RISK)
            found = pool(nodes=getattr(changed, NODES), spares=spares, repair_s=repair, mtbf_s=mtbf,
                         **({} if risk is None else {"risk": risk}))  # fmt: skip
            return found.with_effective(periodic)

        found = []
        for key, changed in options:
            figures = at(changed, float(getattr(changed, SPARES) or 0.0))
            effective, cluster = periodic * float(figures.running), float(figures.cluster_effective)
            without = periodic * float(at(changed, 0.0).running) if key == LEVER_NEW else None
            found.append((key, effective, changed, without, (cluster - cluster_base) * 100.0))
        return found

    def break_even(self, key: str, config: Any, gpus: float | None) -> tuple[str, float, str] | None:
        """The repair time below which the pool of the lever ``spares`` stops paying over job and spare nodes
        (docs/model.md §15.5): there its idle spares cost more than the waits they save against no spare;
        ``config`` is the lever's changed configuration. The others have no such cost."""
        if key != LEVER_NEW or getattr(config, SPARES) is None:
            return None
        if not scalar(config.mtbf_s, getattr(config, SPARES), getattr(config, NODES)):
            return None
        load = break_even_load(float(getattr(config, NODES)), float(getattr(config, SPARES)))
        return None if load is None else (REPAIR, load * float(config.mtbf_s), "duration")

    def lever_words(self, key: str, changed: Any, value: float | None, show: dict[str, Any]) -> str | None:
        """A pool lever's name: what it assumes, and (``value``) the effective time with no spare."""
        if key not in (LEVER_NEW, LEVER_NONE, LEVER_TARGET):
            return None
        dur, pct = show["duration"], show["fraction"]
        count, repair = int(getattr(changed, SPARES)), dur(float(getattr(changed, REPAIR)))
        risk = pct(float(getattr(changed, RISK)))
        nodes = show["count"](float(getattr(changed, NODES)))
        if key == LEVER_NONE:
            return f"without spares (each failure waits its {repair} repair)"
        if key == LEVER_TARGET:
            return f"{count} spares, for P(no spare) ≤ {risk} (repair {repair})"
        none = f"; with none, each failure waiting its repair: {pct(value)}" if value is not None else ""
        source = getattr(changed, REPAIR_SOURCE, None)
        how = "assumed" if source is None else f"measured, {source}"
        return f"{count} spares beside {nodes} nodes, for P(no spare) ≤ {risk} (repair {repair} {how}{none})"

    # ------------------------------------------------------------- sweeps

    def sweep_range(self, over: str, result: Any) -> tuple[float, float] | None:
        if over != "spares" or result.pool is None:
            return None
        # Whole spares from none to twice what the risk needs (or the pool's own, if larger).
        found = result.pool
        return 0.0, max(2.0 * float(found.spares_for_target), 2.0 * float(found.spares), 4.0)

    def check_sweep(self, over: str, config: Any, low: float, high: float, where: str) -> bool:
        if over not in {flag for flag, _, _ in _SWEEPS}:
            return False
        if getattr(config, SPARES) is None:
            raise InputError(f"sweeping {over} needs a spare pool ({{spares}} with {{repair}})", where="over")
        if over != "spares":
            return False  # checked as every other positive input
        if low < 0 or high > 1e6:
            raise InputError("spares must lie between 0 and 1e6 over the whole sweep", where=where)
        return True

    def sweep_whole(self, over: str) -> tuple[bool, float] | None:
        return _WHOLE.get(over)

    def sweep_columns(self, result: Any) -> dict[str, Any]:
        if result.pool is None:
            return {}
        return {"p_no_spare": result.pool.p_no_spare, "cluster_effective": result.pool.cluster_effective}

    def sweep_schema(self, fractions: Any) -> dict[str, Any]:
        return {
            "p_no_spare": {"oneOf": [fractions, {"type": "null"}], "description": "with a spare pool; null otherwise"},
            "cluster_effective": {
                "oneOf": [fractions, {"type": "null"}],
                "description": "with a spare pool: over job and spare nodes",
            },
        }

    # ------------------------------------------------------------- results

    def result_parts(self, job: Any, result: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
        """The spare pool (docs/model.md §15) after the warnings, or None when the job has no spares."""
        found = result.pool
        if found is None:
            return (("warnings", {SPARES: None}),)
        return (
            (
                "warnings",
                {
                    SPARES: {
                        NODES: int(found.nodes),
                        SPARES: int(found.spares),
                        "spares_auto": getattr(job.scenario, SPARES) == AUTO_SPARES,
                        REPAIR: float(found.repair_s),
                        RISK: float(found.risk),
                        "offered_load": float(found.load),
                        "p_no_spare": float(found.p_no_spare),
                        "wait_s": float(found.wait_s),
                        "wait_when_none_s": float(found.wait_when_none_s),
                        "running_share": float(found.running),
                        "waiting_share": float(found.waiting),
                        "periodic_effective": float(found.periodic_effective),
                        "cluster_effective": float(found.cluster_effective),
                        "spares_for_target": int(found.spares_for_target),
                    }
                },
            ),
        )

    def result_schema(self, parts: dict[str, Any]) -> tuple[tuple[str, dict[str, Any]], ...]:
        """The schema of :meth:`result_parts` (``parts``: the core's FRACTION, SECONDS and ``object``)."""
        fraction, seconds, obj = parts["fraction"], parts["seconds"], parts["object"]
        return (
            (
                "warnings",
                {
                    SPARES: {
                        "oneOf": [
                            {"type": "null"},
                            obj(
                                {
                                    NODES: {"type": "integer", "minimum": 1, "description": "nodes the job runs on"},
                                    SPARES: {
                                        "type": "integer",
                                        "minimum": 0,
                                        "description": "spare nodes kept beside the job",
                                    },
                                    "spares_auto": {
                                        "type": "boolean",
                                        "description": "whether spares were chosen to meet spare_risk",
                                    },
                                    REPAIR: seconds,
                                    RISK: fraction,
                                    "offered_load": {
                                        "type": "number",
                                        "minimum": 0,
                                        "description": "repair time / job MTBF",
                                    },
                                    "p_no_spare": {
                                        **fraction,
                                        "description": "chance a failure finds no spare (Erlang B)",
                                    },
                                    "wait_s": {
                                        **seconds,
                                        "description": "expected wait for a node per failure, seconds",
                                    },
                                    "wait_when_none_s": {
                                        **seconds,
                                        "description": "mean wait of a failure that finds no spare",
                                    },
                                    "running_share": {
                                        **fraction,
                                        "description": "share of time the job is not waiting for a node",
                                    },
                                    "waiting_share": {
                                        **fraction,
                                        "description": "share of time the job waits for a node",
                                    },
                                    "periodic_effective": {
                                        **fraction,
                                        "description": "effective time without the waits",
                                    },
                                    "cluster_effective": {
                                        **fraction,
                                        "description": "effective time over job and spare nodes",
                                    },
                                    "spares_for_target": {
                                        "type": "integer",
                                        "minimum": 0,
                                        "description": "fewest spares with p_no_spare at most spare_risk",
                                    },
                                },
                                "the spare pool: effective (above) counts the waits for a node;"
                                " cluster_effective the idle spares too",
                            ),
                        ]
                    }
                },
            ),
        )

    def input_rows(self, job: Any, show: dict[str, Any]) -> list[tuple[str, str, str]]:
        """The pool's rows of the inputs table."""
        s, c = job.scenario, job.config
        if getattr(c, SPARES) is None:
            return []
        count = show["count"]
        per_node = count(getattr(s, PER_NODE) or DEFAULT_GPUS_PER_NODE)
        note = "given" if getattr(s, NODES) is not None else f"GPUs / {per_node} per node"
        if getattr(s, SPARES) == AUTO_SPARES:
            auto = f"auto: the fewest with P(no spare) ≤ {show['fraction'](getattr(c, RISK))}"
        else:
            auto = "beside the job's nodes"
        return [
            ("nodes", count(float(getattr(c, NODES))), note),
            ("spares", count(float(getattr(c, SPARES))), auto),
            ("repair", show["duration"](float(getattr(c, REPAIR))), "a failed node is out this long"),
        ]

    def figure_tables(self, document: dict[str, Any], show: dict[str, Any]) -> list[tuple[str, str, list[Any]]]:
        """The pool's figures (docs/model.md §15): (the table's title, the report's caption, its rows of
        figure, value and note), from the JSON document's ``spares``; a fit's repairs (§22) from its ``repairs``."""
        if document.get(REPAIRS) is not None:
            return [("Repairs and node availability", "Repairs", self.repair_rows(document[REPAIRS], show))]
        found = document.get(SPARES)
        if found is None:
            return []
        pct, dur = show["fraction"], show["duration"]
        when_none = dur(found["wait_when_none_s"])
        nodes, count = found[NODES], found[SPARES]
        rows = [
            ("P(no spare)", pct(found["p_no_spare"]), "a failure finds every spare taken (Erlang B)"),
            ("wait per failure", dur(found["wait_s"]), f"expected; {when_none} when no spare is free"),
            ("waiting", pct(found["waiting_share"]), "of the time, for a node back from repair"),
            ("effective, no waits", pct(found["periodic_effective"]), "the periodic model alone"),
            (
                "effective, cluster",
                pct(found["cluster_effective"]),
                f"× {nodes} / ({nodes} + {count}) nodes: idle spares cost capacity",
            ),
            (
                f"spares for ≤ {pct(found[RISK])}",
                str(found["spares_for_target"]),
                "the fewest that keep P(no spare) there",
            ),
        ]
        return [("Spares (effective above counts the waits for a node)", "Spare nodes", rows)]

    # ------------------------------------------------------------- repairs measured from a log (§22)

    def incident_log_part(self, log: Any, fitted: Any, given: dict[str, Any]) -> tuple[tuple[str, dict[str, Any]], ...]:
        """The repair figures (docs/model.md §22) of an incident log whose incidents have ends, in the fit's
        window; null for counts or a log without ends."""
        found = None if log is None else log.outages
        if found is None or not found.spans:
            return (("causes", {REPAIRS: None}),)
        start, end = fitted.window_start_s, fitted.window_end_s
        if start is None or end is None:  # no window (one incident): the repairs alone, no unavailability
            start = end = min(s for _, s, _ in found.spans)
        figures = repair_figures(
            found.spans,
            start_s=start,
            end_s=end,
            nodes=given.get(NODES),
            group_nodes=given.get(GROUP_NODES),
            mtbf_s=fitted.mtbf.mtbf_s,
            unmatched_ends=len(found.unmatched),
        )
        return (("causes", {REPAIRS: {"layout": found.layout, **figures, "unmatched_at": list(found.unmatched[:5])}}),)

    def incident_log_schema(self) -> dict[str, Any]:
        part = repair_schema()
        properties = {
            "layout": {"type": "string", "description": "columns (start and end on a row) or paired (rows)"},
            **part["properties"],
            "unmatched_at": {"type": "array", "items": {"type": "string"}, "description": "the first ends' FILE:LINE"},
        }
        record = {**part, "properties": properties, "required": [*properties]}
        return {REPAIRS: {"oneOf": [record, {"type": "null"}], "description": part["description"]}}

    def incident_log_values(self, document: dict[str, Any]) -> dict[str, tuple[float, str]]:
        """The mean repair as ``[spares] repair`` (Erlang B needs no more of the distribution, §22); none where
        every repair took no time (a repair is positive: the preset would not read back)."""
        found = document.get(REPAIRS)
        if found is None or found["mean_s"] is None or not found["mean_s"] > 0.0:
            return {}
        logs = ", ".join(document["logs"] if "logs" in document else [document["log"]])  # fit's, or analyze's
        words = f"fitted from {logs if len(logs) <= 60 else 'the logs'}: the mean of {found['count']} repairs"
        if found["node_mtbf_s"] is not None:
            words += f"; per node MTBF {found['node_mtbf_s']:.6g} s ({found['nodes']:g} nodes)"
        return {REPAIR: (float(found["mean_s"]), words)}

    def repair_rows(self, found: dict[str, Any], show: dict[str, Any]) -> list[tuple[str, str, str]]:
        """The rows of the repair figures of ``fit``'s document."""
        dur, pct = show["duration"], show["fraction"]
        if found["mean_s"] is None:
            rows = [("repairs", "0", "no incident that started in the window has ended")]
        else:
            rows = [
                ("repairs", str(found["count"]), "outages ended (overlaps of a node merged)"),
                ("mean", dur(found["mean_s"]), "what Erlang B (spares) depends on: --repair"),
                ("median", dur(found["median_s"]), ""),
                ("p90", dur(found["p90_s"]), f"longest {dur(found['longest_s'])}"),
            ]
        if found["open"]:
            rows.append(("still open", str(found["open"]), "no end in the log: down to the window's end"))
        if found["unmatched_ends"]:
            at = ", ".join(found["unmatched_at"])
            rows.append(("ends without a start", str(found["unmatched_ends"]), f"left out ({at})"))
        if found["unavailability"] is None:
            rows.append(("unavailability", "-", f"{found['nodes_seen']} nodes had incidents: give --nodes"))
            return rows
        rows.append(("unavailability u", pct(found["unavailability"]), f"of {found['nodes']:g} nodes' time"))
        if found["groups_intact"] is not None:
            d = f"{found['group_nodes']:g}"
            rows.append((f"groups of {d} intact", pct(found["groups_intact"]), f"(1 − u)^{d}, nodes independent"))
        if found["node_mtbf_s"] is not None:
            rows.append(("per-node MTBF", dur(found["node_mtbf_s"]), "nodes × the MTBF"))
        return rows

    def report_lines(self, document: dict[str, Any], form: Any) -> list[str]:
        """The repairs of a fit's document (a report's log section) in a sentence."""
        found = document.get(REPAIRS) if document.get("command") == "fit" else None
        if found is None or found["mean_s"] is None:
            return []
        line = (
            f"{found['count']} repairs: mean {form('duration', found['mean_s'])}, median"
            f" {form('duration', found['median_s'])}, p90 {form('duration', found['p90_s'])}; spares sized from"
            " the mean (Erlang B depends on no more of the repair times)."
        )
        if found["unavailability"] is not None:
            line += f" Node unavailability {form('fraction', found['unavailability'])}."
        return [line]

    # ------------------------------------------------------------- the simulations

    simulated_name = "spares"
    simulated_after = "slowdown"
    simulated_input = (SPARES, SPARES)
    not_simulated_with = ("silent", "elastic", "slowdown", "events", "search")
    one_engine_with = ("silent", "elastic", "slowdown")

    def simulated_held(self, config: Any) -> bool:
        return getattr(config, SPARES) is not None and getattr(config, REPAIR) is not None

    def simulated_pool(self, config: Any) -> SparePool | None:
        if not self.simulated_held(config):
            return None
        return SparePool(int(getattr(config, SPARES)), float(getattr(config, REPAIR)))

    def run_waits(self, config: Any) -> Callable[[int], RunWaits] | None:
        """The pool of ``plan``'s runs, made for a number of runs; None without spares."""
        spares = getattr(config, SPARES)
        if spares is None:
            return None
        repair = getattr(config, REPAIR)
        return lambda runs: RunWaits(int(spares), 0.0 if repair is None else float(repair), runs)

    def simulated_parts(self, outcome: Any, result: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
        if result.pool is None:
            return (("warnings", {SPARES: None}),)
        return (
            (
                "warnings",
                {
                    SPARES: {
                        "no_spare": outcome.no_spare,
                        "p_no_spare": outcome.p_no_spare,
                        "wait_s": outcome.wait_per_failure_s,
                        "analytic_p_no_spare": float(result.pool.p_no_spare),
                        "analytic_wait_s": float(result.pool.wait_s),
                    }
                },
            ),
        )

    def simulated_schema(self, parts: dict[str, Any]) -> tuple[tuple[str, dict[str, Any]], ...]:
        fraction, seconds, obj = parts["fraction"], parts["seconds"], parts["object"]
        return (
            (
                "warnings",
                {
                    SPARES: {
                        "oneOf": [
                            {"type": "null"},
                            obj(
                                {
                                    "no_spare": {"type": "integer", "minimum": 0},
                                    "p_no_spare": fraction,
                                    "wait_s": seconds,
                                    "analytic_p_no_spare": fraction,
                                    "analytic_wait_s": seconds,
                                },
                                "the simulated spare pool: failures that found no spare, their share, the mean wait"
                                " per failure, and Erlang's values beside them; null without spares",
                            ),
                        ]
                    }
                },
            ),
        )

    def simulated_lines(self, document: dict[str, Any], show: dict[str, Any]) -> list[str]:
        """The simulated spare pool beside Erlang's figures, from ``simulate``'s JSON ``spares``."""
        found = document.get(SPARES)
        if found is None:
            return []
        pct, dur = show["fraction"], show["duration"]
        # The run's whole split has the waits in a row of their own where it timed them apart.
        apart = (document.get("whole_split") or {}).get("waiting") is not None
        return [
            f"Spares: {found['no_spare']:,} failures found none ({pct(found['p_no_spare'])};"
            f" Erlang B {pct(found['analytic_p_no_spare'])}); wait {dur(found['wait_s'])} per failure"
            f" (model {dur(found['analytic_wait_s'])}), {'in a row of their own' if apart else 'counted in restarts'}."
        ]


MECHANISM = Spares()
