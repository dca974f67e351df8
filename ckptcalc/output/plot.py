"""The picture of a sweep: lost time split in three stacked areas.

matplotlib is an optional extra (``pip install 'ckptcalc[plot]'``) and is
imported only here, only when ``--plot`` is given.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from ckptcalc.errors import CkptError, InputError
from ckptcalc.files import atomic_write, check_new
from ckptcalc.inputs import units
from ckptcalc.inputs.fields import BY_FLAG
from ckptcalc.inputs.grid import kind
from ckptcalc.model.evaluation import TERMS

FORMATS = {".png": "png", ".svg": "svg"}
COLOURS = {"write": "#1f9bd1", "rework": "#e8b10c", "restart": "#b4479b"}


def check_target(path: Path, force: bool) -> None:
    """Fail early, before any work, if ``path`` cannot be written."""
    if path.suffix.lower() not in FORMATS:
        raise InputError(f"{str(path)!r}: the extension must be .png or .svg", where="plot")
    try:
        check_new(path, force=force, where="plot")
    except CkptError as error:
        raise InputError(error.template, where=error.where) from None
    _matplotlib()


def _matplotlib() -> Any:
    import os

    # Files only: the Agg backend is chosen below, so a backend named in the environment (possibly one
    # matplotlib refuses at import) must not get in the way.
    os.environ.pop("MPLBACKEND", None)
    try:
        import matplotlib
    except ImportError:
        raise InputError("drawing needs matplotlib: pip install 'ckptcalc[plot]'", where="plot") from None
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # keep text as text: searchable, smaller
    import matplotlib.pyplot as plt

    return plt


def draw(run: Any, path: Path, *, force: bool) -> None:
    """Draw ``run`` (a :class:`ckptcalc.inputs.grid.Sweep`) to ``path``, atomically."""
    import numpy

    plt = _matplotlib()
    result, values = run.result, run.values
    n = len(values)
    unit, factor = units.display_unit(float(values[len(values) // 2]), kind(run.over))
    x = values / factor
    layers = [numpy.broadcast_to(getattr(result, term), (n,)) * 100.0 for term in TERMS]
    figure, axes = plt.subplots(figsize=(8, 4.8), dpi=110)
    axes.stackplot(x, *layers, labels=[f"{t}" for t in TERMS], colors=[COLOURS[t] for t in TERMS], alpha=0.85)
    axes.plot(x, numpy.broadcast_to(result.total, (n,)) * 100.0, color="black", linewidth=1.4, label="total")
    if run.over == "interval":
        best = float(run.base.optimal_interval_s)
        label = f"exact optimum τ* = {units.format_duration(best)}"
        loss_at_best = float(run.base.total) * 100.0
    else:
        best = float(values[run.nearest_optimum]) if run.nearest_optimum >= 0 else float(values[0])
        label = "base configuration"
        loss_at_best = float(numpy.broadcast_to(result.total, (n,))[run.nearest_optimum]) * 100.0
    axes.axvline(best / factor, color="black", linestyle="--", linewidth=1)
    axes.plot([best / factor], [loss_at_best], marker="o", color="black", gid="optimum")
    axes.annotate(
        label,
        (best / factor, loss_at_best),
        xytext=(8, -16),
        textcoords="offset points",
        fontsize=9,
        gid="optimum-label",
    )
    if run.log:
        from matplotlib.ticker import ScalarFormatter

        axes.set_xscale("log")
        axes.xaxis.set_major_formatter(ScalarFormatter())
    label = str(BY_FLAG[run.over].axis)
    axes.set_xlabel(f"{label} ({unit})" if unit else label)
    axes.set_ylabel("share of time lost (%)")
    axes.set_title("Time lost to checkpointing and failures" + ("" if run.over == "interval" else ", re-optimised"))
    axes.set_xlim(float(x[0]), float(x[-1]))
    axes.set_ylim(0, float(numpy.max(numpy.broadcast_to(result.total, (n,)))) * 110.0)
    axes.legend(loc="upper center", ncols=4, fontsize=9)
    axes.grid(alpha=0.3)
    _save(plt, figure, path, force)


def _save(plt: Any, figure: Any, path: Path, force: bool) -> None:
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format=FORMATS[path.suffix.lower()])
    plt.close(figure)
    atomic_write(path, buffer.getvalue(), force=force, where="plot")


def draw_survival(curve: Any, path: Path, *, force: bool) -> None:
    """The empirical survival of the gaps between interruptions (Kaplan–Meier, with the last gap censored)
    against the fitted exponential and Weibull curves, to ``path``, atomically."""
    import numpy

    plt = _matplotlib()
    times = numpy.asarray(curve.times_s, dtype=float)
    if times.size == 0:
        raise InputError("no gap between interruptions to draw", where="plot")
    unit, factor = units.display_unit(float(numpy.median(times)), "duration")
    x = times / factor
    figure, axes = plt.subplots(figsize=(8, 4.8), dpi=110)
    axes.step(x, curve.empirical, where="post", color="black", linewidth=1.4, label="log (Kaplan–Meier)")
    if curve.exponential is not None:
        axes.plot(x, curve.exponential, color=COLOURS["write"], linewidth=1.4, label="exponential fit")
    if curve.weibull is not None:
        axes.plot(x, curve.weibull, color=COLOURS["restart"], linewidth=1.4, linestyle="--", label="Weibull fit")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel(f"time between interruptions ({unit})")
    axes.set_ylabel("share of gaps longer (survival)")
    axes.set_title("Time between interruptions: the log against the fits")
    axes.legend(loc="lower left", fontsize=9)
    axes.grid(alpha=0.3, which="both")
    _save(plt, figure, path, force)
