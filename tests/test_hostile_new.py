"""Hostile input to the newer features (report, plan's calendar deadline, --value, [[levels]] codecs):
each mistake fails plainly (exit 2, one ``error:`` line naming the culprit) and odd dates print as read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

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
