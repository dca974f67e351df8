"""Restart time that grows with job size (docs/model.md §19): a failure class's restart as a function of N.

Collective initialisation and synchronisation make a restart grow with the job. A share S of the
restart R₀, measured at N₀ GPUs, grows as (N/N₀)^A; the rest is fixed:

    R(N) = R₀·[(1 − S) + S·(N/N₀)^A].

With a per-GPU MTBF the job's MTBF falls as 1/N, so the restart's share of time grows faster than
linearly, and the useful GPUs U(N) = N·E(N) (E the exact effective time at the optimal interval for
that N) peak at a job size N*, beyond which adding GPUs makes less progress.

This home declares the growth once: its inputs (``--restart-growth``, ``--restart-scaled``,
``--restart-at-gpus``; the preset table ``[scale]``), the restart at the job's size, the restart at
every point of a sweep over GPUs with the useful GPUs and their peak, the peak in ``optimize``'s
document, and the lever that fixes the restart at its value at N₀.

>>> grown(600.0, 0.5, 1.0, 2.0), grown(600.0, 0.5, 2.0, 2.0)
(900.0, 1500.0)
"""

from __future__ import annotations

import math
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.mechanisms.base import Cell, Input, Mechanism

Num = Any

GROWTH = "restart_growth"
SCALED = "restart_scaled"
AT = "restart_at_gpus"

#: The lever: the restart held at its value at N₀, whatever the job's size.
LEVER_FIXED = "restart_fixed"

#: The largest growth exponent accepted (quadratic or worse by default; beyond this no job runs).
MOST_GROWTH = 8.0

#: The job sizes searched for the peak of the useful GPUs: 2^-10 to 2^12 times the job, to a relative 10^-7.
_BELOW, _ABOVE = 10, 12
_PRECISION = 1e-7


# ------------------------------------------------------------------ the arithmetic


def grown(restart_s: Num, scaled: Num, growth: Num, ratio: Num) -> Num:
    """R₀·[(1 − S) + S·ratio^A], ``ratio`` = N/N₀ (floats or arrays alike)."""
    return restart_s * ((1.0 - scaled) + scaled * ratio**growth)


def holds(config: Any) -> bool:
    """Whether ``config`` has a restart that grows with its size (a growth above 0 on a scaled share above 0)."""
    growth, scaled = getattr(config, GROWTH), getattr(config, SCALED)
    return growth is not None and scaled is not None and float(growth) != 0.0 and float(scaled) != 0.0


def _factor(config: Any, relative: Num) -> Num:
    """R(N)/R₀ at ``relative`` = N / N_job: the model's configuration holds N₀ / N_job in ``restart_at_gpus``."""
    return grown(1.0, getattr(config, SCALED), getattr(config, GROWTH), relative / getattr(config, AT))


def peak(at_gpus: Any, around: float) -> dict[str, float]:
    """The job size N* where the useful GPUs U(N) = N·E(N) peak, ``at_gpus`` evaluating the job, re-optimised, at
    one GPU count: job sizes a factor 2 apart from ``around`` / 2¹⁰ to ``around`` · 2¹², a golden-section search
    on a log scale between the neighbours of the best of them, then the better of the two whole counts about it
    (about 50 evaluations, in floats: no numpy at start-up)."""

    def useful(gpus: float) -> tuple[float, Any]:
        result = at_gpus(gpus)
        u = gpus * float(result.effective)
        return (u if math.isfinite(u) else -1.0), result

    sizes = [max(1.0, around * 2.0**k) for k in range(-_BELOW, _ABOVE + 1)]
    found = [useful(n)[0] for n in sizes]
    i = max(range(len(sizes)), key=found.__getitem__)
    low, high = math.log(sizes[max(i - 1, 0)]), math.log(sizes[min(i + 1, len(sizes) - 1)])
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = high - golden * (high - low), low + golden * (high - low)
    ua, ub = useful(math.exp(a))[0], useful(math.exp(b))[0]
    while high - low > _PRECISION:
        if ua < ub:
            low, a, ua = a, b, ub
            b = low + golden * (high - low)
            ub = useful(math.exp(b))[0]
        else:
            high, b, ub = b, a, ua
            a = high - golden * (high - low)
            ua = useful(math.exp(a))[0]
    middle = math.exp((low + high) / 2.0)
    best = max(
        ((*useful(n), n) for n in sorted({max(1.0, math.floor(middle)), max(1.0, math.ceil(middle))})),
        key=lambda item: item[0],
    )
    u, result, gpus = best
    return {
        "best_gpus": float(gpus),
        "effective_at_best": float(result.effective),
        "useful_gpus_at_best": u,
        "restart_at_best_s": float(result.config.restart_s),
    }


# ------------------------------------------------------------------ the mechanism


class Growth(Mechanism):
    name = "growth"
    kind = "failure_class"  # a class's restart, as a function of the job's size (MODEL.md §17, §19)
    inputs = (
        Input(
            GROWTH,
            "number",
            "restart-growth",
            "scale",
            "restart_growth",
            "Exponent A: the scaled share of the restart grows as (GPUs / --restart-at-gpus)^A (0: constant).",
            after="gpus",
        ),
        Input(
            SCALED,
            "fraction",
            "restart-scaled",
            "scale",
            "restart_scaled",
            "Share S of the restart that grows with the job (default: all of it); the rest is fixed.",
            after=GROWTH,
        ),
        Input(
            AT,
            "count",
            "restart-at-gpus",
            "scale",
            "restart_at_gpus",
            "GPU count at which the restart was measured (default: the job's --gpus).",
            after=SCALED,
        ),
    )
    levers_with = (LEVER_FIXED,)
    break_even_words = (("restart_s", "", "restart"),)
    panels = (("scale", "Job size"),)
    example = (("gpus", "32768"), ("gpu_mtbf_s", "50790.4h"), (GROWTH, "1"), (SCALED, "0.5"), (AT, "16384"))
    limit = ((GROWTH, "0"), (SCALED, ""), (AT, ""))  # a restart that does not grow: today's model
    cells = (Cell("effective at N*", ("scale", "effective_at_best")),)

    # ------------------------------------------------------------- inputs

    def check(self, where: Any, name: str, value: float) -> bool:
        """A growth from 0 to :data:`MOST_GROWTH`, a share in [0, 1], a positive whole GPU count."""
        if name == GROWTH:
            if not (math.isfinite(value) and 0.0 <= value <= MOST_GROWTH):
                raise InputError(f"must lie between 0 and {MOST_GROWTH:g}, got {value:g}", where=where(name))
            return True
        if name == SCALED:
            if not (0.0 <= value <= 1.0):
                raise InputError(f"must lie in [0, 1], got {value:g}", where=where(name))
            return True
        if name == AT:
            if not (math.isfinite(value) and value >= 1.0 and float(value).is_integer()):
                raise InputError(f"must be a positive whole number of GPUs, got {value:g}", where=where(name))
            return True
        return False

    def resolve(self, scenario: Any, config: Any) -> Any:
        """The restart at the job's size: R₀ (stated, measured at N₀) times (1 − S) + S·(N/N₀)^A."""
        growth, scaled, at = getattr(scenario, GROWTH), getattr(scenario, SCALED), getattr(scenario, AT)
        if growth is None:
            for name in (SCALED, AT):
                if getattr(scenario, name) is not None:
                    raise InputError("needs a restart growth ({restart_growth})", where=scenario.where(name))
            return config
        if scenario.gpus is None:
            raise InputError(
                "a restart that grows with the job needs its GPU count ({gpus})", where=scenario.where(GROWTH)
            )
        relative = 1.0 if at is None else at / scenario.gpus
        found = config.replace(**{GROWTH: growth, SCALED: 1.0 if scaled is None else scaled, AT: relative})
        if not holds(found):
            return found  # a growth of 0: the restart as stated, exactly
        return found.replace(restart_s=config.restart_s * _factor(found, 1.0))

    def without(self, config: Any) -> Any:
        """The restart as measured, R₀, and no growth."""
        if getattr(config, GROWTH) is None:
            return config
        restart = config.restart_s / _factor(config, 1.0) if holds(config) else config.restart_s
        return config.replace(restart_s=restart, **{GROWTH: None, SCALED: None, AT: None})

    # ------------------------------------------------------------- scale hooks

    def at_gpus(self, job: Any, config: Any, gpus: Num) -> dict[str, Any]:
        """The restart at ``gpus`` GPUs, from the job's (``config.restart_s`` at ``job.gpus``)."""
        if not holds(config) or job.gpus is None:
            return {}
        return {"restart_s": config.restart_s / _factor(config, 1.0) * _factor(config, gpus / job.gpus)}

    def scale_parts(self, job: Any, result: Any, at_gpus: Any) -> dict[str, Any]:
        """``optimize``'s ``scale``: the growth as resolved, the restart at the job's size, and the peak of the
        useful GPUs (docs/model.md §19), with a per-GPU MTBF (the job's MTBF falling as 1/N)."""
        config = job.config
        if not holds(config) or job.gpus is None or job.gpu_mtbf_s is None:
            return {}
        return {
            "scale": {
                GROWTH: float(getattr(config, GROWTH)),
                SCALED: float(getattr(config, SCALED)),
                AT: float(getattr(config, AT)) * float(job.gpus),
                "restart_at_job_s": float(config.restart_s),
                "useful_gpus": float(job.gpus) * float(result.effective),
                **peak(at_gpus, float(job.gpus) * max(1.0, float(getattr(config, AT)))),
            }
        }

    def scale_schema(self) -> dict[str, Any]:
        number = {"type": "number", "minimum": 0}
        keys = {
            GROWTH: {**number, "description": "exponent A of the scaled share's growth"},
            SCALED: {**number, "maximum": 1, "description": "share S of the restart that grows"},
            AT: {**number, "description": "GPU count N0 at which the restart was measured"},
            "restart_at_job_s": {**number, "description": "the restart at the job's size, seconds"},
            "useful_gpus": {**number, "description": "GPUs × effective time at the job's size"},
            "best_gpus": {**number, "description": "job size N* where the useful GPUs peak"},
            "effective_at_best": {**number, "maximum": 1, "description": "effective time at N*"},
            "useful_gpus_at_best": {**number, "description": "N* × effective time at N*"},
            "restart_at_best_s": {**number, "description": "the restart at N*, seconds"},
        }
        return {
            "scale": {
                "type": "object",
                "properties": keys,
                "required": list(keys),
                "description": "restart growing with the job (docs/model.md §19); with --restart-growth above 0",
            }
        }

    def varied(self, name: str, config: Any, values: Any, scenario: Any) -> Any:
        """A swept restart is the restart as measured at N₀: at the job's size it is grown likewise."""
        if name != "restart_s" or not holds(config):
            return None
        return config.replace(restart_s=values * _factor(config, 1.0))

    def sweep_stated(self, name: str, config: Any) -> float | None:
        """The restart as measured at N₀, R₀ = R(N)/[(1 − S) + S·(N/N₀)^A]."""
        if name != "restart_s" or not holds(config):
            return None
        return float(config.flat().restart_s / _factor(config, 1.0))

    def sweep_parts(self, over: str, values: Any, result: Any) -> dict[str, Any]:
        """A sweep over GPUs with a growing restart: the restart and the useful GPUs at every point; over the
        restart: the restart at the job's size."""
        if over == "restart" and holds(result.config):
            return {"grown_restart_s": result.config.restart_s}
        if over != "gpus" or not holds(result.config):
            return {}
        import numpy

        effective = numpy.broadcast_to(numpy.asarray(result.effective, dtype=float), numpy.shape(values))
        return {"restart_s": result.config.restart_s, "useful_gpus": values * effective}

    def sweep_peak(
        self, values: Any, columns: dict[str, Any], at: tuple[int, int], found: dict[str, Any]
    ) -> dict[str, Any]:
        """Fold a slice of a sweep (``values`` and its ``columns``; ``at``: its number and the slices' size) into
        the point where the useful GPUs peak: ``best``, its index and figures."""
        if "useful_gpus" not in columns:
            return found
        import numpy

        u = numpy.nan_to_num(numpy.asarray(columns["useful_gpus"], dtype=float), nan=-1.0)
        i = int(numpy.argmax(u))
        before = found.get("best")
        if before is not None and before["useful_gpus"] >= float(u[i]):
            return found
        return {
            **found,
            "best": {
                "index": at[0] * at[1] + i,
                "gpus": float(values[i]),
                "useful_gpus": float(u[i]),
                "effective": float(columns["effective"][i]),
                "restart_s": float(columns["restart_s"][i]),
            },
        }

    def sweep_part_schema(self) -> dict[str, Any]:
        column = {"type": "array", "items": {"type": "number"}}
        number = {"type": "number", "minimum": 0}
        best = {"index": {"type": "integer", "minimum": 0}, "gpus": number, "useful_gpus": number,
                "effective": number, "restart_s": number}  # fmt: skip
        return {
            "restart_s": {
                **column,
                "description": "with a growing restart, over GPUs: the restart at each point",
            },
            "grown_restart_s": {
                **column,
                "description": "with a growing restart, over the restart measured at N₀: the restart at the job size",
            },
            "useful_gpus": {**column, "description": "with a growing restart, over GPUs: GPUs × effective time"},
            "best": {
                "type": "object",
                "properties": best,
                "required": list(best),
                "description": "the point where the useful GPUs peak (N*)",
            },
        }

    def sweep_cells(self, over: str, values: Any, result: Any, show: dict[str, Any]) -> list[tuple[str, list[str]]]:
        """The table's columns: the restart and the useful GPUs, the peak marked ``best``."""
        parts = self.sweep_parts(over, values, result)
        if not parts:
            return []
        import numpy

        grown_s = parts.get("restart_s", parts.get("grown_restart_s"))
        restart = numpy.broadcast_to(numpy.asarray(grown_s, dtype=float), numpy.shape(values))
        grown_restart = ("R(N)", [show["duration"](float(r)) for r in restart])
        if "useful_gpus" not in parts:
            return [grown_restart]
        useful = numpy.asarray(parts["useful_gpus"], dtype=float)
        best = int(numpy.argmax(numpy.nan_to_num(useful, nan=-1.0)))
        cells = [show["count"](float(u)) + (" best" if i == best else "") for i, u in enumerate(useful)]
        return [grown_restart, ("useful", cells)]

    # ------------------------------------------------------------- the lever

    def running_levers(
        self, config: Any, gpus: float | None, base: float, evaluate: Any, assumed: dict[str, Any] | None
    ) -> list[tuple[str, float, Any, float | None, Any]]:
        """The restart held at its value at N₀ at the job's size (a start-up that does not grow with the job):
        offered where the job's size differs from N₀. Its value is the grown restart it replaces."""
        if not holds(config) or gpus is None:
            return []
        factor = _factor(config, 1.0)
        if not isinstance(factor, float) or factor == 1.0:
            return []
        changed = config.replace(restart_s=config.restart_s / factor)
        return [(LEVER_FIXED, float(evaluate(changed.optimal()).effective), changed, float(config.restart_s), None)]

    def break_even(self, key: str, config: Any, gpus: float | None) -> tuple[str, float, str] | None:
        """The restart a scale-independent start-up may take at the job's size and still pay: the grown restart
        R(N) it replaces (``config`` is the lever's changed configuration, its restart R₀)."""
        if key != LEVER_FIXED or gpus is None or not holds(config):
            return None
        return ("restart_s", float(config.restart_s * _factor(config, 1.0)), "duration")

    def lever_words(self, key: str, changed: Any, value: float | None, show: dict[str, Any]) -> str | None:
        if key != LEVER_FIXED:
            return None
        dur = show["duration"]
        grown_s = "" if value is None else f" instead of {dur(value)}"
        return f"restart held at its measured {dur(float(changed.restart_s))}{grown_s} (scale-independent start-up)"

    # ------------------------------------------------------------- results

    def figure_tables(self, document: dict[str, Any], show: dict[str, Any]) -> list[tuple[str, str, list[Any]]]:
        """The growth's figures (docs/model.md §19) from ``optimize``'s ``scale``."""
        found = document.get("scale")
        if found is None:
            return []
        pct, dur, count = show["fraction"], show["duration"], show["count"]
        at, growth, scaled = count(found[AT]), found[GROWTH], pct(found[SCALED])
        rows = [
            ("restart at job size", dur(found["restart_at_job_s"]), f"{scaled} grows as (N / {at})^{growth:g}"),
            ("best job size N*", count(found["best_gpus"]), "where GPUs × effective time peaks"),
            ("effective at N*", pct(found["effective_at_best"]), f"restart {dur(found['restart_at_best_s'])}"),
            ("useful GPUs at N*", count(found["useful_gpus_at_best"]), f"{count(found['useful_gpus'])} at job size"),
        ]
        return [("Restart growing with job size", "Restart growing with job size (docs/model.md §19)", rows)]


MECHANISM = Growth()
