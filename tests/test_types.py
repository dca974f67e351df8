"""Records as a type checker sees them, and as they behave at run time.

mypy (the project's configuration, its plugin included) must reject a misspelt field, a value of the
wrong type and an assignment in any record, and check ``replace`` both as a function and as a method;
the run-time records must keep doing what the generated constructors always did.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ckptcalc import records
from ckptcalc.inputs.scenario import Scenario
from ckptcalc.model.evaluation import Config

ROOT = Path(__file__).resolve().parent.parent

#: Each line that must fail ends with ``# expect:`` and the error codes mypy must give it, no more.
BAD = """\
from ckptcalc import records
from ckptcalc.inputs.scenario import Scenario
from ckptcalc.model.evaluation import Config
from ckptcalc.model.tiers import Tiers

LLAMA = Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0)
Config(checkpoint_bytes=6.48e12, bandwith=2e12, mtbf_s=11160.0, restart_s=600.0)  # expect: call-arg
Config(6.48e12, 2e12, 11160.0, 600.0, bogus=1)  # expect: call-arg
Scenario(mtbf_s="4h")  # expect: arg-type
Tiers(300.0, every=7.0, stalls=(3.0, 90.0), lag_s=0.0, shares=(0.9, 0.1), restarts=(60.0, 600.0))  # expect: arg-type
Tiers(tau1_s="not a number", every=(), stalls=(3.0,), lag_s=0.0, shares=(1.0,), restarts=(6.0,))  # expect: arg-type
Tiers(tau1_s=300.0, evry=(7.0,), stalls=(3.0, 9.0), lag_s=0.0, shares=(1.0,), restarts=(6.0,))  # expect: call-arg
records.replace(LLAMA, nonsense=3)  # expect: call-arg
records.replace(LLAMA, middle=("nvme",))  # expect: arg-type
LLAMA.replace(nonsense=3)  # expect: call-arg
LLAMA.replace(middle=("nvme",))  # expect: arg-type
LLAMA.bandwidth = 72e9  # expect: misc
"""

#: The same records used as they should be: no error at all.
GOOD = """\
from ckptcalc import records
from ckptcalc.inputs.scenario import Scenario
from ckptcalc.model.evaluation import Config, Tier
from ckptcalc.model.tiers import Tiers

LLAMA = Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0)
SAME: Config = Config(6.48e12, 2e12, 11160.0, 600.0, interval_s=None)
FASTER: Config = records.replace(LLAMA, bandwidth=4e12, middle=(Tier("nvme", 540e9, 180.0, 0.08),))
QUICKER: Config = LLAMA.replace(restart_s=120.0)
STATED = Scenario(name="llama", mtbf_s=4 * 3600.0)
NESTED = Tiers(300.0, every=(7.0,), stalls=(3.0, 90.0), lag_s=0.0, shares=(0.9, 0.1), restarts=(60.0, 600.0))
"""


def _errors(output: str) -> dict[tuple[str, int], set[str]]:
    """The error codes mypy gave, by (file name, line)."""
    found: dict[tuple[str, int], set[str]] = {}
    for match in re.finditer(r"^(?:.*[/\\])?(\w+\.py):(\d+): error: .*\[([\w-]+)\]$", output, re.MULTILINE):
        found.setdefault((match[1], int(match[2])), set()).add(match[3])
    return found


def test_mypy_rejects_mistyped_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    api = pytest.importorskip("mypy.api")
    (tmp_path / "bad.py").write_text(BAD, encoding="utf-8")
    (tmp_path / "good.py").write_text(GOOD, encoding="utf-8")
    expected = {
        ("bad.py", number): set(line.split("# expect: ")[1].split(", "))
        for number, line in enumerate(BAD.splitlines(), start=1)
        if "# expect: " in line
    }
    assert len(expected) == 11
    monkeypatch.chdir(ROOT)  # ckptcalc and its configuration as the project's own mypy sees them
    stdout, stderr, status = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
            str(tmp_path / "bad.py"),
            str(tmp_path / "good.py"),
        ]
    )
    assert stderr == ""
    assert _errors(stdout) == expected, stdout
    assert status == 1


# ---------------------------------------------------------------------- at run time


class Point(records.Record):
    x: float
    y: float = 0.0


class Checked(records.Record):
    low: float
    high: float

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError("low above high")


def test_construction_by_position_keyword_and_default() -> None:
    assert Point(1.0, 2.0) == Point(y=2.0, x=1.0) == Point(1.0, y=2.0)
    assert Point(1.0).y == 0.0
    assert Point._fields == ("x", "y")
    assert repr(Point(1.0, 2.5)) == "Point(x=1.0, y=2.5)"
    assert Point(1.0) != Point(1.0, 1.0)
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1.0, 2.0, 3.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1.0, z=3.0)  # type: ignore[call-arg]


def test_post_init_runs_after_the_fields_are_set() -> None:
    assert Checked(1.0, 2.0).high == 2.0
    with pytest.raises(ValueError, match="low above high"):
        Checked(3.0, 2.0)


def test_records_are_frozen_and_replace_checks_fields() -> None:
    point = Point(1.0)
    with pytest.raises(AttributeError, match="Point is frozen; use replace"):
        point.x = 2.0  # type: ignore[misc]
    moved = point.replace(y=5.0)
    assert (moved, point) == (Point(1.0, 5.0), Point(1.0, 0.0))
    assert records.replace(point, x=3.0) == Point(3.0, 0.0)
    with pytest.raises(TypeError, match="Point has no field z"):
        point.replace(z=1.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="Point has no field z"):
        records.replace(point, z=1.0)  # type: ignore[call-arg]


def test_library_records_keep_their_order_and_defaults() -> None:
    config = Config(6.48e12, 2e12, 11160.0, 600.0)
    assert config == Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0)
    assert (config.snapshot_bandwidth, config.middle) == (None, ())
    scenario = Scenario(name="x", mtbf_s=3600.0)
    assert scenario.origin == {} and scenario.per_gpu == frozenset()  # filled by __post_init__
