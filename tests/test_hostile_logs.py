"""Hostile logs and filters: user expressions in linear time, giant numbers, blank lines, bombs and streams."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

import ckptcalc
from ckptcalc.errors import InputError
from ckptcalc.logs import reader

Run = Callable[..., Any]


class Keep:
    """A consumer that keeps every record's cause."""

    def __init__(self) -> None:
        self.causes: list[str] = []

    def fields(self, names: Sequence[str], line: int) -> None:
        pass

    def record(self, record: dict[str, Any], line: int) -> bool:
        self.causes.append(record["cause"])
        return True


# ---------------------------------------------------------------- regular expressions in linear time


@pytest.mark.parametrize("form", ["csv", "jsonl"])
def test_a_catastrophic_pattern_runs_in_linear_time(form: str) -> None:
    """(a+)+$ backtracks 2^30 times per cause under Python's re; RE2 answers at once on 10^5 lines."""
    causes = ["a" * 30 + ("!" if index % 4 else "") for index in range(100_000)]
    if form == "csv":
        text = "time,cause\n" + "".join(f"{index},{cause}\n" for index, cause in enumerate(causes))
    else:
        text = "".join(f'{{"time": {index}, "cause": "{cause}"}}\n' for index, cause in enumerate(causes))
    consumer = Keep()
    counts = reader.scan_text(text, consumer, name=f"x.{form}", where=["cause~(a+)+$"])
    assert (counts.read, counts.kept, counts.filtered) == (100_000, 25_000, 75_000)
    assert set(consumer.causes) == {"a" * 30}


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("a{99999999999}", "a repetition above 1000: {99999999999}"),
        ("a{2,1000000}", "a repetition above 1000: {2,1000000}"),
        ("a{" + "9" * 5000 + "}", "a repetition above 1000"),
        ("a{1001}", "a repetition above 1000: {1001}"),
        ("(a{1000}){1000}", "invalid repetition size: {1000}"),
        ("(?<=a)b", "invalid perl operator: (?<="),
        (r"(a)\1", r"invalid escape sequence: \1"),
    ],
)
def test_a_pattern_re2_cannot_run_is_an_input_error(pattern: str, message: str) -> None:
    with pytest.raises(InputError) as excinfo:
        reader.parse_where([f"cause~{pattern}"])
    assert excinfo.value.where == "where"
    assert message in excinfo.value.message


@pytest.mark.parametrize("pattern", ["a{1000}", r"a\{99999999999}", "a{2,}", "a{0001000}"])
def test_a_repetition_within_bounds_or_escaped_compiles(pattern: str) -> None:
    (condition,) = reader.parse_where([f"cause~{pattern}"])
    assert condition.op == "~" and condition.value == pattern


def test_an_escaped_brace_matches_as_text() -> None:
    (condition,) = reader.parse_where([r"cause~^a\{99999999999}$"])
    assert condition.meets({"cause": "a{99999999999}"}) and not condition.meets({"cause": "a"})


def test_the_api_refuses_a_huge_repetition_naming_where(tmp_path: Path) -> None:
    log = tmp_path / "log.csv"
    log.write_text("time,cause\n1,a\n2,b\n3,a\n")
    with pytest.raises(ckptcalc.InputError) as excinfo:
        ckptcalc.fit([str(log)], time_unit="h", where=["cause~a{99999999999}"])
    assert excinfo.value.where == "where"


@pytest.mark.parametrize("option", ["--where", "--where-any"])
def test_the_cli_refuses_a_huge_repetition_naming_the_option(run: Run, tmp_path: Path, option: str) -> None:
    log = tmp_path / "log.csv"
    log.write_text("time,cause\n1,a\n2,b\n3,a\n")
    assert_usage_error(run("fit", str(log), "--time-unit", "h", option, "cause~a{99999999999}"), option)


def test_the_cli_filters_five_hostile_causes_at_once(run_json: Callable[..., dict[str, Any]], tmp_path: Path) -> None:
    """The red team's hang: five causes of thirty a's and a "!", and (a+)+$; two plain causes pass."""
    rows = [f"{index},{'a' * 30}!" for index in range(1, 6)] + ["6,aa", "7,aaa", "8,aaaa"]
    log = tmp_path / "log.csv"
    log.write_text("time,cause\n" + "\n".join(rows) + "\n")
    doc = run_json("fit", str(log), "--time-unit", "h", "--where", "cause~(a+)+$")
    assert (doc["reading"]["read"], doc["reading"]["filtered"], doc["events_kept"]) == (8, 5, 3)
