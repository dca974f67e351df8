"""Elastic replica groups in the event engine (docs/model.md §14.1): the groups process stepped event by
event, between two whole-job failures. A group fails at ν = eλ/G while up and rejoins T_j later; each drop
pauses the running groups for q_p; the work done runs at (1 − o)·(groups up)/G. The simulation's stepper
(``simulation.timeline.run_elastic``) and its event log (``simulation.events.elastic_pieces``) run the
whole-job failures, the checkpoints and the restarts around it.

>>> g = Groups(groups=4, group_share=0.9, rejoin_s=600.0, quorum_pause_s=0.0, overhead=0.0)
>>> whole_mean, nu = g.rates(3600.0)
>>> round(whole_mean), round(nu * 3600.0, 3)
(36000, 0.225)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ckptcalc.errors import InputError


@dataclass(frozen=True)
class Groups:
    """Elastic replica groups as the simulation runs them (docs/model.md §14.1)."""

    groups: int
    group_share: float
    rejoin_s: float
    quorum_pause_s: float
    overhead: float

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
