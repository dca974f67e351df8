"""Every sentence a user reads about a result: caveats, verdicts, lever names, the first-order line.

The model and the decisions return numbers and codes; the JSON documents and
the terminal tables both word them here, so a sentence is written once.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ckptcalc.inputs import units
from ckptcalc.mechanisms import registry
from ckptcalc.model.evaluation import TERMS, Caveat, Result
from ckptcalc.model.statistics import change, direction, every_nth, over_gpus, per_day, shares, total_of

if TYPE_CHECKING:
    from ckptcalc.model.evaluation import Config

pct = units.format_percent
dur = units.format_duration

#: How a mechanism's words show a value of each unit kind (its lever names, table rows and lines).
SHOW: dict[str, Callable[[float], str]] = {
    "duration": dur,
    "fraction": pct,
    "count": units.format_count,
    "size": units.format_size,
    "rate": units.format_rate,
}


def caveat(item: Caveat) -> str:
    """One sentence for a caveat of the model."""
    level = f"{item.level} level: " if item.level else ""
    where = f" at {item.points} points" if item.points > 1 else ""
    if item.kind == "lag_bound":
        return f"{level}{LAG_BOUND}{where}"
    if item.kind == "storage_rounded":
        given = dur(item.value or 0.0)
        return (
            f"the storage interval {given} is not a whole number of memory intervals:"
            f" rounded to the nearest whole multiple{where}"
        )
    if item.kind == "all_down":
        return f"{all_down(item.value or 0.0)}{where}"
    if item.kind == "pauses":
        return f"{pauses(item.value or 0.0)}{where}"
    if item.kind == "written_bound":
        return f"{written_bound(item.value or 0.0)}{where}"
    if item.kind == "tier_rounded":
        return (
            f"the {item.level} interval {dur(item.value or 0.0)} is not a whole number of {item.below} intervals:"
            f" rounded to the nearest whole multiple, at least one{where}"
        )
    owned = registry.caveat_words(item.kind, item.value, item.below, sys.modules[__name__])
    if owned is not None:
        return owned
    return item.kind  # pragma: no cover - every kind is worded above


#: Why an interval cannot be shorter than the persist time.
LAG_BOUND = "the optimal interval is bound by the persist time (a checkpoint must be durable before the next)"


def lag_bound(level: str, lag_s: float) -> str:
    """The lag bound for the terminal, with the persist time."""
    return (
        f"The {level} interval is bound by the persist time ({dur(lag_s)}):"
        " a checkpoint must be durable before the next starts."
    )


class _Words:
    """How a mechanism's words format a bandwidth, a time and a share."""

    rate = staticmethod(units.format_rate)
    duration = staticmethod(dur)
    pct = staticmethod(pct)


_WORDS = _Words()


def lever_name(
    key: str, changed: Any, assume: Any, gpus: float | None = None, value: float | None = None, base: Any = None
) -> str:
    """What a lever changes, with the value it changes to (``changed`` is the changed configuration, ``base``
    the job's own); a per-GPU bandwidth with the aggregate it gives on ``gpus`` GPUs."""
    if key == "without_tier":
        return storage_lever(key, changed, gpus, base)

    def rate(aggregate: float) -> str:
        return units.format_rate(aggregate) if gpus is None else _scaled(over_gpus(aggregate, gpus), aggregate, gpus)

    owned = registry.lever_name(key, changed, rate)
    if owned is not None:
        return owned
    if key == "bandwidth_x2":
        return f"storage bandwidth ×2 ({units.format_rate(changed.bandwidth)})"
    if key == "restart_half":
        # With more than one level, only storage's restart is halved: say so.
        what = "storage restart" if changed.has_memory else "restart"
        return f"{what} ÷2 ({dur(changed.restart_s)})"
    if key == "mtbf_x2":
        return f"MTBF ×2 ({dur(changed.mtbf_s)})"
    if key == "detect_half":
        return f"detection ÷2 ({dur(value)})" if value is not None else "detection ÷2"
    if key == "read_bw_x2":
        if value is None:
            return "read bandwidth ×2 (every level restored by parts)"
        return f"read bandwidth ×2 (storage {units.format_rate(value)})"
    if key == "async":
        snapshot = _scaled(assume.snapshot_bandwidth_per_gpu, changed.snapshot_bandwidth, gpus)
        return f"asynchronous snapshots ({snapshot})"
    if key == "memory_replica":
        return (
            f"in-memory replica ({pct(assume.replica_survival)} of failures,"
            f" {_scaled(assume.memory_bandwidth_per_gpu, changed.memory_bandwidth, gpus)},"
            f" {dur(assume.memory_restart_s)} restart)"
        )
    assumed = registry.assumed_lever_name(key, changed, assume, _WORDS)
    if assumed is not None:
        return assumed
    words = registry.lever_words(key, changed, value, SHOW)
    if words is not None:
        return words
    if key == "elastic":
        pause = f", quorum pause {dur(assume.elastic_quorum_pause_s)}" if assume.elastic_quorum_pause_s else ""
        return (
            f"{units.format_count(assume.elastic_groups)} elastic groups ({pct(assume.elastic_group_share)}"
            f" group-local, rejoin {dur(assume.elastic_rejoin_s)}, {pct(assume.elastic_ft_overhead)} overhead{pause})"
        )
    if key == "without_elastic":
        return "without the elastic groups (every failure a whole-job restart)"
    return key  # pragma: no cover - every lever is named above


def break_even(found: dict[str, Any] | None) -> str:
    """A lever's break-even after its name (``; pays below 1.66 % overhead``), worded by the mechanism that owns
    its input; "" for a lever without one."""
    if found is None:
        return ""
    before, after = registry.break_even_words(found["key"]) or ("", found["key"])
    return f"; {before}pays {found['pays']} {SHOW[found['unit']](found['value'])} {after}"


def cluster_gain(gain_pp: float) -> str:
    """A running share's lever's gain over job and spare nodes, after its name."""
    return f"; over job and spare nodes {gain_pp:+.2f} pp"


def _scaled(per_gpu: float, aggregate: float, gpus: float | None) -> str:
    """``25.0 GB/s per GPU × 16384 GPUs = 410 TB/s``; without the count, the per-GPU rate alone."""
    if gpus is None:
        return units.format_rate(units.PerGpu(per_gpu))
    return f"{units.format_per_gpu(per_gpu, gpus)} = {units.format_rate(aggregate)}"


_WHY = {
    "restart": "no checkpoint interval can reduce it",
    "write": "checkpoints stall training",
    "rework": "work is redone after failures",
}


def verdict(result: Result, levers: list[dict[str, Any]]) -> str:
    """One line: the largest loss, and the largest single lever (the top row of the levers table)."""
    top = TERMS[int(result.dominant)]
    total = float(result.total)
    found = result.elastic
    elastic = None if found is None else float(found.groups_loss)
    loss = shares({"top": float(getattr(result, top)), "elastic": elastic or 0.0}, total)
    line = f"{top} is the largest loss ({pct(loss['top']) if total else '0 %'} of it; {_WHY[top]})."
    if found is not None and total and found.leads(getattr(result, top)):
        line = (
            f"the elastic groups are the largest loss ({pct(loss['elastic'])} of it: groups down, quorum"
            " pauses and the overhead; approximate)."
        )
    if levers and direction(levers[0]["gain_pp"], 0.0) == 1:
        best = levers[0]
        return line + f" Largest single gain: {best['name']}, {best['gain_pp']:+.2f} pp."
    return line


def first_order_line(result: Result) -> str | None:
    """First order beside the exact answer, when the two differ as printed."""
    fo = result.first_order
    same = pct(fo.effective) == pct(result.effective) and dur(fo.optimal_interval_s) == dur(result.optimal_interval_s)
    if same:
        return None
    total = float(fo.total)
    parts = ", ".join(f"{term} {pct(float(getattr(fo, term)))}" for term in TERMS)
    restart = pct(shares({"restart": float(fo.restart)}, total)["restart"]) if total else "0 %"
    given = " at the given interval" if result.config.interval_s is not None else ""
    return (
        f"First order (Young, the explanation): {pct(fo.effective)} effective{given},"
        f" {_young(fo.optimal_interval_s)}; loss {parts} of useful time,"
        f" {restart} of it from restarts."
    )


def periodic_interval(interval_s: float) -> str:
    """A periodic interval, or ``none needed`` when no failure rolls back to one (docs/model.md §13.3)."""
    return "none needed" if math.isinf(interval_s) else dur(interval_s)


def _young(interval_s: float) -> str:
    """``Young interval 4.48 min``; with no failure rolling back, no periodic checkpoint."""
    return "no periodic checkpoint" if math.isinf(float(interval_s)) else f"Young interval {dur(interval_s)}"


#: Said wherever the exact model has no answer and the simulation is the only one.
NO_EXACT = "no exact model for Weibull failures with more than one level: the simulated value is the answer"


#: Where a simulated run counts a share it does not time alone (``simulate``'s ``whole_split.folded``).
_FOLDED = {
    "waiting": "waits for a node are counted in restarts (this run keeps no elapsed time to divide them by)",
    "quorum": "quorum pauses are counted in groups down (this run keeps them together)",
}


def folded_shares(folded: list[str]) -> list[str]:
    """A line for each share a simulated run counts inside another."""
    return [
        "Note: " + _FOLDED.get(name, f"{name}: its losses are counted in the shares above, as the model counts"
                                     " them (its line below gives its share)") + "."
        for name in folded
    ]  # fmt: skip


def penalty(points: float, given: float, best: float) -> str:
    """What a given interval costs against the optimum."""
    return (
        f"The given interval costs {units.sig(points)} percentage points against the optimum"
        f" ({pct(given)} vs {pct(best)})."
    )


def weibull_verdict(kind: str) -> str:
    """What the likelihood-ratio test of exponential failures says (docs/fit.md)."""
    return {
        "exponential": "Exponential failures are consistent with the log (p ≥ 0.05): the exact model applies.",
        "clustered": "Failures cluster (k < 1, exponential rejected): after a failure another comes sooner;"
        " plan with --failure-dist weibull --shape K, or --save-preset the fit.",
        "wear_out": "Failures wear out (k > 1, exponential rejected): plan with --failure-dist weibull"
        " --shape K, or --save-preset the fit.",
    }.get(kind, kind)


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 52nd …"""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def no_failures(bound_s: float, window_s: float) -> str:
    """The warning when a window saw no failure: the MTBF used is its 95 % lower bound."""
    return (
        f"no failure in {units.format_duration(window_s)}: planning at the 95 % lower bound of the MTBF,"
        f" window / ln 20 = {units.format_duration(bound_s)}"
    )


def no_periodic_needed() -> str:
    """Every failure is recovered in place or met with notice (docs/model.md §13.3)."""
    return "no periodic checkpoint is needed for fail-stop failures: every one is recovered in place or met with notice"


def step_assumed(name: str, step_s: float) -> str:
    """A what-if column whose just-in-time recovery replays a step the job does not state."""
    return f"{name} ({dur(step_s)} steps assumed)"


def model_label(config: Config) -> str:
    """Which model answered: the exact one, under Weibull failures when a shape is set."""
    owned = registry.model_label(config)
    if owned is not None:
        return owned
    if config.shape is None:
        return "exact model"
    return f"exact model, Weibull failures k = {units.sig(float(config.shape))}"


def span(pair: list[Any], fmt: Callable[[float], str]) -> str:
    low, high = pair
    return f"> {fmt(low)}" if high is None else f"{fmt(low)} to {fmt(high)}"


def uncertainty_title(band: dict[str, Any]) -> str:
    return f"Across the MTBF's 95 % interval ({span(band['mtbf_s'], dur)})"


def uncertainty_rows(band: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(what, value, note) rows of the answer across the MTBF's 95 % interval."""
    if band["mtbf_s"][1] is None:
        return [
            ("effective time", f"> {pct(band['effective'][0])}", "at this interval"),
            ("optimal interval", dur(band["optimal_interval_s"][0]), "at the bound, where this plan is made"),
        ]
    robust = dur(band["robust_interval_s"])
    if band["robust_storage_every"] is not None:
        robust = f"{dur(band['robust_memory_interval_s'])} × {band['robust_storage_every']} = {robust}"
    return [
        ("effective time", span(band["effective"], pct), "at this interval"),
        ("optimal interval", span(band["optimal_interval_s"], dur), "at either end"),
        (
            "robust interval",
            robust,
            f"regret {units.sig(band['robust_regret_pp'])} pp (point optimum {units.sig(band['point_regret_pp'])} pp)",
        ),
    ]


def check_row(row: dict[str, Any]) -> str:
    """One line of ``check``: the verdict, the effective time and where it was tested."""
    verdict = "ok  " if row["passed"] else "FAIL"
    at = "pinned interval" if row["interval_pinned"] else "optimum"
    text = f"{verdict} {row['preset']}: {pct(row['effective'])} effective at its {at}"
    band = row["effective_ci95"]
    if band is not None:
        text += f" ({span(band, pct)} across the MTBF's 95 % interval"
        text += "; tested at the low end)" if row["tested"] == "low" else ")"
    return text + registry.checked_words(row, sys.modules[__name__])


def check_summary(failed: int, total: int, floor: float | None) -> str:
    if not failed:
        return "all pass"
    return f"{failed} of {total} below {pct(floor)}" if floor is not None else f"{failed} of {total} fail"


PLAN_TITLE = "Whole runs (share of runs below each value)"


def plan_header(document: dict[str, Any]) -> str:
    law = "exponential" if document["shape"] is None else f"Weibull k = {units.sig(document['shape'])}"
    steps = f" ({document['steps']:,} steps)" if document["steps"] is not None else ""
    return (
        f"ckptcalc plan: preset {document['preset']}, {dur(document['work_s'])} of work{steps},"
        f" {document['runs']:,} runs, {law} failures, seed {document['seed']}"
    )


def plan_schedule(document: dict[str, Any]) -> str:
    if document["interval_s"] is None:
        return f"Schedule: no periodic checkpoint; effective time {pct(document['effective'])} by the model."
    line = f"Schedule: storage every {dur(document['interval_s'])}"
    if document["memory_interval_s"] is not None:
        line += f" (memory every {dur(document['memory_interval_s'])} × {document['storage_every']})"
    return line + f"; effective time {pct(document['effective'])} by the model."


def plan_lines(document: dict[str, Any]) -> list[str]:
    """The sentences under the plan's table: the model's expectation, no-failure odds and the deadline."""
    lines = []
    if document["expected_s"] is not None:
        lines.append(
            f"Model: W / effective = {dur(document['expected_s'])}; the simulated mean differs by"
            f" {units.signed_percent(document['mean_vs_expected'])}."
        )
    if document.get("uncertainty") is not None:
        lines.append(PLAN_BAND)
    low, high = document["p_no_failure_ci95"]
    lines.append(f"P(no failure in the whole run): {pct(document['p_no_failure'])} (95 %: {pct(low)} to {pct(high)}).")
    if document["deadline_s"] is not None:
        if document.get("deadline") is not None:
            lines.append(
                f"Deadline: {_moment(document['deadline'])}, {dur(document['deadline_s'])} after the start at"
                f" {_moment(document['start'])}."
            )
        low, high = document["p_deadline_ci95"]
        lines.append(
            f"P(finished within {dur(document['deadline_s'])}): {pct(document['p_deadline'])}"
            f" (95 %: {pct(low)} to {pct(high)})."
        )
        lines.extend(plan_band_deadline(document))
    return lines


def _moment(iso: str) -> str:
    """An ISO date and time as read in a table: ``2026-07-15 00:00 UTC``, ``2026-07-15 12:00 +02:00``."""
    import datetime

    moment = datetime.datetime.fromisoformat(iso)
    offset = int((moment.utcoffset() or datetime.timedelta()).total_seconds())
    hours, rest = divmod(abs(offset), 3600)
    minutes, seconds = divmod(rest, 60)
    zone = f"{'-' if offset < 0 else '+'}{hours:02d}:{minutes:02d}" + (f":{seconds:02d}" if seconds else "")
    # The date by isoformat: strftime's %Y drops the leading zeros of years before 1000 on some systems.
    day = moment.date().isoformat()
    return f"{day} {moment:%H:%M}" + (f":{moment:%S}" if moment.second else "") + f" {'UTC' if not offset else zone}"


def plan_band_rows(band: dict[str, Any] | None) -> list[tuple[str, dict[str, float]]]:
    """The plan's rows for the MTBF's interval: a label (``  MTBF 2.81 h``) and the wall times there."""
    if band is None:
        return []
    ends = zip(band["mtbf_s"], band["completion_s"], strict=True)
    return [(f"  MTBF {dur(m)}", spread) for m, spread in ends if spread is not None]


def plan_band_deadline(document: dict[str, Any]) -> list[str]:
    """The chance of the deadline at the ends of the MTBF's interval, as one line (none without)."""
    band = document.get("uncertainty")
    if band is None or band["p_deadline"] is None:
        return []
    ends = zip(band["mtbf_s"], band["p_deadline"], strict=True)
    at = ", ".join(f"{pct(p)} at {dur(m)}" for m, p in ends if p is not None)
    return [f"P(finished within {dur(document['deadline_s'])}) at the MTBF's interval ends: {at}."]


#: What ``plan`` says of its runs at the ends of the MTBF's interval.
PLAN_BAND = "MTBF rows: the ends of its 95 % interval, with the same schedule, runs and seed."


def fit_source(document: dict[str, Any], with_shape: bool) -> str:
    """The ``source`` line of a preset written by ``fit --save-preset``: what was fitted, from what."""
    if document["source"] == "counts":
        return (
            f"ckptcalc fit --failures {document['interruptions']} --window {dur(document['window_s'])}:"
            " a count, no gaps, so exponential"
        )
    logs = ", ".join(document["logs"]) or "-"
    conditions = [*document["where"], *([" or ".join(document["where_any"])] if document["where_any"] else [])]
    where = f", where {' and '.join(conditions)}" if conditions else ""
    coalesce = f", coalesced within {dur(document['coalesce_s'])}" if document["coalesce_s"] else ""
    text = (
        f"ckptcalc fit {logs}: {document['interruptions']} interruptions from {document['events_kept']}"
        f" events{where}{coalesce}, in {dur(document['window_s'])} ({_window(document)})"
    )
    weibull = document["weibull"]
    if weibull is None:
        return text + "; too few gaps for a Weibull fit, so exponential"
    test = f"Weibull k = {units.sig(weibull['shape'])} (test of k = 1: {p_value(weibull, 2)})"
    return text + (f"; {test}" if with_shape else f"; {test}: exponential is consistent, so no shape")


def p_value(weibull: dict[str, Any], digits: int = 3) -> str:
    """``p = 0.0312``, or ``p < 1e-300`` when it is below what a double holds (docs/fit.md §7)."""
    return "p < 1e-300" if weibull["p_value_underflow"] else f"p = {weibull['p_value']:.{digits}g}"


def fit_title(document: dict[str, Any]) -> str:
    """The first line of ``fit``'s table: the logs read, or the count given."""
    if document["source"] == "counts":
        return f"ckptcalc fit: {document['interruptions']} interruptions in {dur(document['window_s'])}"
    return f"ckptcalc fit: {', '.join(document['logs'])}"


def naive_timestamps(document: dict[str, Any]) -> str:
    """The table's row for timestamps without a zone: how many, and the zone they were read in."""
    return f"{document['naive_timestamps']} (read in {document['tz'] or 'UTC'})"


def naive_as_utc(count: int) -> str:
    """The note when timestamps without a zone were read as UTC because no zone was given."""
    return f"{count} timestamps have no zone and were read as UTC: give --tz if they are local times"


def near_zero_gaps(count: int, gaps: int, coalesce_s: float) -> str:
    """The hint when many gaps are near zero (docs/fit.md §2): events of one incident counted apart."""
    used = f"coalesced within {dur(coalesce_s)}" if coalesce_s else "not coalesced"
    return (
        f"{count} of {gaps} gaps are under 1 min ({used}): one incident may be counted as several;"
        " try --coalesce 5min (the fit at each window is shown)"
    )


def interruptions_counted(kept: int, outside: int, coalesced: int, at_start: int, counted: int) -> str | None:
    """Why ``fit`` counts fewer interruptions than events kept (docs/fit.md §2–3); None when it does not."""
    if counted == kept:
        return None
    reasons = []
    if outside:
        reasons.append(f"{outside} outside the window")
    if coalesced:
        reasons.append(f"{coalesced} coalesced")
    if at_start:
        # The first interruption only starts the clock: it ends no gap (docs/fit.md §3).
        reasons.append("the window opens at the first, which is not counted")
    return "; ".join(reasons)


#: The title of the table of fits across coalescing windows.
COALESCING_TITLE = "Coalescing: interruptions and Weibull k by window"


def coalescing_row(row: dict[str, Any], used: float) -> tuple[str, str, str, str, str]:
    """One coalescing window's row: window, interruptions, MTBF, k, verdict (and which one is used)."""
    window = dur(row["coalesce_s"]) if row["coalesce_s"] else "0 (none)"
    mark = " (used)" if row["coalesce_s"] == used else ""
    mtbf = dur(row["mtbf_s"]) if row["mtbf_s"] is not None else "-"
    shape = units.sig(row["shape"]) if row["shape"] is not None else "-"
    verdict = {"exponential": "exponential", "clustered": "clusters", "wear_out": "wears out"}.get(
        row["verdict"] or "", "-"
    )
    return window + mark, f"{row['interruptions']}", mtbf, shape, verdict


def _window(document: dict[str, Any]) -> str:
    """The window as the log wrote its times: UTC timestamps, or times on the log's own clock."""
    start, end = document["window_start_s"], document["window_end_s"]
    if document["time_kind"] == "timestamp":
        import datetime

        def moment(seconds: float) -> str:
            stamp = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC).isoformat(timespec="seconds")
            return stamp.replace("+00:00", "Z")

        return f"from {moment(start)} to {moment(end)}"
    return f"from {dur(start)} to {dur(end)} on the log's clock"


def fitted_description(base: str, document: dict[str, Any]) -> str:
    if document["source"] == "counts":
        return f"{base} with its failures from {document['interruptions']} interruptions in {dur(document['window_s'])}"
    return f"{base} with its failures fitted from {', '.join(document['logs'])}"


def fitted_from(document: dict[str, Any]) -> str:
    """How a value ``fit --save-preset`` writes came: its ``[sources]`` entry and the inputs table's note."""
    if document["source"] == "counts":
        return f"fitted from {document['interruptions']} interruptions in {dur(document['window_s'])}"
    return f"fitted from {', '.join(document['logs']) or 'standard input'}"


def measured_from(log: str) -> str:
    """How a value ``analyze --save-preset`` writes came."""
    return f"measured from {log}"


def derived_from_write(log: str) -> str:
    """How a bandwidth ``analyze --save-preset`` writes came: the measured write time over the size."""
    return f"derived from the write time measured in {log} and the checkpoint size"


def titled(title: str, description: str) -> str:
    """A preset's description in ``presets list`` when its own name differs from the file's."""
    return f"{title}: {description}" if description else title


def saved(path: str, base: str) -> str:
    """What ``--save-preset`` says it did, on stderr."""
    return f"saved {path} (failures from the fit, the rest from {base})"


def no_model(reason: str) -> str:
    return f"no model at the measured inputs: {reason}"


def model_disagrees(difference_pp: float) -> str:
    return (
        f"the realised effective time differs from the model's by {difference_pp:+.3g} pp, outside the run's"
        " 95 % interval: the log's failures, stalls or restarts do not behave as the model assumes"
    )


def clustered_failures(shape: float) -> str:
    return (
        f"failures in this log are not exponential (Weibull k = {units.sig(shape)}): the model assumes they are;"
        " plan with --shape for one level"
    )


def interrupted(unwritten: str | None) -> str:
    """What Ctrl-C leaves: nothing half-written."""
    return "interrupted" if unwritten is None else f"interrupted: {unwritten} was not written"


def saved_measured(path: str, base: str) -> str:
    return f"saved {path} (the measured write time, restart, MTBF and interval; the rest from {base})"


def measured_description(base: str, log: str) -> str:
    return f"{base} with the write time, restart, failure rate and interval measured in {log}"


def measured_source(document: dict[str, Any]) -> str:
    m = document["measured"]
    return (
        f"ckptcalc analyze {document['log']}: {dur(document['wall_s'])} of run, {m['failures']} failures,"
        f" {total_of(level['checkpoints'] for level in m['levels']):.0f} checkpoints"
    )


def rows_omitted(count: int) -> str:
    return f"... and {count:,} more (all of them in --json)"


def analyze_header(document: dict[str, Any]) -> str:
    lines = document["lines"]
    extra = f", {lines['unknown_events']} unknown events skipped" if lines["unknown_events"] else ""
    extra += f", {lines['skipped_bad']} bad lines skipped" if lines["skipped_bad"] else ""
    return f"ckptcalc analyze: {document['log']}, {dur(document['wall_s'])} of run, {lines['used']:,} events{extra}"


def class_split_header(part: dict[str, Any]) -> list[str]:
    """The columns of a log's failures split by class (docs/model.md §20.6): the restart where the log shows
    restarts."""
    return [
        "class",
        "failures",
        "measured",
        "95 %",
        "stated",
        "agrees",
        *(["restart"] if part["restarts_shown"] else []),
    ]


def class_split_title(part: dict[str, Any]) -> str:
    """The title of a log's class split."""
    return f"Failures by class ({part['failures']} failures, causes matched as word prefixes)"


def class_split_rows(part: dict[str, Any]) -> list[list[str]]:
    """A row per class of a log's failures split by class, then the job's own: its failures, measured share
    with its 95 % interval, the preset's share, whether that lies in the interval, and its mean restart."""

    def row(name: str, found: dict[str, Any]) -> list[str]:
        low_high = found["share_ci95"]
        band = "-" if low_high is None else f"{pct(low_high[0])} to {pct(low_high[1])}"
        agrees = {True: "yes", False: "no", None: "-"}[found["agrees"]]
        restart = "-" if found["restart_s"] is None else f"{dur(found['restart_s'])} ({found['restarts']})"
        measured = "-" if found["measured_share"] is None else pct(found["measured_share"])
        shown = [restart] if part["restarts_shown"] else []
        return [name, str(found["failures"]), measured, band, pct(found["stated_share"]), agrees, *shown]

    return [*(row(each["name"], each) for each in part["classes"]), row("the job's own", part["job"])]


def class_split_note(part: dict[str, Any]) -> str | None:
    """Which stated shares the log does not bear out, in a sentence; None when every one agrees."""
    off = [each["name"] for each in part["classes"] if each["agrees"] is False]
    if part["job"]["agrees"] is False:
        off.append("the job's own")
    if not off:
        return None
    names = off[0] if len(off) == 1 else f"{', '.join(off[:-1])} and {off[-1]}"
    verb = "lies" if len(off) == 1 else "lie"
    return (
        f"The stated share of {names} {verb} outside the log's 95 % interval: --save-preset writes the measured shares."
    )


def measured_rows(m: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(what, value, note) rows of what a run measured."""
    rows: list[tuple[str, str, str]] = []
    sketched = set(m.get("approximate") or ())

    def about(key: str) -> str:
        """A quantile read from the sketch is said to be approximate."""
        return " ≈" if key in sketched else ""

    for level in m["levels"]:
        p90 = f"p90{about(level['name'] + '.write_p90_s')} {dur(level['write_p90_s'])}"
        note = f"{p90}, {level['checkpoints']:,} checkpoints"
        if level["persist_s"] is not None:
            note += f"; persist {dur(level['persist_s'])}"
        rows.append((f"write time ({level['name']})", dur(level["write_s"]), note))
    if m["restart_s"] is not None:
        rows.append(("restart", dur(m["restart_s"]),
                     f"p90{about('restart_p90_s')} {dur(m['restart_p90_s'])}, {m['restarts']} restarts"))  # fmt: skip
    if m["interval_s"] is not None:
        note = "median work between checkpoints" + (" (≈, from a sketch)" if "interval_s" in sketched else "")
        if m["storage_every"] is not None:
            note += f"; storage with every {ordinal(m['storage_every'])}"
        rows.append(("interval used", dur(m["interval_s"]), note))
    if m["memory_share"] is not None:
        rows.append(("served from memory", pct(m["memory_share"]), "of the failures"))
    if sketched:
        rows.append(("quantiles marked ≈", "approximate", "past 1e5 values: from a KLL sketch, ±0.3 % in rank"))
    rows.append(("failures", f"{m['failures']:,}", ""))
    if m["mtbf_s"] is not None:
        low, high = m["mtbf_ci95"]
        rows.append(("MTBF", dur(m["mtbf_s"]), f"95 %: {span([low, high], dur)}"))
    if m["shape"] is not None:
        rows.append(("Weibull shape", units.sig(m["shape"]), f"test of k = 1: p = {m['shape_p_value']:.2g}"))
    rows += mechanism_rows(m)
    rows += registry.measured_rows(m, sys.modules[__name__])
    return rows


def mechanism_rows(measured: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(what, value, note) rows of what a log's events measured for the registered mechanisms."""
    return registry.measured_entry_rows(measured, figure)


#: The realised split's parts, in the order the tables show them; a mechanism's own follow where the log has its
#: events (``log_split_parts``).
SPLIT_PARTS = (("useful", "useful work"), ("write", "checkpoint stalls"), ("rework", "re-done work"),
               ("restart", "restarts"))  # fmt: skip


def split_parts(document: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The (key, name) of each part of ``analyze``'s realised split that the run has."""
    parts = SPLIT_PARTS + registry.log_split_parts(document["measured"])
    return parts + (SILENT_PARTS if document["measured"].get("silent") is not None else ())


#: The silent events' part of the split, only with silent events in the log.
SILENT_PARTS = (("silent", "silent events (rolled back, skipped)"),)


def model_rows(model: dict[str, Any]) -> list[tuple[str, str]]:
    rows = [
        ("effective at the interval used", pct(model["effective_at_interval"])),
        ("optimal interval", dur(model["optimal_interval_s"])),
        ("effective at the optimum", pct(model["optimal_effective"])),
        ("robust interval", dur(model["robust_interval_s"])),
        ("gain", f"{model['gain_pp']:.3g} pp"),
    ]
    if model["gain_gpu_hours"] is not None:
        rows.append(("gain over this run", f"{model['gain_gpu_hours']:,.0f} GPU-hours"))
    elastic = model.get("elastic")
    if elastic is not None:
        rows += [
            ("groups up (approximate)", pct(elastic["groups_up_share"])),
            ("whole-job MTBF", dur(elastic["whole_job_mtbf_s"])),
            ("lost to groups down", pct(elastic["groups_down_loss"])),
            ("lost to quorum pauses", pct(elastic["quorum_loss"])),
        ]
    return rows


def model_verdict(model: dict[str, Any], realised: float) -> str:
    if model["agrees"]:
        return (
            f"The run got what the model predicts: {pct(realised)} realised against"
            f" {pct(model['effective_at_interval'])} ({model['difference_pp']:+.3g} pp, within the run's"
            " 95 % interval)."
        )
    return model_disagrees(model["difference_pp"])


def saved_preset(path: str, base: str, changed: tuple[str, ...]) -> str:
    """What ``optimize --save-preset`` says it did, on stderr."""
    what = f", changed: {', '.join(changed)}" if changed else ", unchanged"
    return f"saved {path} (from {base}{what})"


def parts_missing(names: list[str]) -> str:
    """Restart parts left out of a restart given by parts."""
    return f"the restart is given by parts without {', '.join(names)}: each counts 0"


def sentence(text: str) -> str:
    """``text`` as a sentence: its first letter upper-case (the rest as written), a full stop at the end."""
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def nesting(names: list[str], intervals: list[float]) -> str:
    """Nested tiers in words: ``memory every 4.88 min, local nvme with every 9th memory checkpoint
    (43.9 min), storage with every 6th local nvme checkpoint (4.39 h)``."""
    parts = [f"{names[0]} every {dur(intervals[0])}"]
    for below, name, every, interval in zip(names, names[1:], every_nth(intervals)[1:], intervals[1:], strict=False):
        which = f"every {ordinal(every)} {below} checkpoint" if every != 1 else f"every {below} checkpoint"
        parts.append(f"{name} with {which} ({dur(interval)})")
    return ", ".join(parts)


# ---------------------------------------------------------------- reading framework logs

#: What each inference of a reading is called (keys: ckptcalc.logs.adapter.NOTES).
INFERENCES = {
    "inferred_failures": "failures inferred between attempts",
    "rebuilt_times": "times rebuilt from per-iteration times",
    "unmatched_starts": "saves or restores with no end",
    "unmatched_ends": "ends with no start",
    "duplicates": "duplicate lines (other ranks)",
    "naive_timestamps": "timestamps without a zone",
    "inferred_times": "events timed by the nearest earlier stamp",
    "coalesced_failures": "reports of one failure merged (other ranks)",
}

#: Where the year of timestamps without one came from.
YEAR_FROM = {"year": "given with --year", "mtime": "the file's modification time", "today": "the current year"}


def inference_rows(reading: dict[str, Any], skip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(what, count) rows of what a reading inferred, non-zero ones only (but those in ``skip``), and
    where the year came from."""
    rows = [(INFERENCES[key], f"{count:,}") for key, count in reading["inferred"].items() if count and key not in skip]
    if reading.get("year_from") is not None:
        rows.append(("year of the timestamps", YEAR_FROM[reading["year_from"]]))
    return rows


def events_header(document: dict[str, Any]) -> str:
    """The first line of ``events``' summary."""
    reading = document["reading"]
    where = document["output"] if document["output"] is not None else "standard output"
    files = f"{reading['files']} files" if reading["files"] > 1 else document["logs"][0]
    return f"{document['events']:,} events from {files} ({reading['format']}) written to {where}"


def figure(kind: str, value: float) -> str:
    """A mechanism's figure in words by its unit kind (a share as a percentage, a duration, a count)."""
    if kind == "fraction":
        return pct(value)
    if kind == "duration":
        return dur(value)
    if kind == "count":
        return units.format_count(value)
    return units.sig(value)


def all_down(share: float) -> str:
    """The elastic groups' analytic form is out of its range: all groups down is common."""
    return (
        f"{pct(share)} of whole-job failures are all elastic groups down at once: the analytic form"
        " is beyond the range checked against the simulation (docs/model.md §14.6); `ckptcalc simulate` answers"
    )


def pauses(share: float) -> str:
    """The elastic groups' analytic form is out of its range: the groups are often paused."""
    return (
        f"the elastic groups are in quorum pauses {pct(share)} of the running time: the analytic form"
        " is beyond the range checked against the simulation (docs/model.md §14.6); `ckptcalc simulate` answers"
    )


# ------------------------------------------------------------ storage (docs/model.md §17)

#: The loss table's row for the persist's slowdown, and its note: it is part of the write share above.
SLOWDOWN_ROW = "slowdown"
SLOWDOWN_NOTE = "part of write"


def busy_storage(tier: str, share: float, limit: float) -> str:
    """A tier whose storage is busy more than ``--max-busy`` of the time."""
    return (
        f"the {tier} tier keeps its storage busy {pct(share)} of the time (write / time between checkpoints),"
        f" above {pct(limit)} (--max-busy): other jobs and reads share what is left"
    )


def written_bound(limit: float) -> str:
    """The optimum held back by the daily write limit."""
    return (
        f"the storage interval is held at the shortest that writes at most {units.format_size(limit)}"
        " a day (--max-written-per-day)"
    )


def overloaded(tier: str, share: float) -> str:
    """A schedule whose tier would be writing all the time: it cannot run."""
    return (
        f"the {tier} tier would keep its storage busy {pct(share)} of the time (write / time between checkpoints):"
        " a write would start before the last ends; lengthen its interval"
    )


def storage_lines(found: dict[str, Any] | None) -> list[str]:
    """The storage load of a document's ``storage`` block: each tier's busy share and bytes a day, what
    it retains, and each registered mechanism's lines (what a limit costs)."""
    if found is None:
        return []
    parts = [
        f"{t['name']} busy {pct(t['storage_busy_share'])} of the time, {units.format_size(t['bytes_written_per_day'])}"
        " a day"
        for t in found["tiers"]
    ]
    owned = registry.load_lines(found, units.format_size)
    lines = [f"Storage load: {'; '.join(parts)}."]
    lines += [line for after, line in owned if after == "load"]
    if found.get("bytes_retained") is not None:
        grows = found.get("kept_for_good_bytes_per_day")
        if found.get("retained_over_run"):
            more = " at the end of the run"
        elif grows is not None:
            more = f", and {units.format_size(grows)} more kept for good per day of work"
        else:
            more = ""
        lines.append(f"Retained in storage: {units.format_size(found['bytes_retained'])}{more}.")
    lines += [line for after, line in owned if after == "retained"]
    return lines


def storage_lever(key: str, changed: Any, gpus: float | None, base: Any) -> str:
    """A tier subset's lever (``without local nvme``: the tiers of ``base`` that ``changed`` drops)."""
    kept = {str(level.name) for level in changed.levels()}
    dropped = [str(level.name) for level in base.levels() if str(level.name) not in kept] if base is not None else []
    return f"without {' and '.join(dropped) or 'some tiers'} (their failures recover from the next tier up)"


# ------------------------------------------------------------ silent events and retention (§16)


def span_of_days(low_s: float, high_s: float | None) -> str:
    """A band of mean times between events as events per day, fewest first (``high_s`` None: from 0)."""
    return f"{per_day(high_s):.3g} to {per_day(low_s):.3g} per day"


_percent = units.short_percent


# --markdown: plain text that ckptcalc.output.markdown escapes, except where a piece is said to be
# Markdown already.


def markdown_title(command: str, preset: str | None) -> str:
    """A Markdown document's title: ``ckptcalc optimize: llama3-405b``."""
    return f"ckptcalc {command}" if preset is None else f"ckptcalc {command}: {preset}"


def markdown_headline(interval: str, effective: str, dominant: str) -> str:
    """``optimize --markdown``'s first line; the three pieces are Markdown already (escaped, perhaps
    emphasised), and the words around them hold no markup."""
    return f"Optimal interval {interval}, effective time {effective} (exact model); {dominant} dominates."


def markdown_band(span_text: str) -> str:
    return f"MTBF 95 % interval {span_text}:"


MARKDOWN_LEVERS = "Levers (one change at a time, re-optimised):"
MARKDOWN_INPUTS = "Inputs:"
MARKDOWN_RESULTS = "Exact model, shares of elapsed time:"
MARKDOWN_LEVELS = "Schedule of every level:"


def of_scenario(name: str, message: str) -> str:
    """A warning about one scenario of several: ``restart=2min: ...``."""
    return f"{name}: {message}"


def markdown_check_title(floor: str, risk: str | None) -> str:
    """``check --markdown``'s title: the floor, and the silent-event risk allowed where one is."""
    more = "" if risk is None else f", silent risk at most {risk}"
    return f"ckptcalc check: floor {floor}{more}"


def markdown_sweep_title(over: str, preset: str | None) -> str:
    return markdown_title(f"sweep over {over}", preset)


def failure_law(shape: float | None) -> str:
    """``exponential``, or ``Weibull 0.7`` with a shape."""
    return "exponential" if shape is None else f"Weibull {units.sig(float(shape))}"


def level_list(names: list[str], is_async: bool) -> str:
    """The levels of a job, nearest first: ``memory+storage``, ``storage (async)``."""
    return "+".join(names) + (" (async)" if is_async else "")


def analyze_markdown_title(log: str) -> str:
    return f"Run analysis: {log}"


def analyze_markdown_line(wall_s: float, realised: dict[str, Any]) -> str:
    """``analyze --markdown``'s first line: the wall time, effective time with its interval, goodput."""
    low, high = realised["effective_ci95"]
    return (
        f"Wall time {dur(wall_s)}; effective {pct(realised['effective'])} (95 %: {pct(low)} to {pct(high)}),"
        f" goodput {pct(realised['goodput'])}."
    )


# ------------------------------------------------------------------ report

#: The report's headings and fixed sentences, by what they label (templates print nothing else of their own).
REPORT = {
    "title": "Checkpoint design review",
    "generated": "Generated by ckptcalc from the inputs below; ckptcalc report --check FILE tells whether it is"
    " still what they give.",
    "contents": "Contents",
    "scenario": "Scenario: {name}",
    "inputs": "Inputs and their sources",
    "input": "input",
    "value": "value",
    "source": "source",
    "schedule": "Schedule, every tier",
    "tier": "tier",
    "interval": "interval",
    "optimal": "optimal",
    "stall": "stall",
    "serves": "serves",
    "restart": "restart",
    "split": "Where the time goes",
    "term": "term",
    "of_time": "of time",
    "of_loss": "of loss",
    "total": "total loss",
    "effective": "effective",
    "curve": "Loss against the interval",
    "levers": "Levers (one change at a time, re-optimised)",
    "lever": "lever",
    "gain": "gain",
    "no_levers": "No lever to show for this scenario.",
    "mechanisms": "Mechanisms",
    "band": "MTBF band and the robust interval",
    "no_band": "The preset states no 95 % interval of the MTBF; give --mtbf-ci LOW:HIGH for the band and the robust"
    " interval.",
    "warnings": "Warnings",
    "plan": "Whole runs: the completion distribution",
    "quantile": "share of runs",
    "wall": "wall time",
    "failures": "failures",
    "no_plan": "Whole runs are simulated for one or two levels; with three or more tiers, the expected run time"
    " is the work over the effective time above.",
    "log": "The failure log",
    "fit": "Fit of the failures",
    "survival": "Survival of the gaps between failures",
    "analyze": "The run's realised split",
    "part": "part",
    "cause": "cause",
    "lost": "time lost",
    "share": "share",
    "measured": "Measured",
    "model": "The model at the measured inputs",
    "no_model": "The log is not enough for the model at its inputs.",
    "figure": "figure",
    "optimum": "optimum {interval}",
    "axis_interval": "storage interval ({unit})",
    "axis_lost": "share of time lost (%)",
    "axis_wall": "wall time to finish ({unit})",
    "axis_runs": "runs",
    "axis_gap": "time between failures ({unit})",
    "axis_survival": "share of gaps longer (survival)",
    "legend_log": "log (Kaplan–Meier)",
    "legend_exponential": "exponential fit",
    "legend_weibull": "Weibull fit",
    "charts_omitted": "Charts are in the HTML form of this report (ckptcalc report --html).",
    "measured_scenario": "Re-run at the inputs the log measured (as analyze --save-preset writes them over the"
    " preset), the preset's value beside each one the log changed.",
    "measured_source": "measured in the log",
    "measured_refused": "The preset as it states itself: the log's measurements cannot be written over it ({reason}).",
    "preset_value": "preset's value",
    "no_preset_value": "not stated",
    "derived_source": "the preset's (from its parameters)",
}


def report_dominant(term: str, share: float) -> str:
    """The split's verdict: the dominant term, its share of the loss and why it arises."""
    return f"The dominant term is {term} ({pct(share)} of the loss): {_WHY.get(term, term)}."


def report_curve(optimum_s: float, effective: float) -> str:
    """The caption of the loss-versus-interval chart."""
    return f"The total loss is lowest at the marked optimum, {dur(optimum_s)} ({pct(effective)} effective)."


def report_mechanisms(document: dict[str, Any]) -> list[str]:
    """What in a scenario does the recovering: the levels and who they serve, in-place and notice recovery."""
    lines = [
        f"{level['name']}: {pct(level['share_of_failures'])} of failures restart from it in"
        f" {dur(level['restart_s'])}, {dur(level['stall_s'])} stall per checkpoint"
        for level in document["levels"]
    ]
    found = document["inputs"]
    lines.extend(registry.input_report_lines(found, units.format_rate))  # the failure classes' (docs/model.md §13)
    lines += registry.report_lines(document, figure)
    lines.append(f"model: {document['model']}; failures {found['failure_dist']}")
    return lines


#: Where the MTBF the model uses came from, by the documents' ``mtbf_source``.
REPORT_MTBF_SOURCES = {
    "mtbf": "as stated",
    "gpu_mtbf": "per-GPU MTBF / GPUs",
    "failures": "window / failures",
    "scaled": "per-GPU rate of the base held",
    "failures_bound": "95 % lower bound: no failure in the window",
}


def report_mtbf_source(source: str) -> str:
    """Where the MTBF the model uses came from."""
    return REPORT_MTBF_SOURCES.get(source, source)


def report_source(source: str, path: str, public: str) -> str:
    """Where an input came from: the preset file (its key is the row's), or ``given`` for an input passed in."""
    if source == public:
        return f"given ({public})"
    return source.removesuffix(f": {path}")


def report_fit_lines(document: dict[str, Any]) -> list[str]:
    """The fit's figures as sentences: the MTBF with its interval, and the Weibull test."""
    lines = [f"{document['interruptions']:,} interruptions in {dur(document['window_s'])}."]
    if document["mtbf_s"] is not None:
        lines.append(f"MTBF {dur(document['mtbf_s'])} (95 %: {span(document['mtbf_ci95'], dur)}).")
    weibull = document["weibull"]
    if weibull is not None:
        lines.append(
            f"Weibull k = {units.sig(weibull['shape'])} (test of k = 1: {p_value(weibull)})."
            f" {weibull_verdict(weibull['verdict'])}"
        )
    return [*lines, *registry.report_lines(document, figure)]


def report_fit_window(alone: dict[str, Any]) -> str:
    """How ``fit`` alone would count the same failures, where its window differs from the run's."""
    mtbf = "no MTBF (only a bound)" if alone["mtbf_s"] is None else f"MTBF {dur(alone['mtbf_s'])}"
    return (
        "Counted over the whole run, from its start to its end, as the run's split counts them. fit alone"
        " opens its window at the first failure (which starts the clock) and closes it at the last:"
        f" {alone['interruptions']:,} interruptions in {dur(alone['window_s'])}, {mtbf}."
    )


def report_plan(document: dict[str, Any]) -> str:
    """The plan's header line in a report."""
    return f"{dur(document['work_s'])} of work, {document['runs']:,} runs, seed {document['seed']}."


def report_stale(path: str) -> str:
    """``report --check`` on a file the current inputs no longer give."""
    return (
        f"{path} is stale: the current inputs give a different report; write it again with --html or --markdown"
        " and --force"
    )


def report_written(path: str) -> str:
    """What ``report`` says on stderr once the file is written."""
    return f"wrote {path}"


def report_checked(path: str) -> str:
    """What ``report --check`` says when the file is up to date."""
    return f"{path} is up to date"


def bare_count(name: str, where: str, value: float) -> str:
    """The warning for a parameter count below 10^6 or a checkpoint size below 1 MB, with what was
    likely meant: ``params 70 is 70 parameters; did you mean 70B (70e9)?``."""
    number = f"{value:g}"
    # A preset names its key (``cluster.toml: checkpoint.params = 70``), the API and flags the input.
    where = f"{where} =" if ": " in where else where
    if name == "params":
        return f"{where} {number} is {number} parameters; did you mean {number}B ({number}e9)?"
    return f"{where} {number} is {number} bytes; did you mean {number}GB?"


def strict(message: str, others: int) -> str:
    """A warning that ``--strict`` turns into an error (``others``: how many more warned)."""
    more = f"and {others} more warning{'s' if others > 1 else ''}; " if others else ""
    return f"{message} ({more}--strict turns every warning into an error)"


def unknown_value(key: str, nearest: list[str]) -> str:
    """``--value`` given a key the document does not have, with the nearest keys it does."""
    hint = f"; did you mean {', '.join(repr(p) for p in nearest)}?" if nearest else ""
    return f"unknown key {key!r}{hint} (ckptcalc schema COMMAND lists them all)"


# ------------------------------------------------------------ what was assumed (issue 35)


def _assumed_value(name: str, value: float) -> str:
    from ckptcalc.inputs.fields import BY_NAME

    kind = BY_NAME[name].kind
    if kind == "fraction":
        return pct(value)
    formats: dict[str, Callable[[float], str]] = {
        "size": units.format_size,
        "rate": units.format_rate,
        "duration": dur,
        "count": units.format_count,
    }
    return formats[kind](value) if kind in formats else f"{value:g}"


def assumed_how(item: Any) -> str:
    """How an assumed value came (an :class:`ckptcalc.inputs.scenario.Assumed`), as JSON ``inputs.sources``
    states it: ``default, llama3-405b preset``, ``rate held from llama3-405b at 16384 GPUs``, ``default``."""
    if item.how == "preset":
        return f"default, {item.preset} preset"
    if item.how == "held":
        at = f" at {units.format_count(item.gpus)} GPUs" if item.gpus is not None else ""
        return f"rate held from {item.preset}{at}"
    return "default"


def assumed(items: Any, gpus: float | None) -> list[str]:
    """One line per assumed value: ``restart 10.0 min (default, llama3-405b preset)``; a held per-GPU rate
    as the job MTBF it makes (``MTBF 12.4 h (per-GPU 2120 d, rate held from llama3-405b at 16384 GPUs)``)."""
    from ckptcalc.inputs.fields import BY_NAME

    lines = []
    for item in items:
        if item.how == "held" and gpus:
            lines.append(f"MTBF {dur(over_gpus(item.value, gpus))} (per-GPU {dur(item.value)}, {assumed_how(item)})")
            continue
        lines.append(f"{BY_NAME[item.name].public} {_assumed_value(item.name, item.value)} ({assumed_how(item)})")
    return lines


#: The heading of the assumed values, in the tables and Markdown.
ASSUMED = "Assumed (not given, nor from a preset you named):"


def check_bounds(row: dict[str, Any], floor: float | None, names: dict[str, str]) -> str:
    """What a failing ``check`` line adds: the bound it fails, named as the caller writes it (``names`` by
    ``min_effective`` and ``max_silent_risk``): ``; below --min-effective 90.0 %``."""
    if row["passed"] or row["effective"] is None:
        return ""
    failing = []
    if floor is not None and row["min_effective_passed"] is False:
        failing.append(f"below {names['min_effective']} {pct(floor)}")
    found = row.get("silent")
    if found is not None and found["passed"] is False:
        failing.append(f"silent risk above {names['max_silent_risk']} {pct(found['max_silent_risk'])}")
    return "".join(f"; {text}" for text in failing)


#: The report's summary of every scenario side by side (issue 35).
REPORT_SUMMARY = {
    "title": "Summary: every scenario side by side",
    "scenario": "scenario",
    "effective": "effective",
    "intervals": "interval, every tier",
    "dominant": "dominant",
    "best": "best lever",
    "none_pays": "none pays",
    "effect": "effect",
}


def lever_effect(gain_pp: float) -> str:
    """A lever's effect with its sign in words: ``gains 1.22 pp``, ``costs 1.70 pp``, ``no change``."""
    sign, size = change(gain_pp)
    if sign == 0:
        return "no change"
    return f"{'gains' if sign == 1 else 'costs'} {size:.2f} pp"


def tier_intervals(levels: list[dict[str, Any]]) -> str:
    """Every tier's interval in one cell: ``memory 4.88 min, storage 4.39 h``."""
    return ", ".join(f"{level['name']} {periodic_interval(level['interval_s'])}" for level in levels)


def whole_multiples(memory: str, storage: str) -> str:
    """Why a nested schedule's curve steps: the storage interval is a whole multiple of the memory one."""
    return (
        f"Every tier's optimum is marked (memory {memory}, storage {storage}). Storage is written with every"
        " m-th memory checkpoint, m a whole number: along the curve the memory interval is re-fitted to the"
        " storage interval / m, and each step of the sawtooth is where the best m changes by one."
    )


def compare_assumed(scenarios: list[dict[str, Any]]) -> list[str]:
    """What compare's columns assume, one line per column that assumes anything: the first column's
    values, and for each other column only what it assumes beyond the first (``also ...``)."""
    first = scenarios[0]["inputs"].get("assumed") or [] if scenarios else []
    found = [f"{scenarios[0]['name']}: {'; '.join(first)}"] if first else []
    for scenario in scenarios[1:]:
        more = [line for line in scenario["inputs"].get("assumed") or [] if line not in first]
        if more:
            found.append(f"{scenario['name']}: {'also ' if first else ''}{'; '.join(more)}")
    return found
