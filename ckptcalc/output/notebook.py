"""Results in a notebook: plain rows, a pandas DataFrame, and a matplotlib figure that draws itself.

Rows are read from a command's ``--json`` document as the API worked it out (nothing is computed here);
pandas is the optional ``pandas`` extra and matplotlib the ``plot`` extra, each imported only when used.
Figures are :class:`matplotlib.figure.Figure` objects drawn without pyplot, so that they render the same
headless (no display, no backend chosen) as in Jupyter.
"""

from __future__ import annotations

import io
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.inputs import units

#: What each optional dependency is, and how to get it.
EXTRAS = {"pandas": "pip install 'ckptcalc[pandas]'", "matplotlib": "pip install 'ckptcalc[plot]'"}


def _flat(node: Any, prefix: str = "") -> dict[str, Any]:
    """The single values of a document under dotted keys (``loss.write``); lists are left out."""
    found: dict[str, Any] = {}
    if isinstance(node, dict):
        for key, value in node.items():
            found.update(_flat(value, f"{prefix}{key}."))
    elif not isinstance(node, list):
        found[prefix.removesuffix(".")] = node
    return found


def rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    """A result as plain rows (dicts of single values), one per point, scenario or preset where it has
    several, else one: a sweep's points, compare's scenarios, check's presets, an optimum's figures.

    >>> rows({"command": "compare", "scenarios": [{"name": "a", "loss": {"write": 0.1}}]})
    [{'name': 'a', 'loss.write': 0.1}]
    """
    command = document.get("command")
    if command == "sweep":
        return _sweep_rows(document)
    if command == "compare":
        return [_flat(scenario) for scenario in document["scenarios"]]
    if command == "check":
        return [_flat(result) for result in document["results"]]
    return [{key: value for key, value in _flat(document).items() if key not in ("schema_version", "command")}]


def _sweep_rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    count = len(document["values"])
    columns: dict[str, list[Any]] = {}
    for key, value in document.items():
        if key != "values" and isinstance(value, list) and len(value) == count and key != "warnings":
            columns[key] = value
    for term, series in document["loss"].items():
        columns[f"loss_{term}"] = series
    name = str(document["values_name"])
    return [
        {name: document["values"][i], **{key: series[i] for key, series in columns.items() if key != name}}
        for i in range(count)
    ]


def frame(found: list[dict[str, Any]]) -> Any:
    """``found`` as a :class:`pandas.DataFrame`; pandas is the optional ``pandas`` extra."""
    try:
        import pandas  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise InputError(f"to_pandas needs pandas: {EXTRAS['pandas']}", where="to_pandas") from None
    return pandas.DataFrame(found)


def _figure() -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError(f"plot needs matplotlib: {EXTRAS['matplotlib']}", where="plot") from None
    return Figure(figsize=(6.4, 3.6), dpi=100, layout="constrained")


def sweep_figure(document: dict[str, Any], label: str) -> Any:
    """The effective time and each term of the loss against the input swept, the optimum marked."""
    from ckptcalc.inputs.fields import BY_FLAG

    figure = _figure()
    axes = figure.subplots()
    over = str(document["over"])
    spec = BY_FLAG.get(over.replace("_", "-"))
    kind = spec.kind if spec is not None else "number"
    scale_from = float(document["values"][len(document["values"]) // 2] or 1.0)
    unit, factor = units.display_unit(scale_from, kind) if kind in ("duration", "size", "rate") else ("", 1.0)
    x = [float(v) / factor for v in document["values"]]
    axes.plot(x, [100 * float(e) for e in document["effective"]], color="black", linewidth=1.8, label="effective")
    twin = axes.twinx()
    colours = {"write": "#1f9bd1", "rework": "#e8b10c", "restart": "#b4479b"}
    for term, colour in colours.items():
        if term in document["loss"]:
            twin.plot(x, [100 * float(v) for v in document["loss"][term]], color=colour, linewidth=1.1, label=term)
    if over == "interval":
        axes.axvline(float(document["base_optimal_interval_s"]) / factor, color="grey", linestyle="--", linewidth=0.8)
    if document.get("log"):
        axes.set_xscale("log")
    axis = spec.axis if spec is not None and spec.axis else over
    axes.set_xlabel(f"{axis} ({unit})" if unit else axis)
    axes.set_ylabel("effective time (%)")
    twin.set_ylabel("lost to each term (%)")
    axes.set_title(label, fontsize=10)
    handles = axes.get_legend_handles_labels()
    more = twin.get_legend_handles_labels()
    axes.legend(handles[0] + more[0], handles[1] + more[1], loc="lower center", ncols=4, fontsize=8)
    return figure


def survival_figure(curve: Any, label: str) -> Any:
    """A failure log's survival: the empirical curve and the fitted laws, on log scales."""
    figure = _figure()
    axes = figure.subplots()
    times = list(curve.times_s)
    middle = sorted(times)[len(times) // 2] if times else 3600.0
    unit, factor = units.display_unit(float(middle), "duration")
    x = [t / factor for t in times]
    axes.step(x, [v if v > 0 else float("nan") for v in curve.empirical], where="post", color="black", label="log")
    if curve.exponential is not None:
        axes.plot(x, list(curve.exponential), color="#1f9bd1", label="exponential")
    if curve.weibull is not None:
        axes.plot(x, list(curve.weibull), color="#b4479b", linestyle="--", label="Weibull")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel(f"time between failures ({unit})")
    axes.set_ylabel("share still running")
    axes.set_title(label, fontsize=10)
    axes.legend(fontsize=8)
    return figure


def completion_figure(times: Any, document: dict[str, Any], label: str) -> Any:
    """Whole runs' completion times as a histogram, with p10, p50 and p90 marked."""
    figure = _figure()
    axes = figure.subplots()
    unit, factor = units.display_unit(float(document["completion_s"]["p50"]), "duration")
    axes.hist([float(t) / factor for t in times], bins=30, color="#1f9bd1", alpha=0.8)
    for key, style in (("p10", ":"), ("p50", "--"), ("p90", ":")):
        axes.axvline(float(document["completion_s"][key]) / factor, color="black", linestyle=style, label=key)
    axes.set_xlabel(f"wall time to finish ({unit})")
    axes.set_ylabel("runs")
    axes.set_title(label, fontsize=10)
    axes.legend(fontsize=8)
    return figure


def image(figure: Any, form: str) -> bytes | str:
    """``figure`` as PNG bytes or SVG text, drawn by Agg without pyplot (headless)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format=form, metadata={"Software": None} if form == "png" else {"Date": None})
    data = buffer.getvalue()
    return data if form == "png" else data.decode("utf-8")


#: Inputs that say what is asked of a job, not what the job is: a label leaves them out.
_NOT_THE_JOB = ("work_s", "interval_s", "memory_interval_s")


def label(job: Any, preset: str | None) -> str | None:
    """What a result is about as the user gave it: the inputs given over the preset (``params=70.0B
    gpus=4096``), after the preset's name unless it was the default; None when nothing was given."""
    from ckptcalc.inputs.assumed import given
    from ckptcalc.inputs.fields import BY_NAME

    if job is None:
        return None
    s = job.scenario
    formats = {"size": units.format_size, "rate": units.format_rate, "duration": units.format_duration}
    parts = []
    for name, value in s.values().items():
        if name in _NOT_THE_JOB or s.origin.get(name) is None or not given(job, name):
            continue
        kind = BY_NAME[name].kind
        if kind in formats:
            text = formats[kind](float(value))
        elif kind == "fraction":
            text = units.format_percent(float(value))
        else:
            text = units.format_count(float(value)) if kind == "count" else f"{float(value):g}"
        parts.append(f"{BY_NAME[name].public}={text.replace(' ', '')}")
    if not parts:
        return None
    default = any(item.how == "preset" for item in job.assumed)
    return " ".join(parts) if default or preset is None else f"{preset} {' '.join(parts)}"
