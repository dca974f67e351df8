"""A report that reads anywhere: a summary of every scenario first, every tier's interval on the chart with
the whole-multiple steps explained, and a lever that costs reading as a cost (issue 35, item 5; the
375 px check is tests/test_browser.py)."""

from __future__ import annotations

import re

import pytest

from ckptcalc import api
from ckptcalc.output import wording

pytest.importorskip("jinja2")


@pytest.fixture(scope="module")
def markdown() -> str:
    return api.report(["llama3-405b", "gemini-inmemory"], form="markdown")


def test_the_summary_comes_first_with_every_scenario(markdown: str) -> None:
    head = markdown.split("## Scenario:")[0]
    assert "### Summary: every scenario side by side" in head
    rows = [line for line in head.splitlines() if line.startswith("| llama3-405b") or line.startswith("| gemini")]
    # llama3-405b: 92.5 % at 4.45 min, restart dominating; gemini-inmemory: memory 4.88 min, storage with every
    # 54th (4.39 h), 96.4 % (docs/guide/strategies.md), rework dominating.
    assert rows[0].startswith("| llama3-405b | 92.5 % | storage 4.45 min | restart | in-memory replica")
    assert rows[1].startswith("| gemini-inmemory | 96.4 % | memory 4.88 min, storage 4.39 h | rework | MTBF ×2")
    assert rows[1].endswith("(gains 1.13 pp) |")


def test_a_lever_that_costs_reads_as_a_cost(markdown: str) -> None:
    gemini = markdown.split("## Scenario: gemini-inmemory")[1]
    # Just-in-time recovery on gemini-inmemory costs 1.70 pp (issue 35).
    assert re.search(r"^\| just-in-time recovery .* \| costs 1\.70 pp \|$", gemini, re.M)
    assert "-1.70 pp" not in gemini
    assert wording.lever_effect(0.001) == "no change"
    assert wording.lever_effect(-0.5) == "costs 0.50 pp"


def test_a_nested_schedule_explains_its_steps(markdown: str) -> None:
    llama, gemini = markdown.split("## Scenario: gemini-inmemory")
    assert "sawtooth" in gemini and "sawtooth" not in llama
    assert "memory 4.88 min, storage 4.39 h" in gemini


def test_the_chart_marks_every_tier() -> None:
    pytest.importorskip("matplotlib")
    page = api.report(["gemini-inmemory"])
    chart = page.split('id="s1-curve-chart"')[1].split("</svg>")[0]
    assert "memory 4.88 min" in chart
    assert "optimum 4.39 h" in chart
    assert '<article id="summary">' in page and page.index('id="summary"') < page.index('<article id="s1"')
