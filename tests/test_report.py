"""``ckptcalc report``: the design review as one HTML page or Markdown, ``--check``, and what it refuses."""

from __future__ import annotations

import ast
import copy
import json
import math
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

import ckptcalc
from ckptcalc import api
from ckptcalc.output import report as rendering

Run = Callable[..., Any]

HAND_RUN = Path("tests/data/hand-run.jsonl")
SECTIONS = ("inputs", "schedule", "split", "curve", "levers", "mechanisms", "band", "plan")

#: A whole preset of its own (no inheritance), small enough to edit in a test.
PRESET = """schema_version = 1
name = "review"
source = "a cluster for the review <b>bold</b>"

[checkpoint]
size = "1TB"

[storage]
bandwidth = "100GB/s"

[failures]
mtbf = "4h"
restart = "10min"
"""


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    """The documents of one report of two presets, worked out once for the module's renderings."""
    return api._report_data(["llama3-405b", "gemini-inmemory"], work="30d")


@pytest.fixture(scope="module")
def logged() -> dict[str, Any]:
    """The documents of a report with a run's event log: the scenario re-run at what the log measured."""
    return api._report_data(["llama3-405b"], work="30d", log=HAND_RUN, time_unit="min")


@pytest.fixture(scope="module")
def html(data: dict[str, Any]) -> str:
    return rendering.render(data, "html")


@pytest.fixture(scope="module")
def markdown(data: dict[str, Any]) -> str:
    return rendering.render(data, "markdown")


def test_the_html_holds_every_section_and_nothing_from_outside(html: str) -> None:
    for scenario in ("s1", "s2"):
        for section in SECTIONS:
            assert f'<section id="{scenario}-{section}">' in html, (scenario, section)
    assert "<script" not in html.lower()
    assert re.search(r"https?:", html) is None  # no link, font, namespace or metadata URL
    assert re.search(r"url\((?!#)", html) is None  # only the charts' own clip paths
    assert "@import" not in html and "<link" not in html and "<img" not in html
    # Two loss curves and two completion histograms: each an inline <svg>, sized by CSS.
    assert html.count("<svg") == 4
    assert '<meta name="ckptcalc-charts" content="4">' in html
    assert re.search(r"<svg[^>]*\swidth=", html) is None
    assert "@media print" in html and 'name="viewport"' in html


def test_the_html_shows_the_figures_worked_by_hand(html: str) -> None:
    text = re.sub(r"<[^>]+>", " ", html)
    # llama3-405b: 405e9 parameters × 16 B = 6.48 TB, over 2 TB/s a write of 6.48e12 / 2e12 = 3.24 s.
    assert "6.48 TB" in text and "3.24 s" in text
    # Its MTBF as stated, 3.1 h, and a 30-day plan of it; the gemini memory tier restarts in 1 min.
    assert "3.10 h" in text and "30.0 d of work" in text and "1.00 min" in text
    # The restart share of the loss dominates llama3-405b at its optimum: R / (M + R) is 600 / 11760 = 5.10 %
    # of the time to first order, the exact model's 5.23 % (the document's).
    document = api.optimize("llama3-405b").to_dict()
    assert document["dominant"] == "restart"
    assert f"{document['loss']['restart'] * 100:.3g} %" == "5.23 %"
    assert "The dominant term is restart" in text
    # The same sources the preset states: a value from the file, and the input given beside it.
    assert "llama3-405b.toml" in text and "given (work)" in text


def test_the_markdown_is_tables_and_no_pictures(markdown: str) -> None:
    assert "<svg" not in markdown and "![" not in markdown
    assert "## Scenario: llama3-405b" in markdown
    assert "| tier | interval | optimal | stall | serves | restart |" in markdown
    # gemini-inmemory's two tiers: memory every 4.88 min, storage every 54th (4.39 h).
    assert "| memory | 4.88 min | 4.88 min | 3.00 s | 99.0 % | 1.00 min |" in markdown
    assert "| storage | 4.39 h | 4.39 h | 1.50 min | 1.00 % | 10.0 min |" in markdown


def test_names_and_sources_are_escaped(tmp_path: Path) -> None:
    preset = tmp_path / "<script>alert(1).toml"
    preset.write_text(PRESET)
    text = api.report([preset])
    assert "<script" not in text and "<b>" not in text
    assert "&lt;script&gt;alert(1).toml" in text and "&lt;b&gt;bold&lt;/b&gt;" in text


def test_a_log_cause_is_escaped(logged: dict[str, Any]) -> None:
    hostile = "<script>x</script>|`y`"
    changed = copy.deepcopy(logged)
    changed["scenarios"] = changed["scenarios"][:1]
    changed["scenarios"][0]["plan"] = None
    changed["analyze"]["causes"][0]["cause"] = hostile
    changed["fit"]["causes"][0]["cause"] = hostile
    page = rendering.render(changed, "html")
    assert "<script" not in page
    assert page.count("&lt;script&gt;x&lt;/script&gt;|`y`") == 2  # the fit's causes and the run's
    written = rendering.render(changed, "markdown")
    assert "<script" not in written
    assert written.count(r"&lt;script&gt;x&lt;/script&gt;\|\`y\`") == 2


def test_a_hostile_cause_in_a_log_reaches_the_page_escaped(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    log.write_text(HAND_RUN.read_text().replace('"gpu"', '"<script>x</script>"'))
    written = api.report(["llama3-405b"], form="markdown", log=log, time_unit="min")
    assert "<script" not in written and "| &lt;script&gt;x&lt;/script&gt; | 2 |" in written


def test_check_passes_unchanged_and_exits_3_after_a_preset_edit(run: Run, tmp_path: Path) -> None:
    preset = tmp_path / "cluster.toml"
    preset.write_text(PRESET)
    target = tmp_path / "review.html"
    made = run("report", str(preset), "--html", str(target))
    assert made.exit_code == 0, made.stderr
    assert made.stdout == "" and target.stat().st_size > 10_000
    same = run("report", str(preset), "--check", str(target))
    assert same.exit_code == 0, same.stderr
    preset.write_text(PRESET.replace('restart = "10min"', 'restart = "9min"'))
    stale = run("report", str(preset), "--check", str(target))
    assert stale.exit_code == 3, stale.stderr
    line = stale.stderr.strip()
    assert "\n" not in line and "stale" in line and str(target) in line
    assert stale.stdout == ""


def test_an_existing_file_is_kept_without_force(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "review.md"
    target.write_text("mine\n")
    assert_usage_error(run("report", "--markdown", str(target)), "--force")
    assert target.read_text() == "mine\n"
    forced = run("report", "--markdown", str(target), "--force")
    assert forced.exit_code == 0, forced.stderr
    assert target.read_text().startswith("# Checkpoint design review\n")
    assert list(tmp_path.iterdir()) == [target]  # no temporary file left behind
    assert run("report", "--check", str(target)).exit_code == 0
    assert run("report", "--check", str(target), "--restart", "6min").exit_code == 3


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["report"], "--html"),
        (["report", "--html", "a.html", "--markdown", "a.md"], "--markdown"),
        (["report", "--check", "a.txt"], "--check"),
        (["report", "--check", "missing.html"], "--check"),
        (["report", "nosuch", "--markdown", "a.md"], "nosuch"),
        (["report", "--bw", "fast", "--markdown", "a.md"], "--bw"),
        (["report", "--markdown", "a.md", "--log", "missing.jsonl"], "missing.jsonl"),
        (["report", "--markdown", "no-such-dir/a.md"], "--markdown"),
        (["report", "--markdown", "a.md", "--log", "-"], "--log"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], culprit: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert_usage_error(run(*args), culprit)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written


def test_a_missing_extra_names_the_install(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)  # import jinja2 now raises ImportError
    result = run("report", "--markdown", str(tmp_path / "a.md"))
    assert_usage_error(result, "pip install 'ckptcalc[report]'")
    assert not (tmp_path / "a.md").exists()


def test_only_the_report_imports_jinja2() -> None:
    package = Path(api.__file__).parent
    importers = set()
    for path in package.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        if "jinja2" not in source:
            continue
        tree = ast.parse(source)
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0}
        if any(name.split(".")[0] == "jinja2" for name in names):
            importers.add(path.relative_to(package).as_posix())
    assert importers == {"output/report.py"}


@pytest.mark.parametrize(
    ("args", "loaded"),
    [
        (["optimize", "--json"], "False False"),
        # Markdown needs Jinja2 and no chart: matplotlib stays out of it.
        (["report", "--markdown", "{out}"], "True False"),
    ],
)
def test_jinja2_loads_for_the_report_alone(tmp_path: Path, args: list[str], loaded: str) -> None:
    argv = [a.replace("{out}", str(tmp_path / "r.md")) for a in args]
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['ckptcalc', *{argv!r}]\n"
        "try:\n"
        "    runpy.run_module('ckptcalc', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('jinja2' in sys.modules, 'matplotlib' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == loaded, done.stderr


def test_the_wheel_ships_the_templates() -> None:
    # Hatch packages every file under ckptcalc/; the templates are files there, found beside the module.
    from ckptcalc.output import report as rendering

    assert sorted(p.name for p in rendering._TEMPLATES.iterdir()) == ["report.html.j2", "report.md.j2"]


def test_an_incident_log_is_fitted_alone() -> None:
    # Not a run's event log (no run_start, no checkpoints): its failures are fitted, with no split of the
    # run; the fit's figures are those of `ckptcalc fit` on the same log.
    trace = Path("tests/data/trace-54d.json")
    data = api._report_data(["llama3-405b"], log=trace, time_unit="d")
    assert data["analyze"] is None
    assert data["fit"] == api.fit([trace], time_unit="d").to_dict()
    written = rendering.render(data, "markdown")
    assert "### Fit of the failures" in written and "396 interruptions in 53.8 d." in written


def test_an_unreadable_log_says_why_it_is_no_event_log(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("when,what\n1,x\n")
    with pytest.raises(ckptcalc.InputError, match="no column 'event'"):
        api._report_data(["llama3-405b"], log=bad)


def test_the_markdown_of_a_hostile_log_parses_as_tables(tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    log = tmp_path / "run.jsonl"
    log.write_text(HAND_RUN.read_text().replace('"gpu"', json.dumps("a|b\n`c` <script>alert(1)</script>")))
    written = api.report(["llama3-405b"], form="markdown", log=log, time_unit="min")
    tokens = MarkdownIt("commonmark").enable("table").parse(written)
    assert not [t for t in tokens if t.type in ("html_block", "html_inline")]
    assert not [c for t in tokens if t.children for c in t.children if c.type == "html_inline"]
    tables: list[list[list[str]]] = []
    cell = False
    for token in tokens:
        if token.type == "table_open":
            tables.append([])
        elif token.type == "tr_open":
            tables[-1].append([])
        elif token.type in ("th_open", "td_open"):
            cell = True
        elif token.type == "inline" and cell:
            tables[-1][-1].append(token.content)
            cell = False
    # Every row as wide as its header: no pipe, line break or backtick in a cause split or ended a row.
    assert len(tables) > 5 and all(len({len(row) for row in table}) == 1 for table in tables)
    # The cause reads back as written, its line break a space, as one cell of the causes table.
    page = MarkdownIt("commonmark").enable("table").render(written)
    assert "<td>a|b `c` &lt;script&gt;alert(1)&lt;/script&gt;</td>" in page and "<script" not in page


def test_the_mechanisms_show_groups_spares_and_silent_events() -> None:
    # Each as the scenario's optimize document has it: the elastic groups in a line, the spares and the
    # silent events as optimize's tables.
    text = api.report(["elastic-hsdp", "palm-spikes"], form="markdown")
    assert "elastic replica groups: 16, 90.0 % of failures group-local, rejoin 5.00 min" in text
    assert "| Silent events and retention | value |   |" in text
    assert "| P(unrecoverable) | 0.00111 % | per event, keeping 5 newest |" in text
    spared = api.report(["llama3-405b"], form="markdown", spares=4, repair="4h", nodes=2048)
    assert "| Spare nodes | value |   |" in spared and "| P(no spare) |" in spared


@pytest.mark.parametrize("form", ["html", "markdown"])
def test_control_characters_in_a_log_cause_reach_the_report_as_their_code(tmp_path: Path, form: str) -> None:
    """An ESC (and any C0 or C1 control) from a hostile log would reach a terminal showing the report raw."""
    log = tmp_path / "run.jsonl"
    log.write_text(HAND_RUN.read_text().replace('"gpu"', json.dumps("gpu\x1b[2J\x07\x9b\x7f")))
    written = api.report(["llama3-405b"], form=form, log=log, time_unit="min")
    assert not [char for char in written if (ord(char) < 32 and char != "\n") or 0x7F <= ord(char) <= 0x9F]
    shown = r"gpu\x1b[2J\x07\x9b\x7f" if form == "html" else r"gpu\\x1b\[2J\\x07\\x9b\\x7f"
    assert shown in written


def test_the_markdown_reads_the_figures_of_a_schedule_off_its_optimum() -> None:
    """Llama 3 run at τ = 30 min, far from its optimum (docs/model.md §8.1 and Reference 8.1): each figure
    the review prints is the one its document holds, in the row and column that name it."""
    from references import daly

    data = api._report_data(["llama3-405b"], work="30d", interval="30min")
    lines = rendering.render(data, "markdown").splitlines()
    # The schedule: the interval run, 30 min, and the optimal one, τ_exact = 266.762 s = 4.45 min (Reference 8.1).
    assert "| storage | 30.0 min | 4.45 min | 3.24 s | 100 % | 10.0 min |" in lines
    # The MTBF row: the preset's 3.1 h.
    assert "| MTBF | 3.10 h | as stated |" in lines
    # §8.1 at τ = 1800 s: restart 1 − e^{−r/M}, write (e^{δ/M} − 1)/(e^{r/M}(e^{(τ+δ)/M} − 1)), rework the rest
    # of the loss; the dominant term is rework, given as its share of the loss (58.0 %), not of time (7.45 %).
    tau, delta, r, m = 1800.0, 3.24, 600.0, 11160.0
    loss = 1.0 - daly(tau, delta, r, m)
    restart = 1.0 - math.exp(-r / m)
    write = math.expm1(delta / m) / (math.exp(r / m) * math.expm1((tau + delta) / m))
    rework = loss - restart - write
    assert round(rework / loss * 100, 1) == 58.0 and round(rework * 100, 2) == 7.45
    assert any(line.startswith("The dominant term is rework (58.0 % of the loss)") for line in lines)
    assert "| rework | 7.45 % | 58.0 % |" in lines
    # A lever's gain carries its sign either way: a replica gains, the spares (their pool idle) lose.
    optimize = data["scenarios"][0]["optimize"]
    gains = {lever["key"]: lever["gain_pp"] for lever in optimize["levers"]}
    assert gains["memory_replica"] > 0 > gains["spares"]
    for lever in optimize["levers"]:
        shown = f"{'gains' if lever['gain_pp'] >= 0 else 'costs'} {abs(lever['gain_pp']):.2f} pp |"
        assert sum(line.endswith(shown) for line in lines) >= 1, shown
    # The plan's rows: p90 is the runs' own p90 (34.8 d, 292 failures), not another quantile.
    plan = data["scenarios"][0]["plan"]
    p90 = f"{plan['completion_s']['p90'] / 86400:.3g} d"
    assert p90 != f"{plan['completion_s']['p50'] / 86400:.3g} d"
    assert f"| p90 | {p90} | {plan['failures']['p90']:.4g} |" in lines


# ------------------------------------------------------------------ a run's log: one story


def test_a_report_with_a_log_holds_its_sections_and_the_survival_chart(logged: dict[str, Any]) -> None:
    html = rendering.render(logged, "html")
    assert '<section id="log-fit">' in html and '<section id="log-analyze">' in html
    # The loss curve and the completion histogram of the one scenario, and the survival plot.
    assert html.count("<svg") == 3 and 'id="log-survival-chart"' in html


def _story(markdown: str) -> tuple[list[str], list[str]]:
    """The failure counts and MTBFs the log's sections state, leaving out the line on fit's own window."""
    log_part = markdown[markdown.index("## The failure log") :]
    said = [line for line in log_part.splitlines() if not line.startswith("Counted over the whole run")]
    text = "\n".join(said)
    counts = re.findall(r"(\d+) interruptions|\| failures \| (\d+) \|", text)
    mtbfs = re.findall(r"MTBF (?:\| )?([\d.]+ (?:s|min|h|d))", text)
    return [a or b for a, b in counts], mtbfs


def test_the_hand_worked_run_tells_one_count_of_failures(logged: dict[str, Any]) -> None:
    # docs/model.md §11.3: 4 failures in the 120-minute run, M = 120 min / 4 = 30 min over the run's window.
    # fit alone opens its window at the first failure: 3 interruptions (docs/fit.md §3), said beside.
    written = rendering.render(logged, "markdown")
    counts, mtbfs = _story(written)
    assert counts and set(counts) == {"4"}
    assert mtbfs and set(mtbfs) == {"30.0 min"}
    assert logged["fit"]["interruptions"] == logged["analyze"]["measured"]["failures"] == 4
    assert logged["fit"]["mtbf_s"] == pytest.approx(30 * 60.0, rel=1e-12)
    assert "fit alone opens its window at the first failure" in written
    assert logged["fit_alone"]["interruptions"] == 3


def test_two_crashes_tell_one_story(tmp_path: Path) -> None:
    # tests/data/logs/torchtitan/two-crashes.log: a run of 5.43 min with 2 failures, M = 5.43 / 2 = 2.72 min
    # (analyze's window, the run's). fit alone would count 1 interruption in the 1.67 min between them.
    log = Path("tests/data/logs/torchtitan/two-crashes.log")
    data = api._report_data(["llama3-405b"], log=log)
    written = rendering.render(data, "markdown")
    counts, mtbfs = _story(written)
    assert counts and set(counts) == {"2"}, counts
    assert mtbfs and set(mtbfs) == {"2.72 min"}, mtbfs
    assert "1 interruptions in 1.67 min, MTBF 1.67 min." in written  # fit's convention, stated beside
    # The scenario re-run at the measured inputs, the preset's value beside each one the log changed: the
    # restart measured 21.5 s against the preset's 10 min, the MTBF 2.72 min against its 3.10 h.
    assert "| failures.restart | 21.5 s | measured in the log | 10.0 min |" in written
    assert "| failures.mtbf | 2.72 min | measured in the log | 3.10 h |" in written
    assert "| cluster.gpus | 16384 | llama3-405b.toml |   |" in written
    # The survival of its one gap between failures: one point (a gap of 100 s, survival 1/2), which the
    # axes now hold: x around 100 s, y down to half the smallest share.
    curve = data["survival"]
    assert curve["times_s"] == [100.0] and curve["empirical"] == [0.5]
    low_x, high_x, low_y = rendering._survival_limits([t / 60 for t in curve["times_s"]], curve["empirical"])
    assert low_x < 100 / 60 < high_x and low_y == 0.25


def test_the_survival_axes_fit_the_points_not_the_fitted_tails() -> None:
    # A long log's fitted curves fall to 1e-71 at its longest gaps; the axis stops at half the smallest
    # share the log shows (1/n of n gaps), and spans the gaps alone.
    x = [1.0, 10.0, 100.0, 1000.0]
    empirical = [0.75, 0.5, 0.25, 0.0]
    assert rendering._survival_limits(x, empirical) == (1.0 / 1.3, 1000.0 * 1.3, 0.125)


def test_a_preset_the_measurements_cannot_be_written_over_stays_itself_and_says_why() -> None:
    # palm-spikes counts its silent events in a window the measured preset does not carry: its own scenario.
    written = api.report(["palm-spikes"], form="markdown", log=HAND_RUN, time_unit="min")
    assert "The preset as it states itself: the log's measurements cannot be written over it (" in written
    assert "measured in the log" not in written
