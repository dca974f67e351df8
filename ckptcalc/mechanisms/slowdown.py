"""The persist slowdown: training runs at 1 − f of its speed while a background persist runs
(docs/model.md §17.1).

A tier cost on the top tier of an asynchronous job. Over a whole checkpoint period the slower steps
cost f·P, like a stall of that length; the persist still takes P of elapsed time, of which (1 − f)·P
is work. So the exact model takes the top tier's stall s + f·P and lag (1 − f)·P (the work re-run
after a failure to get back to where the lost checkpoint was durable, at full speed): exact for one
level, first order the same for more (:func:`slowed`). Its part of a result is the share of elapsed
time lost to it, a part of the write share (:func:`slowdown_share`).

>>> slowed(stall_s=0.5, persist_s=300.0, slowdown=0.5)
(150.5, 150.0, 150.0)
"""

from __future__ import annotations

import math
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.mechanisms.base import Cell, Input, Mechanism, Num, TierKey

KEY = "persist_slowdown"


def slowed(*, stall_s: Num, persist_s: Num, slowdown: Num) -> tuple[Num, Num, Num]:
    """(stall, lag, slowdown cost) of an asynchronous level whose persist ``persist_s`` slows training by
    ``slowdown``: s + f·P, (1 − f)·P and f·P. With f = 0 it is (s, P, 0).

    Over a period the job loses f·P to the slower steps, which the exact model charges as stall; the
    persist's elapsed time P is unchanged, and (1 − f)·P of it is the work done while it runs, which
    is both what a failure re-runs at full speed to get back to the point the lost snapshot was
    durable and the shortest interval that lets each persist end before the next snapshot."""
    cost = slowdown * persist_s
    return stall_s + cost, persist_s - cost, cost


def slowdown_share(write: Num, stalls: list[tuple[Num, Num]], slowed_s: Num) -> Num:
    """The part of the exact write share ``write`` that is the persist's slowdown: ``stalls`` holds each
    tier's (stall s_i charged at its boundaries, interval T_i), fastest first, the top tier's last, whose
    stall holds the slowdown ``slowed_s`` = f·P.

    A tier-i boundary is a boundary of every tier below it, so over one top-tier period of T_L each
    tier writes T_L/T_i times and the period's stall time is Σ_i s_i·(T_L/T_i); the slowdown is f·P
    of it, once a period (only the top tier persists in the background), and the write share is split
    in that proportion (docs/model.md §17.1, reference 17.1b: two levels).

    >>> round(slowdown_share(0.07, [(150.5, 1733.9)], 150.0), 6)
    0.069767
    >>> round(slowdown_share(0.081, [(3.0, 200.0), (150.5, 2000.0)], 150.0) / 0.081, 6)
    0.831025
    """
    top = stalls[-1][1]
    total: Num = 0.0
    for stall, interval in stalls:
        total = total + stall * (top / interval)
    return write * slowed_s / total if total else 0.0 * write


def result_share(result: Any) -> float:
    """The share of elapsed time an evaluated result (:class:`ckptcalc.model.evaluation.Result`, one job)
    loses to the persist's slowdown: part of its write share (:func:`slowdown_share`); 0 without one."""
    plans = result.levels
    slowed_s = float(plans[-1].level.slowdown_s)
    if not slowed_s > 0:
        return 0.0
    rows = [(float(p.level.stall_s), float(p.interval_s)) for p in plans]
    return float(slowdown_share(float(result.write), rows, slowed_s))


def slowed_by(config: Any, share: Num | None) -> Any:
    """``config`` (a model ``Config``) with training slowed by ``share`` while a persist runs (None: not)."""
    return config.replace(**{KEY: share})


class Slowdown(Mechanism):
    name = "slowdown"
    kind = "tier_cost"
    inputs = (
        Input(
            KEY,
            "fraction",
            "persist-slowdown",
            "storage",
            KEY,
            "Share of training speed lost while a background persist runs, in [0, 1), e.g. 0.5 (needs --snapshot-bw).",
            after="discard",
        ),
    )
    tier_keys = (
        TierKey(KEY, "fraction", "last", "only the last tier persists in the background: the slowdown goes on it"),
    )
    example = (("snapshot_bandwidth", "25GB/s/gpu"), (KEY, "0.5"))
    limit = ((KEY, "0"),)
    cells = (Cell("slowdown", ("storage", "slowdown_share")),)

    def top_level(self, config: Any, stall_s: Num, lag_s: Num, slowdown_s: Num) -> tuple[Num, Num, Num]:
        share = getattr(config, KEY)
        if share is None or config.snapshot_bandwidth is None:
            return stall_s, lag_s, slowdown_s
        stall, lag, cost = slowed(stall_s=stall_s, persist_s=lag_s, slowdown=share)
        return stall, lag, slowdown_s + cost

    def without(self, config: Any) -> Any:
        return slowed_by(config, None)

    def slowed_share(self, result: Any) -> float:
        return result_share(result)

    def check(self, where: Any, name: str, value: float) -> bool:
        if name != KEY:
            return False
        if not (math.isfinite(value) and 0 <= value < 1):
            raise InputError(f"must be a share in [0, 1), got {value:g}", where=where(name))
        return True

    def resolve(self, scenario: Any, config: Any) -> Any:
        share = getattr(scenario, KEY)
        if share is None:
            return config
        if scenario.snapshot_bandwidth is None:
            raise InputError(
                "slows training while a background persist runs: it needs {snapshot_bw} (asynchronous checkpoints)",
                where=scenario.where(KEY),
            )
        return slowed_by(config, share)

    def echo(self, config: Any) -> dict[str, float | None]:
        share = getattr(config, KEY)
        return {KEY: None if share is None else float(share)}

    def input_schema(self) -> dict[str, Any]:
        return {
            KEY: {
                "type": ["number", "null"],
                "minimum": 0,
                "exclusiveMaximum": 1,
                "description": "share of training speed lost while a persist runs",
            }
        }


MECHANISM = Slowdown()
