"""Rich tables for the terminal. The only module that imports Rich.

Imported lazily by the command line, and only when a table is printed, so
``--json`` never pays for Rich.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from ckptcalc.errors import printable
from ckptcalc.inputs import units
from ckptcalc.inputs.scenario import DEFAULT_BYTES_PER_PARAM, Job, anatomy
from ckptcalc.mechanisms import registry
from ckptcalc.mechanisms.base import IN_PLACE, NOWHERE
from ckptcalc.mechanisms.registry import slowed_share as storage_slowdown
from ckptcalc.model.evaluation import TERMS, Result, interval_comparison, unneeded
from ckptcalc.model.statistics import points, shares
from ckptcalc.output import documents, wording

if TYPE_CHECKING:
    from ckptcalc.inputs.grid import Sweep

TERM_STYLE = {"write": "cyan", "rework": "yellow", "restart": "magenta"}
TERM_FORMULA = {"write": "stall / interval", "rework": "interval / 2M", "restart": "restart / M"}
MTBF_SOURCE = {
    "mtbf": "given",
    "gpu_mtbf": "per-GPU MTBF / GPUs",
    "failures": "window / failures",
    "scaled": "per-GPU rate of the base held",
    "failures_bound": "95 % lower bound: no failure in the window",
}

pct = units.format_percent
dur = units.format_duration


class _Console(Console):
    """Rich's console, except that a reader leaving the pipe is left to the command line, which
    exits 0 for it (Rich would exit 1), and that text from files and arguments cannot steer the
    terminal: control characters in it print as escapes (Rich's own colour codes are separate
    control segments, untouched)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError

    def render_str(self, text: str, *args: Any, **kwargs: Any) -> Text:
        return super().render_str(printable(text), *args, **kwargs)

    def render(self, renderable: Any, options: Any = None) -> Any:
        for segment in super().render(renderable, options):
            if segment.control or not segment.text:
                yield segment
            else:
                cleaned = printable(segment.text)
                yield segment if cleaned == segment.text else Segment(cleaned, segment.style, segment.control)


def console(stderr: bool = False) -> Console:
    """A console that honours NO_COLOR and writes plain text to pipes."""
    return _Console(
        stderr=stderr,
        highlight=False,
        markup=False,  # user text (preset names, settings like "[checkpoint]") prints as written
        emoji=False,
        no_color="NO_COLOR" in os.environ,
        soft_wrap=False,
        file=sys.stderr if stderr else sys.stdout,
    )


def _grid(title: str | None = None, narrow: bool = False) -> Table:
    """A borderless table; ``narrow`` keeps one space between columns for terminals under 80 columns."""
    table = Table(
        padding=(0, 0) if narrow else (0, 1),
        box=box.SIMPLE_HEAD,
        title=title,
        title_justify="left",
        title_style="bold",
        pad_edge=False,
        show_edge=False,
        collapse_padding=True,
        min_width=len(title) if title else None,
    )
    return table


def mtbf_note(job: Job) -> str:
    """Where the failure interval came from, with its arithmetic."""
    s = job.scenario
    gpus = units.format_count(job.gpus) if job.gpus is not None else "?"
    if job.mtbf_source == "failures" and s.window_s is not None and s.failures is not None:
        return f"{dur(s.window_s)} / {units.format_count(s.failures)} failures"
    if job.mtbf_source in ("gpu_mtbf", "scaled") and job.gpu_mtbf_s is not None:
        note = f"{dur(job.gpu_mtbf_s)} per GPU / {gpus} GPUs"
        return note + (", rate held" if job.mtbf_source == "scaled" else "")
    if job.mtbf_source == "mtbf" and s.source_of("mtbf_s"):
        return str(s.source_of("mtbf_s"))  # fitted from LOG, measured from LOG: what a saved preset recorded
    return MTBF_SOURCE[job.mtbf_source]


def sourced(job: Job, name: str, note: str) -> str:
    """``note`` with how the value of field ``name`` came, where the preset records it (``[sources]``)."""
    return "; ".join(filter(None, [note, job.scenario.source_of(name)]))


def per_gpu_note(job: Job, name: str) -> str:
    """How a rate stated per GPU makes its aggregate: ``25.0 GB/s per GPU × 16384 GPUs``; else empty."""
    value = job.scenario.values().get(name)
    if not isinstance(value, units.PerGpu) or job.gpus is None:
        return ""
    return units.format_per_gpu(value, job.gpus)


def inputs_table(job: Job, narrow: bool = False) -> Table:
    s, c = job.scenario, job.config
    parts = restart_notes(job)
    table = _grid("Inputs", narrow)
    table.add_column("input", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("note", overflow="fold")
    note = ""
    if s.checkpoint_bytes is None and s.params is not None:
        note = f"{units.format_count(s.params)} params × {s.bytes_per_param or DEFAULT_BYTES_PER_PARAM:g} B"
    table.add_row("checkpoint size", units.format_size(c.checkpoint_bytes), note)
    table.add_row(
        "storage bandwidth", units.format_rate(c.bandwidth), sourced(job, "bandwidth", per_gpu_note(job, "bandwidth"))
    )
    table.add_row("write time δ", dur(c.write_s), "size / bandwidth")
    if c.snapshot_bandwidth is not None:
        note = "; ".join(filter(None, [per_gpu_note(job, "snapshot_bandwidth"), "asynchronous"]))
        note = sourced(job, "snapshot_bandwidth", note)
        table.add_row("snapshot bandwidth", units.format_rate(c.snapshot_bandwidth), note)
    if c.replica_survival is not None:
        assert c.memory_bandwidth is not None and c.memory_restart_s is not None
        table.add_row("replica survival", pct(c.replica_survival), sourced(job, "replica_survival", "of failures"))
        memory_note = sourced(job, "memory_bandwidth", per_gpu_note(job, "memory_bandwidth"))
        table.add_row("memory bandwidth", units.format_rate(c.memory_bandwidth), memory_note)
        table.add_row(
            "memory restart", dur(c.levels()[0].restart_s), sourced(job, "memory_restart_s", parts.get("memory", ""))
        )
    for level, tier, stated in zip(c.levels()[1:-1], c.middle, s.middle, strict=True):
        rate = ""
        if "bandwidth" in stated.per_gpu and job.gpus is not None:
            rate = f"{units.format_per_gpu(stated.bandwidth, job.gpus)}; "
        table.add_row(
            f"tier {tier.name}",
            units.format_rate(tier.bandwidth),
            f"{rate}{pct(tier.share)} of failures; restart {dur(level.restart_s)}" + _parts_note(parts.get(level.name)),
        )
    table.add_row("MTBF", dur(c.mtbf_s), mtbf_note(job))
    if job.mtbf_band is not None:
        low, high = job.mtbf_band
        table.add_row("MTBF 95 % interval", f"> {dur(low)}" if high is None else f"{dur(low)} to {dur(high)}", "")
    if c.shape is not None:
        table.add_row("failures", f"Weibull k = {units.sig(float(c.shape))}", sourced(job, "shape", "mean: the MTBF"))
    if job.gpus is not None:
        table.add_row("GPUs", units.format_count(job.gpus), "")
    table.add_row("restart", dur(c.storage_restart_s), sourced(job, "restart_s", parts.get("storage", "")))
    for row in registry.class_rows(c, units.format_rate, dur, pct):  # the failure classes' (docs/model.md §13)
        table.add_row(*row)
    for label, kind, value, note in registry.config_rows(c):
        table.add_row(label, wording.figure(kind, value), note)
    for row in registry.input_rows(job, wording.SHOW):
        table.add_row(*row)
    return table


def figure_table(title: str, rows: list[Any], narrow: bool = False) -> Table:
    """A mechanism's figures (the spare pool's, docs/model.md §15): rows of figure, value and note."""
    table = _grid(title, narrow)
    table.add_column("figure", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("note", overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def part_table(key: str, found: dict[str, Any], narrow: bool = False) -> Table:
    """A failure class's part ``key`` of a document, as its home words it (silent events: docs/model.md §16)."""
    table = _grid(registry.part_title(key), narrow)
    table.add_column("figure", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("note", overflow="fold")
    for row in registry.part_rows(key, found, wording):
        table.add_row(*row)
    return table


def _every_steps(count: int) -> str:
    return "every step" if count == 1 else f"every {count} steps"


def restart_notes(job: Job) -> dict[str, str]:
    """Each level's restart taken apart, as a note: ``detect 5 min + reschedule 2 min + reload 3.24 s
    + warmup 3 min`` (levels whose restart is a whole have none)."""
    notes = {}
    for name, p in anatomy(job):
        reload = f"reload {dur(p.reload_s)}" if p.read_bandwidth is not None else "reload 0 s (no read bandwidth)"
        notes[name] = (
            f"detect {dur(p.detect_s)} + reschedule {dur(p.reschedule_s)} + {reload} + warmup {dur(p.warmup_s)}"
        )
    return notes


def _parts_note(note: str | None) -> str:
    return f" = {note}" if note else ""


def uncertainty_table(band: dict[str, Any], narrow: bool = False) -> Table:
    """The answer across the MTBF's 95 % interval, and the robust interval."""
    table = _grid(wording.uncertainty_title(band), narrow)
    table.add_column("", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("note", overflow="fold")
    for row in wording.uncertainty_rows(band):
        table.add_row(*row)
    return table


def levels_table(result: Result, narrow: bool = False) -> Table:
    given = any(item.level.interval_s is not None for item in result.levels)
    table = _grid("Levels", narrow)
    slowed = any(float(item.level.slowdown_s) > 0 for item in result.levels)
    gap = ["-"] if slowed else []  # the slowdown column of the failure classes
    names = ["level", "stall", *(["slowdown"] if slowed else []), "persist", "interval",
             *(["optimal"] if given else []), "serves", "restart"]  # fmt: skip
    for name in names:
        table.add_column(name, justify="left" if name == "level" else "right", no_wrap=True)
    c = result.config
    # The failure classes of docs/model.md §13 first: they go back less far than any periodic tier. The one
    # that goes back nowhere, then the one in place (a one-step tier with no stall).
    for found in sorted(c.classes, key=lambda k: k.landing != NOWHERE):
        if found.landing == NOWHERE:
            table.add_row(found.label, "-", *gap, "-", "-", *(["-"] if given else []), pct(float(found.share)),
                          dur(found.restart_s))  # fmt: skip
        elif found.landing == IN_PLACE:
            step = dur(c.step)
            table.add_row(found.label, dur(0.0), *gap, "-", step, *([step] if given else []),
                          pct(float(found.share)), dur(found.restart_s))  # fmt: skip
    for item in result.levels:
        lv = item.level
        optimal = [wording.periodic_interval(float(item.optimal_interval_s))] if given else []
        table.add_row(
            lv.name,
            dur(lv.snapshot_s),
            *([dur(lv.slowdown_s) if lv.slowdown_s else "-"] if slowed else []),
            dur(lv.persist_s) if lv.persist_s else "-",
            wording.periodic_interval(float(item.interval_s)),
            *optimal,
            pct(lv.share),
            dur(lv.restart_s),
        )
    return table


def loss_table(result: Result, title: str, narrow: bool = False) -> Table:
    table = _grid(title, narrow)
    table.add_column("term", no_wrap=True)
    table.add_column("of time", justify="right", no_wrap=True)
    table.add_column("of loss", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    top = TERMS[int(result.dominant)]
    total = float(result.total)
    parts = {term: float(getattr(result, term)) for term in TERMS}
    of_loss = shares(parts, total)
    for term, value in parts.items():
        mark = "◀ dominant" if term == top else ""
        table.add_row(Text(term, style=TERM_STYLE[term]), pct(value), pct(of_loss[term]), mark)
    for name, value, note in registry.split_rows(result):
        table.add_row(name, pct(float(value)), pct(float(value) / total) if total > 0 else "", note)
    slowdown = storage_slowdown(result)
    if slowdown > 0:
        of_total = pct(slowdown / total) if total > 0 else ""
        table.add_row(wording.SLOWDOWN_ROW, pct(slowdown), of_total, wording.SLOWDOWN_NOTE)
    table.add_section()
    table.add_row(Text("total loss", style="bold"), pct(total), "100 %", "")
    table.add_row(Text("effective", style="bold green"), pct(result.effective), "", "")
    return table


def exact_table(result: Result, narrow: bool = False) -> Table | None:
    rows = interval_comparison(result.config)
    if rows is None:
        return None
    table = _grid("Interval by model (effective: exact model)", narrow)
    table.add_column("model", no_wrap=True)
    table.add_column("interval", justify="right", no_wrap=True)
    table.add_column("effective", justify="right", no_wrap=True)
    names = {"young": "Young (first order)", "daly": "Daly (higher order)", "exact": "exact (Lambert W)"}
    for name, tau, eff in rows:
        table.add_row(names[name], dur(tau), pct(eff))
    if result.config.interval_s is not None:
        table.add_row("given --interval", dur(result.interval_s), pct(result.effective))
    return table


def optimize(job: Job, result: Result, preset: str | None, default_preset: bool, document: dict[str, Any]) -> None:
    out = console()
    header = f"preset {preset}" if preset else "no preset"
    if default_preset:
        header += " (the default; flags override it)"
    out.print(Text(f"ckptcalc optimize: {header}", style="bold"))
    narrow = out.width < 80
    out.print(inputs_table(job, narrow))
    _print_assumed(out, document)
    out.print()
    if len(result.levels) > 1 or job.config.is_async or job.config.has_recovery:
        out.print(levels_table(result, narrow))
        if job.config.is_nested:
            names = [str(item.level.name) for item in result.levels]
            out.print(wording.sentence(wording.nesting(names, [float(item.interval_s) for item in result.levels])))
        elif result.storage_every is not None:
            every = int(result.storage_every)
            which = "every memory checkpoint" if every == 1 else f"every {wording.ordinal(every)} memory checkpoint"
            out.print(
                f"Storage with {which} ({dur(result.memory_interval_s or 0.0)} × {every} = {dur(result.interval_s)})."
            )
        for caveat in result.caveats:
            if caveat.kind == "lag_bound":
                level = next(item for item in result.levels if item.level.name == caveat.level)
                out.print(wording.lag_bound(str(caveat.level), float(level.level.lag_s)))
        out.print()
    label = wording.model_label(result.config)
    line = f"Optimal storage interval: {dur(result.optimal_interval_s)}  ({label})"
    if job.config.is_nested:
        names = [str(item.level.name) for item in result.levels]
        line = f"Optimal: {wording.nesting(names, [float(i.optimal_interval_s) for i in result.levels])}  ({label})"
    elif result.optimal_storage_every is not None:
        line = (
            f"Optimal: memory every {dur(result.optimal_memory_interval_s or 0.0)}, storage with every"
            f" {wording.ordinal(int(result.optimal_storage_every))} ({dur(result.optimal_interval_s)})  ({label})"
        )
    if unneeded(job.config):
        line = wording.no_periodic_needed()
    out.print(Text(line, style="bold"))
    title = "Loss at the optimal interval (share of elapsed time)"
    if result.config.interval_s is not None or result.config.memory_interval_s is not None:
        title = f"Loss at the given interval ({dur(result.interval_s)})"
    out.print(loss_table(result, title, narrow))
    explanation = wording.first_order_line(result)
    if explanation is not None:
        out.print(explanation)
    for line in registry.result_lines(result, wording.figure):
        out.print(line)
    out.print()
    for title, _, rows in registry.figure_tables(document, wording.SHOW):
        out.print(figure_table(title, rows, narrow))
        out.print()
    for key in registry.part_keys():
        if document.get(key) is not None:
            out.print(part_table(key, document[key], narrow))
            out.print()
    if document["uncertainty"] is not None:
        out.print(uncertainty_table(document["uncertainty"], narrow))
        out.print()
    if document["interval_penalty_pp"] > 0 and title.startswith("Loss at the given"):
        out.print(wording.penalty(document["interval_penalty_pp"], result.effective, result.optimal_effective))
    table = exact_table(result, narrow)
    if table is not None:
        out.print(table)
        out.print()
    decisions(out, job, document, narrow)
    out.print(Text(f"verdict: {wording.verdict(result, document['levers'])}", style="bold"))
    warn([*documents.input_warnings(job), *documents.warnings(result)])


def amount(value: float) -> str:
    """3 significant figures with thousands separators: 929880.4 -> '930,000'."""
    if abs(value) < 1000:
        return units.sig(value)
    digits = len(str(int(abs(value))))
    return f"{round(value, 3 - digits):,.0f}"


def decisions(out: Console, job: Job, document: dict[str, Any], narrow: bool) -> None:
    """Goodput, cost, steps, levers and targets, as far as the document has them."""
    if document["discard"]:
        out.print(
            f"Goodput: {pct(document['goodput'])} (effective {pct(document['effective'])}"
            f" × (1 − {pct(document['discard'])} discarded))"
        )
    if document["lost_gpu_hours_per_day"] is not None:
        line = f"Lost: {amount(document['lost_gpu_hours_per_day'])} GPU-hours per day"
        if document["lost_cost_per_day"] is not None:
            line += (
                f", costing {amount(document['lost_cost_per_day'])} per day"
                f" and {amount(document['lost_cost_per_30_days'])} per 30 days"
            )
        out.print(line + ".")
    for line in wording.storage_lines(document.get("storage")):
        out.print(line)
    if document["optimal_interval_steps"] is not None:
        steps = document["optimal_interval_steps"]
        out.print(f"Checkpoint to storage {_every_steps(steps)} ({dur(document['step_time_s'])} a step).")
        for item in document["levels"][:-1]:
            out.print(f"Checkpoint to {item['name']} {_every_steps(item['optimal_interval_steps'])}.")
        for name, setting in document["settings"].items():
            out.print(Text(f"  {name:<16} {setting}"))
    if document["lost_gpu_hours_per_day"] is not None or document["optimal_interval_steps"] is not None:
        out.print()
    if document["levers"]:
        table = _grid("Levers (one change at a time, re-optimised)", narrow)
        table.add_column("lever", overflow="fold")
        table.add_column("effective", justify="right", no_wrap=True)
        table.add_column("gain", justify="right", no_wrap=True)
        for lever in document["levers"]:
            name = lever["name"]
            if "cluster_gain_pp" in lever:
                name += wording.cluster_gain(lever["cluster_gain_pp"])
            name += wording.break_even(lever.get("break_even"))
            table.add_row(name, pct(lever["effective"]), f"{lever['gain_pp']:+.2f} pp")
        out.print(table)
        out.print()
    if document["targets"] is not None:
        goal = pct(document["target"])
        table = _grid(f"Targets: what each input alone must reach for {goal} effective", narrow)
        table.add_column("input")
        table.add_column("needed", justify="right", no_wrap=True)
        table.add_column("now", justify="right", no_wrap=True)
        c = job.config
        found = document["targets"]
        rows = [
            ("storage bandwidth", "bandwidth_bytes_per_s", units.format_rate, c.bandwidth, "at least"),
            ("restart", "restart_s", dur, c.storage_restart_s, "at most"),
            ("MTBF", "mtbf_s", dur, c.mtbf_s, "at least"),
            ("GPUs", "gpus", units.format_count, job.gpus, "at most"),
        ]
        for name, key, fmt, now, bound in rows:
            if name == "GPUs" and now is None:
                continue
            value = found[key]
            if key in found.get("unbounded", []):
                needed = "any"
            else:
                needed = f"{bound} {fmt(value)}" if value is not None else "not reachable"
            shown = fmt(now) if now is not None else "-"
            if key == "bandwidth_bytes_per_s" and "bandwidth" in job.scenario.per_gpu and job.gpus:
                # Stated per GPU: the per-GPU figures beside the aggregates the model takes.
                gpus = job.gpus
                if value is not None and needed != "any":
                    needed += f" ({units.format_rate(units.PerGpu(value / gpus))})"
                shown += f" ({units.format_rate(units.PerGpu(now / gpus))})"
            table.add_row(name, needed, shown)
        out.print(table)
        out.print()


def warn(messages: list[str]) -> None:
    if not messages:
        return
    for message in messages:
        sys.stderr.write(f"warning: {printable(message, newlines=False)}\n")


def presets_list(rows: list[dict[str, Any]]) -> None:
    """One row per preset found: its name and description (the ``presets`` of ``presets list --json``)."""
    out = console()
    table = _grid()
    table.add_column("name", no_wrap=True)
    table.add_column("description", overflow="fold")
    for info in rows:
        title = info.get("title") or info["name"]
        described = info["description"] if title == info["name"] else wording.titled(title, info["description"])
        table.add_row(info["name"], described)
    out.print(table)


GLYPH = {"write": "█", "rework": "▒", "restart": "░"}
MAX_ROWS = 60


def _formatter(kind: str) -> Callable[[float], str]:
    return {
        "size": units.format_size,
        "rate": units.format_rate,
        "duration": units.format_duration,
        "count": units.format_count,
        "fraction": lambda v: units.sig(v, 4),
    }[registry.unit_shown(kind)]


def bar(write: float, rework: float, restart: float, scale: float, width: int) -> Text:
    """A horizontal stacked bar: one glyph and colour per term, ``scale`` fills ``width``."""
    text = Text()
    cells = [
        (term, value / scale * width if scale > 0 else 0.0)
        for term, value in zip(TERMS, (write, rework, restart), strict=True)
    ]
    used = 0
    running = 0.0
    for term, length in cells:
        running += length
        count = min(round(running), width) - used
        if count > 0:
            text.append(GLYPH[term] * count, style=TERM_STYLE[term])
            used += count
    return text


def legend() -> Text:
    text = Text("legend:")
    for term in TERMS:
        text.append("  ")
        text.append(GLYPH[term] * 2, style=TERM_STYLE[term])
        text.append(f" {term}")
    return text


def sweep(job: Job, run: Sweep, preset: str | None, points: int | None = None) -> None:
    """The sweep's rows (at most :data:`MAX_ROWS`); ``points`` is the whole grid's size when ``run``
    holds only the rows shown."""
    import numpy

    from ckptcalc.inputs.grid import kind

    out = console()
    result = run.result
    n = len(run.values)
    total = n if points is None else points
    rows = list(range(n)) if n <= MAX_ROWS else sorted({round(i * (n - 1) / (MAX_ROWS - 1)) for i in range(MAX_ROWS)})
    nearest = run.nearest_optimum
    if nearest >= 0 and nearest not in rows:
        rows = sorted({*rows, nearest})
    fmt = _formatter(kind(run.over))
    reoptimised = run.over != "interval"
    two = result.memory_interval_s is not None
    spacing = "log" if run.log else "linear"
    out.print(Text(f"ckptcalc sweep over {run.over}: {total} points, {spacing} spacing; preset {preset}", style="bold"))
    base = run.base
    if not reoptimised:
        optimum = f"Exact optimum τ* = {dur(base.optimal_interval_s)}"
        if base.optimal_storage_every is not None:
            optimum += f" = {dur(base.optimal_memory_interval_s or 0.0)} × {int(base.optimal_storage_every)} in memory"
        free = two and job.config.memory_interval_s is None
        out.print(optimum + " (marked ◀)" + ("; each row re-optimises the memory interval." if free else ""))
    elif two:
        out.print("Each row re-optimises the memory interval and how often storage follows (exact model).")
    else:
        out.print("Each row re-optimises the checkpoint interval (exact model).")

    def column(value: Any) -> Any:
        return numpy.broadcast_to(value, (n,))

    columns = {name: column(getattr(result, name)) for name in ("write", "rework", "restart", "total", "effective")}
    intervals = column(result.interval_s)
    memory = column(result.memory_interval_s) if two else None
    every = column(result.storage_every) if two else None
    dominant = column(result.dominant)
    scale = float(columns["total"][rows].max())
    cells_by_row = []
    for i in rows:
        cells: list[Any] = [fmt(float(run.values[i]))]
        if reoptimised:
            cells.append(dur(float(intervals[i])))
        if memory is not None and every is not None:
            cells.append(f"{dur(float(memory[i]))} × {int(every[i])}")
        cells += [
            units.sig(float(columns[name][i]) * 100.0) for name in ("write", "rework", "restart", "total", "effective")
        ]
        if reoptimised:
            cells.append(TERMS[int(dominant[i])])
        cells_by_row.append(cells)
    headers = [run.over, *(["interval"] if reoptimised else []), *(["memory × m"] if two else [])]
    headers += ["write", "rework", "restart", "total", "effect."]
    headers += ["dominant"] if reoptimised else []
    extra = registry.sweep_cells(run.over, run.values, result, wording.SHOW)
    after = headers.index("effect.") + 1
    for k, (header, cells) in enumerate(extra):
        at = after + k
        headers.insert(at, header)
        for i, row in zip(rows, cells_by_row, strict=True):
            row.insert(at, cells[i])
    narrow = out.width < (100 if reoptimised else 80) + (14 if two else 0) + (24 if extra else 0)
    if narrow and reoptimised:
        # The bar already shows which term dominates; keep room for it.
        headers.pop()
        cells_by_row = [cells[:-1] for cells in cells_by_row]
    gap = 1 if narrow else 2
    widths = [max(len(h), *(len(str(row[k])) for row in cells_by_row)) for k, h in enumerate(headers)]
    if two and sum(widths) + (gap + 1) * (len(widths) - 1) > out.width:
        # Too narrow for the memory schedule as well: the storage interval and the shares come first.
        k = headers.index("memory × m")
        del headers[k], widths[k]
        for cells in cells_by_row:
            del cells[k]
    # Every column but the last takes its width, the gap and a one-space divider. The bar column holds the bar
    # and " ◀", so the marker is never cropped; without room for bars, a column of its own holds the marker
    # when there is room for it (otherwise only the row's style marks it).
    room = out.width - sum(widths) - (gap + 1) * len(widths)
    width = min(40, room - 2)
    bars = width >= 6
    marker = bars or room >= 1

    table = Table(box=box.SIMPLE_HEAD, padding=(0, gap, 0, 0), pad_edge=False, show_edge=False)
    for header, size in zip(headers, widths, strict=True):
        table.add_column(header, justify="left" if header == "dominant" else "right", no_wrap=True, min_width=size)
    if marker:
        table.add_column("loss" if bars else "", no_wrap=True, min_width=width + 2 if bars else 1)
    for i, cells in zip(rows, cells_by_row, strict=True):
        cell = Text()
        if bars:
            write, rework, restart = (float(columns[name][i]) for name in ("write", "rework", "restart"))
            cell = bar(write, rework, restart, scale, width)
        if i == nearest:
            cell.append(" ◀" if bars else "◀")
        table.add_row(*cells, *([cell] if marker else []), style="bold reverse" if i == nearest else None)
    out.print("Shares of elapsed time, in % (exact model).")
    out.print(table)
    if len(rows) < n:
        out.print(f"({len(rows)} of {n} rows shown; --json or --csv give every point)")
    if bars:
        out.print(legend())
    elif marker or nearest < 0:
        out.print("(the terminal is too narrow for the loss bars)")
    else:
        out.print(f"(too narrow for the loss bars; ◀ marks {fmt(float(run.values[nearest]))})")
    warn([*documents.input_warnings(job), *documents.warnings(result)])


def compare(rows: list[tuple[str, Job, Result]], scenarios: list[dict[str, Any]]) -> None:
    out = console()
    table = _grid()
    table.add_column("")
    for name, _, _ in rows:
        table.add_column(name, justify="right", overflow="fold")
    best = max(range(len(rows)), key=lambda i: float(rows[i][2].effective))
    first = float(rows[0][2].effective)

    widths = [0] + [len(name) for name, _, _ in rows]

    def line(label: str, cells: list[str]) -> None:
        for i, text in enumerate([label, *cells]):
            widths[i] = max(widths[i], len(text))
        table.add_row(label, *cells)

    line("checkpoint size", [units.format_size(j.config.checkpoint_bytes) for _, j, _ in rows])
    line("write time δ", [dur(j.config.write_s) for _, j, _ in rows])
    line("MTBF", [dur(j.config.mtbf_s) for _, j, _ in rows])
    bands = [doc["uncertainty"] for doc in scenarios]
    if any(band is not None for band in bands):
        line("MTBF 95 %", ["-" if b is None else wording.span(b["mtbf_s"], dur) for b in bands])
    if any(j.config.shape is not None for _, j, _ in rows):
        shapes = [j.config.shape for _, j, _ in rows]
        line("failures", ["exponential" if k is None else f"Weibull {units.sig(float(k))}" for k in shapes])
    line("restart", [dur(j.config.storage_restart_s) for _, j, _ in rows])
    line(
        "levels",
        [
            "+".join(item.level.name for item in r.levels) + (" (async)" if j.config.is_async else "")
            for _, j, r in rows
        ],
    )
    line("optimal interval", [wording.periodic_interval(float(r.optimal_interval_s)) for _, _, r in rows])
    if any(r.optimal_storage_every is not None for _, _, r in rows):
        line(
            "memory × m",
            [
                "-"
                if r.optimal_storage_every is None
                else f"{dur(r.optimal_memory_interval_s or 0.0)} × {int(r.optimal_storage_every)}"
                for _, _, r in rows
            ],
        )
    table.add_section()
    for term in TERMS:
        line(f"{term} loss", [pct(float(getattr(r, term))) for _, _, r in rows])
    if any(r.elastic is not None for _, _, r in rows):
        # Elastic replica groups: what the groups down, the quorum pauses and the overhead take (approximate).
        line(
            "elastic loss",
            [
                "-" if r.elastic is None else pct(float(r.elastic.down + r.elastic.quorum + r.elastic.overhead))
                for _, _, r in rows
            ],
        )
    line("total loss", [pct(r.total) for _, _, r in rows])
    table.add_section()
    effective = [Text(pct(r.effective), style="bold green" if i == best else "") for i, (_, _, r) in enumerate(rows)]
    table.add_row("effective", *effective)
    line(
        "vs first (pp)",
        ["-" if i == 0 else f"{points(float(r.effective), first):+.2f}" for i, (_, _, r) in enumerate(rows)],
    )
    line("dominant", [TERMS[int(r.dominant)] for _, _, r in rows])
    if any(band is not None for band in bands):
        table.add_section()
        line("effective, 95 %", ["-" if b is None else wording.span(b["effective"], pct) for b in bands])
        line("robust interval", ["-" if b is None else dur(b["robust_interval_s"]) for b in bands])
    out.print(Text("ckptcalc compare (exact model, shares of elapsed time)", style="bold"))
    if sum(widths) + 2 * (len(widths) - 1) > out.width:
        # Too many columns to fit: one scenario a row, or one a block on the narrowest terminals.
        _compare_rows(out, rows, first, best)
    else:
        out.print(table)
    out.print(f"best: {rows[best][0]} ({pct(rows[best][2].effective)} effective)")
    assumed = wording.compare_assumed(scenarios)
    if assumed:
        out.print(Text(wording.ASSUMED))
        for text in assumed:
            out.print(Text(f"  {text}"))
    for name, one, result in rows:
        warn([f"{name}: {message}" for message in [*documents.input_warnings(one), *documents.warnings(result)]])


@contextmanager
def progress(label: str) -> Iterator[Callable[[float], None]]:
    """A progress bar on stderr that appears only once a run has taken a second."""
    import time

    from rich.progress import BarColumn, Progress, TaskProgressColumn, TimeRemainingColumn

    started = time.monotonic()
    state: dict[str, Any] = {}

    def update(fraction: float) -> None:
        if "bar" not in state:
            if time.monotonic() - started < 1.0:
                return
            bar = Progress(
                label, BarColumn(), TaskProgressColumn(), TimeRemainingColumn(), console=console(stderr=True),
                transient=True,
            )  # fmt: skip
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task(label, total=1.0)
        state["bar"].update(state["task"], completed=fraction)

    try:
        yield update
    finally:
        if "bar" in state:
            state["bar"].stop()


def simulation(document: dict[str, Any]) -> None:
    out = console()
    narrow = out.width < 80
    shape = f", shape {units.sig(document['shape'])}" if document["shape"] is not None else ""
    out.print(
        Text(
            f"ckptcalc simulate: preset {document['preset']}, {document['failure_dist']} failures{shape},"
            f" {document['cycles']:,} cycles, seed {document['seed']}",
            style="bold",
        )
    )
    line = "" if document["interval_s"] is None else f"Storage interval {dur(document['interval_s'])}"
    if document["tier_intervals"] is not None:
        tiers = document["tier_intervals"]
        line = wording.sentence(wording.nesting([t["name"] for t in tiers], [t["interval_s"] for t in tiers]))
    elif document["memory_interval_s"] is not None:
        line += (
            f"; memory interval {dur(document['memory_interval_s'])}"
            f" (storage every {document['storage_every']} memory checkpoints)"
        )
    if document["interval_s"] is None:
        line = wording.no_periodic_needed()
    out.print(line)
    low, high = document["effective_ci95"]
    out.print(Text(f"Simulated effective time: {pct(document['effective'], 4)}", style="bold"))
    out.print(f"95 % confidence interval: {pct(low, 4)} – {pct(high, 4)}")
    out.print()
    table = _grid("Measured split of elapsed time", narrow)
    table.add_column("")
    table.add_column("share", justify="right")
    for key, name in (("useful", "useful work"), ("write", "checkpoint stalls"), ("rework", "rework"),
                      ("restart", "restarts")):  # fmt: skip
        table.add_row(name, pct(document["split"][key], 4))
    if document["inputs"]["groups"] is not None:
        table.add_row("groups down, pauses, overhead", pct(document["elastic"]["lost"], 4))
    out.print(table)
    out.print(f"Failures: {document['failures']:,} ({document['failures_in_restart']:,} during a restart)")
    for line in registry.simulated_lines(document, wording.SHOW):
        out.print(line)
    for line in registry.class_simulated_lines(document, wording):
        out.print(line)
    for line in wording.storage_lines(document.get("storage")):
        out.print(line)
    out.print()
    table = _grid("Against the analytic model", narrow)
    table.add_column("model")
    table.add_column("effective", justify="right")
    table.add_column("verdict")
    names = {"first_order": "first order (Young)", "exact": "exact" if document["shape"] is None else "renewal series"}
    if document["inputs"]["groups"] is not None:
        names["exact"] = "elastic (approximate)"
    for key in ("first_order", "exact"):
        value = document["analytic"][key]
        if value is None:
            table.add_row(names[key], "-", "no closed form: the simulation is the answer")
            continue
        agreement = document["agreement"][key]
        verdict = "agrees (inside the CI)" if agreement["agrees"] else f"off by {agreement['difference_pp']:+.3f} pp"
        table.add_row(names[key], pct(value, 4), verdict)
    out.print(table)
    found = document["optimize"]
    if found is not None:
        out.print()
        two = found["storage_every"] is not None
        table = _grid("Best storage interval" if two else "Best interval", narrow)
        table.add_column("method")
        table.add_column("interval", justify="right")
        table.add_row("simulation (golden section)", dur(found["interval_s"]))
        if two:
            table.add_row("  = memory interval × m", f"{dur(found['memory_interval_s'])} × {found['storage_every']}")
        table.add_row("Young (first order)", dur(found["young_interval_s"]))
        exact = found["exponential_exact_interval_s"]
        if exact is not None:
            # The exact model's optimum assumes exponential failures, whatever distribution was simulated; for
            # one level it is the Lambert-W closed form, for two a joint search over τ₁ and m.
            label = "exact, exponential failures" + (" (joint τ₁, m)" if two else " (Lambert W)")
            table.add_row(label, dur(exact))
        out.print(table)
        out.print(
            f"Simulated effective time at the best interval: {pct(found['effective'], 4)}"
            f" ({found['evaluations']} evaluations, common random numbers)."
        )
    warn(document["warnings"])


def fit(document: dict[str, Any]) -> None:
    """The fitted failure process: counts, MTBF with its interval, the Weibull shape, causes, gaps."""
    out = console()
    out.print(Text(wording.fit_title(document), style="bold"))
    if document["source"] == "log":
        table = _grid("Events", out.width < 80)
        table.show_header = False
        table.add_column("", no_wrap=True)
        table.add_column("", justify="right", no_wrap=True)
        note = document.get("interruptions_note")
        if note:
            table.add_column("", overflow="fold")  # why fewer interruptions than events kept
        table.add_row("read", f"{document['events_read']}")
        table.add_row("kept", f"{document['events_kept']}")
        if document["skipped_bad"]:
            table.add_row("bad rows skipped", f"{document['skipped_bad']}")
        if document["naive_timestamps"]:
            table.add_row("naive timestamps", wording.naive_timestamps(document))
        for what, count in wording.inference_rows(document["reading"], skip=("naive_timestamps",)):
            table.add_row(what, count)
        table.add_row("interruptions", f"{document['interruptions']}", *([note] if note else []))
        table.add_row("window", dur(document["window_s"]) if document["window_s"] else "-")
        out.print(table)
        out.print()
    low, high = document["mtbf_ci95"]
    if document["mtbf_s"] is None:
        out.print(Text(f"MTBF: no interruption; at least {_bound(low, '-')} (95 % one-sided)", style="bold"))
    else:
        interval = f"{_bound(low, '-')} to {_bound(high, '∞')}"
        out.print(Text(f"MTBF: {dur(document['mtbf_s'])}  (95 %: {interval})", style="bold"))
    if document["gpu_mtbf_s"] is not None:
        g_low, g_high = document["gpu_mtbf_ci95"]
        out.print(f"per GPU: {dur(document['gpu_mtbf_s'])}  (95 %: {_bound(g_low, '-')} to {_bound(g_high, '∞')})")
    weibull = document["weibull"]
    if weibull is not None:
        k_low, k_high = weibull["shape_ci95"]
        interval = f"{units.sig(k_low)} to {units.sig(k_high)}" if k_low is not None and k_high is not None else "-"
        out.print(
            f"Weibull shape k = {units.sig(weibull['shape'])} (95 %: {interval}),"
            f" scale {dur(weibull['scale_s'])}; test of k = 1: {wording.p_value(weibull)}"
        )
        out.print(wording.weibull_verdict(weibull["verdict"]))
    out.print()
    if document["coalescing"] is not None:
        table = _grid(wording.COALESCING_TITLE, out.width < 80)
        for name in ("coalesce", "interruptions", "MTBF", "k", "verdict"):
            table.add_column(name, justify="left" if name in ("coalesce", "verdict") else "right", no_wrap=True)
        for row in document["coalescing"]:
            table.add_row(*wording.coalescing_row(row, document["coalesce_s"]))
        out.print(table)
        out.print()
    if document["causes"]:
        causes = _grid("Causes", out.width < 80)
        causes.add_column("cause", overflow="fold")
        causes.add_column("count", justify="right", no_wrap=True)
        causes.add_column("share", justify="right", no_wrap=True)
        for row in document["causes"]:
            causes.add_row(row["cause"], f"{row['count']}", pct(row["share"]))
        out.print(causes)
        out.print()
    for title, _, rows in registry.figure_tables(document, wording.SHOW):  # a log's repairs (docs/model.md §22)
        out.print(figure_table(title, rows, out.width < 80))
        out.print()
    histogram = document["histogram"]
    if histogram["counts"]:
        chart = _grid("Gaps between interruptions", out.width < 80)
        chart.add_column("gap", justify="right", no_wrap=True)
        chart.add_column("count", justify="right", no_wrap=True)
        chart.add_column("", no_wrap=True)
        top = max(histogram["counts"]) or 1
        edges = histogram["edges_s"]
        width = max(4, min(40, out.width - 30))
        for i, count in enumerate(histogram["counts"]):
            chart.add_row(f"{dur(edges[i])}–{dur(edges[i + 1])}", f"{count}", "█" * round(count / top * width))
        out.print(chart)
    warn(document["warnings"])


def _bound(value: float | None, missing: str) -> str:
    """A bound of an interval, or ``missing`` where the document has none (an upper bound that does not
    exist, or one too large for a double: times near 1e308)."""
    return missing if value is None else dur(value)


def plan(job: Job, document: dict[str, Any]) -> None:
    """``plan``: the distribution of a whole run's wall time, failures and cost."""
    out = console()
    narrow = out.width < 80
    out.print(Text(wording.plan_header(document), style="bold"))
    out.print(inputs_table(job, narrow))
    out.print()
    out.print(wording.plan_schedule(document))
    out.print()
    table = _grid(wording.PLAN_TITLE, narrow)
    table.add_column("", no_wrap=True)
    columns = ("p10", "p50", "p90", "p95", "mean")
    for name in columns:
        table.add_column(name, justify="right", no_wrap=True)
    completion, failures = document["completion_s"], document["failures"]
    table.add_row("wall time", *(dur(completion[k]) for k in columns))
    # The same runs at either end of the MTBF's interval, under the wall time they bracket.
    for label, spread in wording.plan_band_rows(document.get("uncertainty")):
        table.add_row(label, *(dur(spread[k]) for k in columns))
    table.add_row("failures", *(f"{failures[k]:,.0f}" for k in columns[:-1]), units.sig(failures["mean"]))
    for key, label in (("gpu_hours", "GPU-hours"), ("cost", "cost")):
        if document[key] is not None:
            table.add_row(label, *(amount(document[key][k]) for k in columns))
    out.print(table)
    for line in wording.plan_lines(document):
        out.print(line)
    for line in wording.storage_lines(document.get("storage")):
        out.print(line)
    warn(document["warnings"])


def analyze(document: dict[str, Any]) -> None:
    """``analyze``: the realised split, what was measured, the model at those inputs, causes and windows."""
    out = console()
    narrow = out.width < 80
    r, m = document["realised"], document["measured"]
    out.print(Text(wording.analyze_header(document), style="bold"))
    inferred = wording.inference_rows(document["reading"])
    if inferred:
        table = _grid("Read from the log", narrow)
        table.add_column("", overflow="fold")
        table.add_column("count", justify="right", no_wrap=True)
        for what, count in inferred:
            table.add_row(what, count)
        out.print(table)
        out.print()
    table = _grid("Where the run's time went (share of wall time)", narrow)
    table.add_column("", no_wrap=True)
    table.add_column("share", justify="right", no_wrap=True)
    table.add_column("time", justify="right", no_wrap=True)
    wall = document["wall_s"]
    for key, name in wording.split_parts(document):
        table.add_row(name, pct(r[key]), dur(r[key] * wall))
    out.print(table)
    low, high = r["effective_ci95"]
    out.print(f"Effective {pct(r['effective'])} (95 %: {pct(low)} to {pct(high)}), goodput {pct(r['goodput'])}.")
    out.print()
    table = _grid("Measured", narrow)
    table.add_column("", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("note", overflow="fold")
    for row in wording.measured_rows(m):
        table.add_row(*row)
    out.print(table)
    model = document["model"]
    if model is not None:
        out.print()
        model_table = _grid("The exact model at these inputs", narrow)
        model_table.add_column("", no_wrap=True)
        model_table.add_column("value", justify="right", no_wrap=True)
        for pair in wording.model_rows(model):
            model_table.add_row(*pair)
        table = model_table
        out.print(table)
        out.print(wording.model_verdict(model, r["effective"]))
    if document["causes"]:
        out.print()
        table = _grid("Time lost per failure cause", narrow)
        table.add_column("cause", overflow="fold")
        table.add_column("failures", justify="right", no_wrap=True)
        table.add_column("lost", justify="right", no_wrap=True)
        table.add_column("of wall", justify="right", no_wrap=True)
        for c in document["causes"][:MAX_ROWS]:
            table.add_row(c["cause"], f"{c['failures']}", dur(c["lost_s"]), pct(c["share_of_wall"]))
        out.print(table)
    if document["windows"] is not None:
        out.print()
        _windows(out, document, narrow)
    warn(document["warnings"])


def _compare_rows(out: Console, rows: list[tuple[str, Job, Result]], first: float, best: int) -> None:
    """compare with the scenarios as rows; as blocks of lines when even that would not fit."""
    header = ("scenario", "interval", "write", "rework", "restart", "effective", "vs first", "dominant")
    lines = []
    for i, (name, _, r) in enumerate(rows):
        lines.append(
            (
                name,
                dur(r.optimal_interval_s),
                pct(float(r.write)),
                pct(float(r.rework)),
                pct(float(r.restart)),
                pct(r.effective),
                "-" if i == 0 else f"{points(float(r.effective), first):+.2f} pp",
                TERMS[int(r.dominant)],
            )
        )
    table = _grid(narrow=out.width < 80)
    table.add_column(header[0], overflow="fold", min_width=8)
    for title in header[1:]:
        table.add_column(title, justify="right", no_wrap=True)
    for i, cells in enumerate(lines):
        table.add_row(*cells, style="bold green" if i == best else "")
    numbers = [max(len(title), *(len(cells[i]) for cells in lines)) for i, title in enumerate(header) if i]
    if 8 + sum(numbers) + 2 * len(numbers) <= out.width:  # the names may fold; numbers never are cut
        out.print(table)
        return
    for cells in lines:
        out.print(Text(cells[0], style="bold"))
        for title, cell in zip(header[1:], cells[1:], strict=True):
            out.print(f"  {title}: {cell}")


def _windows(out: Console, document: dict[str, Any], narrow: bool) -> None:
    windows = document["windows"]
    width = max(10, min(40, out.width - 40))
    table = _grid("Per window: time lost (stacked) and effective time", narrow)
    table.add_column("from", no_wrap=True)
    table.add_column("effective", justify="right", no_wrap=True)
    table.add_column("lost", no_wrap=True)
    table.add_column("", no_wrap=True)
    top = max((1.0 - w["effective"] for w in windows), default=0.0) or 1.0
    start = document["start_s"]
    for w in windows[:MAX_ROWS]:
        mark = "below SLO" if w["below_slo"] else ""
        table.add_row(
            dur(w["start_s"] - start) if w["start_s"] > start else "0",
            pct(w["effective"]),
            bar(w["write"], w["rework"], w["restart"], top, width),
            Text(mark, style="bold red") if mark else "",
        )
    out.print(table)
    if len(windows) > MAX_ROWS:
        out.print(wording.rows_omitted(len(windows) - MAX_ROWS))
    out.print(legend())


def events(document: dict[str, Any]) -> None:
    """``events --output``: where the events went and what reading the logs inferred."""
    out = console()
    out.print(Text(wording.events_header(document), style="bold"))
    reading = document["reading"]
    rows = wording.inference_rows(reading)
    if reading["skipped_bad"]:
        rows.append(("bad lines skipped", f"{reading['skipped_bad']:,}"))
    if rows:
        table = _grid("What was inferred", out.width < 80)
        table.add_column("", overflow="fold")
        table.add_column("count", justify="right", no_wrap=True)
        for row in rows:
            table.add_row(*row)
        out.print(table)


def _print_assumed(out: Console, document: dict[str, Any]) -> None:
    """The values nobody stated, under the inputs (JSON ``inputs.assumed``)."""
    lines = document["inputs"]["assumed"]
    if lines:
        out.print(Text(wording.ASSUMED))
        for line in lines:
            out.print(Text(f"  {line}"))
