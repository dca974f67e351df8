"""The pre-commit hooks ckptcalc ships, run by their own entry commands on this repository's presets, and
the GitHub Actions example of docs/guide/gating.md (issue 35, item 6)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parent.parent


def _hooks() -> dict[str, dict[str, Any]]:
    return {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


def _entry(hook: dict[str, Any]) -> list[str]:
    """The hook's entry as this interpreter runs it (``ckptcalc`` is ``python -m ckptcalc``)."""
    words = shlex.split(hook["entry"])
    assert words[0] == "ckptcalc"
    return [sys.executable, "-m", "ckptcalc", *words[1:]]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def _presets(hook: dict[str, Any]) -> list[str]:
    """The repository's files the hook would be given, as pre-commit selects them by ``files``."""
    pattern = re.compile(hook["files"])
    return sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "presets").glob("*") if pattern.search(str(p.relative_to(ROOT)))
    )


def test_the_hooks_are_declared() -> None:
    hooks = _hooks()
    assert set(hooks) == {"ckptcalc-check", "ckptcalc-report"}
    assert hooks["ckptcalc-report"]["pass_filenames"] is False
    assert all(hook["language"] == "python" for hook in hooks.values())


def test_the_check_hook_passes_the_repos_presets_above_a_low_floor() -> None:
    hook = _hooks()["ckptcalc-check"]
    files = _presets(hook)
    assert "presets/llama3-405b.toml" in files and len(files) >= 10
    done = _run([*_entry(hook), "--min-effective", "0.5", *files])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0].split()[-1] for line in lines[:-1]] == files  # one line per preset, by file
    assert lines[-1] == "all pass"


def test_the_check_hook_names_the_file_and_the_failing_bound() -> None:
    hook = _hooks()["ckptcalc-check"]
    done = _run([*_entry(hook), "--min-effective", "0.9", *_presets(hook)])
    assert done.returncode == 3
    failing = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert (
        "FAIL presets/gemini-storage-only.toml: 85.6 % effective at its optimum; below --min-effective 90.0 %"
        in failing
    )
    assert all("below --min-effective 90.0 %" in line for line in failing)


def test_the_check_hook_fails_a_preset_that_does_not_load(tmp_path: Path) -> None:
    broken = tmp_path / "presets" / "broken.toml"
    broken.parent.mkdir()
    broken.write_text('schema_version = 1\n[storage]\nbandwidth = "fast"\n')
    done = _run([*_entry(_hooks()["ckptcalc-check"]), "--min-effective", "0.5", str(broken)])
    assert done.returncode == 2
    assert "broken.toml" in done.stderr


def test_the_report_hook_checks_a_committed_report(tmp_path: Path) -> None:
    pytest.importorskip("jinja2")
    hook = _hooks()["ckptcalc-report"]
    review = tmp_path / "review.md"
    written = _run([*_entry(hook), "presets/llama3-405b.toml", "--markdown", str(review)])
    assert written.returncode == 0, written.stderr
    assert _run([*_entry(hook), "presets/llama3-405b.toml", "--check", str(review)]).returncode == 0
    review.write_text(review.read_text().replace("92.5 %", "95.0 %"))
    stale = _run([*_entry(hook), "presets/llama3-405b.toml", "--check", str(review)])
    assert stale.returncode == 3


def test_the_documented_actions_job_runs_the_hooks_commands() -> None:
    page = (ROOT / "docs" / "guide" / "gating.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", page, flags=re.S)
    workflow = next(yaml.safe_load(block) for block in blocks if "jobs:" in block)
    runs = [step["run"] for step in workflow["jobs"]["presets"]["steps"] if "run" in step]
    assert any(run.startswith("ckptcalc check presets/*.toml --min-effective") for run in runs)
    assert any(run.startswith("ckptcalc report ") and " --check " in run for run in runs)
    config = next(yaml.safe_load(block) for block in blocks if "repos:" in block)
    assert {hook["id"] for hook in config["repos"][0]["hooks"]} == set(_hooks())
