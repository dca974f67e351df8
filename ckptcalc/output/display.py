"""How a result shows itself in a notebook or a REPL: its headline figures, and nothing else.

Each command's ``--json`` document gives a :class:`Headline`: what it is about, a few figures for the
one-line ``repr`` and label-value rows for the small table of ``_repr_markdown_`` and ``_repr_html_``.
The figures are read from the document as the API worked them out, and only formatted here.

>>> h = headline({"command": "fit", "source": "counts", "logs": [], "mtbf_s": 11135.1, "interruptions": 419,
...               "mtbf_ci95": [10118.3, 12283.2], "window_s": 4665600.0, "weibull": None})
>>> short("FailureLog", h)
'<FailureLog counts: MTBF 3.09 h (95 % CI 2.81 h to 3.41 h), 419 interruptions in 54.0 d>'
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from ckptcalc.errors import printable
from ckptcalc.inputs import units
from ckptcalc.output import markdown
from ckptcalc.records import Record

#: The longest one-line ``repr``: longer ones end in an ellipsis.
LONGEST = 160

#: What a missing figure (a JSON null) shows as.
NONE = "-"


class Headline(Record):
    """A result's headline: its subject, the figures its ``repr`` shows, and the rows of its table."""

    command: str
    subject: str
    figures: tuple[str, ...]
    rows: tuple[tuple[str, str], ...]


def _dur(value: Any) -> str:
    return NONE if value is None else units.format_duration(float(value))


def _pct(value: Any) -> str:
    """A share of time to 4 significant figures (``92.50 %``): a hundredth of a point tells options apart."""
    return NONE if value is None else units.format_percent(float(value), 4)


def _span(pair: Any, show: Callable[[Any], str]) -> str:
    if not pair or pair[0] is None:
        return NONE
    return f"{show(pair[0])} to {'∞' if pair[1] is None else show(pair[1])}"


def _optimize(d: dict[str, Any]) -> Headline:
    interval = f"interval {_dur(d['interval_s'])}"
    if d["interval_s"] != d["optimal_interval_s"]:
        interval += f" (optimum {_dur(d['optimal_interval_s'])})"
    figures = [interval]
    if d.get("memory_interval_s") is not None:
        figures.append(f"memory every {_dur(d['memory_interval_s'])}")
    figures += [f"effective {_pct(d['effective'])}", f"{d['dominant']} dominates"]
    loss = d["loss"]
    rows = [
        ("storage interval", _dur(d["interval_s"])),
        ("optimal interval", _dur(d["optimal_interval_s"])),
        *([("memory interval", _dur(d["memory_interval_s"]))] if d.get("memory_interval_s") is not None else []),
        ("effective", _pct(d["effective"])),
        ("optimal effective", _pct(d["optimal_effective"])),
        *[(f"lost to {term}", _pct(loss[term])) for term in ("write", "rework", "restart") if term in loss],
        ("dominant", str(d["dominant"])),
        ("warnings", str(len(d.get("warnings") or []))),
    ]
    return Headline("optimize", str(d["preset"]), tuple(figures), tuple(rows))


def _values(over: str) -> Callable[[Any], str]:
    """How the swept values read: in the unit of the input swept."""
    from ckptcalc.inputs.fields import BY_FLAG

    spec = BY_FLAG.get(over)
    kind = spec.kind if spec is not None else "number"
    formats: dict[str, Callable[[float], str]] = {
        "duration": units.format_duration,
        "fraction": lambda v: units.format_percent(v),
        "size": units.format_size,
        "rate": units.format_rate,
        "count": units.format_count,
    }
    show = formats.get(kind, units.sig)
    return lambda value: NONE if value is None else show(float(value))


def _sweep(d: dict[str, Any]) -> Headline:
    values = d["values"]
    show = _values(str(d["over"]))
    low, high = (values[0], values[-1]) if values else (None, None)
    figures = (
        f"{d['over']} over {len(values)} points, {show(low)} to {show(high)}",
        f"base optimum {_dur(d['base_optimal_interval_s'])}, effective {_pct(d['base_effective'])}",
    )
    rows = (
        ("swept", str(d["over"])),
        ("points", str(len(values))),
        ("from", show(low)),
        ("to", show(high)),
        ("base optimal interval", _dur(d["base_optimal_interval_s"])),
        ("base effective", _pct(d["base_effective"])),
    )
    return Headline("sweep", str(d["preset"]), figures, rows)


def _compare(d: dict[str, Any]) -> Headline:
    scenarios = d["scenarios"]
    figures = tuple(f"{s['name']} {_pct(s['effective'])}" for s in scenarios)
    rows = tuple(
        (str(s["name"]), f"{_pct(s['effective'])} every {_dur(s['interval_s'])}, {s['dominant']} dominates")
        for s in scenarios
    )
    return Headline("compare", f"{len(scenarios)} scenarios", figures, rows)


def _check(d: dict[str, Any]) -> Headline:
    results = d["results"]
    failed = [r for r in results if not r["passed"]]
    floor = [f"floor {_pct(d['min_effective'])}"] if d.get("min_effective") is not None else []
    if d.get("max_silent_risk") is not None:
        floor.append(f"silent risk at most {_pct(d['max_silent_risk'])}")
    figures = (*floor, *(str(r["preset"]) for r in failed))

    def verdict(r: dict[str, Any]) -> str:
        if r["error"]:
            return f"error: {r['error']}"
        return f"{'pass' if r['passed'] else 'FAIL'} at {_pct(r['effective'])} ({r['tested']})"

    rows = tuple((str(r["preset"]), verdict(r)) for r in results)
    subject = f"all {len(results)} passed" if d["passed"] else f"{len(failed)} of {len(results)} failed"
    return Headline("check", subject, figures, rows)


def _simulate(d: dict[str, Any]) -> Headline:
    ci = _span(d["effective_ci95"], _pct)
    figures = (f"effective {_pct(d['effective'])} (95 % CI {ci})", f"{d['cycles']:,} cycles",
               f"interval {_dur(d['interval_s'])}")  # fmt: skip
    analytic = d.get("analytic") or {}
    rows = (
        ("effective (simulated)", _pct(d["effective"])),
        ("95 % confidence interval", ci),
        ("exact model", _pct(analytic.get("exact"))),
        ("storage interval", _dur(d["interval_s"])),
        ("cycles", f"{d['cycles']:,}"),
        ("failures", f"{d['failures']:,}"),
        ("seed", str(d["seed"])),
    )
    return Headline("simulate", str(d["preset"]), figures, rows)


def _plan(d: dict[str, Any]) -> Headline:
    done = d["completion_s"]
    figures = [f"work {_dur(d['work_s'])}", f"p50 {_dur(done['p50'])}", f"p90 {_dur(done['p90'])}",
               f"effective {_pct(d['effective'])}"]  # fmt: skip
    if d.get("p_deadline") is not None:
        figures.append(f"P(by deadline) {_pct(d['p_deadline'])}")
    failures = d["failures"]
    rows = [
        ("work", _dur(d["work_s"])),
        ("effective", _pct(d["effective"])),
        ("expected wall time", _dur(d.get("expected_s"))),
        *[(f"wall time {q}", _dur(done[q])) for q in ("p10", "p50", "p90") if q in done],
        ("failures p50", units.sig(float(failures["p50"]))),
        ("P(no failure)", _pct(d["p_no_failure"])),
        *([("deadline", _dur(d["deadline_s"])), ("P(by deadline)", _pct(d["p_deadline"]))]
          if d.get("p_deadline") is not None else []),
        ("runs", str(d["runs"])),
    ]  # fmt: skip
    return Headline("plan", str(d["preset"]), tuple(figures), tuple(rows))


def _fit(d: dict[str, Any]) -> Headline:
    subject = ", ".join(d["logs"]) or str(d["source"])
    ci = _span(d["mtbf_ci95"], _dur)
    figures = [
        f"MTBF {_dur(d['mtbf_s'])} (95 % CI {ci})",
        f"{d['interruptions']} interruptions in {_dur(d['window_s'])}",
    ]
    weibull = d.get("weibull")
    if weibull is not None:
        figures.append(f"Weibull k {units.sig(float(weibull['shape']))} ({weibull['verdict']})")
    rows = [
        ("MTBF", _dur(d["mtbf_s"])),
        ("95 % interval", ci),
        ("interruptions", str(d["interruptions"])),
        ("window", _dur(d["window_s"])),
        *([("Weibull shape k", units.sig(float(weibull["shape"]))), ("verdict", str(weibull["verdict"]))]
          if weibull is not None else []),
    ]  # fmt: skip
    return Headline("fit", subject, tuple(figures), tuple(rows))


def _analyze(d: dict[str, Any]) -> Headline:
    realised, measured, model = d["realised"], d["measured"], d.get("model")
    figures = [f"effective {_pct(realised['effective'])} realised"]
    if model is not None:
        figures.append(f"model {_pct(model['effective_at_interval'])}")
    figures.append(f"MTBF {_dur(measured.get('mtbf_s'))}")
    rows = [
        ("wall time", _dur(d["wall_s"])),
        ("effective (realised)", _pct(realised["effective"])),
        ("95 % confidence interval", _span(realised.get("effective_ci95"), _pct)),
        *([("effective (model, at the interval used)", _pct(model["effective_at_interval"])),
           ("optimal interval", _dur(model["optimal_interval_s"]))] if model is not None else []),
        ("failures", str(measured.get("failures"))),
        ("MTBF", _dur(measured.get("mtbf_s"))),
        ("restart", _dur(measured.get("restart_s"))),
        ("interval used", _dur(measured.get("interval_s"))),
    ]  # fmt: skip
    return Headline("analyze", str(d["log"]), tuple(figures), tuple(rows))


def _events(d: dict[str, Any]) -> Headline:
    target = str(d["output"]) if d.get("output") is not None else "stream"
    figures = (f"{d['events']:,} events written ({d['form']})", f"from {', '.join(d['logs'])}")
    rows = (("events", f"{d['events']:,}"), ("written to", target), ("form", str(d["form"])),
            ("read from", ", ".join(d["logs"])))  # fmt: skip
    return Headline("events", target, figures, rows)


def _presets(d: dict[str, Any]) -> Headline:
    found = d["presets"]
    rows = tuple((str(p["name"]), str(p["description"])) for p in found)
    return Headline("presets list", f"{len(found)} presets", tuple(str(p["name"]) for p in found), rows)


_HEADLINES: dict[str, Callable[[dict[str, Any]], Headline]] = {
    "optimize": _optimize,
    "sweep": _sweep,
    "compare": _compare,
    "check": _check,
    "simulate": _simulate,
    "plan": _plan,
    "fit": _fit,
    "analyze": _analyze,
    "events": _events,
    "presets list": _presets,
}


def headline(document: dict[str, Any]) -> Headline:
    """The headline of a command's ``--json`` document (its command and nothing more for one not known here)."""
    command = str(document.get("command", ""))
    build = _HEADLINES.get(command)
    return build(document) if build is not None else Headline(command, command, (), ())


def short(name: str, found: Headline) -> str:
    """One line, at most :data:`LONGEST` characters: ``<NAME SUBJECT: figure, figure>``."""
    text = printable(f"{found.subject}: {', '.join(found.figures)}" if found.figures else found.subject, newlines=False)
    line = f"<{name} {text}>"
    return line if len(line) <= LONGEST else line[: LONGEST - 2] + "…>"


def as_markdown(name: str, found: Headline) -> str:
    """A bold title and a two-column table, every cell escaped (:mod:`ckptcalc.output.markdown`)."""
    title = f"**{markdown.cell(name)}: {markdown.cell(found.subject)}**"
    return "\n".join([title, "", *markdown.table([found.command, "value"], found.rows)]) + "\n"


def as_html(name: str, found: Headline) -> str:
    """A small table with a caption, every text escaped; no script, no style beyond the table's class."""
    cells = "".join(
        f'<tr><th style="text-align:left">{html.escape(label)}</th><td>{html.escape(value)}</td></tr>'
        for label, value in found.rows
    )
    caption = f"<caption>{html.escape(name)}: {html.escape(found.subject)}</caption>"
    return f'<table class="ckptcalc">{caption}<tbody>{cells}</tbody></table>'
