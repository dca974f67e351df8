"""Rich tables for the terminal. The only module that imports Rich.

Imported lazily by the command line, and only when a table is printed, so
``--json`` never pays for Rich.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import report, units
from .model import TERMS, Result, interval_comparison
from .scenario import Job

TERM_STYLE = {"write": "cyan", "rework": "yellow", "restart": "magenta"}
TERM_FORMULA = {"write": "stall / interval", "rework": "interval / 2M", "restart": "restart / M"}
MTBF_SOURCE = {
    "mtbf": "given",
    "gpu_mtbf": "per-GPU MTBF / GPUs",
    "failures": "window / failures",
    "scaled": "per-GPU rate of the base held",
}

pct = units.format_percent
dur = units.format_duration


def console(stderr: bool = False) -> Console:
    """A console that honours NO_COLOR and writes plain text to pipes."""
    return Console(
        stderr=stderr,
        highlight=False,
        no_color="NO_COLOR" in os.environ,
        soft_wrap=False,
        file=sys.stderr if stderr else sys.stdout,
    )


def _grid(title: str | None = None) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left", title_style="bold", pad_edge=False)
    return table


def inputs_table(job: Job) -> Table:
    s, c = job.scenario, job.config
    table = _grid("Inputs")
    table.add_column("input")
    table.add_column("value", justify="right")
    table.add_column("note", overflow="fold")
    note = ""
    if s.checkpoint_bytes is None and s.params is not None:
        note = f"{units.format_count(s.params)} params × {s.bytes_per_param or 16.0:g} B"
    table.add_row("checkpoint size", units.format_size(c.checkpoint_bytes), note)
    table.add_row("storage bandwidth", units.format_rate(c.bandwidth), "")
    table.add_row("write time δ", dur(c.write_s), "size / bandwidth")
    if c.snapshot_bandwidth is not None:
        table.add_row("snapshot bandwidth", units.format_rate(c.snapshot_bandwidth), "asynchronous")
    if c.replica_survival is not None:
        assert c.memory_bandwidth is not None and c.memory_restart_s is not None
        table.add_row("replica survival", pct(c.replica_survival), "of failures")
        table.add_row("memory bandwidth", units.format_rate(c.memory_bandwidth), "")
        table.add_row("memory restart", dur(c.memory_restart_s), "")
    table.add_row("MTBF", dur(c.mtbf_s), MTBF_SOURCE[job.mtbf_source])
    if job.gpus is not None:
        per_gpu = f"per-GPU MTBF {dur(job.gpu_mtbf_s)}" if job.gpu_mtbf_s is not None else ""
        table.add_row("GPUs", units.format_count(job.gpus), per_gpu)
    table.add_row("restart", dur(c.restart_s), "")
    return table


def levels_table(result: Result) -> Table:
    table = _grid("Levels")
    for name in ("level", "stall", "lag", "interval", "optimal", "failures", "restart", "loss"):
        table.add_column(name, justify="left" if name == "level" else "right")
    for item in result.levels:
        lv = item.level
        table.add_row(
            lv.name,
            dur(lv.stall_s),
            dur(lv.lag_s) if lv.lag_s else "-",
            dur(item.interval_s),
            dur(item.optimal_interval_s),
            pct(lv.share),
            dur(lv.restart_s),
            pct(item.loss),
        )
    return table


def loss_table(result: Result, title: str) -> Table:
    table = _grid(title)
    table.add_column("term")
    table.add_column("formula", style="dim")
    table.add_column("of time", justify="right")
    table.add_column("of loss", justify="right")
    table.add_column("")
    top = TERMS[int(result.dominant)]
    for term in TERMS:
        value = float(getattr(result, term))
        share = value / float(result.total) if result.total else 0.0
        mark = "◀ dominant" if term == top else ""
        table.add_row(Text(term, style=TERM_STYLE[term]), TERM_FORMULA[term], pct(value), pct(share), mark)
        if len(result.levels) > 1:
            for item in result.levels:
                table.add_row(f"  {item.level.name}", "", pct(float(getattr(item, term))), "", "")
    table.add_section()
    table.add_row(Text("total loss", style="bold"), "", pct(result.total), "100 %", "")
    table.add_row(Text("effective", style="bold green"), "1 − loss", pct(result.effective), "", "")
    return table


def exact_table(result: Result) -> Table | None:
    rows = interval_comparison(result.config)
    if rows is None:
        return None
    table = _grid("Interval by model (effective: exact model)")
    table.add_column("model")
    table.add_column("interval", justify="right")
    table.add_column("effective", justify="right")
    names = {"young": "Young (first order)", "daly": "Daly (higher order)", "exact": "exact (Lambert W)"}
    for name, tau, eff in rows:
        table.add_row(names[name], dur(tau), pct(eff))
    if result.config.interval_s is not None:
        table.add_row("given --interval", dur(result.interval_s), pct(result.exact_effective or 0.0))
    return table


def verdict(result: Result) -> str:
    """One line naming the dominant term and the lever that addresses it."""
    top = TERMS[int(result.dominant)]
    share = pct(float(getattr(result, top)) / float(result.total)) if result.total else "0 %"
    at_optimum = all(item.interval_s == item.optimal_interval_s for item in result.levels)
    if top == "restart":
        lever = "no checkpoint interval can reduce it: shorten the restart, or recover from an in-memory replica"
    elif at_optimum:
        lever = "checkpoint cost dominates: faster writes (bandwidth, asynchronous snapshots) pay"
    elif top == "write":
        lever = "the interval is too short for the write time: checkpoint less often"
    else:
        lever = "the interval is too long: checkpoint more often"
    return f"{top} dominates ({share} of the loss); {lever}."


def optimize(job: Job, result: Result, optimum: Result, preset: str | None, default_preset: bool) -> None:
    out = console()
    header = f"preset {preset}" if preset else "no preset"
    if default_preset:
        header += " (the default; flags override it)"
    out.print(Text(f"ckptcalc optimize: {header}", style="bold"))
    out.print(inputs_table(job))
    if len(result.levels) > 1 or job.config.is_async:
        out.print(levels_table(result))
    storage = result.storage
    line = f"Optimal storage interval: {dur(storage.optimal_interval_s)}"
    if job.config.is_single_sync:
        line += "  (Young–Daly √(2δM))"
    out.print(Text(line, style="bold"))
    title = "Loss at the optimal interval"
    if result.config.interval_s is not None or result.config.memory_interval_s is not None:
        title = f"Loss at the given interval ({dur(storage.interval_s)})"
    out.print(loss_table(result, title))
    if result is not optimum:
        penalty = (float(optimum.effective) - float(result.effective)) * 100.0
        out.print(
            f"The given interval costs {units.sig(penalty)} percentage points against the optimum"
            f" ({pct(result.effective)} vs {pct(optimum.effective)})."
        )
    table = exact_table(result)
    if table is not None:
        out.print(table)
    out.print(Text(f"verdict: {verdict(result)}", style="bold"))
    warn(report.warnings(result))


def warn(messages: list[str]) -> None:
    if not messages:
        return
    for message in messages:
        sys.stderr.write(f"warning: {message}\n")


def presets_list(rows: list[Any]) -> None:
    out = console()
    table = _grid()
    table.add_column("name", no_wrap=True)
    table.add_column("description", overflow="fold")
    for info in rows:
        table.add_row(info.name, info.description)
    out.print(table)
