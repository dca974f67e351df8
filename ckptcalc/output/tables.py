"""Rich tables for the terminal: the console and the tables every command shares (inputs, bars, warnings).
Each command's own tables are drawn in its module of ckptcalc.commands, which imports Rich inside them.

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
from ckptcalc.model.evaluation import TERMS
from ckptcalc.output import wording

if TYPE_CHECKING:
    pass

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


def narrow(out: Console) -> bool:
    """Whether the terminal is too narrow for the full tables (under 80 columns): the tables drop their notes."""
    return out.width < 80


def grid(title: str | None = None, narrow: bool = False) -> Table:
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
    table = grid("Inputs", narrow)
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


amount = units.format_amount


def warn(messages: list[str]) -> None:
    if not messages:
        return
    for message in messages:
        sys.stderr.write(f"warning: {printable(message, newlines=False)}\n")


GLYPH = {"write": "█", "rework": "▒", "restart": "░"}
MAX_ROWS = 60


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
