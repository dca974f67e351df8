"""Elastic replica groups in the event engine (docs/model.md §14.1): the groups process stepped event by
event, between two whole-job failures. A group fails at ν = eλ/G while up and rejoins T_j later; each drop
pauses the running groups for q_p; the work done runs at (1 − o)·(groups up)/G. The simulation's stepper
(``simulation.timeline.run_elastic``) and its event log (``simulation.events.elastic_pieces``) run the
whole-job failures, the checkpoints and the restarts around it; the one event engine
(``simulation.engine``) steps it beside every other mechanism as :class:`Stepped`.

>>> g = Groups(groups=4, group_share=0.9, rejoin_s=600.0, quorum_pause_s=0.0, overhead=0.0)
>>> whole_mean, nu = g.rates(3600.0)
>>> round(whole_mean), round(nu * 3600.0, 3)
(36000, 0.225)
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Any

from ckptcalc.errors import InputError

#: The columns the groups add to a simulated event log's CSV, after the core's: the group of a ``group_down``
#: or ``group_up``, and a pause's end.
LOG_COLUMNS = ",group,quorum_end"


@dataclass(frozen=True)
class Groups:
    """Elastic replica groups as the simulation runs them (docs/model.md §14.1)."""

    groups: int
    group_share: float
    rejoin_s: float
    quorum_pause_s: float
    overhead: float

    #: The CSV columns its events add to an event log.
    log_columns = LOG_COLUMNS

    @property
    def count(self) -> int:
        """G: the replica groups."""
        return int(self.groups)

    @property
    def pause_s(self) -> float:
        """q_p: the running groups' pause at each drop."""
        return self.quorum_pause_s

    @property
    def ends(self) -> bool:
        """Whether whole-job failures come at all (e < 1): cycles between them end."""
        return self.group_share < 1.0

    def check_cycles(self) -> None:
        """Refuse groups whose cycles between whole-job failures never end (e = 1)."""
        if not self.ends:
            raise InputError(
                "simulate counts cycles between whole-job failures: a group-local share below 1 is needed",
                where="group_share",
            )

    def check_plan(self, shape: float | None) -> None:
        """Refuse what the one event engine does not run with groups: Weibull failures (``shape``), or cycles
        between whole-job failures that never end."""
        if shape is not None:
            raise InputError("elastic replica groups are simulated under exponential failures", where="shape")
        self.check_cycles()

    def process(self, rng: Any, mtbf_s: float, pool: Any) -> Stepped:
        """The groups as the one event engine steps them at the job MTBF ``mtbf_s``, drawing from ``rng`` (the
        engine's ``random.Random``), with the spare ``pool`` (None: none)."""
        return Stepped(self, mtbf_s, rng, pool)

    def rates(self, mtbf_s: float) -> tuple[float, float]:
        """(the mean time between whole-job failures M/(1 − e), the failure rate ν = e/(M·G) of a group up)."""
        return mtbf_s / (1.0 - self.group_share), self.group_share / mtbf_s / self.groups

    def stretch(
        self, nu: float, limit: float, draws: Any, changes: list[tuple[float, int]] | None = None
    ) -> tuple[list[float], list[float], float | None]:
        """One running stretch of the groups process, all G up at its start, for at most ``limit`` of running
        time: the breakpoints and the throughput between them, and the time all groups went down (or None).
        ``draws`` hands out standard exponentials (``exponential()``); ``changes`` collects each group's drop
        (time, −1) and rejoin (time, +1), for the event log."""
        g = self
        import collections

        full, scale = float(g.groups), (1.0 - g.overhead) / g.groups
        up = g.groups
        back: collections.deque[float] = collections.deque()  # rejoin times, in order (T_j is fixed)
        t, pause_end = 0.0, 0.0
        times, thetas = [0.0], []
        next_fail = draws.exponential() / (nu * full) if nu > 0 else math.inf
        while True:
            rejoin = back[0] if back else math.inf
            ends = limit <= next_fail and limit <= rejoin
            at = limit if ends else min(next_fail, rejoin)
            # Up to ``at`` the count is ``up``; the start of it may be paused.
            if pause_end > t:
                cut = min(pause_end, at)
                times.append(cut)
                thetas.append(0.0)
                t = cut
            if at > t:
                times.append(at)
                thetas.append(scale * up)
                t = at
            if ends:
                return times, thetas, None
            if changes is not None:
                changes.append((next_fail, -1) if next_fail <= rejoin else (rejoin, 1))
            if next_fail <= rejoin:
                up -= 1
                if up == 0:
                    return times, thetas, next_fail
                back.append(next_fail + g.rejoin_s)
                pause_end = next_fail + g.quorum_pause_s
            else:
                back.popleft()
                up += 1
            # Memoryless: the next failure among the groups now up, drawn afresh at every change.
            next_fail = t + draws.exponential() / (nu * up) if nu > 0 else math.inf


def log_schema(time: dict[str, Any]) -> dict[str, Any]:
    """The schema of those columns in a log's line (``time``: the schema of a time field)."""
    return {
        "group": {
            "type": ["integer", "string"],
            "description": "group_down, group_up: the replica group, a whole number from 0 (below --groups)",
        },
        "quorum_end": {
            **time,
            "description": "group_down: when the running groups resumed after the quorum change (a pause)",
        },
    }


class Stepped:
    """The groups process as the one event engine steps it (docs/model.md §14.1, §18.5): the groups up, when
    each one out rejoins (with a spare pool: T_j when a spare is free, the repair otherwise, §18.4), the
    running groups' pause and the next group failure, drawn from the engine's generator. ``whole_mean`` is
    the mean time between whole-job failures, which the engine draws itself; ``failures`` counts the
    group-local failures, ``all_down`` the whole-job ones that were the last group up failing."""

    def __init__(self, groups: Groups, mtbf_s: float, rng: Any, pool: Any) -> None:
        self.whole_mean, self.nu = groups.rates(mtbf_s)
        self.total = groups.count
        self.overhead, self.rejoin_s = float(groups.overhead), float(groups.rejoin_s)
        self.pause_s = float(groups.pause_s)
        self.expo = rng.expovariate
        self.pool = pool
        self.up = self.total
        self.back: list[tuple[float, int]] = []  # when each group out rejoins (elapsed time), and which
        self.ids = list(range(self.total))  # the groups up
        self.pause_end = -math.inf
        self.next_fail = math.inf
        self.failures = self.all_down = 0

    @property
    def down_all(self) -> bool:
        """Whether every group is down (a failure now rolls back whatever its class)."""
        return self.up == 0

    def throughput(self, elapsed: float) -> tuple[float, float, float, float]:
        """Per unit of work at ``elapsed``: (useful, lost to groups down, to the pause, to the overhead)."""
        share = self.up / self.total
        down = 1.0 - share
        if elapsed < self.pause_end:
            return 0.0, down, share, 0.0
        return (1.0 - self.overhead) * share, down, 0.0, self.overhead * share

    def upcoming(self, elapsed: float) -> tuple[float, float, float]:
        """The elapsed times of its next events, in the order :meth:`event` numbers them: a group failure, a
        group back, the pause's end (inf: none to come)."""
        back = self.back[0][0] if self.back else math.inf
        return self.next_fail, back, self.pause_end if elapsed < self.pause_end else math.inf

    def restarted(self, elapsed: float, emit: Any) -> None:
        """A whole-job restart ended at ``elapsed``: every group is up again (``emit(kind, group=)`` logs each
        group back) and the next group failure is drawn."""
        self.up, self.pause_end = self.total, -math.inf
        for _, out in self.back:
            emit("group_up", group=out)
        self.back.clear()
        self.ids[:] = range(self.total)
        self.next_fail = elapsed + self.expo(self.nu * self.up) if self.nu > 0 else math.inf

    def event(self, which: int, elapsed: float, emit: Any) -> bool:
        """Step its event ``which`` (:meth:`upcoming`'s order) at ``elapsed``, logging it with ``emit(kind,
        group=, quorum=)``: True when it is a whole-job failure (the last group up failing)."""
        if which == 0:
            self.up -= 1
            if self.up == 0:
                self.all_down += 1
                emit("group_down", group=self.ids[-1])
                return True
            self.failures += 1
            out = self.rejoin_s if self.pool is None else self.pool.group_out(elapsed, self.rejoin_s)
            gone = self.ids.pop()
            bisect.insort(self.back, (elapsed + out, gone))
            self.pause_end = elapsed + self.pause_s
            emit("group_down", group=gone, quorum=self.pause_end if self.pause_s > 0 else math.nan)
            self.next_fail = elapsed + self.expo(self.nu * self.up)
        elif which == 1:
            _, rejoined = self.back.pop(0)
            self.ids.append(rejoined)
            emit("group_up", group=rejoined)
            self.up += 1
            self.next_fail = elapsed + self.expo(self.nu * self.up)
        return False
