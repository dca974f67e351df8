"""The design-review report: the JSON documents of optimize, sweep, plan, fit and analyze laid out as one
self-contained HTML page (inline SVG charts) or one Markdown document.

Jinja2 and matplotlib are the ``report`` extra (``pip install 'ckptcalc[report]'``), imported only here and
only when a report is rendered. Nothing here computes a result: each figure comes from a document, and the
output is a pure function of them (no clock, fixed SVG ids and fonts), so ``report --check`` can compare
a committed report byte for byte.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.inputs import units
from ckptcalc.inputs.fields import BY_NAME
from ckptcalc.mechanisms import registry
from ckptcalc.model.evaluation import TERMS
from ckptcalc.model.statistics import direction, shares
from ckptcalc.output import markdown, wording

#: The forms a report takes, by the option that asks for each.
FORMS = ("html", "markdown")

#: The form a file's extension says, for ``report --check``.
BY_EXTENSION = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown"}

#: The largest committed report ``--check`` reads.
MAX_BYTES = 64 * 2**20

#: What a report needs beyond the core, and how to get it.
INSTALL = "pip install 'ckptcalc[report]'"

_COLOURS = {"write": "#1f9bd1", "rework": "#e8b10c", "restart": "#b4479b", "total": "#000000"}
_TEMPLATES = Path(__file__).parent / "templates"

pct = wording.pct
dur = wording.dur


def require(form: str) -> None:
    """Fail before any work when the extra ``form`` needs is missing (Jinja2; matplotlib for HTML)."""
    needed = ["jinja2", "matplotlib"] if form == "html" else ["jinja2"]
    for name in needed:
        try:
            __import__(name)
        except ImportError:
            raise InputError(f"a report needs {name}: {INSTALL}", where=form) from None


def render(data: dict[str, Any], form: str) -> str:
    """The report of ``data`` (as :func:`ckptcalc.api.report` gathers it) as HTML or Markdown text."""
    require(form)
    import jinja2

    charts = _Charts() if form == "html" else None
    view = _view(data, charts)
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES),
        autoescape=form == "html",
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_visible if form == "html" else None,
    )
    environment.filters["cell"] = markdown.cell
    environment.globals["table"] = markdown.table
    template = environment.get_template("report.html.j2" if form == "html" else "report.md.j2")
    return template.render(view=view, words=wording.REPORT, charts=0 if charts is None else charts.count)


def _visible(value: Any) -> Any:
    """What the HTML page prints of ``value``: text with its control characters written as their code
    (:func:`markdown.visible`), escaped by Jinja after; markup already made keeps its kind."""
    if not isinstance(value, str):
        return value
    import markupsafe

    shown = markdown.visible(str(value))
    return markupsafe.Markup(shown) if isinstance(value, markupsafe.Markup) else shown


# ------------------------------------------------------------------ the view: sections of tables and text


def _section(key: str, title: str, **parts: Any) -> dict[str, Any]:
    return {"key": key, "title": title, "lines": [], "tables": [], "chart": None, **parts}


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()) -> dict[str, Any]:
    """A table for the templates; ``numeric`` are the columns aligned right."""
    return {"header": list(header), "rows": [list(row) for row in rows], "numeric": list(numeric)}


def _view(data: dict[str, Any], charts: _Charts | None) -> dict[str, Any]:
    w = wording.REPORT
    scenarios = []
    for index, scenario in enumerate(data["scenarios"], start=1):
        anchor = f"s{index}"
        sections = _scenario_sections(scenario, charts, anchor)
        for section in sections:
            section["id"] = f"{anchor}-{section['key']}"
        scenarios.append(
            {
                "id": anchor,
                "title": w["scenario"].format(name=scenario["name"]),
                "about": [text for text in (scenario.get("about"),) if text],
                "sections": sections,
            }
        )
    log_sections = _log_sections(data, charts)
    for section in log_sections:
        section["id"] = f"log-{section['key']}"
    return {"scenarios": scenarios, "log": log_sections, "summary": _summary(data["scenarios"])}


def _summary(scenarios: list[dict[str, Any]]) -> dict[str, Any]:
    """Every scenario side by side: effective, each tier's interval, the dominant term and the best lever
    (levers come best first; none pays when the first gains nothing)."""
    w = wording.REPORT_SUMMARY
    rows = []
    for scenario in scenarios:
        doc = scenario["optimize"]
        paying = [lever for lever in doc["levers"][:1] if direction(lever["gain_pp"], 0.0) == 1]
        best = f"{paying[0]['name']} ({wording.lever_effect(paying[0]['gain_pp'])})" if paying else w["none_pays"]
        rows.append(
            [scenario["name"], pct(doc["effective"]), wording.tier_intervals(doc["levels"]), doc["dominant"], best]
        )
    header = [w["scenario"], w["effective"], w["intervals"], w["dominant"], w["best"]]
    section = _section("summary", w["title"], tables=[_table(header, rows, numeric=[1])])
    section["id"] = "summary-scenarios"  # inside <article id="summary">
    return section


def _scenario_sections(scenario: dict[str, Any], charts: _Charts | None, anchor: str) -> list[dict[str, Any]]:
    w = wording.REPORT
    doc = scenario["optimize"]
    sections = [
        _inputs(scenario, doc),
        _schedule(doc),
        _split(doc),
        _curve(scenario["sweep"], doc, charts, anchor),
        _levers(doc),
        _section("mechanisms", w["mechanisms"], lines=_mechanisms(doc), tables=_mechanism_tables(doc)),
        _band(doc),
    ]
    if doc["warnings"]:
        sections.append(_section("warnings", w["warnings"], lines=list(doc["warnings"])))
    if scenario.get("plan_note") is not None:
        sections.append(_section("plan", w["plan"], lines=[scenario["plan_note"]]))
    if scenario.get("plan") is not None:
        sections.append(_plan(scenario["plan"], scenario["completion_s"], charts, anchor))
    return sections


def _mechanisms(doc: dict[str, Any]) -> list[str]:
    return [*wording.report_mechanisms(doc), *wording.storage_lines(doc.get("storage"))]


def _mechanism_tables(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The mechanisms' figures (the spare pool's) and the silent events, each as optimize's table shows them,
    where the scenario has them."""
    w = wording.REPORT
    found = [
        _table([caption, w["value"], ""], [list(r) for r in rows], numeric=[1])
        for _, caption, rows in registry.figure_tables(doc, wording.SHOW)
    ]
    for key in registry.part_keys():
        if doc.get(key) is not None:
            rows = registry.part_rows(key, doc[key], wording)
            found.append(
                _table([registry.part_title(key, caption=True), w["value"], ""], [list(r) for r in rows], numeric=[1])
            )
    return found


def _value(kind: str, value: float, per_gpu: bool) -> str:
    if per_gpu:
        return units.format_rate(units.PerGpu(value))
    formats: dict[str, Callable[[float], str]] = {
        "size": units.format_size,
        "rate": units.format_rate,
        "duration": units.format_duration,
        "count": units.format_count,
        "fraction": pct,
    }
    if kind in formats:
        return formats[kind](value)
    owned = registry.written(kind, value)  # a mechanism's own unit kind (a recovery path): its word
    return f"{value:g}" if owned is None else owned


def _inputs(scenario: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    w = wording.REPORT
    measured = bool(scenario.get("measured"))
    rows = []
    for row in scenario["stated"]:
        spec = BY_NAME[row["name"]]
        value = _value(spec.kind, row["value"], row["per_gpu"])
        if not measured:
            rows.append([spec.path, value, wording.report_source(row["source"], spec.path, spec.public)])
            continue
        # Re-run at the log's measurements: each measured input with the preset's value beside it.
        before = row["preset_value"]
        shown = "" if before is None else _value(spec.kind, before, row["per_gpu"])
        if shown == value:
            source = row["preset_source"]
            said = w["derived_source"] if source is None else wording.report_source(source, spec.path, spec.public)
            rows.append([spec.path, value, said, ""])
        else:
            rows.append([spec.path, value, w["measured_source"], shown or w["no_preset_value"]])
    found = doc["inputs"]
    derived = [
        ("checkpoint size", units.format_size(found["checkpoint_bytes"])),
        ("write time", dur(doc["write_s"])),
        ("MTBF", dur(found["mtbf_s"])),
    ]
    extra = [""] if measured else []
    rows += [[name, value, wording.report_mtbf_source(found["mtbf_source"]) if name == "MTBF" else "", *extra]
             for name, value in derived]  # fmt: skip
    header = [w["input"], w["value"], w["source"], *([w["preset_value"]] if measured else [])]
    table = _table(header, rows, numeric=[1, 3] if measured else [1])
    lines = [w["measured_scenario"]] if measured else []
    if scenario.get("measured_refused"):
        lines.append(w["measured_refused"].format(reason=scenario["measured_refused"]))
    assumed = found.get("assumed") or []
    if assumed:
        lines.append(f"{wording.ASSUMED} {'; '.join(assumed)}.")
    return _section("inputs", w["inputs"], lines=lines, tables=[table])


def _schedule(doc: dict[str, Any]) -> dict[str, Any]:
    w = wording.REPORT
    rows = [
        [
            level["name"],
            wording.periodic_interval(level["interval_s"]),
            wording.periodic_interval(level["optimal_interval_s"]),
            dur(level["stall_s"]),
            pct(level["share_of_failures"]),
            dur(level["restart_s"]),
        ]
        for level in doc["levels"]
    ]
    header = [w["tier"], w["interval"], w["optimal"], w["stall"], w["serves"], w["restart"]]
    return _section("schedule", w["schedule"], tables=[_table(header, rows, numeric=[1, 2, 3, 4, 5])])


def _split(doc: dict[str, Any]) -> dict[str, Any]:
    w = wording.REPORT
    loss = doc["loss"]
    of_loss = shares({term: loss[term] for term in TERMS}, loss["total"])
    rows = [[term, pct(loss[term]), pct(of_loss[term])] for term in TERMS]
    rows += [[w["total"], pct(loss["total"]), pct(1.0)], [w["effective"], pct(doc["effective"]), ""]]
    dominant = doc["dominant"]
    share = of_loss.get(dominant, 0.0)
    return _section(
        "split",
        w["split"],
        tables=[_table([w["term"], w["of_time"], w["of_loss"]], rows, numeric=[1, 2])],
        lines=[wording.report_dominant(dominant, share)],
    )


def _curve(sweep: dict[str, Any], doc: dict[str, Any], charts: _Charts | None, anchor: str) -> dict[str, Any]:
    w = wording.REPORT
    caption = wording.report_curve(sweep["base_optimal_interval_s"], sweep["base_effective"])
    chart = None if charts is None else charts.loss_curve(sweep, f"{anchor}-curve", doc["levels"])
    lines = [caption] if charts is not None else [caption, w["charts_omitted"]]
    if sweep.get("storage_every") is not None and len(doc["levels"]) == 2:
        memory, storage = (wording.periodic_interval(level["optimal_interval_s"]) for level in doc["levels"])
        lines.insert(1, wording.whole_multiples(memory, storage))
    return _section("curve", w["curve"], chart=chart, lines=lines)


def _levers(doc: dict[str, Any]) -> dict[str, Any]:
    w = wording.REPORT
    rows = [
        [lever["name"] + wording.break_even(lever.get("break_even")), pct(lever["effective"]),
         wording.lever_effect(lever["gain_pp"])]
        for lever in doc["levers"]
    ]  # fmt: skip
    if not rows:
        return _section("levers", w["levers"], lines=[w["no_levers"]])
    header = [w["lever"], w["effective"], wording.REPORT_SUMMARY["effect"]]
    return _section("levers", w["levers"], tables=[_table(header, rows, [1, 2])])


def _band(doc: dict[str, Any]) -> dict[str, Any]:
    w = wording.REPORT
    band = doc["uncertainty"]
    if band is None:
        return _section("band", w["band"], lines=[w["no_band"]])
    rows = [list(row) for row in wording.uncertainty_rows(band)]
    return _section(
        "band",
        w["band"],
        lines=[wording.uncertainty_title(band)],
        tables=[_table([w["figure"], w["value"], ""], rows, numeric=[1])],
    )


def _plan(doc: dict[str, Any], times: list[float], charts: _Charts | None, anchor: str) -> dict[str, Any]:
    w = wording.REPORT
    rows = [
        [key, dur(doc["completion_s"][key]), f"{doc['failures'][key]:.4g}"] for key in ("p10", "p50", "p90", "mean")
    ]
    chart = None if charts is None else charts.completion(times, doc, f"{anchor}-plan")
    return _section(
        "plan",
        w["plan"],
        lines=[wording.report_plan(doc), wording.plan_schedule(doc), *wording.plan_lines(doc)],
        tables=[_table([w["quantile"], w["wall"], w["failures"]], rows, numeric=[1, 2])],
        chart=chart,
    )


def _class_tables(document: dict[str, Any]) -> list[dict[str, Any]]:
    """A log's failures split by the preset's classes (docs/model.md §20.6), as a table; none without a split."""
    part = document.get("classes")
    if part is None:
        return []
    header = wording.class_split_header(part)
    return [_table(header, wording.class_split_rows(part), numeric=list(range(1, len(header))))]


def _log_sections(data: dict[str, Any], charts: _Charts | None) -> list[dict[str, Any]]:
    w = wording.REPORT
    sections = []
    fitted = data.get("fit")
    if fitted is not None:
        causes = [[row["cause"], f"{row['count']:,}", pct(row["share"])] for row in fitted["causes"]]
        chart = None if charts is None or not data["survival"]["times_s"] else charts.survival(data["survival"])
        sections.append(
            _section(
                "fit",
                w["fit"],
                lines=[
                    wording.fit_title(fitted),
                    *wording.report_fit_lines(fitted),
                    *([] if data.get("fit_alone") is None else [wording.report_fit_window(data["fit_alone"])]),
                ],
                tables=[
                    *([_table([w["cause"], w["failures"], w["share"]], causes, numeric=[1, 2])] if causes else []),
                    *_class_tables(fitted),
                ],
                chart=chart,
            )
        )
    found = data.get("analyze")
    if found is not None:
        realised = found["realised"]
        split = [[name, pct(realised[key])] for key, name in wording.split_parts(found)]
        split.append([w["effective"], pct(realised["effective"])])
        tables = [_table([w["part"], w["of_time"]], split, numeric=[1])]
        tables.append(
            _table([w["measured"], w["value"], ""], [list(r) for r in wording.measured_rows(found["measured"])], [1])
        )
        causes = [[row["cause"], f"{row['failures']:,}", dur(row["lost_s"]), pct(row["share_of_wall"])]
                  for row in found["causes"]]  # fmt: skip
        if causes:
            tables.append(_table([w["cause"], w["failures"], w["lost"], w["of_time"]], causes, [1, 2, 3]))
        tables.extend(_class_tables(found))
        model = found["model"]
        lines = [wording.analyze_header(found)]
        if model is not None:
            tables.append(_table([w["model"], w["value"]], [list(r) for r in wording.model_rows(model)], [1]))
            lines.append(wording.model_verdict(model, realised["effective"]))
        else:
            lines.append(w["no_model"])
        sections.append(_section("analyze", w["analyze"], lines=lines + list(found["warnings"]), tables=tables))
    return sections


# ------------------------------------------------------------------ charts: matplotlib to inline SVG

#: Attributes of matplotlib's root <svg> that would fix its size or name external namespaces.
_ROOT_ATTRIBUTES = re.compile(r'\s(?:width|height|xmlns(?::\w+)?|version)="[^"]*"')


class _Charts:
    """Draws the report's charts as inline SVG, deterministically: a fixed hash salt per chart (so element
    ids are stable and differ between charts on one page), no date, fonts kept as text."""

    def __init__(self) -> None:
        import os

        os.environ.pop("MPLBACKEND", None)  # files only: a backend named in the environment must not interfere
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        self.plt: Any = plt
        self.count = 0

    def _figure(self) -> tuple[Any, Any]:
        with self.plt.rc_context(self._style("")):
            figure, axes = self.plt.subplots(figsize=(7.5, 4.2), dpi=100)
        return figure, axes

    @staticmethod
    def _style(salt: str) -> dict[str, Any]:
        return {
            "svg.hashsalt": salt,
            "svg.fonttype": "none",
            "font.family": "DejaVu Sans",
            "font.size": 10,
            "path.simplify": True,
        }

    def _svg(self, figure: Any, name: str, label: str) -> str:
        with self.plt.rc_context(self._style(f"ckptcalc-{name}")):
            # Fixed margins, not tight_layout: one drawing instead of two, and the same for every chart.
            figure.subplots_adjust(left=0.1, right=0.98, bottom=0.13, top=0.96)
            buffer = io.StringIO()
            figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
        self.plt.close(figure)
        text = buffer.getvalue()
        text = text[text.index("<svg") :]
        text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
        head, rest = text.split(">", 1)
        head = _ROOT_ATTRIBUTES.sub("", head)
        # matplotlib numbers its ids from 1 in every figure (figure_1, line2d_1) and the chart was named
        # as its section: the chart's name before every id and every link to one keeps them unique.
        rest = re.sub(r'( id="|href="#|url\(#)', lambda found: f"{found.group(1)}{name}-", rest)
        from html import escape

        head += f' class="chart" role="img" aria-label="{escape(label)}" id="{name}-chart"'
        self.count += 1
        return head + ">" + rest

    @staticmethod
    def _plain_log(axis: Any, minor: bool = False) -> None:
        """Plain tick labels on a log axis: matplotlib's default (10 to a power) goes through mathtext, which
        costs seconds to set up. ``minor`` labels the minor ticks too (an axis spanning less than a decade
        may have no major one)."""
        from matplotlib.ticker import FuncFormatter, NullFormatter

        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.set_minor_formatter(FuncFormatter(lambda value, _: f"{value:.2g}") if minor else NullFormatter())

    def loss_curve(self, sweep: dict[str, Any], name: str, levels: Sequence[dict[str, Any]] = ()) -> str:
        w = wording.REPORT
        figure, axes = self._figure()
        values = sweep["values"]
        unit, factor = units.display_unit(float(sweep["base_optimal_interval_s"]), "duration")
        x = [v / factor for v in values]
        for term in (*TERMS, "total"):
            series = sweep["loss"][term]
            axes.plot(
                x,
                [100.0 * v for v in series],
                color=_COLOURS[term],
                linewidth=1.8 if term == "total" else 1.3,
                label=term,
            )
        best = float(sweep["base_optimal_interval_s"]) / factor
        lowest = 100.0 * (1.0 - float(sweep["base_effective"]))
        axes.axvline(best, color="black", linestyle="--", linewidth=0.8)
        axes.plot([best], [lowest], marker="o", color="black")
        axes.annotate(
            w["optimum"].format(interval=dur(sweep["base_optimal_interval_s"])),
            (best, lowest),
            xytext=(8, 10),
            textcoords="offset points",
        )
        # Every faster tier's optimal interval too, on the same time axis (the storage tier's is the optimum).
        for level in list(levels)[:-1]:
            at = float(level["optimal_interval_s"]) / factor
            axes.axvline(at, color="grey", linestyle=":", linewidth=0.9)
            axes.annotate(
                f"{level['name']} {dur(level['optimal_interval_s'])}",
                (at, 0),
                xytext=(4, 6),
                textcoords="offset points",
                rotation=90,
            )
        axes.set_xscale("log")
        self._plain_log(axes.xaxis)
        axes.set_xlabel(w["axis_interval"].format(unit=unit))
        axes.set_ylabel(w["axis_lost"])
        axes.set_ylim(0, min(100.0, max(100.0 * v for v in sweep["loss"]["total"]) * 1.05))
        axes.legend(loc="upper center", ncols=4, fontsize=9)
        axes.grid(alpha=0.3, which="both")
        return self._svg(figure, name, wording.REPORT["curve"])

    def completion(self, times: list[float], doc: dict[str, Any], name: str) -> str:
        w = wording.REPORT
        figure, axes = self._figure()
        unit, factor = units.display_unit(float(doc["completion_s"]["p50"]), "duration")
        axes.hist([t / factor for t in times], bins=30, color=_COLOURS["write"], alpha=0.8)
        for key, style in (("p10", ":"), ("p50", "--"), ("p90", ":")):
            axes.axvline(doc["completion_s"][key] / factor, color="black", linestyle=style, linewidth=1, label=key)
        axes.set_xlabel(w["axis_wall"].format(unit=unit))
        axes.set_ylabel(w["axis_runs"])
        axes.legend(loc="upper right", fontsize=9)
        axes.grid(alpha=0.3)
        return self._svg(figure, name, wording.REPORT["plan"])

    def survival(self, curve: dict[str, Any]) -> str:
        w = wording.REPORT
        figure, axes = self._figure()
        times = curve["times_s"]
        middle = sorted(times)[len(times) // 2]
        unit, factor = units.display_unit(float(middle), "duration")
        x = [t / factor for t in times]
        # Kaplan–Meier reaches 0 at the last gap, which a log scale cannot show.
        shown = [v if v > 0 else math.nan for v in curve["empirical"]]
        # Each point marked too: a log of two failures has one gap, one point, which a step alone never draws.
        axes.step(x, shown, where="post", color="black", linewidth=1.4, marker="o", markersize=3,
                  label=w["legend_log"])  # fmt: skip
        if curve["exponential"] is not None:
            axes.plot(x, curve["exponential"], color=_COLOURS["write"], linewidth=1.3, marker=".",
                      label=w["legend_exponential"])  # fmt: skip
        if curve["weibull"] is not None:
            axes.plot(x, curve["weibull"], color=_COLOURS["restart"], linewidth=1.3, linestyle="--", marker=".",
                      label=w["legend_weibull"])  # fmt: skip
        axes.set_xscale("log")
        axes.set_yscale("log")
        # The axes fit the log's points: the fitted curves fall far below the last gap's share on a long
        # log (to 1e-71), which would leave the points a sliver at the top.
        low_x, high_x, low_y = _survival_limits(x, curve["empirical"])
        axes.set_xlim(low_x, high_x)
        axes.set_ylim(low_y, 1.15)
        self._plain_log(axes.xaxis, minor=high_x / low_x < 10)
        self._plain_log(axes.yaxis, minor=1.15 / low_y < 10)
        axes.set_xlabel(w["axis_gap"].format(unit=unit))
        axes.set_ylabel(w["axis_survival"])
        axes.legend(loc="lower left", fontsize=9)
        axes.grid(alpha=0.3, which="both")
        return self._svg(figure, "log-survival", wording.REPORT["survival"])


def _survival_limits(x: Sequence[float], empirical: Sequence[float]) -> tuple[float, float, float]:
    """The survival chart's x range (the gaps, a little beyond them) and its lowest share: half the
    smallest share the log shows above 0 (one gap in n: 1/n), so that every point and its step show."""
    positive = [t for t in x if t > 0] or [1.0]
    shares = [v for v in empirical if v > 0] or [0.5]
    return min(positive) / 1.3, max(positive) * 1.3, min(shares) / 2
