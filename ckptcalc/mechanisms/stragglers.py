"""Stragglers (fail-slow), first order (docs/model.md §21): a running share, with an event-by-event check.

A node that slows down instead of failing slows every step of a synchronous job. Slow periods begin at
a rate 1/M_s (wall time); each slows every step by a factor 1 + f for a time X ~ Exp(mean D), and is
found t_d after it began. Two policies:

* tolerate: the job runs slow until the period ends, losing X·f/(1 + f) of wall time, on average
  D·f/(1 + f);
* restart at detection: the slow node is swapped as a failed one would be, at the top tier's restart R and
  half its interval τ of rework, when the period is still on at t_d: min(X, t_d)·f/(1 + f) +
  1[X > t_d]·(R + τ/2), on average f/(1 + f)·D·(1 − e^{−t_d/D}) + e^{−t_d/D}·(R + τ/2).

Restarting pays when D > (R + τ/2)(1 + f)/f (after detection the period lasts D more on average,
whatever it has lasted). The job loses a share (mean loss per period)/M_s of its time, the better policy
applied: its effective time is the periodic model's times the running share 1 − that share, an
approximation (periods that overlap are counted twice, and the interval is not re-optimised for them).

This home declares the mechanism once: its inputs (``--slow-mtbf``, ``--slow-factor``,
``--slow-duration``, ``--slow-detect``; the preset table ``[stragglers]``), its running share of every
result, its levers and their break-even, its part of every document, what ``plan`` stretches its runs by,
and the slow periods the one event engine steps beside the job's failures (:class:`Periods`).

>>> round(tolerated(0.1, 7200.0), 4), round(restarted(0.1, 7200.0, 600.0, 600.0, 266.762), 4)
(654.5455, 727.0777)
>>> round(break_even_duration(0.1, 600.0, 266.762), 3)
8067.191
"""

from __future__ import annotations

import math
import random
import sys
from dataclasses import dataclass
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.mechanisms.base import LARGEST, SMALLEST, Cell, Input, Mechanism
from ckptcalc.model.arrays import maximum, minimum, scalar
from ckptcalc.records import Record

Num = Any

SLOW_MTBF = "slow_mtbf_s"
FACTOR = "slow_factor"
DURATION = "slow_duration_s"
DETECT = "slow_detect_s"
OWN = (SLOW_MTBF, FACTOR, DURATION, DETECT)

TOLERATE, RESTART = "tolerate", "restart"

#: The levers, where the job has slow periods: the policy it does not follow, and detection in half the time.
LEVER_REPLACE, LEVER_TOLERATE, LEVER_DETECT = "slow_replace", "slow_tolerate", "slow_detect_half"


# ------------------------------------------------------------------ the arithmetic (docs/model.md §21)


def tolerated(factor: Num, duration_s: Num) -> Num:
    """The mean wall time a tolerated slow period loses: D·f/(1 + f)."""
    return duration_s * factor / (1.0 + factor)


def _exp(x: Num) -> Num:
    if scalar(x):
        return math.exp(x)
    import numpy

    return numpy.exp(x)


def restarted(factor: Num, duration_s: Num, detect_s: Num, restart_s: Num, interval_s: Num) -> Num:
    """The mean wall time a slow period loses with a restart at detection:
    f/(1 + f)·D·(1 − e^{−t_d/D}) + e^{−t_d/D}·(R + τ/2)."""
    still = _exp(-detect_s / duration_s)
    return factor / (1.0 + factor) * duration_s * (1.0 - still) + still * (restart_s + interval_s / 2.0)


def break_even_duration(factor: Num, restart_s: Num, interval_s: Num) -> Num:
    """The mean duration D above which restarting at detection loses less: (R + τ/2)(1 + f)/f."""
    return (restart_s + interval_s / 2.0) * (1.0 + factor) / factor


class Slow(Record):
    """The slow periods' figures at the top interval ``interval_s`` and restart ``restart_s`` (seconds; floats,
    or arrays in a sweep): each policy's mean loss per period, the one applied (``restarts``: True where a
    restart at detection loses less), its loss per period and shares of time (slowed training, restarts and
    their rework), the running share 1 − their sum, and the break-even mean duration."""

    slow_mtbf_s: Num
    factor: Num
    duration_s: Num
    detect_s: Num
    restart_s: Num
    interval_s: Num
    tolerate_s: Num
    restart_loss_s: Num
    restarts: Num
    loss_s: Num
    slowed: Num
    restart: Num
    rework: Num
    running: Num
    break_even_s: Num
    lost: Num = 0.0  # the periods' share of the time at first order, before it is held to the whole time
    on: Num = 0.0  # the periods on at once on average, at first order (D run slow over M_s)


def figures(config: Any, interval_s: Num) -> Slow:
    """The slow periods of ``config`` with the top tier's interval ``interval_s`` (docs/model.md §21)."""
    mtbf, f, d, td = (getattr(config, name) for name in OWN)
    r = config.storage_restart_s
    tolerate = tolerated(f, d)
    # Without a periodic checkpoint (every failure recovered in place or met with notice: an infinite top
    # interval) there is nothing to restart from: only tolerating is open.
    half = interval_s / 2.0
    if scalar(tolerate, interval_s, td, d, r, mtbf):
        restart: Num = restarted(f, d, td, r, interval_s) if math.isfinite(interval_s) else math.inf
        restarts: Num = restart < tolerate
        still: Num = math.exp(-td / d) if restarts else 0.0
        run_slow: Num = -math.expm1(-td / d) if restarts else 1.0  # 1 − still, without cancelling at td ≪ D
        swap, rework_s = (r, half) if restarts else (0.0, 0.0)
    else:
        import numpy

        with numpy.errstate(invalid="ignore"):
            open_ = numpy.isfinite(interval_s)
            restart = numpy.where(open_, restarted(f, d, td, r, interval_s), numpy.inf)
            restarts = restart < tolerate
            still = numpy.where(restarts, numpy.exp(-td / d), 0.0)
            run_slow = numpy.where(restarts, -numpy.expm1(-td / d), 1.0)
            swap, rework_s = numpy.where(restarts, r, 0.0), numpy.where(restarts, half, 0.0)
    slowed_s = f / (1.0 + f) * d * run_slow  # D·f/(1 + f) where tolerated
    slowed, restart_share, rework = slowed_s / mtbf, still * swap / mtbf, still * rework_s / mtbf
    lost = slowed + restart_share + rework  # first order: the periods' losses add up
    # Overlapping periods (more than one on at once, which this order does not describe) slow the job no more
    # than one does: running slow all the time loses f/(1 + f). Where the losses still pass the whole time
    # they are held to it: the job keeps nothing, and no share is negative.
    always = f / (1.0 + f)
    slowed = minimum(slowed, always)
    scale = 1.0 / maximum(slowed + restart_share + rework, 1.0)
    slowed, restart_share, rework = slowed * scale, restart_share * scale, rework * scale
    return Slow(
        slow_mtbf_s=mtbf, factor=f, duration_s=d, detect_s=td, restart_s=r, interval_s=interval_s,
        tolerate_s=tolerate, restart_loss_s=restart, restarts=restarts,
        loss_s=slowed_s + still * (swap + rework_s),
        slowed=slowed, restart=restart_share, rework=rework, running=1.0 - (slowed + restart_share + rework),
        break_even_s=break_even_duration(f, r, interval_s), lost=lost, on=d * run_slow / mtbf,
    )  # fmt: skip


#: The periods on at once, or their share of the time, at first order, past which the model is said to be
#: rough: they overlap (a period that begins while another is on, or while its restart runs, costs less than
#: its own), which the sum of docs/model.md §21.3 does not describe.
OVERLAP = 0.25


def at_work(config: Any) -> bool:
    """Whether ``config`` has slow periods."""
    return getattr(config, SLOW_MTBF, None) is not None


# ------------------------------------------------------------------ in the one event engine (docs/model.md §21.6)


#: The kind of caveat a job gets whose slow periods are on more than :data:`OVERLAP` of the time.
OVERLAPPING = "slow_overlap"

#: The most slow periods a simulated run steps (about 40 s of the engine's time).
MOST_PERIODS = 500_000


@dataclass(frozen=True)
class Periods:
    """Slow periods as the one event engine steps them (docs/model.md §21.6): they begin every ``between_s``
    of wall time on average, whatever the job does; each lasts Exp(``duration_s``); while one or more is on,
    the job runs at 1/(1 + ``factor``) of its pace (its work, its stalls and its restarts alike). With
    ``replace`` (the restart policy), a period still on ``detect_s`` after it began ends in a restart from
    the top tier's newest durable checkpoint, as a failure going back to storage would (the slow node
    swapped).

    >>> process = Periods(86400.0, 0.1, 7200.0, 600.0, replace=True).process(random.Random(1))
    >>> process.pace, process.next_at > 0.0
    (1.0, True)
    >>> process.event(), round(process.pace, 6), process.begun
    (False, 0.909091, 1)
    """

    between_s: float
    factor: float
    duration_s: float
    detect_s: float
    replace: bool

    def process(self, rng: random.Random) -> Process:
        """The slow periods of one run, their times drawn from ``rng``."""
        return Process(self, rng)

    def check_count(self, elapsed_s: float) -> None:
        """Refuse a run of about ``elapsed_s`` of wall time that would begin more than :data:`MOST_PERIODS`
        periods: the engine steps each one, so a period every second over months of failures would run for
        hours. Named by the input that sets their rate.

        >>> Periods(86400.0, 0.1, 7200.0, 600.0, replace=True).check_count(1e5 * 11160.0)
        >>> try:
        ...     Periods(1.0, 0.1, 7200.0, 600.0, replace=True).check_count(200 * 11160.0)
        ... except InputError as error:
        ...     print(error.where, "|", error.template[:52])
        slow_mtbf | a slow period every 1 s makes about 2.23e+06 of them
        """
        expected = elapsed_s / self.between_s
        if expected > MOST_PERIODS:
            raise InputError(
                f"a slow period every {self.between_s:.3g} s makes about {expected:.3g} of them in the run, and"
                f" simulate steps at most {MOST_PERIODS:.0e}: raise it or lower {{cycles}}",
                where="slow_mtbf",
            )


class Process:
    """The slow periods of one run: ``pace``, the job's pace now (1/(1 + f) while a period is on, 1
    otherwise); ``next_at``, the elapsed time of the next onset, end or detection, which :meth:`event`
    steps; ``begun`` and ``detected`` count the periods and the restarts at detection."""

    def __init__(self, periods: Periods, rng: random.Random) -> None:
        self.periods = periods
        self._expo = rng.expovariate
        self._slow = 1.0 / (1.0 + periods.factor)
        self._onset = self._expo(1.0 / periods.between_s)
        self._on: list[tuple[float, float]] = []  # (end, detection) of every period on
        self.pace = 1.0
        self.next_at = self._onset
        self.begun = self.detected = 0

    def event(self) -> bool:
        """Step the event at :attr:`next_at`; True when it is a detection that ends in a restart."""
        p, now = self.periods, self.next_at
        restart = False
        if now == self._onset:
            self.begun += 1
            if self.begun > MOST_PERIODS:  # the run is longer than foreseen (waits for a spare node, say)
                raise InputError(
                    f"the run began more than {MOST_PERIODS:.0e} slow periods, one every {p.between_s:.3g} s, and"
                    " simulate steps no more: raise it or lower {cycles}",
                    where="slow_mtbf",
                )
            length = self._expo(1.0 / p.duration_s)
            found = now + p.detect_s if p.replace and p.detect_s < length else math.inf
            self._on.append((now + length, found))
            self._onset = now + self._expo(1.0 / p.between_s)
        else:
            at = next(i for i, (end, found) in enumerate(self._on) if now in (end, found))
            restart = self._on.pop(at)[1] == now  # found before it ended: the slow node is swapped
            self.detected += restart
        self.pace = self._slow if self._on else 1.0
        self.next_at = min((self._onset, *(min(pair) for pair in self._on)))
        return restart


# ------------------------------------------------------------------ the mechanism


def _core() -> Any:
    """The model's evaluation module (loaded: a configuration exists only once it is)."""
    return sys.modules["ckptcalc.model.evaluation"]


class Stragglers(Mechanism):
    name = "stragglers"
    kind = "running_share"
    inputs = (
        Input(
            SLOW_MTBF,
            "duration",
            "slow-mtbf",
            "stragglers",
            "slow_mtbf",
            "Mean time between slow periods (a node that slows every step instead of failing), e.g. 1d.",
            after="",
            before="work_s",
        ),
        Input(
            FACTOR,
            "number",
            "slow-factor",
            "stragglers",
            "slow_factor",
            "How much a slow period slows every step: 0.1 makes each step 1.1 times as long.",
            after=SLOW_MTBF,
        ),
        Input(
            DURATION,
            "duration",
            "slow-duration",
            "stragglers",
            "slow_duration",
            "Mean duration of a slow period left alone (exponential), e.g. 2h.",
            after=FACTOR,
        ),
        Input(
            DETECT,
            "duration",
            "slow-detect",
            "stragglers",
            "slow_detect",
            "Time from a slow period's start to its detection, e.g. 10min.",
            after=DURATION,
        ),
    )
    levers_with = (LEVER_REPLACE, LEVER_TOLERATE, LEVER_DETECT)
    break_even_words = ((DURATION, "", "mean slow period"),)
    panels = (("stragglers", "Stragglers"),)
    example = ((SLOW_MTBF, "6h"), (FACTOR, "0.1"), (DURATION, "2h"), (DETECT, "10min"))
    limit = ((SLOW_MTBF, ""), (FACTOR, ""), (DURATION, ""), (DETECT, ""))  # no slow period
    cells = (Cell("lost to stragglers", ("stragglers", "share")),)
    engine_switch = (SLOW_MTBF, "slow_mtbf")
    # The one event engine steps them with every mechanism it runs (docs/model.md §21.6), but for these: an
    # event log has no slow periods to show, and the simulated search runs the vectorised stepper.
    engine_refuses = ("events", "search")

    # ------------------------------------------------------------- inputs

    def check(self, where: Any, name: str, value: float) -> bool:
        """The detection may be 0 (found at once); the others are positive, as the core checks them."""
        if name != DETECT:
            return False
        if not (math.isfinite(value) and (value == 0 or SMALLEST <= value <= LARGEST)):
            raise InputError(f"must be 0 or a duration from {SMALLEST:g} to {LARGEST:g} s, got {value:g} s",
                             where=where(name))  # fmt: skip
        return True

    def resolve(self, scenario: Any, config: Any) -> Any:
        """Slow periods need all four inputs; stated without their rate, the others are refused."""
        given = {name: getattr(scenario, name) for name in OWN}
        if given[SLOW_MTBF] is None:
            stray = next((name for name in OWN if given[name] is not None), None)
            if stray is not None:
                raise InputError("needs the rate of slow periods ({slow_mtbf})", where=scenario.where(stray))
            return config
        missing = [name for name in OWN if given[name] is None]
        if missing:
            raise InputError(
                "slow periods need {slow_factor}, {slow_duration} and {slow_detect}",
                where=scenario.where_missing(missing[0], SLOW_MTBF),
            )
        return config.replace(**given)

    def without(self, config: Any) -> Any:
        return config.replace(**dict.fromkeys(OWN))

    # ------------------------------------------------------------- the model (a running share)

    def approximate(self, config: Any) -> bool:
        """First order: the share lost to slow periods is an approximation (docs/model.md §21.3)."""
        return at_work(config)

    def averaged_in_plan(self, config: Any) -> bool:
        """``plan``'s whole runs step fail-stop failures; the slow periods stretch the work they must do."""
        return at_work(config)

    def notes(self, result: Any) -> list[str]:
        if not at_work(result.config):
            return []
        return ["slow periods (stragglers) are not stepped in the whole runs: their average loss stretches the work"]

    def summarized(self, config: Any, result: Any, kept: Any, caveat: Any) -> Any:
        """``result`` with the slow periods' loss: every share of the periodic model times the running share,
        the slowed training and the restarts at detection joining the restart term, their rework the rework
        term (docs/model.md §21.3); the schedule is the periodic model's."""
        if not at_work(config):
            return result
        found = figures(config, result.interval_s)
        best = figures(config, result.optimal_interval_s)
        run = found.running
        write = result.write * run
        rework = result.rework * run + found.rework
        restart = result.restart * run + found.slowed + found.restart
        caveats = result.caveats
        if scalar(found.lost, found.on) and max(found.lost, found.on) > OVERLAP:
            caveats = (*caveats, caveat(OVERLAPPING, None, float(found.lost), below=repr(float(found.on))))
        return result.replace(
            effective=result.effective * run,
            optimal_effective=result.optimal_effective * best.running,
            write=write,
            rework=rework,
            restart=restart,
            dominant=_core().dominant(write, rework, restart),
            caveats=caveats,
        )

    def caveat_words(self, kind: str, value: float | None, below: str | None, words: Any) -> str | None:
        if kind != OVERLAPPING:
            return None
        share, on = value or 0.0, float(below or 0.0)
        held = [words for words, past in (("running slow held to all of the time", on > 1.0),
                                          ("the losses held to the whole time", share > 1.0)) if past]  # fmt: skip
        return (
            f"slow periods overlap: {on:.3g} on at once on average, their losses {100.0 * share:.3g} % of the time"
            f" at first order, which overstates them{' (' + ', '.join(held) + ')' if held else ''}; simulate steps"
            " them (docs/model.md §21.3)"
        )

    def model_label(self, config: Any) -> str | None:
        if not at_work(config):
            return None
        weibull = "" if config.shape is None else f", Weibull failures k = {float(config.shape):.3g}"
        return f"exact model{weibull}; stragglers first order, approximate"

    # ------------------------------------------------------------- levers

    def running_levers(
        self, config: Any, gpus: float | None, base: float, evaluate: Any, assumed: dict[str, Any] | None
    ) -> list[tuple[str, float, Any, float | None, float]]:
        """Where the job has slow periods: the other policy (its effective time at the same optimum), and the
        slow periods found in half the time (docs/model.md §21.5)."""
        if not at_work(config) or not scalar(*(getattr(config, name) for name in OWN), config.mtbf_s):
            return []
        result = evaluate(config.optimal())
        found = figures(config, result.optimal_interval_s)
        periodic = self._periodic(result, found)
        mtbf = float(getattr(config, SLOW_MTBF))
        if not math.isfinite(float(found.restart_loss_s)):
            return []  # no periodic checkpoint to restart from: tolerating is the one policy
        if found.restarts:
            other = float(found.tolerate_s)
            levers = [(LEVER_TOLERATE, periodic * max(0.0, 1.0 - other / mtbf), config, None, None)]
        else:
            other = float(found.restart_loss_s)
            levers = [(LEVER_REPLACE, periodic * max(0.0, 1.0 - other / mtbf), config, None, None)]
        faster = config.replace(**{DETECT: float(getattr(config, DETECT)) / 2.0})
        quicker = float(evaluate(faster.optimal()).effective)
        if quicker > base:  # it helps a job that restarts at detection, or would once it finds them sooner
            levers.append((LEVER_DETECT, quicker, faster, None, None))
        return levers  # type: ignore[return-value]

    def break_even(self, key: str, config: Any, gpus: float | None) -> tuple[str, float, str] | None:
        """The mean slow period above which a restart at detection loses less than tolerating it."""
        if key not in (LEVER_REPLACE, LEVER_TOLERATE) or not at_work(config):
            return None
        interval = _core().evaluate(config.optimal()).optimal_interval_s
        even = float(figures(config, interval).break_even_s)
        return (DURATION, even, "duration") if math.isfinite(even) else None

    def lever_words(self, key: str, changed: Any, value: float | None, show: dict[str, Any]) -> str | None:
        if key == LEVER_REPLACE:
            return "replace slow nodes at detection (a restart)"
        if key == LEVER_TOLERATE:
            return "tolerate slow nodes (no restart at detection)"
        if key == LEVER_DETECT:
            return f"detect slow nodes faster ({show['duration'](float(getattr(changed, DETECT)))})"
        return None

    # ------------------------------------------------------------- results

    def class_part(self, job: Any, result: Any) -> dict[str, Any]:
        """Its part of ``optimize``'s and ``plan``'s documents: the slow periods' figures (None without)."""
        return {self.name: self._part(result)}

    def _part(self, result: Any) -> dict[str, Any] | None:
        config = result.config
        if not at_work(config) or not scalar(result.interval_s, *(getattr(config, name) for name in OWN)):
            return None
        found = figures(config, float(result.interval_s))
        return {
            SLOW_MTBF: float(found.slow_mtbf_s),
            FACTOR: float(found.factor),
            DURATION: float(found.duration_s),
            DETECT: float(found.detect_s),
            "restart_s": float(found.restart_s),
            "interval_s": _finite(found.interval_s),
            "tolerate_loss_s": float(found.tolerate_s),
            "restart_loss_s": _finite(found.restart_loss_s),
            "policy": RESTART if found.restarts else TOLERATE,
            "loss_per_period_s": float(found.loss_s),
            "break_even_duration_s": _finite(found.break_even_s),
            "share": float(found.slowed + found.restart + found.rework),
            "running_share": float(found.running),
            "periodic_effective": self._periodic(result, found),
        }

    def _periodic(self, result: Any, found: Slow) -> float:
        """The effective time of the job without its slow periods at the same schedule (the periodic model's:
        the periods do not move it, docs/model.md §21.3)."""
        running = float(found.running)
        if running > 0.0:
            return float(result.effective) / running
        return float(_core().evaluate(self.without(result.config)).effective)

    def class_schema(self) -> dict[str, Any]:
        seconds = {"type": "number", "minimum": 0}
        share = {"type": "number", "minimum": 0, "maximum": 1}
        found: dict[str, Any] = {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        SLOW_MTBF: {**seconds, "description": "mean time between slow periods, seconds"},
                        FACTOR: {**seconds, "description": "each step takes 1 + this while a period is on"},
                        DURATION: {**seconds, "description": "mean duration of a slow period left alone"},
                        DETECT: {**seconds, "description": "time from a period's start to its detection"},
                        "restart_s": {**seconds, "description": "the restart at detection (the top tier's)"},
                        "interval_s": {
                            "type": ["number", "null"],
                            "minimum": 0,
                            "description": "the top interval run: τ/2 of rework; null without a periodic checkpoint",
                        },
                        "tolerate_loss_s": {**seconds, "description": "mean loss per period tolerated: D·f/(1 + f)"},
                        "restart_loss_s": {
                            "type": ["number", "null"],
                            "minimum": 0,
                            "description": "mean loss per period restarting at detection; null without a periodic"
                            " checkpoint to restart from",
                        },
                        "policy": {"enum": [TOLERATE, RESTART], "description": "the policy that loses less (applied)"},
                        "loss_per_period_s": {**seconds, "description": "mean loss per period of that policy"},
                        "break_even_duration_s": {
                            "type": ["number", "null"],
                            "minimum": 0,
                            "description": "mean duration above which restarting pays: (R + τ/2)(1 + f)/f; null"
                            " without a periodic checkpoint",
                        },
                        "share": {**share, "description": "share of time lost: loss per period / slow MTBF"},
                        "running_share": {**share, "description": "1 − share: the factor on the effective time"},
                        "periodic_effective": {**share, "description": "effective time without slow periods"},
                    },
                    "description": "stragglers (fail-slow), first order: the effective time above counts them",
                },
            ]
        }
        part: dict[str, Any] = found["oneOf"][1]
        part["required"] = list(part["properties"])
        return {self.name: found}

    def input_rows(self, job: Any, show: dict[str, Any]) -> list[tuple[str, str, str]]:
        c = job.config
        if not at_work(c):
            return []
        dur = show["duration"]
        return [
            ("slow MTBF", dur(float(getattr(c, SLOW_MTBF))), "a node slows every step instead of failing"),
            ("slow factor", f"{float(getattr(c, FACTOR)):g}", "each step takes 1 + this while slow"),
            ("slow duration", dur(float(getattr(c, DURATION))), "mean, when left alone"),
            ("slow detection", dur(float(getattr(c, DETECT))), "from a period's start"),
        ]

    def part_title(self, key: str, caption: bool = False) -> str | None:
        if key != self.name:
            return None
        return "Stragglers (fail-slow)" if caption else "Stragglers (effective above counts them; first order)"

    def part_rows(self, key: str, found: dict[str, Any], words: Any) -> list[tuple[str, str, str]] | None:
        """The slow periods' figures (docs/model.md §21): each policy's loss, the break-even, the share lost."""
        if key != self.name:
            return None
        pct, dur = words.SHOW["fraction"], words.SHOW["duration"]
        chosen = found["policy"]
        rows = [("tolerate", dur(found["tolerate_loss_s"]), "mean loss per slow period" + _applied(chosen == TOLERATE))]
        if found["restart_loss_s"] is None:
            rows.append(("restart at detection", "-", "no periodic checkpoint to restart from"))
        else:
            rows += [
                (
                    "restart at detection",
                    dur(found["restart_loss_s"]),
                    f"restart {dur(found['restart_s'])}, rework τ/2" + _applied(chosen == RESTART),
                ),
                ("break-even duration", dur(found["break_even_duration_s"]), "restarting pays above this mean period"),
            ]
        return [
            *rows,
            ("lost to stragglers", pct(found["share"]), "loss per period / slow MTBF (first order)"),
            ("effective, no stragglers", pct(found["periodic_effective"]), "the periodic model alone"),
        ]

    def report_lines(self, document: dict[str, Any], form: Any) -> list[str]:
        found = document.get(self.name)
        if found is None:
            return []
        policy = "restarting at detection" if found["policy"] == RESTART else "tolerating them"
        even = found["break_even_duration_s"]
        pays = "" if even is None else f"; restarting pays above a mean period of {form('duration', even)}"
        return [
            f"Stragglers: slow periods cost {form('fraction', found['share'])} of the time, {policy}"
            f" ({form('duration', found['loss_per_period_s'])} a period{pays}; first order)."
        ]

    # ------------------------------------------------------------- the simulation

    def present(self, config: Any) -> bool:
        return at_work(config)

    def engine_slow_periods(self, config: Any, schedule: Any) -> Periods | None:
        """The slow periods of ``config`` the one event engine steps, with the policy the model applies at the
        schedule run (docs/model.md §21.6); None without them."""
        if not at_work(config):
            return None
        found = figures(config, _core().evaluate(config).interval_s)
        between, factor, duration, detect = (float(getattr(config, name)) for name in OWN)
        return Periods(between, factor, duration, detect, replace=bool(found.restarts))

    def class_simulated_part(self, found: Any, result: Any) -> dict[str, Any]:
        """The slow periods the engine ``found`` (begun, ended by a restart at detection, the share of time
        lost to running slow) beside the model's shares; None without them."""
        if found is None or not at_work(result.config):
            return {self.name: None}
        model = figures(result.config, float(result.interval_s))
        return {
            self.name: {
                "periods": found.slow_periods,
                "restarts_at_detection": found.slow_restarts,
                "slowed_share": found.split.slowed,
                "analytic_slowed_share": float(model.slowed),
                "analytic_share": float(model.slowed + model.restart + model.rework),
            }
        }

    def class_simulated_schema(self) -> dict[str, Any]:
        share = {"type": "number", "minimum": 0, "maximum": 1}
        count = {"type": "integer", "minimum": 0}
        return {
            self.name: {
                "oneOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": [
                            "periods",
                            "restarts_at_detection",
                            "slowed_share",
                            "analytic_slowed_share",
                            "analytic_share",
                        ],
                        "properties": {
                            "periods": count,
                            "restarts_at_detection": count,
                            "slowed_share": share,
                            "analytic_slowed_share": share,
                            "analytic_share": share,
                        },
                        "description": "the simulated slow periods: begun, ended by a restart at detection, the"
                        " share of time lost to running slow, and the model's shares beside it; null without",
                    },
                ]
            }
        }

    def class_simulated_lines(self, document: dict[str, Any], words: Any) -> list[str]:
        found = document.get(self.name)
        if found is None:
            return []
        pct = words.pct
        return [
            f"Stragglers: {found['periods']:,} slow periods, {found['restarts_at_detection']:,} restarts at"
            f" detection; running slow cost {pct(found['slowed_share'])} of the time"
            f" (model {pct(found['analytic_slowed_share'])})."
        ]


def _finite(value: Num) -> float | None:
    """``value`` as a float, None where it is infinite (no periodic checkpoint to restart from)."""
    found = float(value)
    return found if math.isfinite(found) else None


def _applied(chosen: bool) -> str:
    return " (applied: loses less)" if chosen else ""


MECHANISM = Stragglers()
