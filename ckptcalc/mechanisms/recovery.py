"""Recovery that loses (almost) no work: just-in-time recovery and failures with notice (docs/model.md §13).

Two failure classes of the one recursion (docs/architecture.md, "Mechanisms"; MODEL.md §17–§18):

* **just-in-time**: a share p_j of failures is recovered in place from a healthy data-parallel
  replica. It loses the work since the last step boundary and restarts in c_j = r + δ_j (the
  restart plus the save from the replica, δ_j = size / its bandwidth). That is a class landing
  ``in_place``: a tier whose interval is one step and whose stall is zero, under the periodic
  tiers, with share p_j and restart c_j.
* **notice**: a share p_n comes with enough notice to write a checkpoint first (δ), then restarts
  (r) and loses nothing: a class that goes back ``nowhere``, restarting in r + δ.

Both take their shares from the job's own failures: the periodic tiers serve the rest,
1 − p_j − p_n, each its own part of it (a replica that survives a share q of the failures that roll
back serves q·(1 − p_j − p_n) of all of them). The home declares its inputs, checks them, gives the
model its two classes and their first-order term, offers the just-in-time lever and says where it
starts to pay (:func:`break_even_share`), and reports its record (``recovery``).

>>> round(in_place_only(step_s=10.0, jit_restart_s=603.24, mtbf_s=11160.0), 6)
0.946957
>>> first_order_terms(step_s=10.0, jit_share=0.9, jit_restart_s=603.24, notice_share=0.0,
...                   notice_restart_s=603.24, mtbf_s=11160.0)[0] == 0.9 * 10.0 / (2 * 11160.0)
True
"""

from __future__ import annotations

import math
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.mechanisms.base import IN_PLACE, NOWHERE, Cell, FailureClass, Input, Mechanism, Num

JIT = "jit_share"
BANDWIDTH = "jit_bandwidth"
NOTICE = "notice_share"
#: The JSON column of the save's bandwidth, and the flags of the three inputs (a sweep's ``--over``).
BANDWIDTH_COLUMN = "jit_bandwidth_bytes_per_s"
FLAGS = {JIT: "jit-share", BANDWIDTH: "jit-bw", NOTICE: "notice-share"}
_BY_FLAG = {flag: name for name, flag in FLAGS.items()}

#: What the just-in-time lever assumes where a preset's ``[levers]`` does not say: the share recovered
#: in place (the save runs at the storage bandwidth unless a bandwidth is stated).
ASSUMED_SHARE = 0.9
#: The step the lever replays where neither the job nor the preset states one.
ASSUMED_STEP_S = 10.0
#: The scenario attributes the keys of a preset's ``[levers]`` the lever reads set.
LEVER_SHARE, LEVER_BANDWIDTH, LEVER_STEP = "lever_jit_share", "lever_jit_bandwidth", "lever_jit_step_s"

LEVER = "jit_recovery"

#: The levels table's rows of the two classes (they go back less far than any periodic tier).
NOTICE_CLASS = "with notice (goes back nowhere)"
IN_PLACE_CLASS = "in place (the step in progress)"


def in_place_only(*, step_s: float, jit_restart_s: float, mtbf_s: float) -> float:
    """Effective time when every failure is recovered in place: Daly's exact form with τ = t_step,
    δ = 0 and r = c_j, t_step·e^{−c_j/M} / (M·(e^{t_step/M} − 1)). No periodic checkpoint is needed."""
    return step_s * math.exp(-jit_restart_s / mtbf_s) / (mtbf_s * math.expm1(step_s / mtbf_s))


def first_order_terms(
    *, step_s: Num, jit_share: Num, jit_restart_s: Num, notice_share: Num, notice_restart_s: Num, mtbf_s: Num
) -> tuple[Num, Num]:
    """The (rework, restart) first order charges the failures recovered in place or met with notice:
    p_j·t_step/2M and p_j·c_j/M + p_n·(δ + r)/M."""
    rework = jit_share * step_s / (2.0 * mtbf_s)
    restart = (jit_share * jit_restart_s + notice_share * notice_restart_s) / mtbf_s
    return rework, restart


def break_even_share(*, stall_s: float, mtbf_s: float, step_s: float, save_s: float, rest: float) -> float | None:
    """The share p* of failures recovered in place at which just-in-time recovery starts to pay, first
    order (docs/model.md §13.1): its gain over the job without it is
    √(2δ/M)·(√a − √(a − p)) − p·(t_step/2 + δ_j)/M, a = 1 − p_n the share it may take, which is zero at
    p = 0 and at p* = a − (√(2δ/M)/k − √a)², k = (t_step/2 + δ_j)/M. None where it pays at every share
    (the save is cheap: √(2δ/M)/k ≥ 2√a) or at none (√(2δ/M)/k ≤ √a).

    >>> round(break_even_share(stall_s=3.24, mtbf_s=11160.0, step_s=10.0, save_s=200.0, rest=1.0), 6)
    0.902784
    >>> break_even_share(stall_s=3.24, mtbf_s=11160.0, step_s=10.0, save_s=3.24, rest=1.0) is None
    True
    """
    k = (step_s / 2.0 + save_s) / mtbf_s
    root = math.sqrt(rest)
    x = math.sqrt(2.0 * stall_s / mtbf_s) / k - root
    if not 0.0 <= x < root:
        return None
    return rest - x * x


def _or_zero(value: Num | None) -> Num:
    return 0.0 if value is None else value


def save_s(config: Any) -> Num:
    """δ_j: the save from the healthy replica, size / its bandwidth (the storage bandwidth by default)."""
    bandwidth = getattr(config, BANDWIDTH)
    return config.checkpoint_bytes / (config.bandwidth if bandwidth is None else bandwidth)


def jit_restart_s(config: Any) -> Num:
    """c_j = r + δ_j: the restart plus the save from the healthy replica."""
    return config.storage_restart_s + save_s(config)


def notice_restart_s(config: Any) -> Num:
    """The checkpoint written on notice (δ) and the restart (r)."""
    return config.storage_restart_s + config.write_s


def assumed_step(holder: Any) -> float:
    """The step the just-in-time lever assumes where the job states none: a preset's ``[levers]``
    ``jit_step_time`` (``holder``, a scenario or the levers' assumptions), else :data:`ASSUMED_STEP_S`."""
    stated = getattr(holder, LEVER_STEP)
    return ASSUMED_STEP_S if stated is None else float(stated)


def with_shares(config: Any, jit: Num | None, notice: Num | None) -> Any:
    """``config`` (a model ``Config``) with the two shares (None: none)."""
    return config.replace(**{JIT: jit, NOTICE: notice})


class Recovery(Mechanism):
    name = "recovery"
    kind = "failure_class"
    inputs = (
        Input(
            JIT,
            "fraction",
            FLAGS[JIT],
            "recovery",
            JIT,
            "Share of failures recovered in place from a healthy replica (just-in-time; needs --step-time), e.g. 0.9.",
            after="discard",
        ),
        Input(
            BANDWIDTH,
            "rate",
            FLAGS[BANDWIDTH],
            "recovery",
            BANDWIDTH,
            "Bandwidth of the just-in-time save from the healthy replica (default: the storage bandwidth).",
            after=JIT,
        ),
        Input(
            NOTICE,
            "fraction",
            FLAGS[NOTICE],
            "recovery",
            NOTICE,
            "Share of failures that come with notice: a checkpoint is written first and no work is lost.",
            after=BANDWIDTH,
        ),
    )
    levers = (LEVER,)
    break_even_words = ((JIT, "", "of failures in place"),)
    example = (("step_time_s", "10s"), (NOTICE, "0.05"), (JIT, "0.6"), (BANDWIDTH, "1TB/s"))
    limit = ((NOTICE, ""), (JIT, ""), (BANDWIDTH, ""))  # neither share stated: every failure rolls back
    sweeps = (
        (FLAGS[JIT], JIT, "share recovered in place"),
        (FLAGS[BANDWIDTH], BANDWIDTH_COLUMN, "just-in-time save bandwidth"),
        (FLAGS[NOTICE], NOTICE, "share with notice"),
    )
    sweeps_after = "memory-restart"
    class_inputs = (("jit", JIT), ("notice", NOTICE))
    log_kinds = (("in_place", IN_PLACE), ("notice", NOWHERE))  # a log's recovery events (docs/logs.md)
    cells = (Cell("in place (just-in-time)", ("recovery", JIT)), Cell("with notice", ("recovery", NOTICE)))

    # ------------------------------------------------------------- the model (failure classes)

    def classes(self, config: Any) -> tuple[FailureClass, ...]:
        found: list[FailureClass] = []
        jit, notice = getattr(config, JIT), getattr(config, NOTICE)
        if jit is not None:
            found.append(FailureClass("jit", jit, jit_restart_s(config), IN_PLACE, label=IN_PLACE_CLASS))
        if notice is not None:
            found.append(FailureClass("notice", notice, notice_restart_s(config), NOWHERE, label=NOTICE_CLASS))
        return tuple(found)

    def scaled_classes(self, config: Any, factor: Num) -> Any:
        jit, notice = getattr(config, JIT), getattr(config, NOTICE)
        return with_shares(config, None if jit is None else jit * factor, None if notice is None else notice * factor)

    def first_order(self, config: Any, mtbf_s: Num) -> tuple[Num, Num] | None:
        jit, notice = getattr(config, JIT), getattr(config, NOTICE)
        if jit is None and notice is None:
            return None
        return first_order_terms(
            step_s=config.step if jit is not None else 0.0,
            jit_share=_or_zero(jit),
            jit_restart_s=jit_restart_s(config),
            notice_share=_or_zero(notice),
            notice_restart_s=notice_restart_s(config),
            mtbf_s=mtbf_s,
        )

    def without(self, config: Any) -> Any:
        return with_shares(config, None, None).replace(**{BANDWIDTH: None, "step_s": None})

    # ------------------------------------------------------------- levers

    def assumed_levers(self, config: Any, assume: Any) -> list[tuple[str, Any]]:
        """Just-in-time recovery where the job has none (the share assumed, at most what notice leaves);
        where it has it, or notice, the job without each, so that its worth shows (docs/model.md §13).
        None under Weibull failures, where the classes have no exact model."""
        if config.shape is not None:
            return []
        found: list[tuple[str, Any]] = []
        notice = getattr(config, NOTICE)
        if getattr(config, JIT) is not None:
            found.append(("without_jit", config.replace(**{JIT: None, BANDWIDTH: None, "step_s": None})))
        elif assume is not None:
            assumed = getattr(assume, LEVER_SHARE)
            share = min(ASSUMED_SHARE if assumed is None else assumed, 1.0 - float(notice or 0.0))
            step = assume.job_step_s if assume.job_step_s is not None else assumed_step(assume)
            changed = config.replace(**{JIT: share, BANDWIDTH: getattr(assume, LEVER_BANDWIDTH), "step_s": step})
            found.append((LEVER, changed))
        if notice is not None:
            found.append(("without_notice", config.replace(**{NOTICE: None})))
        return found

    def assumed_lever_name(self, key: str, changed: Any, assume: Any, words: Any) -> str | None:
        if key == LEVER:
            bandwidth = getattr(changed, BANDWIDTH)
            save = "storage bandwidth" if bandwidth is None else words.rate(bandwidth)
            step = "" if assume.job_step_s is not None else f", {words.duration(changed.step_s)} steps assumed"
            return (
                f"just-in-time recovery ({words.pct(getattr(changed, JIT))} of failures in place, save at {save}{step})"
            )
        if key == "without_jit":
            return "without just-in-time recovery (every such failure rolls back)"
        if key == "without_notice":
            return "without notice (no checkpoint before those failures)"
        return None

    def break_even(self, key: str, config: Any, gpus: float | None) -> tuple[str, float, str] | None:
        """The share at which the just-in-time lever (``config`` the job with it) starts to pay, first order
        on the storage tier (:func:`break_even_share`); None where it pays at every share or at none."""
        if key != LEVER or config.shape is not None or not _plain(config):
            return None
        storage = config.levels()[-1]
        found = break_even_share(
            stall_s=float(storage.stall_s),
            mtbf_s=float(config.mtbf_s),
            step_s=float(config.step),
            save_s=float(save_s(config)),
            rest=1.0 - float(_or_zero(getattr(config, NOTICE))),
        )
        return None if found is None else (JIT, found, "fraction")

    def lever_presets(self) -> tuple[tuple[str, str, str], ...]:
        return (
            (JIT, "fraction", LEVER_SHARE),
            (BANDWIDTH, "rate", LEVER_BANDWIDTH),
            ("jit_step_time", "duration", LEVER_STEP),
        )

    # ------------------------------------------------------------- inputs

    def check(self, where: Any, name: str, value: float) -> bool:
        if name not in (JIT, NOTICE):
            return False  # the save's bandwidth: positive, as the core checks every rate
        if not (math.isfinite(value) and 0 <= value <= 1):
            raise InputError(f"must be a share in [0, 1], got {value:g}", where=where(name))
        return True

    def resolve(self, scenario: Any, config: Any) -> Any:
        """In-place recovery replays at most a step, so it needs the step time; the two shares cannot
        exceed all failures (docs/model.md §13)."""
        jit, notice, bandwidth = getattr(scenario, JIT), getattr(scenario, NOTICE), getattr(scenario, BANDWIDTH)
        if jit is None and notice is None:
            if bandwidth is not None:
                raise InputError(f"needs {{{JIT}}} (just-in-time recovery)", where=scenario.where(BANDWIDTH))
            return config
        if jit is not None and scenario.step_time_s is None:
            raise InputError(
                "just-in-time recovery replays the step in progress: it needs {step_time}",
                where=scenario.where(JIT),
            )
        if jit is not None and notice is not None and jit + notice > 1.0 + 1e-12:
            raise InputError(
                f"{jit:g} of failures in place and {notice:g} with notice make {jit + notice:.10g},"
                " more than all of them",
                where=scenario.where(NOTICE),
            )
        if bandwidth is not None and jit is None:
            raise InputError(f"needs {{{JIT}}} (just-in-time recovery)", where=scenario.where(BANDWIDTH))
        return with_shares(config, jit, notice).replace(
            step_s=scenario.step_time_s if jit is not None else None, **{BANDWIDTH: bandwidth}
        )

    def what_if(self, name: str, scenario: Any, base: Any) -> Any:
        if name == JIT and scenario.step_time_s is None:
            # As the just-in-time lever does: the step it replays is assumed where the job states none.
            return scenario.replace(step_time_s=assumed_step(base))
        return scenario

    def sweep_start(self, name: str, config: Any) -> float | None:
        if name == BANDWIDTH and getattr(config, JIT) is not None:
            return float(config.bandwidth)  # the save runs at the storage bandwidth unless stated
        return None

    def sweep_range(self, over: str, result: Any) -> tuple[float, float] | None:
        """A swept share: up to what the other share leaves, short of it (there no periodic checkpoint
        is needed)."""
        name = _BY_FLAG.get(over)
        if name not in (JIT, NOTICE):
            return None
        high = 0.99 * (1.0 - _other_share(name, result.config))
        return min(0.05, high / 2.0), high

    def check_sweep(self, over: str, config: Any, low: float, high: float, where: str) -> bool:
        """A swept share lies in [0, 1) and leaves, with the other, some failures to roll back: where none
        does no periodic checkpoint is needed (``optimize`` says so); the save's bandwidth needs in-place
        recovery."""
        name = _BY_FLAG.get(over)
        if name == BANDWIDTH and getattr(config, JIT) is None:
            raise InputError(f"sweeping {over} needs just-in-time recovery ({{{JIT}}})", where="over")
        if name not in (JIT, NOTICE):
            return False
        other = _other_share(name, config)
        if low < 0 or high + other >= 1.0:
            raise InputError(
                f"{over} must lie in [0, {1.0 - other:g}) (the other share is {other:g}): where every failure"
                " is recovered in place or met with notice no periodic checkpoint is needed, as optimize says",
                where="stop" if low >= 0 else "start",
            )
        return True

    def varied(self, name: str, config: Any, values: Any, scenario: Any) -> Any:
        """A swept in-place share replays the job's step, which it needs."""
        if name != JIT:
            return None
        if scenario.step_time_s is None:
            raise InputError(f"sweeping {FLAGS[JIT]} needs the step time ({{step_time}})", where="over")
        return config.replace(**{JIT: values}, step_s=scenario.step_time_s)

    # ------------------------------------------------------------- results

    def echo(self, config: Any) -> dict[str, float | None]:
        jit, bandwidth = getattr(config, JIT), getattr(config, BANDWIDTH)
        return {
            JIT: _f(jit),
            BANDWIDTH_COLUMN: _f(bandwidth if bandwidth is not None or jit is None else config.bandwidth),
            NOTICE: _f(getattr(config, NOTICE)),
        }

    def input_schema(self) -> dict[str, Any]:
        maybe = {"type": ["number", "null"]}
        return {
            JIT: {**maybe, "description": "share of failures recovered in place (just-in-time)"},
            BANDWIDTH_COLUMN: {**maybe, "description": "bandwidth of the just-in-time save"},
            NOTICE: {**maybe, "description": "share of failures that come with notice"},
        }

    def class_rows(self, config: Any, rate: Any, duration: Any, pct: Any) -> tuple[tuple[str, str, str], ...]:
        rows: list[tuple[str, str, str]] = []
        jit, notice = getattr(config, JIT), getattr(config, NOTICE)
        if jit is not None:
            note = (
                f"of failures: replay the step in progress; save from a healthy replica"
                f" {duration(save_s(config))}, restart {duration(jit_restart_s(config))}"
            )
            rows.append(("in place (just-in-time)", pct(float(jit or 0.0)), note))
        if notice is not None:
            note = f"of failures: checkpoint first, lose nothing; restart {duration(notice_restart_s(config))}"
            rows.append(("with notice", pct(float(notice)), note))
        return tuple(rows)

    def record(self, config: Any, needed: bool) -> dict[str, Any] | None:
        """Just-in-time recovery and failures with notice (docs/model.md §13); None when neither is configured."""
        jit, notice = getattr(config, JIT), getattr(config, NOTICE)
        if jit is None and notice is None:
            return None
        return {
            JIT: float(jit or 0.0),
            NOTICE: float(notice or 0.0),
            "periodic_share": float(config.periodic_share),
            "step_time_s": _f(config.step_s),
            "jit_save_s": float(save_s(config)) if jit is not None else None,
            "jit_restart_s": float(jit_restart_s(config)) if jit is not None else None,
            "notice_restart_s": float(notice_restart_s(config)) if notice is not None else None,
            "periodic_needed": needed,
        }

    def record_schema(self) -> tuple[str, dict[str, Any]] | None:
        fraction = {"type": "number", "minimum": 0, "maximum": 1}
        seconds = {"type": ["number", "null"], "minimum": 0, "description": "seconds"}
        return (
            "recovery",
            {
                "properties": {
                    JIT: fraction,
                    NOTICE: fraction,
                    "periodic_share": {
                        **fraction,
                        "description": "share of failures that roll back, 1 − jit − notice",
                    },
                    "step_time_s": seconds,
                    "jit_save_s": {**seconds, "description": "the save from the healthy replica, size / its bandwidth"},
                    "jit_restart_s": {**seconds, "description": "restart of an in-place recovery, c_j = r + save"},
                    "notice_restart_s": {
                        **seconds,
                        "description": "checkpoint written on notice plus the restart",
                    },
                    "periodic_needed": {"type": "boolean"},
                },
                "description": "just-in-time recovery and failures with notice (docs/model.md §13);"
                " null when neither is configured",
            },
        )

    def input_report_lines(self, inputs: dict[str, Any], rate: Any) -> tuple[str, ...]:
        """``90 % in place (save at 2.00 TB/s), 5 % with notice``."""
        parts = []
        jit, notice = inputs[JIT], inputs[NOTICE]
        if jit is not None:
            parts.append(f"{jit * 100:.3g} % in place (save at {rate(inputs[BANDWIDTH_COLUMN] or 0.0)})")
        if notice is not None:
            parts.append(f"{notice * 100:.3g} % with notice (checkpoint first)")
        return (", ".join(parts),) if parts else ()


def _f(value: Any) -> float | None:
    return None if value is None else float(value)


def _plain(config: Any) -> bool:
    """Whether ``config``'s numbers are plain floats (a break-even is worked out for one job)."""
    return all(isinstance(v, float | int) for v in (config.mtbf_s, config.checkpoint_bytes, config.bandwidth))


def _other_share(name: str, config: Any) -> float:
    """The share a sweep over the other one holds."""
    return float(getattr(config, NOTICE if name == JIT else JIT) or 0.0)


MECHANISM = Recovery()
