"""Markdown that survives whatever a cell holds: ``--markdown`` of every command that has it.

A preset's name, a log's failure cause or a path may hold ``|``, a newline, a backtick or HTML. Each
cell goes through :func:`cell` and every other piece of text through :func:`inline`, so that a table
keeps its columns and nothing is read as markup: Markdown's punctuation is escaped with a backslash,
``<``, ``>`` and ``&`` become entities, line breaks become spaces, and control characters (an ESC)
their code (``\\x1b``). :func:`table` writes a
GitHub-flavoured table of such cells.

Every document starts with a heading and ends with one blank line, so that documents appended to
one file (``optimize --markdown >> review.md; compare --markdown >> review.md``) stay apart.
Sentences come from :mod:`ckptcalc.output.wording`; the numbers were all computed before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ckptcalc.inputs import units
from ckptcalc.mechanisms import registry
from ckptcalc.output import wording

#: Characters Markdown may read as markup inside a line; each is written with a backslash. ``$`` is
#: among them because GitHub reads ``$…$`` as mathematics.
_PUNCTUATION = re.compile(r"([\\`*_\[\]{}|#~!$])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_BREAKS = re.compile(r"\r\n|[\r\n\u2028\u2029\x0b\x0c\x85]")
#: Where text opening a line would make it a list item, a thematic break or an underline (``- x``,
#: ``+ x``, ``1. x``, ``2) x``, ``---``, ``===``): a backslash goes before that punctuation.
_OPENING = re.compile(r"^(?:\d{1,9}(?=[.)](?:\s|$))|(?=([-+=])(?:\s|$|\1)))")

dur = units.format_duration
pct = units.format_percent


#: Control characters (C0 but the line breaks above, DEL, C1): written as their code, ``\x1b``, so that
#: an ESC from a log's cause never reaches a terminal or a page raw. A tab is a space.
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")


def visible(text: str) -> str:
    """``text`` with each control character written as its code (the HTML report's escaping uses it too).

    >>> print(visible("a\\x1b[31mb\\x07\\tc\\x9b"))
    a\\x1b[31mb\\x07 c\\x9b
    """
    return _CONTROLS.sub(lambda found: f"\\x{ord(found.group()):02x}", text.replace("\t", " "))


def _escaped(text: object) -> str:
    plain = visible(_BREAKS.sub(" ", str(text)))
    plain = "".join(_ENTITIES.get(char, char) for char in plain)
    return _PUNCTUATION.sub(r"\\\1", plain).strip()


def cell(text: object) -> str:
    r"""``text`` as one table cell that reads as written.

    >>> cell("a|b\n<script>`x`")
    'a\\|b &lt;script&gt;\\`x\\`'
    >>> cell("+4.40 pp"), cell("llama3-405b"), cell("")
    ('+4.40 pp', 'llama3-405b', ' ')
    """
    return _escaped(text) or " "


def inline(text: object) -> str:
    r"""``text`` as plain words anywhere in a line, even where it opens one: in a heading, a paragraph
    or a block quote, as in a cell, and a leading ``-``, ``+``, ``=`` or ``1.`` read as itself.

    >>> inline("- 1. <b>")
    '\\- 1. &lt;b&gt;'
    >>> inline("12) done"), inline("4.45 min"), inline("-0.74 pp")
    ('12\\) done', '4.45 min', '-0.74 pp')
    """
    escaped = _escaped(text)
    opening = _OPENING.match(escaped)
    return escaped if opening is None else escaped[: opening.end()] + "\\" + escaped[opening.end() :]


def table(header: Sequence[object], rows: Iterable[Sequence[object]]) -> list[str]:
    """A GitHub-flavoured table as a list of lines, every cell escaped by :func:`cell`."""
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a row of {len(row)} cells under a header of {len(header)}")
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    return lines


def _finished(lines: list[str]) -> str:
    """Blocks separated by one blank line, the document ending with one, however the parts were laid."""
    text = "\n".join(lines).strip("\n")
    return re.sub(r"\n{3,}", "\n\n", text) + "\n\n"


def _quotes(lead: str, messages: Iterable[str]) -> list[str]:
    """One block quote per message, each its own block."""
    out: list[str] = []
    for message in messages:
        out += ["", "> " + lead + inline(message)]
    return out


def _interval(value: float | None) -> str:
    """An interval of a JSON document, null where no periodic checkpoint is needed."""
    return wording.periodic_interval(math.inf if value is None else value)


def document(doc: dict[str, Any]) -> str:
    """``--markdown`` of optimize, compare, check and sweep: GitHub-flavoured tables for reviews."""
    command = doc["command"]
    writers: dict[str, Callable[[dict[str, Any]], list[str]]] = {
        "optimize": _optimize,
        "compare": _compare,
        "check": _check,
        "sweep": _sweep,
    }
    if command not in writers:  # pragma: no cover - the command line offers --markdown on these only
        raise ValueError(f"no Markdown for {command}")
    lines = writers[command](doc)
    lines += _quotes("warning: ", doc.get("warnings", []))
    return _finished(lines)


#: The columns of a schedule by level.
_LEVEL_HEADER = ["level", "interval", "stall", "serves", "restart"]


def _levels(levels: list[dict[str, Any]]) -> list[list[str]]:
    """The rows of a schedule by level: interval, stall, share of failures served, restart."""
    return [
        [v["name"], _interval(v["optimal_interval_s"]), dur(v["stall_s"]), pct(v["share_of_failures"]),
         dur(v["restart_s"])]
        for v in levels
    ]  # fmt: skip


def _optimize(doc: dict[str, Any]) -> list[str]:
    from ckptcalc.model.evaluation import TERMS
    from ckptcalc.model.statistics import shares

    loss = doc["loss"]
    of_loss = shares({t: loss[t] for t in TERMS}, loss["total"])
    lines = ["## " + inline(wording.markdown_title("optimize", doc["preset"])), ""]
    interval, effective = _interval(doc["optimal_interval_s"]), pct(doc["effective"])
    lines += [wording.markdown_headline(_strong(interval), _strong(effective), inline(doc["dominant"])), ""]
    if doc["inputs"]["assumed"]:
        lines += [inline(wording.ASSUMED), "", *(f"- {inline(line)}" for line in doc["inputs"]["assumed"]), ""]
    if len(doc["levels"]) != 1:  # a level or more beside storage
        lines += [*table(_LEVEL_HEADER, _levels(doc["levels"])), ""]
    lines += table(
        ["term", "share of time", "share of loss"],
        [[t, pct(loss[t]), pct(of_loss[t])] for t in TERMS] + [["total", pct(loss["total"]), "100 %"]],
    )
    band = doc["uncertainty"]
    if band is not None:
        lines += ["", inline(wording.markdown_band(wording.span(band["mtbf_s"], dur))), ""]
        lines += table(["", "value", "note"], [list(row) for row in wording.uncertainty_rows(band)])
    if doc["levers"]:
        lines += ["", inline(wording.MARKDOWN_LEVERS), ""]
        lines += table(
            ["lever", "effective", "gain"],
            [
                [v["name"] + wording.break_even(v.get("break_even")), pct(v["effective"]), f"{v['gain_pp']:+.2f} pp"]
                for v in doc["levers"]
            ],
        )
    return lines


def _strong(text: str) -> str:
    return f"**{inline(text)}**"


def _compare(doc: dict[str, Any]) -> list[str]:
    from ckptcalc.model.statistics import points

    scenarios = doc["scenarios"]
    names = [s["name"] for s in scenarios]
    lines = ["## " + inline(wording.markdown_title("compare", None)), "", inline(wording.MARKDOWN_INPUTS), ""]
    lines += table(*_compare_inputs(scenarios))
    first = scenarios[0]["effective"]
    bands = [s["uncertainty"] for s in scenarios]
    banded = any(b is not None for b in bands)
    header = ["scenario", "interval", "write", "rework", "restart", "effective", "vs first", "dominant"]
    rows = [
        [s["name"], _interval(s["optimal_interval_s"]), pct(s["loss"]["write"]), pct(s["loss"]["rework"]),
         pct(s["loss"]["restart"]), pct(s["effective"]),
         "-" if i == 0 else f"{points(s['effective'], first):+.2f} pp", s["dominant"]]
        for i, s in enumerate(scenarios)
    ]  # fmt: skip
    if banded:
        header += ["effective, 95 %", "robust interval"]
        for row, b in zip(rows, bands, strict=True):
            row += ["-", "-"] if b is None else [wording.span(b["effective"], pct), _interval(b["robust_interval_s"])]
    lines += ["", inline(wording.MARKDOWN_RESULTS), "", *table(header, rows)]
    if any(len(s["levels"]) != 1 for s in scenarios):
        # Every tier's interval, a memory replica's as well as storage's: one row per scenario and level.
        level_rows = [[name, *row] for name, s in zip(names, scenarios, strict=True) for row in _levels(s["levels"])]
        lines += ["", inline(wording.MARKDOWN_LEVELS), "", *table(["scenario", *_LEVEL_HEADER], level_rows)]
    assumed = wording.compare_assumed(scenarios)
    if assumed:
        lines += ["", inline(wording.ASSUMED), "", *(f"- {inline(text)}" for text in assumed)]
    return lines + _quotes("warning: ", [wording.of_scenario(s["name"], w) for s in scenarios for w in s["warnings"]])


def _compare_inputs(scenarios: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The inputs the compare table shows, one row per scenario; a column only where one has it."""
    inputs = [s["inputs"] for s in scenarios]
    columns: list[tuple[str, list[str]]] = [
        ("scenario", [s["name"] for s in scenarios]),
        ("checkpoint size", [units.format_size(i["checkpoint_bytes"]) for i in inputs]),
        ("write time δ", [dur(s["write_s"]) for s in scenarios]),
        ("MTBF", [dur(i["mtbf_s"]) for i in inputs]),
    ]
    if any(s["uncertainty"] is not None for s in scenarios):
        columns.append(
            ("MTBF 95 %", ["-" if s["uncertainty"] is None else wording.span(s["uncertainty"]["mtbf_s"], dur)
                           for s in scenarios])
        )  # fmt: skip
    if any(i["shape"] is not None for i in inputs):
        columns.append(("failures", [wording.failure_law(i["shape"]) for i in inputs]))
    columns.append(("restart", [dur(i["restart_s"]) for i in inputs]))
    asynchronous = [i["snapshot_bandwidth_bytes_per_s"] is not None for i in inputs]
    names = [[v["name"] for v in s["levels"]] for s in scenarios]
    columns.append(("levels", [wording.level_list(n, a) for n, a in zip(names, asynchronous, strict=True)]))
    header = [name for name, _ in columns]
    return header, [list(row) for row in zip(*(values for _, values in columns), strict=True)]


def _check(doc: dict[str, Any]) -> list[str]:
    floor = "-" if doc["min_effective"] is None else pct(doc["min_effective"])
    silent = None if doc.get("max_silent_risk") is None else pct(doc["max_silent_risk"])
    lines = ["## " + inline(wording.markdown_check_title(floor, silent)), ""]
    return lines + table(
        ["preset", "effective", "tested at", "result"],
        [
            [r["preset"], "-" if r["effective"] is None else pct(r["effective"]), r["tested"],
             "error: " + r["error"] if r["error"] else ("pass" if r["passed"] else "FAIL")]
            for r in doc["results"]
        ],
    )  # fmt: skip


def _sweep(doc: dict[str, Any]) -> list[str]:
    from ckptcalc.inputs.fields import BY_FLAG

    kind = BY_FLAG[doc["over"]].kind
    show: Callable[[float], str] = {"duration": dur, "fraction": pct}.get(kind, lambda v: f"{v:.4g}")
    lines = ["## " + inline(wording.markdown_sweep_title(doc["over"], doc["preset"])), ""]
    return lines + table(
        [doc["over"], "interval", "write", "rework", "restart", "effective", "dominant"],
        [
            [show(v), _interval(i), pct(w), pct(rw), pct(rs), pct(e), d]
            for v, i, w, rw, rs, e, d in zip(
                doc["values"], doc["interval_s"], doc["loss"]["write"], doc["loss"]["rework"],
                doc["loss"]["restart"], doc["effective"], doc["dominant"], strict=True,
            )
        ],
    )  # fmt: skip


def analysis(doc: dict[str, Any]) -> str:
    """``analyze --markdown``: the same document as a short Markdown report."""
    r, m = doc["realised"], doc["measured"]
    lines = [
        "# " + inline(wording.analyze_markdown_title(doc["log"])),
        "",
        inline(wording.analyze_markdown_line(doc["wall_s"], r)),
        "",
        *table(["where the time went", "share"], [[name, pct(r[key])] for key, name in wording.split_parts(doc)]),
        "",
    ]
    rows: list[list[str]] = [
        [name, fmt(m[key])]
        for key, name, fmt in (
            ("write_s", "write time (mean)", dur),
            ("write_p90_s", "write time (p90)", dur),
            ("restart_s", "restart (mean)", dur),
            ("restart_p90_s", "restart (p90)", dur),
            ("interval_s", "interval used (median)", dur),
            ("mtbf_s", "MTBF", dur),
        )
        if m[key] is not None
    ]
    rows.append(["failures", str(m["failures"])])
    rows += [[what, value] for what, value, _ in wording.mechanism_rows(m)]
    rows += [[what, value] for what, value, _ in registry.measured_rows(m, wording)]
    lines += table(["measured", "value"], rows)
    model = doc["model"]
    if model is not None:
        model_rows = [
            ["effective at the interval used", pct(model["effective_at_interval"])],
            ["optimal interval", dur(model["optimal_interval_s"])],
            ["robust interval", dur(model["robust_interval_s"])],
            ["gain", f"{model['gain_pp']:.3g} pp"],
        ]
        if model["gain_gpu_hours"] is not None:
            model_rows.append(["gain over the run", f"{model['gain_gpu_hours']:,.0f} GPU-hours"])
        lines += ["", *table(["model at these inputs", "value"], model_rows)]
    if doc["causes"]:
        lines += ["", *table(["cause", "failures", "time lost"],
                             [[c["cause"], str(c["failures"]), dur(c["lost_s"])] for c in doc["causes"]])]  # fmt: skip
    lines += _quotes("", doc["warnings"])
    return _finished(lines)
