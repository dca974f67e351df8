"""Shared fixtures: no test sees a user's own presets, and the CLI is run in-process."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from typer.testing import CliRunner

from ckptcalc.cli import app


@pytest.fixture(autouse=True)
def _isolated_presets(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("CKPTCALC_PRESET_PATH", str(tmp_path_factory.mktemp("user-presets")))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")


@pytest.fixture
def run() -> Callable[..., Any]:
    """Invoke ckptcalc with a list of arguments; returns the CliRunner result."""
    runner = CliRunner()

    def invoke(*args: str, **kwargs: Any) -> Any:
        return runner.invoke(app, list(args), **kwargs)

    return invoke


@pytest.fixture
def run_json(run: Callable[..., Any]) -> Callable[..., dict[str, Any]]:
    """Invoke ckptcalc with --json appended; asserts success and parses stdout."""

    def invoke(*args: str) -> dict[str, Any]:
        result = run(*args, "--json")
        assert result.exit_code == 0, result.stderr
        document: dict[str, Any] = json.loads(result.stdout)
        return document

    return invoke
