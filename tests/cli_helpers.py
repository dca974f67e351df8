"""Assertions shared by the command-line tests."""

from __future__ import annotations

from typing import Any


def assert_usage_error(result: Any, culprit: str) -> None:
    """Exit code 2, nothing on stdout, one plain ``error:`` line naming ``culprit``, no traceback."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    line = result.stderr.strip()
    assert line.startswith("error: "), line
    assert "\n" not in line, line
    assert culprit in line, line
    assert "Traceback" not in result.stderr
    assert not any(ch in line for ch in "╭╰│─"), line
