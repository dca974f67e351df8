"""Shared fixtures: no test sees a user's own presets, and the CLI is run in-process."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer.main
import typer.testing
from hypothesis import settings
from typer.testing import CliRunner

from ckptcalc.cli import app
from ckptcalc.commands import catalogue as ckptcalc_schema

# No deadlines: under several workers a draw's time says nothing about the code. In CI the draws are
# derandomised, so that a run of an unchanged checkout passes or fails the same way every time; set
# HYPOTHESIS_PROFILE=dev to explore new draws.
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


#: The run's folder of bytecode for the processes the tests start, made by the process pytest is started as.
BYTECODE = "TESTS_BYTECODE_FOLDER"


def pytest_configure(config: pytest.Config) -> None:
    """The commands the tests start as processes (a hundred and fifty) share one cache of bytecode, in a
    folder of the run's own: each would otherwise compile the package anew where bytecode is not written
    (PYTHONDONTWRITEBYTECODE), half of a start's time. Nothing is written in the tree.

    The folder is handed to the workers under a name of its own, not as PYTHONPYCACHEPREFIX: a worker
    started with a prefix looks for the bytecode of every module it imports there, and would compile
    pytest, Hypothesis, pandas and the rest again instead of reading what their installation wrote
    (about 4 s of each worker's collection)."""
    if "PYTHONPYCACHEPREFIX" in os.environ or BYTECODE in os.environ or hasattr(config, "workerinput"):
        return
    folder = tempfile.mkdtemp(prefix="ckptcalc-bytecode-")
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    os.environ[BYTECODE] = folder


@pytest.fixture(scope="session", autouse=True)
def _shared_bytecode() -> None:
    """From the first test on, the processes a test starts write and read the run's bytecode."""
    if BYTECODE in os.environ and "PYTHONPYCACHEPREFIX" not in os.environ:
        os.environ["PYTHONPYCACHEPREFIX"] = os.environ[BYTECODE]
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


_BUILT: dict[int, Any] = {}
_build = typer.main.get_command


def _built_once(typer_app: typer.Typer) -> Any:
    """The click command of a Typer app, built on its first invocation in this process. Building it takes
    most of an in-process invocation's time (about 30 ms of 45 for ``optimize --json``), and it is the
    same command every time: what a run depends on (environment, files) is read when it runs."""
    key = id(typer_app)
    if key not in _BUILT:
        _BUILT[key] = _build(typer_app)
    return _BUILT[key]


# typer.testing builds the command on every CliRunner.invoke through this name.
setattr(typer.testing, "_get_command", _built_once)  # noqa: B010


@pytest.fixture(scope="session")
def _preset_folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("user-presets")


@pytest.fixture(autouse=True)
def _isolated_presets(monkeypatch: pytest.MonkeyPatch, _preset_folders: Path) -> None:
    # A new empty folder for each test, made beside the others with mkdtemp: a numbered mktemp lists every
    # folder made before it, which over the two thousand tests a worker runs costs seconds.
    monkeypatch.setenv("CKPTCALC_PRESET_PATH", tempfile.mkdtemp(dir=_preset_folders))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")


_VALIDATORS: dict[str, Any] = {}


def validate(document: dict[str, Any]) -> None:
    """Check a --json document against the schema ckptcalc publishes for its command."""
    from jsonschema import Draft202012Validator

    command = document["command"]
    if command not in _VALIDATORS:
        schema = ckptcalc_schema.for_command(command)
        Draft202012Validator.check_schema(schema)
        _VALIDATORS[command] = Draft202012Validator(schema)
    _VALIDATORS[command].validate(document)


@pytest.fixture
def run() -> Callable[..., Any]:
    """Invoke ckptcalc with a list of arguments; returns the CliRunner result.

    Every successful ``--json`` output is validated against the published schema.
    """
    runner = CliRunner()

    def invoke(*args: str, **kwargs: Any) -> Any:
        result = runner.invoke(app, list(args), **kwargs)
        if result.exit_code in (0, 3) and "--json" in args and "--value" not in args:
            validate(json.loads(result.stdout))
        return result

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


#: The longest tests (a few seconds each on two cores), longest first. They start the run, so that the
#: workers end together on short tests instead of one waiting for the other's long one (under
#: ``--dist worksteal`` a worker takes the end of the other's queue). A test here keeps its module's
#: order otherwise; none uses a module's fixture, which would then be set up twice.
LONGEST_FIRST = (
    "test_one_engine.py::test_the_event_log_reads_back_as_the_run",
    "test_search.py::test_the_optimum_does_not_depend_on_where_the_search_starts",
    "test_classes.py::test_the_simulation_agrees",
    "test_types.py::test_mypy_rejects_mistyped_records",
    "test_analyze_bounded.py::test_a_folded_log_gives_the_figures_of_its_columns",
    "test_mechanisms.py::test_in_pairs_one_at_its_limit_leaves_the_other",
    "test_silent.py::test_the_simulation_agrees_with_the_model",
    "test_compose.py::test_elastic_groups_combine_against_an_event_simulation",
    "test_tiers_cli.py::test_restarts_far_beyond_the_mtbf",
    "test_simulate.py::test_search_finds_every_checkpoint_to_storage_when_storage_is_cheap",
    "test_sim_independent.py::test_silent_events_on_tiers_agree_with_the_independent_walk",
    "test_search.py::test_the_optimum_beats_every_neighbouring_schedule",
    "test_engine.py::test_silent_events_on_two_tiers_match_the_independent_figure",
)


#: Modules whose module-scoped fixtures take seconds to set up (the simulations of every route simulate takes,
#: the documents of a report): they follow the longest tests, at the head of the first worker's queue. A worker
#: that runs out takes the end of the other's queue, so a module there is often split between the two at the
#: end of the run, and its fixtures set up by each.
SHARED_SETUP_FIRST = ("test_whole_split.py", "test_report.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.nodeid.rpartition("/")[2].partition("[")[0]
        if name in LONGEST_FIRST:
            return LONGEST_FIRST.index(name)
        module = name.partition("::")[0]
        if module in SHARED_SETUP_FIRST:
            return len(LONGEST_FIRST) + SHARED_SETUP_FIRST.index(module)
        return len(LONGEST_FIRST) + len(SHARED_SETUP_FIRST)

    items.sort(key=rank)  # stable: every other test keeps its place
