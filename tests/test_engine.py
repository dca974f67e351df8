"""What simulate runs: every mechanism a scenario holds, alone and in pairs, is simulated or refused.

docs/model.md §7.1: a mechanism the simulation leaves out would still give a number (the run without
it). Here every mechanism of :data:`ckptcalc.simulation.timeline.MECHANISMS`, alone and with each other,
is either refused with one line naming both inputs, or simulated; and a simulated one is seen in the
result: the same run (same seed, same intervals) without it gives another effective time.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ckptcalc import api
from ckptcalc.errors import InputError
from ckptcalc.inputs.fields import FIELDS
from ckptcalc.simulation import timeline as sim

Run = Callable[..., Any]

#: The intervals every run here is pinned to (the storage interval covers async's persist, 3.24 s).
PINNED: dict[str, Any] = {"interval": 3600.0}

#: Each mechanism as inputs over llama3-405b (None: the mechanism is a preset of its own).
MECHANISMS: dict[str, dict[str, Any]] = {
    "memory": {"replica_survival": 0.9, "memory_bw": "50TB/s", "memory_restart": "60s", "memory_interval": 360.0},
    "tiers": {},
    "async": {"snapshot_bw": "400TB/s"},
    "jit": {"jit_share": 0.5, "step_time": "10s"},
    "notice": {"notice_share": 0.2},
    "classes": {"class_share": 0.3, "class_restart": "1min"},
    "slowdown": {"persist_slowdown": 0.3, "snapshot_bw": "400TB/s"},
    "spares": {"spares": 2, "repair": "4h"},
    "elastic": {"groups": 4},
    "silent": {"silent_mtbf": "1d", "detect_latency": "1h", "keep": 5},
    "weibull": {"shape": 0.7},
    "stragglers": {"slow_mtbf": "6h", "slow_factor": 0.1, "slow_duration": "2h", "slow_detect": "10min"},
}
PRESETS = {"tiers": "llama3-405b-tiered"}

#: Inputs that tune a mechanism above (its trigger is in MECHANISMS) or a plain figure of every job:
#: none of them is a mechanism the simulation could leave out.
TUNING = {
    "params",
    "bytes_per_param",
    "size",
    "bw",
    "interval",
    "mtbf",
    "gpu_mtbf",
    "failures",
    "window",
    "restart",
    "detect",
    "reschedule",
    "read_bw",
    "warmup",
    "gpus",
    "restart_growth",  # the restart at the job's size, which the simulation runs (docs/model.md §19)
    "restart_scaled",
    "restart_at_gpus",
    "memory_bw",
    "memory_restart",
    "memory_read_bw",
    "memory_interval",
    "step_time",
    "discard",
    "jit_bw",
    "nodes",
    "gpus_per_node",
    "repair",
    "spare_risk",
    "group_share",
    "rejoin",
    "quorum_pause",
    "ft_overhead",
    "silent_events",
    "detect_latency",
    "skip",
    "silent_risk",
    "keep",
    "keep_every",
    "max_retained",
    "work",
    "gpu_hour_cost",
    "class_recovery",
    "class_tier",
    "class_fallback",
    "class_restart",
    "slow_factor",
    "slow_duration",
    "slow_detect",
}
#: Inputs that change the schedule the model chooses and the simulation then runs (its stalls, restarts
#: or intervals), checked by ``test_the_simulated_schedule_is_the_models``.
SCHEDULE = {"compression", "codec_bw", "max_busy", "max_written_per_day"}

CYCLES = 200


def test_every_input_is_a_mechanism_or_tunes_one() -> None:
    """A new input is classified here before simulate can meet it: a mechanism (run or refused), a tuning
    of one, or part of the schedule."""
    triggers = {key for inputs in MECHANISMS.values() for key in inputs} - TUNING
    assert {field.public for field in FIELDS} == TUNING | SCHEDULE | triggers
    assert set(MECHANISMS) | {"events", "search"} == {name for name, _, _ in sim.MECHANISMS}


def _inputs(names: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    preset = next((PRESETS[name] for name in names if name in PRESETS), "llama3-405b")
    inputs: dict[str, Any] = {} if "tiers" in names else dict(PINNED)  # the tiers' own intervals: the model's
    for name in names:
        inputs.update(MECHANISMS[name])
    return preset, inputs


@functools.cache
def _simulated(names: tuple[str, ...]) -> tuple[float, ...] | InputError:
    """The effective time and split of llama3-405b with ``names``'s mechanisms, 200 cycles, seed 3, or
    the refusal."""
    preset, inputs = _inputs(names)
    try:
        document = api.simulate(preset, cycles=CYCLES, seed=3, **inputs).to_dict()
    except InputError as error:
        return error
    return (document["effective"], *document["split"].values())


#: Alone and in pairs (slowdown holds async's input already).
COMBINATIONS = [(name,) for name in MECHANISMS] + [
    pair for pair in itertools.combinations(MECHANISMS, 2) if pair != ("async", "slowdown")
]
#: The tiers preset is a replica in memory and more: either input names it.
ALIASES = {"tiers": {"replica_survival"}}


@pytest.mark.parametrize("names", COMBINATIONS, ids=["+".join(names) for names in COMBINATIONS])
def test_each_mechanism_alone_and_in_pairs_is_run_or_refused(names: tuple[str, ...]) -> None:
    found = _simulated(names)
    if isinstance(found, InputError):
        if not found.template.startswith("simulate does not run"):
            # The model itself does not take the pair: no document at all.
            with pytest.raises(InputError):
                api.optimize(*_inputs(names)[:1], **_inputs(names)[1])
            return
        # Refused by the simulation: one line naming both inputs, and only a pair listed as not run.
        assert len(names) == 2 and frozenset(names) in sim.NOT_TOGETHER, found
        publics = {name: public for name, _, public in sim.MECHANISMS}
        for name in names:
            named = {publics[name], *MECHANISMS[name], *ALIASES.get(name, ())}
            assert any("{" + public + "}" in found.template for public in named), (name, found.template)
        return
    assert frozenset(names) not in sim.NOT_TOGETHER
    assert 0.0 < found[0] < 1.0
    # Each mechanism shows: the same run without it (same seed, same intervals) is another timeline
    # (with the same draws, the whole split; a small stall may leave the kept work as it was).
    for name in names:
        rest = tuple(other for other in names if other != name)
        without = _simulated(rest)
        assert isinstance(without, tuple) and without != found, (name, found, without)


def test_the_silent_events_with_groups_are_run_not_dropped() -> None:
    """The case that once gave the groups-only 0.93633 with no word of the silent events: the one event
    engine (docs/model.md §18.5) runs both, and says what the silent events did."""
    both = api.simulate(cycles=3000, seed=1, silent_mtbf="7d", detect_latency="1h", groups=4).to_dict()
    alone = api.simulate(cycles=3000, seed=1, groups=4).to_dict()
    assert both["effective"] < alone["effective"]
    assert both["silent"]["events"] > 0
    assert both["elastic"]["lost"] > 0.0


@pytest.mark.parametrize("name", ["memory", "jit", "notice", "slowdown", "spares"])
def test_an_event_log_of_what_it_cannot_log_is_refused(name: str, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="events") as raised:
        api.simulate("llama3-405b", cycles=CYCLES, events=tmp_path / "log.csv", **MECHANISMS[name], **PINNED)
    assert "{events}" in raised.value.template
    assert not (tmp_path / "log.csv").exists()


@pytest.mark.parametrize("name", ["jit", "spares", "elastic", "silent"])
def test_a_search_that_would_leave_a_mechanism_out_is_refused(name: str) -> None:
    with pytest.raises(InputError) as raised:
        api.simulate("llama3-405b", cycles=CYCLES, search=True, **MECHANISMS[name])
    assert "{search}" in raised.value.template


@pytest.mark.parametrize(
    "inputs",
    [
        {"compression": 2.0},
        {"compression": 2.0, "codec_bw": "5TB/s"},
        {"max_written_per_day": "0.5PB"},
        {"max_busy": 0.2, "snapshot_bw": "400TB/s"},
    ],
)
def test_the_simulated_schedule_is_the_models(inputs: dict[str, Any]) -> None:
    """Schedule inputs reach the simulation through the model's schedule: the interval it reports."""
    model = api.optimize("llama3-405b", **inputs).to_dict()
    plain = api.optimize("llama3-405b").to_dict()
    document = api.simulate("llama3-405b", cycles=CYCLES, **inputs).to_dict()
    assert document["interval_s"] == pytest.approx(model["optimal_interval_s"], rel=1e-12)
    assert model["optimal_interval_s"] != pytest.approx(plain["optimal_interval_s"], rel=1e-6)


def test_silent_events_on_two_tiers_match_the_independent_figure() -> None:
    """docs/model.md §7.2: gemini-inmemory, an event every 6 h noticed in 30 min, keeping 5 plus one a day,
    at the schedule the first model chose (memory every 264.61 s, storage every 10th): an independent event
    simulation gives 0.79844 ± 0.00008. The engine's interval holds it, and not the first model's 0.806110
    (which took every crash's erasure from the storage interval)."""
    document = api.simulate("gemini-inmemory", cycles=20_000, seed=1, silent_mtbf="6h", detect_latency="30min",
                            keep=5, keep_every="1d", memory_interval="264.61089520768803s",
                            interval="2646.10895207688s").to_dict()  # fmt: skip
    low, high = document["effective_ci95"]
    assert low <= 0.79844 <= high < 0.806110, (low, high)
    assert document["storage_every"] == 10 and document["silent"]["events"] > 5000
    # Every crash served by memory rolls back to a memory checkpoint: few reach before the onset.
    assert 0.005 < document["silent"]["erased"] / document["silent"]["events"] < 0.02
    # What the detections cost is part of what the run lost: rework and restarts.
    split = document["split"]
    assert 0.01 < document["silent"]["share"] < split["rework"] + split["restart"]


# ------------------------------------------------------------- the silent stepper's interval and erasure


def _one_level_silent(**changes: Any) -> Any:
    from one_level_silent import simulate

    inputs: dict[str, Any] = dict(interval_s=600.0, stall_s=1.0, restart_s=60.0, mtbf_s=7200.0,
                                  silent_mtbf_s=20000.0, latency_s=1800.0, skip_s=0.0, keep=None, keep_every=None,
                                  cycles=4000, seed=7)  # fmt: skip
    inputs.update(changes)
    return simulate(**inputs)


def test_the_silent_interval_is_students_t_at_19_degrees_over_20_batches() -> None:
    """docs/model.md §7: the half-width is t(0.975; 19) = 2.093024 times the batches' standard error."""
    import statistics

    run = _one_level_silent()
    batches = run.batch_effective
    assert len(batches) == 20
    half = 2.093024054408263 * statistics.stdev(batches) / math.sqrt(20)
    assert (run.ci95[1] - run.effective) == pytest.approx(half, rel=1e-9)
    assert (run.effective - run.ci95[0]) == pytest.approx(half, rel=1e-9)


def test_a_crash_back_to_the_onsets_own_checkpoint_erases_it() -> None:
    """docs/model.md §16.3: with every checkpoint kept, a crash goes back to the newest, which is the onset's
    own until the next boundary: the share of onsets erased is P_e = (1/M)/a·(1 − (1 − e^{−aτ})/(aτ)),
    a = 1/M + 1/d (τ 600 s, d 1800 s, M 2 h: 0.036436), within four binomial spreads."""
    a = 1 / 7200 + 1 / 1800
    expected = (1 / 7200) / a * (1 - (1 - math.exp(-a * 600)) / (a * 600))
    assert expected == pytest.approx(0.036436, abs=1e-6)
    run = _one_level_silent()
    onsets = run.erased + run.events
    assert onsets > 1000
    assert abs(run.erased / onsets - expected) < 4 * math.sqrt(expected * (1 - expected) / onsets)


def test_gliding_over_free_checkpoints_is_the_same_timeline() -> None:
    """Just-in-time recovery's one-step tier stalls nothing: gliding to the next storage boundary gives the
    timeline stopping at every step gives, from the same draws."""
    from ckptcalc.mechanisms.silent import stepper as silent

    tiers = silent.Tiers(interval_s=30.0, every=(40,), stalls=(0.0, 20.0), restarts=(650.0, 600.0), shares=(0.5, 0.5))
    runs = [
        silent.run(
            tiers,
            mtbf_s=7200.0,
            silent_mtbf_s=21600.0,
            latency_s=1800.0,
            skip_s=60.0,
            keep=3,
            keep_every=2,
            cycles=400,
            seed=3,
            glide=glide,
        )
        for glide in (True, False)
    ]
    fast, slow = runs
    assert fast.events == slow.events > 20 and fast.erased == slow.erased and fast.unrecoverable == slow.unrecoverable
    for a, b in ((fast.effective, slow.effective), (fast.write, slow.write), (fast.restart, slow.restart),
                 (fast.silent, slow.silent)):  # fmt: skip
        assert a == pytest.approx(b, rel=1e-12)


# ------------------------------------------------------------- the persist slowdown's timeline


@pytest.mark.parametrize(
    ("x", "kept", "lost"),
    [
        # τ 100, s 1, P 50, f 0.5, r 10: the first period 101, every later one 126. Work since the restart
        # 256: two stalls ended, 29 s into the second persist (not durable): one checkpoint kept; slowed
        # 50 + 29 s at half speed: 2·1 + 0.5·79 = 41.5.
        (266.0, 100.0, 41.5),
        # 287: 60 s past the second stall, its persist durable: two kept; slowed 50 + 50: 2 + 25 = 52.
        (297.0, 200.0, 52.0),
        # 352.5: 125.5 s past it, 0.5 s into the third stall (after 125 s of slowed work): 2 + 0.5 + 50.
        (362.5, 200.0, 52.5),
        # Inside the restart: nothing run.
        (7.0, 0.0, 0.0),
    ],
)
def test_the_slowed_timeline_of_one_cycle_by_hand(x: float, kept: float, lost: float) -> None:
    """docs/model.md §17.1: training at 1 − f while a persist runs, one failure cycle worked by hand."""
    import numpy

    from ckptcalc.simulation.interference import _cycles

    found = _cycles(numpy.array([x]), 100.0, 1.0, 50.0, 0.5, 10.0)
    assert [float(v[0]) for v in found] == pytest.approx([kept, lost, min(x, 10.0)], abs=1e-12)


def test_the_slowed_split_adds_up_and_charges_the_slowdown_to_the_stalls() -> None:
    """The slowed work is write time: at f = 0.5 the write share exceeds the plain stalls' s/(τ + s) share
    by about f·P/(τ + s + f·P), and the four shares sum to 1."""
    slowed = sim.Schedule(interval_s=600.0, every=(), stalls=(2.0,), restarts=(300.0,), shares=(1.0,), lag_s=100.0,
                          slowdown=0.5)  # fmt: skip
    plain = sim.Schedule.single(interval_s=600.0, stall_s=2.0, restart_s=300.0, lag_s=100.0)
    fast, slow = (sim.run_schedule(s, sim.Failures(36000.0), cycles=2000, seed=5) for s in (plain, slowed))
    for run in (fast, slow):
        split = run.split
        assert split.useful + split.write + split.rework + split.restart == pytest.approx(1.0, abs=1e-12)
    assert slow.split.write - fast.split.write == pytest.approx(50.0 / 652.0, rel=0.05)
    assert slow.effective < fast.effective


# ------------------------------------------------------------- the silent stepper with no silent events


def _no_silent_cases() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("async", {"snapshot_bw": "400TB/s"}),
        # A persist of 324 s behind a 600 s interval, alone and under a replica in memory.
        ("async-long", {"bw": "20GB/s", "snapshot_bw": "400TB/s", "interval": 600.0}),
        (
            "memory-async",
            {
                "bw": "20GB/s",
                "snapshot_bw": "400TB/s",
                "interval": 600.0,
                **MECHANISMS["memory"],
                "memory_interval": 60.0,
            },
        ),
        ("memory", MECHANISMS["memory"]),
        ("jit", MECHANISMS["jit"]),
        ("notice", MECHANISMS["notice"]),
    ]


@pytest.mark.parametrize(("name", "inputs"), _no_silent_cases(), ids=[name for name, _ in _no_silent_cases()])
def test_the_silent_stepper_without_events_is_the_schedule_stepper(name: str, inputs: dict[str, Any]) -> None:
    """Silent MTBF → ∞: the event-by-event stepper of §7.2 runs the timeline of the vectorised one
    (tiers, asynchronous durability, just-in-time recovery, notice), two independent runs of 4 000 cycles:
    the effective time and each share of the split within their two 95 % half-widths combined."""
    from ckptcalc.mechanisms.silent import stepper as silent

    config = api.job("llama3-405b", **{**PINNED, **inputs}).config
    schedule = sim.schedule_for(config)
    tiers = silent.Tiers(
        interval_s=schedule.interval_s, every=schedule.every, stalls=schedule.stalls, restarts=schedule.restarts,
        shares=schedule.shares, lag_s=schedule.lag_s, nowhere_share=schedule.nowhere_share,
        nowhere_restart_s=schedule.nowhere_restart_s,
    )  # fmt: skip
    stepped = silent.run(tiers, mtbf_s=float(config.mtbf_s), silent_mtbf_s=1e30, latency_s=1.0, skip_s=0.0,
                         keep=None, keep_every=None, cycles=4000, seed=21)  # fmt: skip
    vectorised = sim.run_schedule(schedule, sim.Failures(float(config.mtbf_s)), cycles=4000, seed=22)
    assert stepped.events == 0
    half = math.hypot(stepped.ci95[1] - stepped.effective, vectorised.ci95[1] - vectorised.effective)
    assert abs(stepped.effective - vectorised.effective) <= half, (stepped.effective, vectorised.effective, half)
    # The shares' own spread, from the batches is not kept here: each within the same combined width
    # scaled by its size against the useful share (a loose bound; the effective time is the tight one).
    for mine, theirs in ((stepped.write, vectorised.split.write), (stepped.restart, vectorised.split.restart),
                         (stepped.rework, vectorised.split.rework)):  # fmt: skip
        assert abs(mine - theirs) <= max(2 * half, 0.1 * theirs), (name, mine, theirs)
