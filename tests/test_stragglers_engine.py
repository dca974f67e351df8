"""Stragglers in the one event engine (docs/model.md §21.6, §18.5): slow periods stepped beside the failures,
alone (both policies) and with two tiers, asynchronous storage, elastic groups, spares, failure classes, just-in-time
recovery, notice, silent events, the persist slowdown and Weibull failures; the model's effective time and every
share of its split within the engine's 95 % interval or 0.1 pp; and what ``simulate`` runs and refuses with them.

Each case also checks that its interval means something: the job without slow periods lies outside the same
tolerance, so an engine that left them out would fail it."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import pytest

from ckptcalc import api
from ckptcalc.mechanisms import stragglers
from ckptcalc.model.evaluation import Result, evaluate, exact_effective
from ckptcalc.simulation import engine, timeline

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

#: The slow periods of docs/model.md §21.4: one a day, each step 1.1 times as long, found after 10 min.
SLOW: dict[str, Any] = {"slow_mtbf": "1d", "slow_factor": 0.1, "slow_detect": "10min"}
#: Mean periods below and above the break-even 2.24 h on llama3-405b (§21.4): tolerated, and ended by a restart.
TOLERATE, RESTART = "2h", "4h"

#: Each other mechanism as llama3-405b runs it (a preset, and inputs), as tests/test_one_engine.py sets most.
OTHERS: dict[str, tuple[str | None, dict[str, Any]]] = {
    "alone": (None, {}),
    "memory tier": (None, {"replica_survival": 0.9, "memory_bw": "2TB/s", "memory_restart": "1min"}),
    "async": (None, {"snapshot_bw": "600TB/s"}),
    "groups": (None, {"groups": 4, "group_share": 0.8, "rejoin": "20min", "quorum_pause": "1min"}),
    "spares": (None, {"spares": 3, "repair": "2h"}),
    "classes": ("llama3-405b-classes", {}),
    "class share": (None, {"class_share": 0.3, "class_restart": "1min"}),
    "jit": (None, {"jit_share": 0.6, "step_time": "10s"}),
    "notice": (None, {"notice_share": 0.3}),
    "silent": (None, {"silent_mtbf": "1d", "detect_latency": "30min"}),
    "slowdown": (None, {"snapshot_bw": "600TB/s", "persist_slowdown": 0.5}),
    "weibull": (None, {"shape": 0.7}),
}

CASES = [("alone", TOLERATE), ("alone", RESTART), ("groups", TOLERATE)] + [
    (name, RESTART) for name in OTHERS if name != "alone"
]
#: Failure cycles per case (whole-job ones with groups, each holding a dozen group events).
CYCLES = {"groups": 2_000}
DEFAULT_CYCLES = 6_000
SEED = 5


def _config(name: str, duration: str) -> Any:
    preset, inputs = OTHERS[name]
    return api.job(preset, **inputs, **SLOW, slow_duration=duration).config


def _shares(result: Result, found: engine.Found) -> list[tuple[str, float, float, float]]:
    """Each share the model reports, with the engine's (the sum of those it splits finer: its time lost to
    running slow is in the model's restart term, §21.3) and its half-width: (name, model, engine, half)."""
    pairs: list[tuple[str, Any, tuple[str, ...]]] = [
        ("effective", result.effective, ("effective",)),
        ("write", result.write, ("write",)),
        ("rework", result.rework, ("rework", "silent_rework")),
        ("restart", result.restart, ("restart", "waiting", "silent_restart", "slowed")),
    ]
    if result.pool is not None:
        pairs.append(("waiting", result.pool.waiting, ("waiting",)))
    if result.elastic is not None:
        pairs.extend((name, getattr(result.elastic, name), (name,)) for name in ("down", "quorum", "overhead"))
    return [(name, float(model), *found.interval(*parts)) for name, model, parts in pairs]


def _run(config: Any, name: str) -> engine.Found:
    shape = None if config.shape is None else float(config.shape)
    plan = engine.plan_of(config, timeline.schedule_for(config), shape=shape)
    return engine.run(plan, cycles=CYCLES.get(name, DEFAULT_CYCLES), seed=SEED)


@pytest.mark.parametrize(("name", "duration"), CASES, ids=[f"{name}, {d}" for name, d in CASES])
def test_the_engine_agrees_with_the_model(name: str, duration: str) -> None:
    """docs/model.md §21.6: the model's effective time and every share of its split within the engine's 95 %
    interval or 0.1 pp; the job without slow periods outside that tolerance (the interval means something)."""
    config = _config(name, duration)
    result = evaluate(config)
    found = _run(config, name)
    for share, model, simulated, half in _shares(result, found):
        assert abs(model - simulated) <= max(half, 1e-3), (share, model, simulated, half)
    assert sum(found.split.shares().values()) == pytest.approx(1.0, abs=1e-12)
    plain = float(evaluate(stragglers.MECHANISM.without(config)).effective)
    assert abs(plain - found.effective) > max(found.half.effective, 1e-3), (plain, found.effective)
    # The policy the model applies is the one run: restarts at detection only where restarting loses less.
    restarts = bool(stragglers.figures(config, result.interval_s).restarts)
    if name == "alone":
        assert restarts == (duration == RESTART)  # §21.4: the break-even is 2.24 h
    assert found.slow_periods > 0
    assert (found.slow_restarts > 0) == restarts
    assert found.split.slowed > 0.0


def test_the_slowed_share_is_the_models_less_the_overlaps() -> None:
    """docs/model.md §21.3, §21.6: tolerated, the time lost to running slow is D·f/(1 + f)/M_s = 0.758 % in the
    model, which counts overlapping periods twice: a period is on 1 − e^{−1/12} = 7.996 % of the time, not
    8.333 %, so about 0.727 % in the engine."""
    found = _run(_config("alone", TOLERATE), "alone")
    model = float(stragglers.figures(_config("alone", TOLERATE), 266.762).slowed)
    assert model == pytest.approx(654.5455 / 86400, rel=1e-6)
    share, half = found.interval("slowed")
    assert abs(share - model * 0.96) <= max(half, 1e-4), (share, half)


def test_a_factor_of_zero_slows_nothing() -> None:
    """Periods that slow no step leave the periodic timeline (§7): the engine's effective time is the exact
    model's within its interval, with periods begun and nothing lost to them."""
    schedule = timeline.Schedule.single(interval_s=600.0, stall_s=10.0, restart_s=300.0)
    periods = stragglers.Periods(7200.0, 0.0, 3600.0, 600.0, replace=False)
    found = engine.run(engine.Plan(schedule, 3600.0, slow=periods), cycles=20_000, seed=3)
    assert found.slow_periods > 0 and found.slow_restarts == 0 and found.split.slowed == 0.0
    assert abs(found.effective - exact_effective(600.0, 10.0, 300.0, 3600.0)) <= found.half.effective


def test_the_periods_by_hand() -> None:
    """§21.6: a period found before it ends is swapped (a restart), one that ends first is not; the pace is
    1/(1 + f) while one is on."""
    process = stragglers.Periods(100.0, 1.0, 50.0, 10.0, replace=True).process(random.Random(7))
    seen: list[tuple[float, bool, float]] = []
    while len(seen) < 400:
        swapped = process.event()
        seen.append((process.next_at, swapped, process.pace))
    assert {pace for _, _, pace in seen} == {0.5, 1.0}
    assert all(b >= a for (a, _, _), (b, _, _) in itertools.pairwise(seen))
    assert process.detected == sum(swapped for _, swapped, _ in seen) > 0
    # P(X > t_d) = e^{−10/50} = 0.819 of the periods are found before they end.
    assert process.detected / process.begun == pytest.approx(0.819, abs=0.08)


def test_the_same_seed_gives_the_same_run() -> None:
    config = _config("groups", RESTART)
    plan = engine.plan_of(config, timeline.schedule_for(config))
    first, again = (engine.run(plan, cycles=300, seed=3) for _ in range(2))
    assert first == again and first.slow_periods > 0


# ------------------------------------------------------------------ simulate


JOB = ("--preset", "llama3-405b")
FLAGS = ("--slow-mtbf", "1d", "--slow-factor", "0.1", "--slow-duration", RESTART, "--slow-detect", "10min")


@pytest.mark.parametrize(
    "others",
    [
        (),
        ("--replica-survival", "0.9", "--memory-bw", "2TB/s", "--memory-restart", "1min"),
        ("--preset", "gemini-inmemory"),
        ("--snapshot-bw", "600TB/s"),
        ("--snapshot-bw", "600TB/s", "--persist-slowdown", "0.5"),
        ("--groups", "4", "--group-share", "0.8", "--rejoin", "20min"),
        ("--spares", "2", "--repair", "4h"),
        ("--preset", "llama3-405b-classes"),
        ("--class-share", "0.3", "--class-restart", "1min"),
        ("--jit-share", "0.6", "--step-time", "10s"),
        ("--notice-share", "0.3"),
        ("--silent-mtbf", "1d", "--detect-latency", "30min"),
        ("--shape", "0.7"),
        ("--groups", "4", "--group-share", "0.8", "--spares", "2", "--repair", "4h"),
    ],
    ids=[
        "alone", "memory", "gemini-inmemory", "async", "slowdown", "groups", "spares", "classes preset",
        "class share", "jit", "notice", "silent", "weibull", "groups and spares",
    ],
)  # fmt: skip
def test_simulate_runs_them_with_every_mechanism_the_engine_runs(run_json: RunJson, others: tuple[str, ...]) -> None:
    """docs/model.md §21.6: simulate steps slow periods in the one event engine, alone and with each mechanism;
    the document (its schema checked) says what they did, and the split counts them."""
    found = run_json("simulate", *JOB, *FLAGS, *others, "--cycles", "400", "--seed", "2")
    part = found["stragglers"]
    assert part["periods"] > 0 and 0.0 < part["slowed_share"] < 0.03
    assert part["restarts_at_detection"] <= part["periods"]
    lost = 0.0 if found["elastic"] is None else found["elastic"]["lost"]
    assert sum(found["split"].values()) + lost == pytest.approx(1.0, abs=1e-9)
    assert found["split"]["restart"] > part["slowed_share"]  # the model's term: slowed running joins it


@pytest.mark.parametrize(("others", "flag"), [(("--optimize",), "--optimize"), (("--events", "{log}"), "--events")])
def test_simulate_refuses_what_it_does_not_run_with_them(
    run: Run, tmp_path: Any, others: tuple[str, ...], flag: str
) -> None:
    """An event log has no slow periods to show, and the simulated search runs the vectorised stepper: each is
    refused with one line naming both flags, and nothing is written."""
    log = tmp_path / "run.jsonl"
    result = run("simulate", *JOB, *FLAGS, *(a.format(log=log) for a in others), "--cycles", "400")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and flag in lines[0] and "--slow-mtbf" in lines[0]
    assert not log.exists()


@pytest.mark.parametrize("others", [(), ("--groups", "4")])
def test_a_run_of_too_many_periods_is_refused_at_once(run: Run, others: tuple[str, ...]) -> None:
    """A period every second over 200 failure cycles of 3.1 h is 2.2 million periods, each stepped (about
    three minutes of the engine's time): refused in one line naming the rate and the cycles, before any is
    stepped; with groups the run is longer still (whole-job failures are rarer)."""
    result = run("simulate", *JOB, "--slow-mtbf", "1s", *FLAGS[2:], *others, "--cycles", "200")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --slow-mtbf: a slow period every 1 s makes about")
    assert "--cycles" in lines[0]
    expected = float(lines[0].split("about ")[1].split(" ")[0])
    assert expected >= 200 * 3.1 * 3600 / 1.0 * 0.99  # at least the cycles × the MTBF over the rate


def test_a_run_longer_than_foreseen_is_stopped_at_the_bound(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """Waits for a spare node lengthen the run past cycles × MTBF, which the bound foresees (200 × 3.1 h over
    10 min: 3 720 periods, under a bound of 5 000 here); the periods begun are counted as they come, and the
    run stops at the bound in one line (it ran past a minute with 2.9 million periods)."""
    monkeypatch.setattr(stragglers, "MOST_PERIODS", 5000)
    args = ("--slow-mtbf", "10min", "--slow-factor", "0.1", "--slow-duration", "1min", "--slow-detect", "10min")
    result = run("simulate", *JOB, *args, "--spares", "1", "--repair", "1000d", "--cycles", "200", "--seed", "1")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [
        "error: --slow-mtbf: the run began more than 5e+03 slow periods, one every 600 s, and simulate steps no"
        " more: raise it or lower --cycles"
    ]
