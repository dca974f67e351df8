"""Silent events and their retention: failures noticed late, rolled back to a retained checkpoint
(docs/model.md §16).

A failure class (docs/architecture.md, "Mechanisms"): an event starts silently in the work and is
noticed a latency d later; the job goes back to the newest *retained* storage checkpoint written before
the onset, restarts, skips s_k of work and replays the work since that checkpoint. With the newest k
kept, none may predate the onset (P_u); one kept for good every K_p then bounds the loss. A fail-stop
failure that rolls back past a pending onset erases the event (§16.3). The arithmetic is
:mod:`ckptcalc.mechanisms.silent.model`; this module declares the inputs, their checks, the class's
place in the one recursion, its part of a result and its words.

>>> [row.flag for row in MECHANISM.inputs]
['silent-mtbf', 'silent-events', 'detect-latency', 'skip', 'silent-risk', 'keep-every']
"""

from __future__ import annotations

import math
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.mechanisms.base import LARGEST, SMALLEST, Cell, Input, Mechanism, Num

MTBF = "silent_mtbf_s"
EVENTS = "silent_events"
LATENCY = "detect_latency_s"
SKIP = "skip_s"
RISK = "silent_risk"
EVERY = "keep_every_s"


#: How far a schedule that keeps a clean checkpoint must beat the search's own to be taken instead: more
#: than the search's rounding at a flat optimum, so that only a search lost in a corner is overruled.
_CLEAN_MARGIN = 1e-6


def _or_zero(value: Num | None) -> Num:
    return 0.0 if value is None else value


def present(config: Any) -> bool:
    """Whether ``config`` (a model ``Config``) has silent events."""
    return getattr(config, MTBF) is not None


def stepped(config: Any) -> tuple[float, float, float]:
    """What the event-by-event stepper takes of ``config``'s silent events: (the mean work between them,
    inf for none; their mean detection latency; the work skipped after each)."""
    return (
        float(getattr(config, MTBF) or math.inf),
        float(getattr(config, LATENCY) or 0.0),
        float(getattr(config, SKIP) or 0.0),
    )


def _band(scenario: Any) -> tuple[float | None, tuple[float, float | None] | None]:
    """The mean work between silent events and its 95 % interval: stated, or T/n from n events in the
    window T with the exact χ² interval (only the bound T/ln 20 with none seen); (None, None) without."""
    from ckptcalc.model.numeric import mtbf_interval
    from ckptcalc.model.statistics import no_failure_bound

    stated = getattr(scenario, MTBF)
    if stated is not None:
        if getattr(scenario, EVENTS) is not None:
            raise InputError(
                "give the silent events one way only, not {silent_mtbf} and {silent_events}/{window}",
                where=scenario.where(EVENTS),
            )
        return stated, None
    if getattr(scenario, EVENTS) is None:
        return None, None
    window = scenario.window_s
    if window is None:
        raise InputError("{silent_events} needs {window} (the time they were seen in)", where=scenario.where(EVENTS))
    count = int(getattr(scenario, EVENTS))
    band = mtbf_interval(count, window)
    return (window / count if count else no_failure_bound(window)), band


class Silent(Mechanism):
    name = "silent"
    kind = "failure_class"
    inputs = (
        Input(
            MTBF,
            "duration",
            "silent-mtbf",
            "silent",
            "mtbf",
            "Mean work between silent events (data corruption, loss spikes) that a check notices late, e.g. 14d.",
            after="",
            before="keep",
        ),
        Input(
            EVENTS,
            "count",
            "silent-events",
            "silent",
            "events",
            "Or: silent events seen in --window (their mean interval = window / events).",
            after=MTBF,
        ),
        Input(
            LATENCY,
            "duration",
            "detect-latency",
            "silent",
            "detect_latency",
            "Mean work from a silent event to its detection (exponential), e.g. 1h.",
            after=EVENTS,
        ),
        Input(
            SKIP,
            "duration",
            "skip",
            "silent",
            "skip",
            "Work discarded beyond the rollback after a silent event (skipped batches), e.g. 10min.",
            after=LATENCY,
        ),
        Input(
            RISK,
            "fraction",
            "silent-risk",
            "silent",
            "risk",
            "Run's risk that no retained checkpoint predates a silent event, for the keep advised (default: 1%).",
            after=SKIP,
        ),
        Input(
            EVERY,
            "duration",
            "keep-every",
            "retention",
            "keep_every",
            "Keep one checkpoint for good per this much work, e.g. 1d.",
            after="keep",
            before="work_s",
        ),
    )
    example = ((MTBF, "7d"), (LATENCY, "1h"), (SKIP, "10min"), (RISK, "0.05"), ("keep", "5"), (EVERY, "1d"))
    limit = ((MTBF, ""), (EVENTS, ""), (LATENCY, ""), (SKIP, ""), (RISK, ""), (EVERY, ""))
    cells = (Cell("P(unrecoverable)", ("silent", "p_unrecoverable_per_event")),)
    # The events counted in a window instead of their mean work apart.
    alternative = ((EVENTS, "24"), ("window_s", "168d"), (LATENCY, "1h"), ("keep", "5"))
    window_counts = (EVENTS,)
    engine_switch = (MTBF, "silent_mtbf")
    engine_refuses = ("slowdown", "elastic", "weibull", "events", "search")
    one_engine_with = ("slowdown", "elastic")

    # ------------------------------------------------------------- inputs

    def check(self, where: Any, name: str, value: float) -> bool:
        """Events a whole count from 0, the risk inside (0, 1), the latency and the skip 0 or a duration,
        the mean work between events and between checkpoints kept for good positive durations."""
        if name not in (MTBF, EVENTS, LATENCY, SKIP, RISK, EVERY):
            return False
        at = where(name)
        if name == EVENTS:
            if not (math.isfinite(value) and value >= 0 and float(value).is_integer() and value <= LARGEST):
                raise InputError(f"must be a whole number of events from 0, got {value:g}", where=at)
        elif name == RISK:
            if not (math.isfinite(value) and 0 < value < 1):
                raise InputError(f"must be a share strictly between 0 and 1, got {value:g}", where=at)
        elif name in (LATENCY, SKIP):
            if not (math.isfinite(value) and (value == 0 or SMALLEST <= value <= LARGEST)):
                raise InputError(
                    f"must be 0 or a duration from {SMALLEST:g} to {LARGEST:g} s, got {value:g} s", where=at
                )
        else:
            return False  # a positive duration: the core's own check
        return True

    def resolve_class(self, scenario: Any, config: Any, duration: Any) -> tuple[Any, Any]:
        mean, band = _band(scenario)
        first = MTBF if getattr(scenario, MTBF) is not None else EVENTS
        if mean is None:
            for name in (LATENCY, SKIP, RISK):
                if getattr(scenario, name) is not None:
                    raise InputError(
                        "needs silent events: {silent_mtbf}, or {silent_events} with {window}",
                        where=scenario.where(name),
                    )
        elif scenario.shape is not None:
            raise InputError(
                "silent events under Weibull failures have no model here; drop {shape} or the silent events",
                where=scenario.where(first),
            )
        elif getattr(scenario, LATENCY) is None:
            raise InputError(
                "silent events need the mean time until one is noticed ({detect_latency})", where=scenario.where(first)
            )
        work, latency = scenario.work_s, getattr(scenario, LATENCY)
        if work is not None and latency is not None and latency > work:
            raise InputError(
                f"{duration(latency)} is longer than the run ({duration(work)} of work):"
                " an event would rarely be noticed before the run ends",
                where=scenario.where(LATENCY),
            )
        every, interval = getattr(scenario, EVERY), scenario.interval_s
        if every is not None and interval is not None and every < interval * (1.0 - 1e-12):
            raise InputError(
                f"{duration(every)} is shorter than the checkpoint interval {duration(interval)}:"
                " a checkpoint kept for good is one of those written",
                where=scenario.where(EVERY),
            )
        found = config.replace(
            **{MTBF: mean, LATENCY: latency, SKIP: getattr(scenario, SKIP), RISK: getattr(scenario, RISK), EVERY: every}
        )
        return found, band

    def without(self, config: Any) -> Any:
        return config.replace(**{MTBF: None, LATENCY: None, SKIP: None, RISK: None, EVERY: None})

    # ------------------------------------------------------------- the model (a failure class)

    def present(self, config: Any) -> bool:
        return present(config)

    def approximate(self, config: Any) -> bool:
        return present(config)  # the replay is first order in the exact recursion (§16.3)

    def averaged_in_plan(self, config: Any) -> bool:
        return present(config)

    def first_order_class(self, config: Any) -> tuple[Num, Num, Num] | None:
        mtbf = getattr(config, MTBF)
        if mtbf is None:
            return None
        return 1.0 / mtbf, _or_zero(getattr(config, LATENCY)), _or_zero(getattr(config, SKIP))

    def with_class(self, config: Any, schedule: Any, kept: Any) -> Any:
        mtbf = getattr(config, MTBF)
        if mtbf is None:
            return schedule
        from ckptcalc.mechanisms.silent.model import Late

        newest = kept()
        return schedule.replace(
            silent_rate=1.0 / mtbf,
            silent_latency_s=_or_zero(getattr(config, LATENCY)),
            silent_extra_s=config.storage_restart_s + _or_zero(getattr(config, SKIP)),
            late=Late(keep=math.inf if newest is None else newest, keep_every_s=_or_zero(getattr(config, EVERY))),
        )

    def best(self, config: Any, base: Any, mtbf: Num, search: Any, effective: Any) -> Any:
        """The joint optimum with silent events (docs/model.md §16.3). With few newest checkpoints kept,
        storage intervals far below d/k leave none of them before a typical onset: every event goes back
        to a checkpoint kept for good, effective time is 0 over a wide plateau, and a search that starts
        from first order (which knows nothing of the keep) can end there. So storage intervals from d/k
        up, doubling, are tried too where the search's own schedule keeps less than d of work (the other
        tiers searched under each), the best refined by golden section between its neighbours, and the
        better schedule run."""
        if not present(config):
            return None
        from ckptcalc.model.arrays import scalar

        found = search.best(base, mtbf)
        keep = base.late.keep
        latency = base.silent_latency_s
        if not scalar(*base.values(), mtbf) or math.isinf(keep) or latency <= 0:
            return found
        if keep * found.storage_interval_s >= latency:
            return found  # its retained checkpoints reach back past a typical onset: not on the plateau
        value = float(effective(found, mtbf).effective)

        def at(top: Num) -> tuple[Any, float]:
            tried = search.best(base, mtbf, top_s=top)
            return tried, float(effective(tried, mtbf).effective)

        tops = [latency / keep * 2.0**i for i in range(5)]
        tried = [at(top) for top in tops]
        i = max(range(len(tops)), key=lambda j: tried[j][1])
        low, high = tops[max(i - 1, 0)], tops[min(i + 1, len(tops) - 1)]
        refined = at(float(search.golden(lambda top: at(top)[1], low, high, 5)))
        better = max((tried[i], refined), key=lambda pair: pair[1])
        return better[0] if better[1] > value * (1.0 + _CLEAN_MARGIN) else found

    def summarized(self, config: Any, result: Any, kept: Any, caveat: Any) -> Any:
        """``result`` with what its silent events come to at the storage interval run (docs/model.md
        §16.2); a permanent checkpoint every K_p must be one of those written, so K_p ≥ that interval."""
        from ckptcalc.model.arrays import scalar

        mtbf = getattr(config, MTBF)
        stated = [getattr(config, name) for name in (LATENCY, SKIP, RISK, EVERY) if getattr(config, name) is not None]
        if mtbf is None or not scalar(result.interval_s, mtbf, *stated):
            return result  # over a grid: the figures are at each point's own run
        from ckptcalc.mechanisms.silent import model as silent

        interval = float(result.interval_s)
        every = getattr(config, EVERY)
        if every is not None and every < interval * (1.0 - 1e-12):
            raise InputError(
                f"is shorter than the storage interval run ({interval:.6g} s): a checkpoint kept for good is one of"
                " those written; give a longer one or pin {interval}",
                where=EVERY,
            )
        newest = kept()
        risk = getattr(config, RISK)
        summary = silent.summary(
            mtbf_s=float(mtbf),
            latency_s=float(_or_zero(getattr(config, LATENCY))),
            skip_s=float(_or_zero(getattr(config, SKIP))),
            keep=None if newest is None else float(newest),
            keep_every_s=None if every is None else float(every),
            risk=None if risk is None else float(risk),
            interval_s=interval,
            restart_s=float(config.storage_restart_s),
            work_s=None if config.work_s is None else float(config.work_s),
        )
        caveats = result.caveats
        if summary.p_unrecoverable_run is not None and summary.p_unrecoverable_run > summary.risk:
            advice = f"{summary.keep_for_risk}:{summary.risk!r}"  # the keep and the risk, for the wording
            caveats = (*caveats, caveat(RISK, None, summary.p_unrecoverable_run, below=advice))
        return result.replace(silent=summary, caveats=caveats)

    def kept_for_good_s(self, config: Any) -> Num | None:
        every: Num | None = getattr(config, EVERY)
        return every

    # ------------------------------------------------------------- results

    def echo_parts(self, config: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
        def f(value: Num | None) -> float | None:
            return None if value is None else float(value)

        return (
            (
                "keep",
                {MTBF: f(getattr(config, MTBF)), LATENCY: f(getattr(config, LATENCY)), SKIP: f(getattr(config, SKIP))},
            ),
            ("work_s", {EVERY: f(getattr(config, EVERY))}),
        )

    def echo_schema_parts(self) -> tuple[tuple[str, dict[str, Any]], ...]:
        return (
            (
                "keep",
                {
                    MTBF: {**_MAYBE_SECONDS, "description": "mean work between silent events"},
                    LATENCY: {**_MAYBE_SECONDS, "description": "mean work from a silent event to its detection"},
                    SKIP: {**_MAYBE_SECONDS, "description": "work discarded beyond a silent event's rollback"},
                },
            ),
            ("work_s", {EVERY: {**_MAYBE_SECONDS, "description": "one checkpoint kept for good per this much work"}}),
        )

    def class_part(self, job: Any, result: Any) -> dict[str, Any]:
        return {self.name: part(result, dict(job.classes).get(self.name))}

    def class_schema(self) -> dict[str, Any]:
        return {self.name: SCHEMA}

    def part_rows(self, key: str, found: dict[str, Any], words: Any) -> list[tuple[str, str, str]] | None:
        return rows(found, words) if key == self.name else None

    def part_title(self, key: str, caption: bool = False) -> str | None:
        if key != self.name:
            return None
        return "Silent events and retention" if caption else TITLE

    # ------------------------------------------------------------- the event engine and logs

    def engine_late_class(self, config: Any, schedule: Any, kept: Any) -> Any:
        """Its silent events as the event engines step them (docs/model.md §16.4): one kept for good every
        K_p of work is every p-th storage checkpoint, p = K_p / the storage interval, rounded."""
        from ckptcalc.mechanisms.silent import stepper

        if not self.present(config):
            return None
        every = None
        for_good = getattr(config, EVERY)
        if for_good is not None:
            every = max(1, round(float(for_good) / schedule.storage_interval_s))
        mean, latency, skip = stepped(config)
        return stepper.Late(mean_work=mean, latency=latency, skipped=skip, newest=None if kept is None else int(kept),
                            kept_every=every)  # fmt: skip

    def engine(self, config: Any, schedule: Any, mtbf_s: float, kept: Any, cycles: int, seed: int) -> Any:
        """The schedule stepped event by event with silent events and retention (docs/model.md §7.2,
        §16.4; :func:`ckptcalc.mechanisms.silent.stepper.run`)."""
        from ckptcalc.mechanisms.silent import stepper

        tiers = stepper.Tiers(
            interval_s=schedule.interval_s, every=schedule.every, stalls=schedule.stalls, restarts=schedule.restarts,
            shares=schedule.shares, lag_s=schedule.lag_s, nowhere_share=schedule.nowhere_share,
            nowhere_restart_s=schedule.nowhere_restart_s,
        )  # fmt: skip
        late = self.engine_late_class(config, schedule, kept)
        return stepper.run(
            tiers,
            mtbf_s=mtbf_s,
            silent_mtbf_s=late.mean_work,
            latency_s=late.latency,
            skip_s=late.skipped,
            keep=late.newest,
            keep_every=late.kept_every,
            cycles=cycles,
            seed=seed,
        )

    def stepped_split_alike(self, found: Any) -> bool:
        """Its stepper counts the work a detection throws away in rework and its restart and skip in restart,
        as the model does (docs/model.md §16.3)."""
        return True

    def class_simulated_part(self, found: Any, result: Any) -> dict[str, Any]:
        """The silent events a simulation ran (docs/model.md §16.4) beside the model's P_u; None without."""
        if found is None or result.silent is None:
            return {self.name: None}
        return {
            self.name: {
                "events": found.events,
                "unrecoverable": found.unrecoverable,
                "erased": found.erased,
                LATENCY: found.latency_s,
                "p_unrecoverable_per_event": found.p_unrecoverable,
                "analytic_p_unrecoverable_per_event": result.silent.p_unrecoverable_per_event,
                "share": found.silent,
            }
        }

    def class_simulated_schema(self) -> dict[str, Any]:
        return {self.name: _SIMULATED}

    def class_simulated_lines(self, document: dict[str, Any], words: Any) -> list[str]:
        """The simulated silent events beside the model's P_u, from ``simulate``'s JSON ``silent``."""
        found = document.get(self.name)
        if found is None:
            return []
        pct, dur = words.pct, words.dur
        measured = found["p_unrecoverable_per_event"]
        share = (
            "" if measured is None else f" ({pct(measured)}; model {pct(found['analytic_p_unrecoverable_per_event'])})"
        )
        fate = (
            "each back to the newest checkpoint kept for good"
            if document["inputs"][EVERY] is not None
            else "each would lose the run so far: the run's risk, left out of the effective time, as in the model"
        )
        return [
            f"Silent events: {found['events']:,} noticed after {dur(found[LATENCY])} of work on average,"
            f" {found['erased']:,} erased by a failure first; {found['unrecoverable']:,} with no clean checkpoint"
            f" retained{share}" + (f", {fate}." if found["unrecoverable"] else ".")
        ]

    def measured_part(self, analysis: Any) -> dict[str, Any]:
        """What a log's silent events measured (docs/model.md §11.7), or None without any."""
        s = analysis.silent
        if s is None:
            return {self.name: None}
        return {
            self.name: {
                "events": s.events,
                "rollbacks": s.rollbacks,
                "per_day": s.per_day,
                "per_day_ci95": list(s.per_day_ci95),
                MTBF: s.mtbf_s,
                "onsets": s.onsets,
                LATENCY: s.detect_latency_s,
                "detect_latency_p90_s": s.detect_latency_p90_s,
                "detect_latency_ci95": None if s.detect_latency_ci95 is None else list(s.detect_latency_ci95),
                SKIP: s.skip_s,
                "lost_s": s.lost_s,
                "lost_per_event_s": s.lost_per_event_s,
            }
        }

    def measured_schema(self) -> dict[str, Any]:
        return {self.name: {"oneOf": [{"type": "null"}, _MEASURED]}}

    def measured_rows(self, measured: dict[str, Any], words: Any) -> list[tuple[str, str, str]]:
        """(what, value, note) rows of what a log's silent events measured (docs/model.md §11.7)."""
        s = measured.get(self.name)
        if s is None:
            return []
        sig, dur = words.units.sig, words.dur
        low, high = s["per_day_ci95"]
        found = [
            ("silent events", f"{s['events']:,}", f"{s['rollbacks']:,} rolled back"),
            ("silent events per day", sig(s["per_day"]), f"95 %: {sig(low)} to {sig(high)}"),
        ]
        if s[LATENCY] is not None:
            note = f"p90 {dur(s['detect_latency_p90_s'])}, {s['onsets']:,} with an onset"
            if s["detect_latency_ci95"] is not None:
                note += f"; 95 %: {words.span(s['detect_latency_ci95'], dur)}"
            found.append(("detection latency", dur(s[LATENCY]), note))
        else:
            found.append(("detection latency", "-", "no onset in the log"))
        if s["lost_per_event_s"] is not None:
            found.append(
                ("lost per silent event", dur(s["lost_per_event_s"]), "checkpoint to detection, plus the skip")
            )
        return found

    # ------------------------------------------------------------- check and plan

    def checked(self, result: Any, limit: float | None) -> dict[str, Any]:
        """A preset's silent events against ``limit``, the most risk over its run allowed: its risk, the
        keep that meets the limit, and whether it passes; None without a limit or without silent events;
        what is missing, as text, when the run's length is."""
        found = result.silent
        if limit is None or found is None:
            return {self.name: None}
        if found.work_s is None:
            return {self.name: "the risk over the run needs the run's length ([run] work, or --work)"}
        from ckptcalc.mechanisms.silent import model as silent

        assert found.events_per_run is not None and found.p_unrecoverable_run is not None
        keep = silent.keep_for_risk(
            interval_s=found.interval_s, latency_s=found.latency_s, events=found.events_per_run, risk=limit
        )
        return {
            self.name: {
                "p_unrecoverable_run": found.p_unrecoverable_run,
                "keep": None if found.keep is None else int(found.keep),
                "keep_for_risk": keep,
                "max_silent_risk": limit,
                "passed": found.p_unrecoverable_run <= limit,
            }
        }

    def checked_schema(self) -> dict[str, Any]:
        return {
            self.name: {
                "oneOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "properties": {
                            "p_unrecoverable_run": _FRACTION,
                            "keep": {"type": ["integer", "null"], "minimum": 1},
                            "keep_for_risk": {"type": "integer", "minimum": 1},
                            "max_silent_risk": _FRACTION,
                            "passed": {"type": "boolean"},
                        },
                        "required": ["p_unrecoverable_run", "keep", "keep_for_risk", "max_silent_risk", "passed"],
                        "description": "the retention against --max-silent-risk; null without it or without"
                        " silent events",
                    },
                ]
            }
        }

    def checked_words(self, row: dict[str, Any], words: Any) -> str:
        found = row.get(self.name)
        if found is None:
            return ""
        pct = words.pct
        kept = "all" if found["keep"] is None else str(found["keep"])
        return (
            f"; P(unrecoverable silent event over the run) {pct(found['p_unrecoverable_run'])} keeping {kept},"
            f" keep {found['keep_for_risk']} for {pct(found['max_silent_risk'])}"
        )

    def notes(self, result: Any) -> list[str]:
        """How ``plan`` counts the silent events in its whole runs (docs/model.md §16.2)."""
        if result.silent is None:
            return []
        return [
            "silent events: the whole runs stretch the work by the time they cost on average (the model's),"
            " so the spread of run times leaves out theirs; events_per_run and p_unrecoverable_run count them"
        ]

    def measured(self, config: Any, analysis: Any) -> Any:
        """``config`` with the silent events a log measured (docs/model.md §11.7), as ``--save-preset``
        writes them: their rate over the wall time, and the detection latency and skip where measured
        (every checkpoint retained: a log does not show what was deleted)."""
        found = analysis.silent
        if found is None:
            return config
        return config.replace(**{MTBF: found.mtbf_s, LATENCY: found.detect_latency_s, SKIP: found.skip_s})

    def measured_values(self, measured: dict[str, Any]) -> dict[str, float]:
        """The [silent] keys of a log's silent events: the rate, and the latency and skip where measured."""
        found = measured.get(self.name)
        if found is None:
            return {}
        values = {MTBF: float(found[MTBF])}
        for name in (LATENCY, SKIP):
            if found[name] is not None:
                values[name] = float(found[name])
        return values

    def caveat_words(self, kind: str, value: float | None, below: str | None, words: Any) -> str | None:
        if kind != RISK:
            return None
        keep, risk = (below or "").split(":")
        return (
            f"retention too short: P = {_percent(value or 0.0)} that some silent event finds no clean checkpoint"
            f" over the run; keep the {keep} newest checkpoints for {_percent(float(risk))} (--keep)"
        )


def _percent(value: float) -> str:
    return f"{100.0 * value:.3g} %"


def note(every_kept: bool, none_for_good: bool) -> str:
    """What the silent events' figures assume (docs/model.md §16)."""
    parts = [
        "silent events: the exact model counts each as a failure noticed late, first order in its replay"
        " (docs/model.md §16.3); P(unrecoverable) is exact without fail-stop failures between onset and"
        " detection, and a few per cent lower with them (a fail-stop rollback to before the onset erases it)"
    ]
    if every_kept:
        parts.append("every checkpoint is kept (--keep: the newest kept)")
    elif none_for_good:
        parts.append(
            "no checkpoint is kept for good (--keep-every): an unrecoverable event goes back to the run's start,"
            " counted in the run's risk, not in the effective time"
        )
    return "; ".join(parts)


def part(result: Any, band: tuple[float, float | None] | None = None) -> dict[str, Any] | None:
    """The silent events and retention of an evaluated ``result`` (docs/model.md §16) as a document
    shows them, or None without silent events; ``band`` the 95 % interval of their mean work apart, from
    events counted in a window (§16.2)."""
    found = result.silent
    if found is None:
        return None
    ends = None
    if band is not None:
        from ckptcalc.mechanisms.silent.model import band as at_ends

        ends = at_ends(found, band[0], band[1])
    return {
        "mtbf_s": found.mtbf_s,
        LATENCY: found.latency_s,
        SKIP: found.skip_s,
        "keep": None if found.keep is None else int(found.keep),
        EVERY: found.keep_every_s,
        RISK: found.risk,
        "interval_s": found.interval_s,
        "work_s": found.work_s,
        "per_day": found.per_day,
        "events_per_run": found.events_per_run,
        "p_unrecoverable_per_event": found.p_unrecoverable_per_event,
        "p_unrecoverable_run": found.p_unrecoverable_run,
        "rework_per_event_s": found.rework_per_event_s,
        "keep_for_risk": found.keep_for_risk,
        "latency_over_interval": found.latency_over_interval,
        "mtbf_ci95": None if ends is None else [ends.low_s, ends.high_s],
        "events_per_run_ci95": None if ends is None or ends.events_per_run is None else list(ends.events_per_run),
        "p_unrecoverable_run_ci95": None
        if ends is None or ends.p_unrecoverable_run is None
        else list(ends.p_unrecoverable_run),
        "keep_for_risk_ci95": None if ends is None else ends.keep_for_risk,
        "model": "approximate",
        "note": note(found.keep is None, found.keep_every_s is None),
    }


#: The silent events table's title.
TITLE = "Silent events (noticed late, rolled back to a retained checkpoint)"


def rows(found: dict[str, Any], words: Any) -> list[tuple[str, str, str]]:
    """The rows (figure, value, note) of the silent events table, from the JSON document's ``silent``;
    ``words`` is :mod:`ckptcalc.output.wording` (its ``dur``, ``pct`` and ``span_of_days``)."""
    dur, pct = words.dur, words.pct
    kept = "all" if found["keep"] is None else str(found["keep"])
    found_rows = [
        ("events", f"{found['per_day']:.3g} per day", f"one per {dur(found['mtbf_s'])} of work"),
        ("detection", dur(found[LATENCY]), f"mean; {found['latency_over_interval']:.3g} intervals"),
        ("loss per event", dur(found["rework_per_event_s"]), "interval/2 + detection + restart + skip"),
        ("P(unrecoverable)", pct(found["p_unrecoverable_per_event"]), f"per event, keeping {kept} newest"),
    ]
    if found["events_per_run"] is not None:
        found_rows.append(("events over the run", f"{found['events_per_run']:.3g}", f"{dur(found['work_s'])} of work"))
        found_rows.append(("P(unrecoverable), run", pct(found["p_unrecoverable_run"]), "at least one event"))
        found_rows.append((f"keep for ≤ {pct(found[RISK])}", str(found["keep_for_risk"]), "fewest newest checkpoints"))
    else:
        found_rows.append(("over the run", "-", "give --work for the run's risk and the keep it needs"))
    if found.get("mtbf_ci95") is not None:
        low, high = found["mtbf_ci95"]
        found_rows.insert(1, ("events, 95 %", words.span_of_days(low, high), "from the events counted in --window"))
        if found["p_unrecoverable_run_ci95"] is not None:
            few, many = found["p_unrecoverable_run_ci95"]
            found_rows.append(
                ("P(unrecoverable), run, 95 %", f"{pct(few)} to {pct(many)}", "at the ends of the rate's band")
            )
            found_rows.append(
                (
                    f"keep for ≤ {pct(found[RISK])}, 95 %",
                    str(found["keep_for_risk_ci95"]),
                    "enough at the band's highest rate",
                )
            )
    return found_rows


_SECONDS: dict[str, Any] = {"type": "number", "minimum": 0, "description": "seconds"}
_MAYBE_SECONDS: dict[str, Any] = {"type": ["number", "null"], "minimum": 0, "description": "seconds"}
_FRACTION: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1}


def _object(properties: dict[str, Any], description: str) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "description": description}


#: The JSON Schema of :func:`part`: silent events and retention (docs/model.md §16), or null without.
SCHEMA: dict[str, Any] = {
    "oneOf": [
        {"type": "null"},
        _object(
            {
                "mtbf_s": {**_SECONDS, "description": "mean work between silent events"},
                LATENCY: {**_SECONDS, "description": "mean work from an onset to its detection"},
                SKIP: {**_SECONDS, "description": "work discarded beyond the rollback"},
                "keep": {
                    "type": ["integer", "null"],
                    "minimum": 1,
                    "description": "newest checkpoints kept; null: all",
                },
                EVERY: {**_MAYBE_SECONDS, "description": "one checkpoint kept for good per this much work"},
                RISK: {**_FRACTION, "description": "the run's risk keep_for_risk is chosen for"},
                "interval_s": {**_SECONDS, "description": "the storage interval the figures are at"},
                "work_s": {**_MAYBE_SECONDS, "description": "the run's length (--work); null: not given"},
                "per_day": {"type": "number", "minimum": 0, "description": "silent events per day of work"},
                "events_per_run": {"type": ["number", "null"], "minimum": 0, "description": "expected over the run"},
                "p_unrecoverable_per_event": {
                    **_FRACTION,
                    "description": "chance no retained checkpoint predates an event's onset",
                },
                "p_unrecoverable_run": {
                    "type": ["number", "null"],
                    "minimum": 0,
                    "maximum": 1,
                    "description": "chance of at least one unrecoverable event over the run; null without --work",
                },
                "rework_per_event_s": {**_SECONDS, "description": "work and time one event costs, first order"},
                "keep_for_risk": {
                    "type": ["integer", "null"],
                    "minimum": 1,
                    "description": "fewest newest checkpoints that keep the run's risk at most silent_risk",
                },
                "latency_over_interval": {"type": "number", "minimum": 0, "description": "d / interval"},
                "mtbf_ci95": {
                    "type": ["array", "null"],
                    "prefixItems": [_SECONDS, _MAYBE_SECONDS],
                    "minItems": 2,
                    "maxItems": 2,
                    "description": "95 % interval of mtbf_s from --silent-events in --window (open above with"
                    " none seen); null when the rate was stated",
                },
                "events_per_run_ci95": {
                    "type": ["array", "null"],
                    "items": {"type": "number", "minimum": 0},
                    "minItems": 2,
                    "maxItems": 2,
                    "description": "events_per_run at the high and the low end of mtbf_ci95 (with --work)",
                },
                "p_unrecoverable_run_ci95": {
                    "type": ["array", "null"],
                    "items": _FRACTION,
                    "minItems": 2,
                    "maxItems": 2,
                    "description": "p_unrecoverable_run at the two ends of mtbf_ci95 (with --work)",
                },
                "keep_for_risk_ci95": {
                    "type": ["integer", "null"],
                    "minimum": 1,
                    "description": "the keep that meets silent_risk at the low end of mtbf_ci95 (with --work)",
                },
                "model": {"const": "approximate"},
                "note": {"type": "string"},
            },
            "silent events and retention (docs/model.md §16); null without --silent-mtbf or --silent-events",
        ),
    ]
}


MECHANISM = Silent()


_NUMBER: dict[str, Any] = {"type": "number"}
_COUNT: dict[str, Any] = {"type": "integer", "minimum": 0}
_PAIR: dict[str, Any] = {"type": ["array", "null"], "items": _NUMBER, "minItems": 2, "maxItems": 2}

#: The JSON Schema of :meth:`Silent.class_simulated_part`.
_SIMULATED: dict[str, Any] = {
    "oneOf": [
        {"type": "null"},
        _object(
            {
                "events": {"type": "integer", "minimum": 0, "description": "silent events noticed"},
                "unrecoverable": {"type": "integer", "minimum": 0},
                "erased": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "events a fail-stop rollback erased before they were noticed",
                },
                LATENCY: {**_SECONDS, "description": "measured mean work to detection"},
                "p_unrecoverable_per_event": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                "analytic_p_unrecoverable_per_event": _FRACTION,
                "share": {
                    **_FRACTION,
                    "description": "share of time the detections cost: the work thrown away back to"
                    " the target, the restarts and skips (docs/model.md §7.2; within rework and"
                    " restart of the split)",
                },
            },
            "the silent events simulated (docs/model.md §16.4); null without silent events",
        ),
    ]
}

#: The JSON Schema of :meth:`Silent.measured_part` (without its null).
_MEASURED: dict[str, Any] = _object(
    {
        "events": {**_COUNT, "description": "silent_detected events"},
        "rollbacks": {**_COUNT, "description": "of them, answered by a rollback"},
        "per_day": {**_NUMBER, "description": "silent events per day of wall time"},
        "per_day_ci95": {**_PAIR, "description": "the exact χ² 95 % interval of the rate"},
        MTBF: {**_SECONDS, "description": "wall time / events"},
        "onsets": {**_COUNT, "description": "detections with an onset"},
        LATENCY: {**_MAYBE_SECONDS, "description": "mean detection − onset; null: no onset"},
        "detect_latency_p90_s": _MAYBE_SECONDS,
        "detect_latency_ci95": {**_PAIR, "description": "Student's t 95 %; null with fewer than two onsets"},
        SKIP: {**_MAYBE_SECONDS, "description": "mean skip of the rollbacks; null: none"},
        "lost_s": {**_SECONDS, "description": "the rollbacks' loss: detection − to + skip, summed"},
        "lost_per_event_s": _MAYBE_SECONDS,
    },
    "the silent_detected and rollback events (docs/model.md §11.7); null: none in the log",
)
