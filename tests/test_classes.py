"""Failure classes of their own restart and recovery path (docs/model.md §20)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ckptcalc import api
from ckptcalc.mechanisms.recovery import stated_classes
from ckptcalc.model.evaluation import evaluate
from ckptcalc.model.tiers import Tiers, by_recursion, effective, merged_restart

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

# Llama 3 405B (docs/model.md §2.1): δ = 3.24 s, r = 600 s, M = 3.1 h.
DELTA, RESTART, MTBF = 3.24, 600.0, 11160.0
PROCESS = 63 / 419  # Table 5 of the Llama 3 paper: 63 of 419 interruptions at process level
TAU = 266.762  # the optimum of docs/model.md §3, which no class's restart moves (§20.2)


def _rho(classes: list[tuple[float, float]]) -> float:
    """ρ = Σ q_i(1 − e^{−λR_i})/λ over Σ q_i e^{−λR_i} (docs/model.md §20.2)."""
    lam = 1.0 / MTBF
    lost = sum(q * -math.expm1(-lam * r) / lam for q, r in classes)
    kept = sum(q * math.exp(-lam * r) for q, r in classes)
    return lost / kept


def _hand(tau: float, classes: list[tuple[float, float]]) -> float:
    """effective = τ / ((e^{λs} − 1)(1/λ + ρ)), s = τ + δ (docs/model.md §20.2)."""
    lam = 1.0 / MTBF
    return tau / (math.expm1(lam * (tau + DELTA)) * (1.0 / lam + _rho(classes)))


def _one_level(share: float, restart: float, tau: float = TAU) -> Tiers:
    return Tiers(
        tau1_s=tau,
        every=(),
        stalls=(DELTA,),
        lag_s=0.0,
        shares=(1.0 - share,),
        restarts=(RESTART,),
        extra=((share, restart, 0),),
    )


# ------------------------------------------------------------------ the references


def test_table_5_split_reference() -> None:
    # docs/model.md §20.2: ρ = 2356.97 s for 63/419 at 60 s and the rest at 600 s (ρ = 615.7 s for one class at
    # 600 s), e^{λs} − 1 = 0.024427; effective 0.93189927 against 0.92500403.
    assert _rho([(1.0, RESTART)]) == pytest.approx(MTBF * math.expm1(RESTART / MTBF), rel=1e-12)
    assert _hand(TAU, [(1.0, RESTART)]) == pytest.approx(0.92500403, abs=1e-8)
    assert _hand(TAU, [(PROCESS, 60.0), (1 - PROCESS, RESTART)]) == pytest.approx(0.93189927, abs=1e-8)
    assert _hand(TAU, [(0.5, 60.0), (0.5, RESTART)]) == pytest.approx(0.94793343, abs=1e-8)
    # The recursion, and the one-level closed form at the merged restart, give the same numbers.
    for share, restart, expected in ((PROCESS, 60.0, 0.93189927), (0.5, 60.0, 0.94793343)):
        t = _one_level(share, restart)
        assert float(effective(t, MTBF).effective) == pytest.approx(expected, abs=1e-8)
        assert float(by_recursion(t, MTBF).effective) == pytest.approx(expected, abs=1e-8)


def test_the_preset_states_table_5(run_json: RunJson) -> None:
    # docs/model.md §20.2: the optimum is the same 266.762 s; only the restart term moves.
    base = run_json("optimize", "--preset", "llama3-405b")
    doc = run_json("optimize", "--preset", "llama3-405b-classes")
    assert base["effective"] == pytest.approx(0.92500403, abs=1e-8)
    assert doc["effective"] == pytest.approx(0.93189927, abs=1e-8)
    assert doc["optimal_interval_s"] == pytest.approx(266.762, abs=1e-3)
    assert doc["optimal_interval_s"] == pytest.approx(base["optimal_interval_s"], rel=1e-9)
    assert doc["failure_classes"]["classes"] == [
        {"name": "process", "share": PROCESS, "restart_s": 60.0, "recovery": "rollback", "tier": None, "fallback": None}
    ]
    assert doc["failure_classes"]["job_share"] == pytest.approx(1 - PROCESS, abs=1e-15)
    half = run_json("optimize", "--preset", "llama3-405b", "--class-share", "0.5", "--class-restart", "60s")
    assert half["effective"] == pytest.approx(0.94793343, abs=1e-8)


def test_the_merged_restart_of_one_class_is_its_own() -> None:
    t = _one_level(1.0, RESTART)
    assert merged_restart(t, MTBF) == pytest.approx(RESTART, rel=1e-14)


# ------------------------------------------------------------------ one class of share 1 is the job itself


def _numbers(doc: Any, path: str = "") -> dict[str, Any]:
    if isinstance(doc, dict):
        return {k: v for key, value in doc.items() for k, v in _numbers(value, f"{path}/{key}").items()}
    if isinstance(doc, list):
        return {k: v for i, value in enumerate(doc) for k, v in _numbers(value, f"{path}[{i}]").items()}
    return {path: doc}


@pytest.mark.parametrize(
    "preset", ["llama3-405b", "llama3-405b-tiered", "llama3-405b-async", "elastic-hsdp", "gemini-inmemory"]
)
def test_one_class_of_share_one_at_the_jobs_restart_is_the_job(run_json: RunJson, preset: str) -> None:
    # docs/model.md §20.1: every number of the document, levers included, equals the job's to 1e-12.
    base = _numbers(run_json("optimize", "--preset", preset))
    one = _numbers(run_json("optimize", "--preset", preset, "--class-share", "1"))
    own = {k: v for k, v in one.items() if not k.startswith("/failure_classes")}
    assert set(own) == {k for k in base if not k.startswith("/failure_classes")}
    for key, value in own.items():
        if isinstance(value, float) and isinstance(base[key], float):
            assert value == pytest.approx(base[key], rel=1e-12, abs=1e-12), key
        else:
            assert value == base[key], key


def test_the_rest_of_the_shares_as_one_class_is_the_job_with_jit(run_json: RunJson) -> None:
    # 70 % in place and 10 % with notice leave 20 % to roll back: a class of those 20 % at the job's restart.
    base = _numbers(run_json("optimize", "--preset", "llama3-405b-jit"))
    rest = _numbers(run_json("optimize", "--preset", "llama3-405b-jit", "--class-share", "0.2"))
    for key, value in base.items():
        if isinstance(value, float):
            assert rest[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key


@settings(max_examples=60, deadline=None)
@given(
    shares=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=3),
    restarts=st.lists(st.floats(1.0, 5000.0), min_size=3, max_size=3),
    survival=st.floats(0.5, 0.99),
    every=st.integers(1, 40),
)
def test_classes_of_one_tier_act_as_their_merged_restart(
    shares: list[float], restarts: list[float], survival: float, every: int
) -> None:
    """Which class of a tier was drawn changes only the restart: classes on one tier act as one class of
    restart −M·ln(Σq_c e^{−r_c/M}/Σq_c), on any schedule (docs/model.md §20.2)."""
    total = sum(shares)
    if total <= 0.01:
        event("no share")
        return
    q = [s / total for s in shares]  # of the storage tier's failures
    storage = 1.0 - survival
    classes = tuple((storage * share, r, 1) for share, r in zip(q[1:], restarts[1:], strict=False))
    split = Tiers(
        tau1_s=60.0,
        every=(float(every),),
        stalls=(1.0, DELTA),
        lag_s=0.0,
        shares=(survival, storage * q[0]),
        restarts=(60.0, restarts[0]),
        extra=classes,
    )
    kept = sum(share * math.exp(-r / MTBF) for share, r in zip(q, restarts, strict=False))
    merged = split.replace(shares=(survival, storage), restarts=(60.0, -MTBF * math.log(kept)), extra=())
    event("compared")
    assert float(effective(split, MTBF).effective) == pytest.approx(float(effective(merged, MTBF).effective), rel=1e-10)


# ------------------------------------------------------------------ with the other mechanisms


@pytest.mark.parametrize(
    ("job", "classes"),
    [
        (["--preset", "llama3-405b-tiered"], []),
        (["--preset", "llama3-405b-tiered"], ["--class-tier", "memory"]),
        (["--preset", "llama3-405b-tiered"], ["--class-tier", "storage"]),
        (["--preset", "llama3-405b-async"], []),
        (["--preset", "elastic-hsdp"], []),
        (["--preset", "llama3-405b", "--spares", "2", "--nodes", "2048", "--repair", "4h"], []),
        (["--preset", "llama3-405b-jit"], ["--class-share", "0.1"]),
    ],
)
def test_a_faster_class_restart_helps_with_every_mechanism(
    run_json: RunJson, job: list[str], classes: list[str]
) -> None:
    share = [] if "--class-share" in classes else ["--class-share", "0.3"]
    base = run_json("optimize", *job)
    doc = run_json("optimize", *job, *classes, *share, "--class-restart", "1min")
    assert 0.0 < base["effective"] < doc["effective"] < 1.0


def test_a_class_to_memory_is_the_memory_tiers_share() -> None:
    # docs/model.md §20.1: a class that rolls back to memory adds its share to the memory tier's.
    job = api.job("llama3-405b-tiered", class_share=0.3, class_restart="1min", class_tier="memory")
    levels, own = job.config.levels(), job.config._levels()
    assert float(levels[0].share) == pytest.approx(0.7 * float(own[0].share) + 0.3, abs=1e-15)
    for level, alone in zip(levels[1:], own[1:], strict=True):
        assert float(level.share) == pytest.approx(0.7 * float(alone.share), abs=1e-15)


def test_in_place_and_peer_classes(run_json: RunJson) -> None:
    # An in-place class is the one-step tier (as just-in-time recovery, docs/model.md §13): 90 % in place at
    # r + δ is the same job stated either way.
    jit = run_json("optimize", "--preset", "llama3-405b", "--jit-share", "0.9", "--step-time", "10s")
    place = run_json(
        "optimize",
        *("--preset", "llama3-405b", "--step-time", "10s", "--class-share", "0.9"),
        *("--class-recovery", "in_place", "--class-restart", "603.24s"),
    )
    assert place["effective"] == pytest.approx(jit["effective"], rel=1e-12)
    # A peer class with a fallback: the fallback rolls back to storage at the class's restart.
    peer = run_json(
        "optimize",
        *("--preset", "llama3-405b", "--step-time", "10s", "--class-share", "0.9"),
        *("--class-recovery", "peer", "--class-restart", "603.24s", "--class-fallback", "0.5"),
    )
    assert base_between(peer["effective"], 0.92500403, jit["effective"])
    # Just-in-time recovery and an in-place class together: two classes on the one-step tier.
    both = run_json(
        "optimize",
        *("--preset", "llama3-405b", "--step-time", "10s", "--jit-share", "0.5", "--class-share", "0.4"),
        *("--class-recovery", "in_place", "--class-restart", "603.24s"),
    )
    assert both["effective"] == pytest.approx(jit["effective"], rel=1e-9)


def base_between(value: float, low: float, high: float) -> bool:
    return low < value < high


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["--class-share", "1.2"], "--class-share"),
        (["--class-share", "-0.1"], "--class-share"),
        (["--class-share", "0.5", "--notice-share", "0.6"], "--class-share"),
        (["--class-share", "0.5", "--class-tier", "memory"], "--class-tier"),
        (["--class-share", "0.5", "--class-fallback", "0.1"], "--class-fallback"),
        (["--class-restart", "1min"], "--class-restart"),
        (["--class-share", "0.5", "--class-recovery", "in_place"], "--class-recovery"),
        (["--class-share", "0.5", "--class-recovery", "sideways"], "--class-recovery"),
        (["--class-share", "0.5", "--class-tier", "disk"], "--class-tier"),
    ],
)
def test_bad_class_flags(run: Run, args: list[str], culprit: str) -> None:
    assert_usage_error(run("optimize", "--preset", "llama3-405b", *args), culprit)


@pytest.mark.parametrize(
    ("table", "culprit"),
    [
        ("share = 1.5\n", "failures.classes[0].share"),
        ("share = 0.5\nfallback = 0.2\n", "failures.classes[0].fallback"),
        ('share = 0.5\ntier = "memory"\n', "failures.classes[0].tier"),
        ('share = 0.5\nrecovery = "sideways"\n', "failures.classes[0].recovery"),
        ("share = 0.5\nspeed = 2\n", "failures.classes[0].speed"),
        ('share = 0.5\n[[failures.classes]]\nname = "b"\nshare = 0.6\n', "failures.classes[1].share"),
        (
            'share = 0.5\n[[failures.classes]]\nname = "b"\nshare = 0.2\nfallback = 0.3\n',
            "failures.classes[1].fallback",
        ),
        ('share = 0.5\n[[failures.classes]]\nname = "b"\nrestart = "1min"\n', "failures.classes[1].share"),
        ('name = "a"\nshare = 0.1\n[[failures.classes]]\nname = "a"\nshare = 0.1\n', "failures.classes[1].name"),
    ],
)
def test_bad_class_tables(run: Run, tmp_path: Path, table: str, culprit: str) -> None:
    preset = tmp_path / "bad.toml"
    preset.write_text(f'schema_version = 1\nbase = "llama3-405b"\n\n[[failures.classes]]\n{table}', encoding="utf-8")
    assert_usage_error(run("optimize", "--preset", str(preset)), f"bad.toml: {culprit}")


def test_a_preset_round_trip_keeps_every_class(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    preset = tmp_path / "two.toml"
    preset.write_text(
        'schema_version = 1\nbase = "llama3-405b"\n\n[[failures.classes]]\nname = "process"\nshare = 0.25\n'
        'restart = "1min"\ncauses = ["process"]\n\n[[failures.classes]]\nname = "gpu"\nshare = 0.125\n'
        'restart = "20min"\ncauses = ["gpu", "xid"]\n',
        encoding="utf-8",
    )
    saved = tmp_path / "saved.toml"
    first = run_json("optimize", "--preset", str(preset), "--save-preset", str(saved))
    again = run_json("optimize", "--preset", str(saved))
    assert again["effective"] == first["effective"]
    assert again["failure_classes"] == first["failure_classes"]
    assert [c["name"] for c in again["failure_classes"]["classes"]] == ["process", "gpu"]
    job = api.job(str(saved))
    assert [c.causes for c in stated_classes(job.config)] == [("process",), ("gpu", "xid")]
    # Its model: the two classes and the job's own, as the hand formula of one level says.
    classes = [(0.25, 60.0), (0.125, 1200.0), (0.625, RESTART)]
    tau = float(evaluate(job.config).levels[-1].interval_s)
    assert first["effective"] == pytest.approx(_hand(tau, classes), rel=1e-12)


# ------------------------------------------------------------------ the simulation (docs/model.md §20.5)


@pytest.mark.parametrize(
    "args",
    [
        ["--preset", "llama3-405b-classes"],
        ["--preset", "llama3-405b", "--class-share", "0.5", "--class-restart", "60s"],
        ["--preset", "llama3-405b-tiered", "--class-share", "0.3", "--class-restart", "1min"],
        [
            "--preset",
            "llama3-405b-tiered",
            "--class-share",
            "0.3",
            "--class-restart",
            "20min",
            "--class-tier",
            "memory",
        ],
        ["--preset", "llama3-405b-async", "--class-share", "0.3", "--class-restart", "1min"],
        ["--preset", "elastic-hsdp", "--class-share", "0.3", "--class-restart", "1min"],
        ["--preset", "llama3-405b-classes", "--spares", "2", "--nodes", "2048", "--repair", "4h"],
        ["--preset", "llama3-405b-jit", "--class-share", "0.1", "--class-restart", "1min"],
        [
            *("--preset", "llama3-405b", "--step-time", "10s", "--class-share", "0.6"),
            *("--class-recovery", "peer", "--class-fallback", "0.3", "--class-restart", "2min"),
        ],
        [
            *("--preset", "llama3-405b", "--step-time", "10s", "--jit-share", "0.5", "--class-share", "0.3"),
            *("--class-recovery", "in_place", "--class-restart", "1min"),
        ],
    ],
)
def test_the_simulation_agrees(run_json: RunJson, args: list[str]) -> None:
    doc = run_json("simulate", *args, "--cycles", "60000")
    low, high = doc["effective_ci95"]
    exact = doc["analytic"]["exact"]
    assert low <= exact <= high or abs(doc["effective"] - exact) < 1e-3, (doc["effective"], exact)


def test_a_class_refused_beside_what_the_simulation_steps_one_by_one(run: Run) -> None:
    assert_usage_error(
        run("simulate", "--preset", "palm-spikes", "--class-share", "0.2", "--cycles", "1000"), "--silent-mtbf"
    )


def test_a_whole_run_with_classes(run_json: RunJson) -> None:
    doc = run_json("plan", "--preset", "llama3-405b-classes", "--work", "30d", "--runs", "400")
    assert doc["effective"] == pytest.approx(0.93189927, abs=1e-8)
    assert abs(doc["mean_vs_expected"]) < 0.01
    assert doc["failure_classes"]["classes"][0]["name"] == "process"


# ------------------------------------------------------------------ levers, compare and sweep


def test_the_in_place_lever_and_its_break_even(run_json: RunJson) -> None:
    doc = run_json("optimize", "--preset", "llama3-405b-classes")
    lever = next(lv for lv in doc["levers"] if lv["key"] == "class_in_place")
    assert lever["gain_pp"] > 0
    even = lever["break_even"]
    assert (even["key"], even["unit"], even["pays"]) == ("class_restart_s", "duration", "below")
    # First order: the rollback's restart and half the interval, less half a step (docs/model.md §20.3).
    assert even["value"] == pytest.approx(60.0 + (math.sqrt(2 * DELTA * MTBF) - 10.0) / 2, rel=0.02)
    # Exactly there the class in place is worth what it is rolled back.
    at = run_json(
        "optimize",
        *("--preset", "llama3-405b-classes", "--step-time", "10s", "--class-recovery", "in_place"),
        *("--class-restart", f"{even['value']!r}s"),
    )
    assert at["effective"] == pytest.approx(doc["effective"], abs=1e-4)


def test_compare_and_sweep_a_class(run_json: RunJson, run: Run) -> None:
    compared = run_json(
        "compare", "llama3-405b-classes", "--what-if", "class-share=0.5", "--what-if", "class-restart=5min"
    )
    effective = [s["effective"] for s in compared["scenarios"]]
    assert effective[0] == pytest.approx(0.93189927, abs=1e-8)
    assert effective[1] > effective[0] > effective[2]
    swept = run_json("sweep", "--preset", "llama3-405b-classes", "--over", "class-share")
    assert swept["values"][-1] == pytest.approx(1.0)
    assert all(b > a for a, b in itertools.pairwise(swept["effective"]))
    assert_usage_error(
        run("sweep", "--preset", "llama3-405b-jit", "--over", "class-share", "--from", "0.1", "--to", "0.5"), "--to"
    )


def test_the_report_shows_the_classes(run: Run, tmp_path: Path) -> None:
    # The report runs the job across its MTBF band, as arrays: the classes go with every point.
    review = tmp_path / "review.md"
    result = run("report", "llama3-405b-classes", "llama3-405b", "--markdown", str(review))
    assert result.exit_code == 0, result.stderr
    text = review.read_text(encoding="utf-8")
    assert "| Failure classes | value |" in text
    assert "| process | 15.0 % | roll back as the job's own failures do, restart 1.00 min |" in text
    assert "process failures in place" in text
    # Its path is stated in words, as the preset gives it, not as the number it is held as.
    assert "| failures.classes.recovery | rollback |" in text
