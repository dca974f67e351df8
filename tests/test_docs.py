"""The README's commands run as written, and its headline matches the model.

The console blocks themselves are regenerated and checked by ``python docs/generate.py --check``
(``.ci/docs``); this test keeps the front page honest without the docs tools installed.
"""

from __future__ import annotations

import glob
import math
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def readme_commands() -> list[str]:
    """Every ``ckptcalc ...`` command in README.md's sh and console blocks, cut before a pipe or redirect."""
    found = []
    for language, body in _FENCE.findall(README.read_text(encoding="utf-8")):
        if language not in ("sh", "console"):
            continue
        for line in body.splitlines():
            if language == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            for part in line.split("&&"):
                part = re.split(r"[|>]", part)[0].strip()
                if part.startswith("ckptcalc "):
                    found.append(part)
    return found


COMMANDS = readme_commands()


def test_the_readme_opens_with_the_two_set_up_commands() -> None:
    first = _FENCE.search(README.read_text(encoding="utf-8"))
    assert first is not None
    assert first.group(2).splitlines() == [
        "python -m pip install . && ckptcalc optimize --params 405e9 --bw 2TB/s",
        "python -m pip install '.[test]' && python -m pytest",
    ]
    assert COMMANDS[0] == "ckptcalc optimize --params 405e9 --bw 2TB/s"
    assert len(COMMANDS) >= 6


@pytest.mark.parametrize("command", COMMANDS)
def test_a_readme_command_runs(command: str, run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Run from a scratch directory that sees the repository's folders, so a command that writes lands there.
    for name in ("docs", "presets", "tests"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    args: list[str] = []
    for word in shlex.split(command)[1:]:
        args += sorted(glob.glob(word)) if "*" in word else [word]
    result = run(*args)
    assert result.exit_code in (0, 3), (command, result.stdout, result.stderr)
    assert result.exit_code == 0 or args[0] == "check"


def test_the_headline_is_what_the_model_says(run_json: Any) -> None:
    # δ = 405e9 × 16 B / 2 TB/s = 3.24 s, M = 3.1 h = 11160 s: Young's interval √(2δM) = 268.92 s.
    document = run_json("optimize", "--params", "405e9", "--bw", "2TB/s")
    assert document["write_s"] == pytest.approx(3.24, rel=1e-12)
    assert document["young_interval_s"] == pytest.approx(math.sqrt(2 * 3.24 * 11160), rel=1e-9)
    # "a checkpoint every 4.5 minutes, and the restart is most of the loss (70 %)".
    assert document["optimal_interval_s"] / 60 == pytest.approx(4.5, abs=0.06)
    loss = document["loss"]
    assert loss["restart"] / loss["total"] == pytest.approx(0.70, abs=0.005)
    assert document["dominant"] == "restart"


def test_the_readme_is_a_front_page() -> None:
    """At most 250 lines: what it answers, the set-up, a short tour; the rest of the tour lives on the site."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert "about 3 minutes on 2 cores" in text
    assert "](docs/guide/tour.md)" in text


def test_every_guide_page_is_in_the_site_navigation_and_generated() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs" / "guide").glob("*.md")):
        assert f"guide/{page.name}" in nav, page.name
    tour = (ROOT / "docs" / "guide" / "tour.md").read_text(encoding="utf-8")
    assert tour.count("[[" + "[cog run(") >= 8  # its console blocks come from the real commands


def test_the_site_scrolls_long_code_lines_and_keeps_sidebar_titles_in_flow() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    found = re.search(r"^extra_css:\n  - (\S+)$", config, re.MULTILINE)
    assert found is not None
    css = (ROOT / "docs" / found.group(1)).read_text(encoding="utf-8")
    assert re.search(r"pre > code \{[^}]*overflow-x: auto", css)
    assert re.search(r"\.md-nav__title \{[^}]*position: static", css)
