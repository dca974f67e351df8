"""The storage limits: a daily write limit and a retention limit (docs/model.md §17.2).

A tier cost that bounds the schedule rather than the time a checkpoint takes. A daily write limit L
(``--max-written-per-day``) holds the top interval at or above size × 86 400 / L, the size a storage
checkpoint takes after the tier costs: effective time rises towards the free optimum and falls past
it, so a limit that binds holds the interval at that floor, and a given interval that writes more is
refused. A retention limit R (``--max-retained``) cuts the newest storage checkpoints kept to
⌊R / size − W/K_p⌋, the ones kept for good over the run counted first. The storage record reports
what honouring each costs, in points of effective time against the optimum without it.

>>> round(shortest_interval(6.48e12, 0.5e15), 4)
1119.744
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.mechanisms.base import Input, Mechanism, Num

WRITTEN = "max_written_per_day"
RETAINED = "max_retained"

#: Seconds in a day: the daily write limit's period.
DAY_S = 86_400.0

_BOUND = "written_bound"  # the caveat of an optimum held at the daily write limit's floor


def shortest_interval(size_bytes: Num, limit_bytes_per_day: Num) -> Num:
    """The shortest interval at which one checkpoint of ``size_bytes`` per interval stays within
    ``limit_bytes_per_day``: size × 86 400 / limit."""
    return size_bytes * DAY_S / limit_bytes_per_day


def _cost(evaluate: Any, config: Any, result: Any, name: str) -> float:
    """Points of effective time the limit ``name`` costs ``result`` against the optimum without it."""
    free = evaluate(config.replace(**{name: None}))
    return max(0.0, 100.0 * (float(free.optimal_effective) - float(result.optimal_effective)))


class Limits(Mechanism):
    name = "limits"
    kind = "tier_cost"
    inputs = (
        Input(
            WRITTEN,
            "size",
            "max-written-per-day",
            "storage",
            "max_written_per_day",
            "Most bytes the storage tier may take per day, e.g. 1PB: the optimum honours it and reports its cost.",
            after="max_busy",
            column="max_written_bytes_per_day",
        ),
        Input(
            RETAINED,
            "size",
            "max-retained",
            "retention",
            "max_retained",
            "Most bytes the retained storage checkpoints may hold, e.g. 200TB: fewer newest are kept to fit,"
            " and the cost is reported.",
            after="keep",
            column="max_retained_bytes",
        ),
    )
    example = ((WRITTEN, "0.5PB"), (RETAINED, "100TB"), ("keep", "5"))
    limit = ((WRITTEN, ""), (RETAINED, ""))  # no limit stated: every checkpoint written and kept

    # ------------------------------------------------------------- the model

    def top_bound(self, config: Any, size_bytes: Num) -> tuple[Num, str, Num] | None:
        limit = getattr(config, WRITTEN)
        if limit is None:
            return None
        return shortest_interval(size_bytes, limit), _BOUND, limit

    def check_schedule(self, config: Any, size_bytes: Num, interval_s: Num, arrays: Any) -> None:
        limit = getattr(config, WRITTEN)
        if limit is None:
            return
        written = size_bytes * (DAY_S / interval_s)
        over = written > limit * (1.0 + 1e-12)
        if arrays.count(over):
            ns = arrays.lib(written, limit)
            worst = arrays.largest(written if arrays.scalar(written, limit) else ns.where(over, written, 0.0))
            raise InputError(
                f"writes {worst:.4g} bytes a day to storage, over {{{WRITTEN}}} ({arrays.largest(limit):.4g});"
                " give a longer interval or drop the limit",
                where="interval",
            )

    def kept(self, config: Any, size_bytes: Num, keep: Any, arrays: Any) -> Any:
        limit = getattr(config, RETAINED)
        if limit is None:
            return keep
        every, work = config.kept_for_good_s, config.work_s
        permanent = work / every if every is not None and work is not None else 0.0
        ns = arrays.lib(limit, size_bytes, permanent)
        room = ns.floor(limit / size_bytes - permanent)
        if arrays.scalar(room) and room < 1:
            raise InputError(
                f"holds less than one checkpoint of the storage tier ({float(size_bytes):.4g} bytes)"
                + (f" beside the {permanent:.6g} kept for good over the run" if permanent else ""),
                where=RETAINED,
            )
        room = ns.maximum(room, 1.0)
        return room if keep is None else ns.minimum(keep, room)

    def without(self, config: Any) -> Any:
        return config.replace(**{WRITTEN: None, RETAINED: None})

    # ------------------------------------------------------------- inputs

    def resolve(self, scenario: Any, config: Any) -> Any:
        return config.replace(**{WRITTEN: getattr(scenario, WRITTEN), RETAINED: getattr(scenario, RETAINED)})

    # ------------------------------------------------------------- results

    def load_parts(
        self, config: Any, result: Any, evaluate: Callable[[Any], Any] | None, keep: float | None
    ) -> tuple[tuple[str, dict[str, Any]], ...]:
        written, retained = getattr(config, WRITTEN), getattr(config, RETAINED)
        return (
            (
                "max_busy",
                {
                    WRITTEN: None if written is None else float(written),
                    "limit_cost_pp": None
                    if written is None or evaluate is None
                    else _cost(evaluate, config, result, WRITTEN),
                },
            ),
            (
                "retained_over_run",
                {
                    RETAINED: None if retained is None else float(retained),
                    "retained_keep": None if retained is None or keep is None else int(keep),
                    "retained_cost_pp": None
                    if retained is None or evaluate is None
                    else _cost(evaluate, config, result, RETAINED),
                },
            ),
        )

    def load_schema(self) -> tuple[tuple[str, dict[str, Any]], ...]:
        return (
            (
                "max_busy",
                {
                    WRITTEN: {"type": ["number", "null"], "description": "bytes a day (--max-written-per-day)"},
                    "limit_cost_pp": {
                        "type": ["number", "null"],
                        "minimum": 0,
                        "description": "points of effective time the daily write limit costs; null without one",
                    },
                },
            ),
            (
                "retained_over_run",
                {
                    RETAINED: {
                        "type": ["number", "null"],
                        "description": "bytes the retained checkpoints may hold (--max-retained)",
                    },
                    "retained_keep": {
                        "type": ["integer", "null"],
                        "minimum": 1,
                        "description": "with --max-retained: newest kept",
                    },
                    "retained_cost_pp": {
                        "type": ["number", "null"],
                        "minimum": 0,
                        "description": "with --max-retained: points of effective time keeping fewer costs"
                        " (silent events)",
                    },
                },
            ),
        )

    def load_lines(self, found: dict[str, Any], size: Callable[[float], str]) -> tuple[tuple[str, str], ...]:
        lines: list[tuple[str, str]] = []
        if found.get("limit_cost_pp") is not None:
            lines.append(
                (
                    "load",
                    f"Writing at most {size(found[WRITTEN])} a day to storage costs"
                    f" {found['limit_cost_pp']:.2f} pp of effective time.",
                )
            )
        if found.get(RETAINED) is not None and found.get("retained_keep") is not None:
            lines.append(
                (
                    "retained",
                    f"Holding at most {size(found[RETAINED])} keeps the {found['retained_keep']} newest"
                    f" checkpoints, at a cost of {found['retained_cost_pp']:.2f} pp of effective time.",
                )
            )
        return tuple(lines)


MECHANISM = Limits()
