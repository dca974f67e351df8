"""Hostile input to the newer features (report, plan's calendar deadline, --value, [[levels]] codecs):
each mistake fails plainly (exit 2, one ``error:`` line naming the culprit) and odd dates print as read."""

from __future__ import annotations

import collections
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

import ckptcalc
from ckptcalc.output import wording

Run = Callable[..., Any]


# ----------------------------------------------------------- report: the file it writes


def test_report_refuses_a_dash_instead_of_writing_a_file_named_dash(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert_usage_error(run("report", "--markdown", "-"), "--markdown")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("option", "name"), [("--markdown", "review.html"), ("--html", "review.md")])
def test_report_refuses_a_name_check_would_read_as_the_other_form(
    run: Run, tmp_path: Path, option: str, name: str
) -> None:
    # --check picks the form by the extension: Markdown in review.html would be stale for ever.
    result = run("report", option, str(tmp_path / name))
    assert_usage_error(result, option)
    assert Path(name).suffix in result.stderr
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------- plan: dates


def test_a_deadline_past_the_year_9999_is_refused_as_a_date(run: Run) -> None:
    result = run("plan", "--work", "1d", "--deadline", "10000-01-01", "--start", "2026-01-01")
    assert_usage_error(result, "--deadline")
    assert "ISO date" in result.stderr and "duration" not in result.stderr


def test_early_years_and_offsets_with_seconds_print_as_read() -> None:
    # Year 1 keeps its four digits; an offset of +05:30:15 keeps its seconds, -03:30 its sign.
    assert wording._moment("0001-01-02T00:00:00+05:30:15") == "0001-01-02 00:00 +05:30:15"
    assert wording._moment("2027-01-02T06:00:00-03:30") == "2027-01-02 06:00 -03:30"
    assert wording._moment("2026-07-15T12:00:30+00:00") == "2026-07-15 12:00:30 UTC"


# ----------------------------------------------------------- --value


def test_value_on_an_object_suggests_a_path_that_exists(run: Run) -> None:
    result = run("optimize", "--value", "levels.0")
    assert_usage_error(result, "--value")
    assert "levels.0.name" in result.stderr
    assert run("optimize", "--value", "levels.0.name").exit_code == 0


def test_value_on_an_empty_list_says_it_is_empty(run: Run) -> None:
    # llama3-405b raises no warning, so its JSON's warnings are [] and no path inside exists.
    result = run("optimize", "--value", "warnings")
    assert_usage_error(result, "--value")
    assert "'warnings' is empty" in result.stderr


def test_value_prints_a_boolean_as_json_does(run: Run) -> None:
    result = run("optimize", "--value", "storage.retained_over_run")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "false\n"


# ----------------------------------------------------------- compression ratio bounds


def test_a_huge_compression_ratio_names_the_upper_bound(run: Run) -> None:
    result = run("optimize", "--compression", "1e300")
    assert_usage_error(result, "--compression")
    assert "from 1 to 1e+21" in result.stderr


# ----------------------------------------------------------- [sources] through --value


def test_value_reaches_a_source_whose_key_holds_a_dot(run: Run, tmp_path: Path) -> None:
    # inputs.sources is keyed by preset key ("failures.mtbf"): the path's last two parts are one key.
    preset = tmp_path / "fitted.toml"
    preset.write_text(
        '[checkpoint]\nsize = "6.48TB"\n[storage]\nbandwidth = "2TB/s"\n[failures]\nmtbf = "3.1h"\nrestart = "10min"\n'
        '[sources]\n"failures.mtbf" = "fitted from incidents.jsonl"\n',
        encoding="utf-8",
    )
    result = run("optimize", "--preset", str(preset), "--value", "inputs.sources.failures.mtbf")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "fitted from incidents.jsonl\n"


def test_an_iso_week_deadline_is_read_as_a_date(run: Run) -> None:
    # 2026-W52 is Monday 2026-12-21, 20 days after the start; it used to fall through to the durations.
    result = run("plan", "--work", "1d", "--runs", "20", "--deadline", "2026-W52", "--start", "2026-12-01", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["deadline"] == "2026-12-21T00:00:00+00:00"
    assert document["deadline_s"] == 20 * 86400


def test_report_refuses_a_time_unit_without_a_log(run: Run, tmp_path: Path) -> None:
    # Without --log nothing reads the unit, so even "parsecs" passed unnoticed.
    result = run("report", "--time-unit", "parsecs", "--markdown", str(tmp_path / "review.md"))
    assert_usage_error(result, "--time-unit")
    assert "--log" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def two_scenarios_html() -> str:
    """One HTML report of two scenarios, each with its charts, for the tests that read its markup."""
    return ckptcalc.report(["llama3-405b", "gemini-inmemory"], form="html")


def test_report_ids_are_unique_and_every_link_inside_a_chart_finds_its_target(two_scenarios_html: str) -> None:
    # matplotlib named every figure figure_1, and each chart's svg took its section's id (s1-curve).
    ids = re.findall(r'\bid="([^"]+)"', two_scenarios_html)
    assert [key for key, count in collections.Counter(ids).items() if count > 1] == []
    assert two_scenarios_html.count("<svg") >= 2
    links = re.findall(r'href="#([^"]+)"|url\(#([^)]+)\)', two_scenarios_html)
    assert links and {a or b for a, b in links} <= set(ids)
