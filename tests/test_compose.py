"""Mechanisms that combine (docs/model.md §18): every limit honoured with every mechanism, the headline's
``model`` label, effective time 0 as an answer, and elastic groups with just-in-time recovery, notice and
spares checked against an independent event simulation."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc.model import weibull
from ckptcalc.model.evaluation import Config, evaluate
from ckptcalc.model.tiers import Tiers, effective

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

#: llama3-405b (docs/model.md §1): 6.48 TB at 2 TB/s, M = 3.1 h, r = 10 min.
SIZE, BW, MTBF, RESTART = 6.48e12, 2e12, 11_160.0, 600.0
LIMIT = 5e14  # --max-written-per-day 0.5PB


# ------------------------------------------------------------------ §18.1 limits


def jit_schedule(steps: float) -> Tiers:
    """§13.4's two tiers: the one-step tier (10 s, no stall, 90 % of failures, restart r + δ) under
    storage every ``steps`` steps (stall δ = 3.24 s, 10 %, restart r)."""
    return Tiers(
        tau1_s=10.0,
        every=(steps,),
        stalls=(0.0, SIZE / BW),
        lag_s=0.0,
        shares=(0.9, 0.1),
        restarts=(RESTART + SIZE / BW, RESTART),
    )


def test_written_limit_holds_with_just_in_time_recovery(run_json: RunJson) -> None:
    """docs/model.md Reference 18.1: the bound 6.48e12 × 86 400 / 5e14 = 1 119.744 s is 111.97 steps, so
    storage every 112 steps (1 120 s), 0.9393141, against 0.9396511 at the free 83 steps."""
    bound = SIZE * 86_400 / LIMIT
    assert bound == pytest.approx(1119.744, rel=1e-12)
    document = run_json("optimize", "--jit-share", "0.9", "--step-time", "10s", "--max-written-per-day", "0.5PB")
    assert document["interval_s"] == pytest.approx(1120.0, rel=1e-12)
    assert document["levels"][-1]["optimal_interval_steps"] == 112
    assert document["effective"] == pytest.approx(0.9393141, abs=5e-8)
    assert document["effective"] == pytest.approx(effective(jit_schedule(112.0), MTBF).effective, rel=1e-12)
    free = effective(jit_schedule(83.0), MTBF).effective
    assert free == pytest.approx(0.9396511, abs=5e-8)
    load = document["storage"]
    assert load["bytes_written_per_day"] == pytest.approx(SIZE * 86_400 / 1120.0, rel=1e-12)
    assert load["bytes_written_per_day"] <= LIMIT
    assert load["limit_cost_pp"] == pytest.approx(100 * (free - document["effective"]), abs=1e-9)
    assert load["limit_cost_pp"] == pytest.approx(0.03369, abs=1e-5)
    assert any("500 TB a day" in w for w in document["warnings"])
    # 111 steps would write more than the limit, 112 is the first that does not.
    assert SIZE * 86_400 / 1110.0 > LIMIT


def test_written_limit_holds_with_just_in_time_recovery_on_three_tiers(run_json: RunJson) -> None:
    """With a memory replica under storage, the top interval is still whole steps and within the limit."""
    document = run_json(
        "optimize", "--preset", "gemini-inmemory", "--jit-share", "0.5", "--step-time", "10s",
        "--max-written-per-day", "0.01PB",
    )  # fmt: skip
    top = document["storage"]["tiers"][-1]
    assert top["bytes_written_per_day"] <= 1e13
    assert document["interval_s"] / 10.0 == pytest.approx(round(document["interval_s"] / 10.0), abs=1e-9)
    memory = document["levels"][0]["interval_s"]
    assert memory / 10.0 == pytest.approx(round(memory / 10.0), abs=1e-9)
    # The smallest whole multiple of the memory interval at or above the bound.
    bound = top["checkpoint_bytes"] * 86_400 / 1e13
    assert bound <= document["interval_s"] < bound + memory
    assert document["storage"]["limit_cost_pp"] > 0


def test_written_limit_holds_under_weibull_failures(run_json: RunJson) -> None:
    """docs/model.md Reference 18.1: under --shape 0.7 the one interval is held at 1 119.744 s."""
    document = run_json("optimize", "--shape", "0.7", "--max-written-per-day", "0.5PB")
    assert document["interval_s"] == pytest.approx(1119.744, rel=1e-12)
    expected = weibull.weibull_effective(
        interval_s=1119.744, stall_s=SIZE / BW, lag_s=0.0, restart_s=RESTART, mtbf_s=MTBF, shape=0.7
    )
    assert document["effective"] == pytest.approx(expected, rel=1e-12)
    assert document["effective"] == pytest.approx(0.9063903, abs=5e-8)
    assert document["storage"]["limit_cost_pp"] == pytest.approx(2.2859, abs=1e-4)
    assert any("500 TB a day" in w for w in document["warnings"])
    loose = run_json("optimize", "--shape", "0.7", "--max-written-per-day", "5PB")
    assert loose["interval_s"] == pytest.approx(282.144, abs=1e-3)
    assert loose["warnings"] == []


@pytest.mark.parametrize(
    "extra",
    [
        (),
        ("--jit-share", "0.5", "--step-time", "10s"),
        ("--shape", "0.7"),
        ("--groups", "4"),
        ("--notice-share", "0.2"),
    ],
)
def test_a_given_interval_over_the_written_limit_is_refused(run: Run, extra: tuple[str, ...]) -> None:
    """docs/model.md §18.1: 300 s writes 6.48e12 × 86 400 / 300 = 1.866e15 bytes a day, over 5e14."""
    result = run("optimize", "--interval", "300s", "--max-written-per-day", "0.5PB", *extra)
    assert_usage_error(result, "--interval")
    assert "--max-written-per-day" in result.stderr
    assert "1.866e+15" in result.stderr


def test_a_given_interval_within_the_written_limit_runs(run_json: RunJson) -> None:
    document = run_json("optimize", "--interval", "1200s", "--max-written-per-day", "0.5PB")
    assert document["interval_s"] == 1200.0
    assert document["storage"]["bytes_written_per_day"] == pytest.approx(SIZE * 86_400 / 1200.0, rel=1e-12)


def test_written_limit_holds_with_every_mechanism(run_json: RunJson) -> None:
    """No combination of mechanisms writes more than the limit at its optimum (docs/model.md §18.1)."""
    cases = [
        ("--notice-share", "0.3"),
        ("--spares", "auto", "--repair", "4h"),
        ("--silent-mtbf", "7d", "--detect-latency", "1h"),
        ("--groups", "4"),
        ("--jit-share", "0.9", "--step-time", "10s"),
        ("--shape", "0.7"),
        ("--preset", "gemini-inmemory", "--memory-interval", "60s"),
    ]
    for extra in cases:
        document = run_json("optimize", *extra, "--max-written-per-day", "0.5PB")
        top = document["storage"]["tiers"][-1]
        assert top["bytes_written_per_day"] <= LIMIT * (1 + 1e-12), extra
        assert document["storage"]["limit_cost_pp"] >= 0.0


# ------------------------------------------------------------------ §18.2 the headline's label


@pytest.mark.parametrize(
    ("extra", "label"),
    [
        ((), "exact"),
        (("--jit-share", "0.5", "--step-time", "10s", "--notice-share", "0.2"), "exact"),
        (("--spares", "2", "--repair", "4h"), "exact"),
        (("--shape", "0.7"), "exact"),
        (("--preset", "gemini-inmemory"), "exact"),
        (("--groups", "4"), "approximate"),
        (("--silent-mtbf", "7d", "--detect-latency", "1h"), "approximate"),
        (("--spares", "2", "--repair", "4h", "--shape", "0.7"), "approximate"),
    ],
)
def test_model_label_says_approximate_where_the_headline_is(
    run_json: RunJson, extra: tuple[str, ...], label: str
) -> None:
    """docs/model.md §18.2: elastic groups, silent events and spares under Weibull failures are approximate."""
    assert run_json("optimize", *extra)["model"] == label
    swept = run_json("sweep", "--over", "interval", "--from", "300s", "--to", "900s", "--points", "2", *extra)
    assert swept["model"] == label


def test_model_label_of_a_comparison_is_per_scenario(run_json: RunJson) -> None:
    compared = run_json("compare", "--what-if", "groups=4")
    assert [s["model"] for s in compared["scenarios"]] == ["exact", "approximate"]
    compared = run_json("compare", "--what-if", "shape=0.7", "--what-if", "groups=2")
    assert [s["model"] for s in compared["scenarios"]] == ["exact", "exact", "approximate"]


# ------------------------------------------------------------------ §18.3 effective time 0


def _finite_levers(document: dict[str, Any]) -> None:
    for lever in document["levers"]:
        assert math.isfinite(lever["effective"]) and 0.0 <= lever["effective"] <= 1.0, lever
        assert lever["gain_pp"] == pytest.approx(100 * (lever["effective"] - document["effective"]), abs=1e-9)


@pytest.mark.parametrize(
    "args",
    [
        ("--restart", "3000d"),
        ("--read-bw", "1B/s"),
        ("--gpus", "1e9", "--spares", "auto", "--repair", "4h"),
        ("--mtbf", "1e-9s", "--spares", "auto", "--repair", "4h"),
    ],
)
def test_effective_time_zero_is_an_answer(run_json: RunJson, args: tuple[str, ...]) -> None:
    """docs/model.md §18.3: the effective time underflows to 0; every lever is computed from it (these
    raised ZeroDivisionError in the elastic lever's restart ratio)."""
    document = run_json("optimize", *args)
    assert document["effective"] == 0.0
    assert document["loss"]["restart"] == 1.0
    _finite_levers(document)


@pytest.mark.parametrize(
    "args",
    [("--groups", "4", "--target", "0.99"), ("--mtbf", "1s", "--groups", "4"), ("--restart", "3000d", "--groups", "4")],
)
def test_elastic_extremes_give_numbers(run_json: RunJson, args: tuple[str, ...]) -> None:
    """docs/model.md §18.3: the elastic restart ratio with restarts of 0 (a target solved for the restart)
    or restarts that never end in double precision."""
    document = run_json("optimize", *args)
    assert 0.0 <= document["effective"] < 1.0
    found = document["elastic"]
    shares = document["effective"] + found["groups_down_loss"] + found["quorum_loss"] + found["overhead_loss"]
    assert shares == pytest.approx(found["periodic_effective"], abs=1e-12)
    loss = document["loss"]
    assert found["periodic_effective"] + loss["write"] + loss["rework"] + loss["restart"] == pytest.approx(1.0)
    _finite_levers(document)


def test_restart_ratio_limits() -> None:
    """docs/model.md §18.3: the ratio is 0 where only the periodic model's restarts never end, 1 with no
    restart time, and the effective time 0 where nothing is kept."""
    from ckptcalc.mechanisms.elastic import model as elastic

    groups = elastic.groups_process(
        groups=4, group_share=0.95, rejoin_s=1800.0, quorum_pause_s=0.0, overhead=0.02, mtbf_s=1.0
    )
    # 10⁴ s: e^{−w·r} = e^{−500} is a double, e^{−r/M_W} = e^{−1253} is not.
    assert elastic.restart_ratio(groups, shares=(1.0,), restarts=(1e4,)) == 0.0
    assert 0.0 < elastic.restart_ratio(groups, shares=(1.0,), restarts=(600.0,)) < 1e-15
    assert elastic.restart_ratio(groups, shares=(1.0,), restarts=(0.0,)) == 1.0
    never = elastic.restart_ratio(groups, shares=(1.0,), restarts=(1e300,))
    assert never == 1.0
    found = elastic.losses(groups, 0.0, write=0.0, rework=0.0, restart=1.0, ratio=0.0)
    assert (found.effective, found.restart, found.write) == (0.0, 1.0, 0.0)
    plain = evaluate(Config(checkpoint_bytes=SIZE, bandwidth=BW, mtbf_s=MTBF, restart_s=3000 * 86_400.0))
    assert plain.effective == 0.0


# ------------------------------------------------------------------ §18.4 elastic groups combined


def _exp(rng: random.Random, rate: float) -> float:
    return rng.expovariate(rate) if rate > 0 else math.inf


def simulate_elastic(
    *,
    groups: int,
    share: float,
    rejoin: float,
    overhead: float,
    tau: float,
    step: float | None = None,
    jit: float = 0.0,
    notice: float = 0.0,
    spares: int | None = None,
    repair: float = 0.0,
    cycles: int,
    seed: int,
) -> tuple[float, float]:
    """An event-by-event run of llama3-405b on G elastic groups (docs/model.md §14.1, §18.4), written
    apart from the package: the effective time and its 95 % half-width over 20 batches of whole-job
    failures. Storage is written every ``tau`` of running time (δ, synchronous); a group fails at
    ν = eλ/G while up and stays out T_j (with spares: a spare is free, or it stays out for its repair);
    whole-job failures come at (1 − e)λ and are, with probabilities ``jit`` and ``notice``, recovered
    in place (losing the step in flight, restart r + δ) or met with notice (nothing lost, r + δ), else
    rolled back (r); the last group up failing rolls back too. During a restart only whole-job failures
    strike (a new class drawn, the farthest landing kept); with spares each failure takes a node to
    repair for ``repair``, and a whole-job failure with none free waits for the first node back."""
    rng = random.Random(seed)
    lam = 1.0 / MTBF
    nu, whole_rate = share * lam / groups, (1.0 - share) * lam
    delta = SIZE / BW
    restarts = {"jit": RESTART + delta, "notice": RESTART + delta, "rollback": RESTART}
    severity = {"notice": 0, "jit": 1, "rollback": 2}
    wall = useful = pending = work = 0.0
    stalling, stall_left = False, 0.0
    out: list[float] = []  # wall times the groups that are out come back
    repairs: list[float] = []  # wall times the nodes that took a spare are back
    batches: list[tuple[float, float]] = []
    batch_useful = batch_wall = 0.0
    per_batch = cycles // 20

    def take_node(at: float) -> float:
        """The failed node goes to repair; the wait of a whole-job failure when no spare is free."""
        nonlocal repairs
        if spares is None:
            return 0.0
        repairs = [t for t in repairs if t > at]
        if len(repairs) < spares:
            repairs.append(at + repair)
            return 0.0
        first = min(repairs)
        repairs.remove(first)
        repairs.append(at + repair)
        return first - at

    def draw() -> str:
        x = rng.random()
        return "jit" if x < jit else "notice" if x < jit + notice else "rollback"

    done = 0
    while done < cycles:
        up = groups - len(out)
        rate_local = nu * up
        t_local, t_whole = _exp(rng, rate_local), _exp(rng, whole_rate)
        t_back = min(out) - wall if out else math.inf
        t_phase = stall_left if stalling else tau - work
        dt = min(t_local, t_whole, t_back, t_phase)
        thr = (1.0 - overhead) * up / groups
        wall += dt
        if not stalling:
            pending += dt * thr
            work += dt
        else:
            stall_left -= dt
        if dt == t_phase:
            if stalling:
                useful += pending
                batch_useful += pending
                pending, work, stalling = 0.0, 0.0, False
            else:
                stalling, stall_left = True, delta
            continue
        if dt == t_back:
            out.remove(min(out))
            continue
        kind = None
        if dt == t_local:
            if up > 1:
                if spares is None:
                    out.append(wall + rejoin)
                else:
                    free = len([t for t in repairs if t > wall]) < spares
                    take_node(wall) if free else None
                    out.append(wall + (rejoin if free else repair))
                continue
            kind = "rollback"  # the last group up: all down at once
        else:
            kind = draw()
        # A whole-job failure: the partial step lost in place, the wait for a node, the restarts.
        lost_in_place = 0.0 if stalling or step is None else (work % step) * thr
        landing = kind
        wall += take_node(wall)
        left = restarts[kind]
        while True:
            t = _exp(rng, whole_rate)
            if t >= left:
                wall += left
                break
            wall += t
            kind = draw()
            if severity[kind] > severity[landing]:
                landing = kind
            wall += take_node(wall)
            left = restarts[kind]
        if landing == "rollback":
            pending, work, stalling = 0.0, 0.0, False
        elif landing == "jit":
            pending -= lost_in_place
            work -= 0.0 if stalling or step is None else work % step
            stall_left = delta if stalling else stall_left
        out = []
        done += 1
        if done % per_batch == 0:
            batches.append((batch_useful, wall - batch_wall))
            batch_useful, batch_wall = 0.0, wall
    ratios = [u / w for u, w in batches]
    mean = sum(ratios) / len(ratios)
    spread = math.sqrt(sum((r - mean) ** 2 for r in ratios) / (len(ratios) - 1))
    return useful / wall, 2.093 * spread / math.sqrt(len(ratios))


#: Each case, and how far below the simulation the model may lie beyond the simulation's 95 % interval
#: (docs/model.md §18.4): 0.1 pp where the pool is not met often; with a spare missing for a tenth to a
#: half of the failures the model is low by up to 0.35 pp (Erlang's load counts failures the groups kept
#: out for their repair do not make), stated there.
COMBINED = [
    (("--groups", "4", "--jit-share", "0.9", "--step-time", "10s"), 1e-3),
    (("--groups", "4", "--notice-share", "0.3"), 1e-3),
    (("--groups", "4", "--spares", "2", "--repair", "4h"), 4e-3),
    (("--groups", "2", "--spares", "1", "--repair", "4h"), 4e-3),
    (("--groups", "8", "--jit-share", "0.5", "--step-time", "10s", "--notice-share", "0.2", "--spares", "1",
     "--repair", "2h"), 1e-3),
]  # fmt: skip


@pytest.mark.parametrize(("args", "low"), COMBINED)
def test_elastic_groups_combine_against_an_event_simulation(
    run_json: RunJson, args: tuple[str, ...], low: float
) -> None:
    """docs/model.md §18.4: the model at its own schedule against the event simulation above: within its
    95 % interval or 0.1 pp, or, with spares often missing, low by at most the stated bound and never
    high beyond the interval."""
    document = run_json("optimize", *args)
    assert document["model"] == "approximate"
    flags = dict(zip(args[::2], args[1::2], strict=True))
    g = int(flags["--groups"])
    spares = int(flags["--spares"]) if "--spares" in flags else None
    repair = {"4h": 14_400.0, "2h": 7_200.0}.get(flags.get("--repair", ""), 0.0)
    found, half = simulate_elastic(
        groups=g, share=0.95, rejoin=1800.0, overhead=0.02, tau=document["interval_s"],
        step=10.0 if "--step-time" in flags else None, jit=float(flags.get("--jit-share", 0.0)),
        notice=float(flags.get("--notice-share", 0.0)), spares=spares, repair=repair, cycles=4000, seed=7,
    )  # fmt: skip

    model = document["effective"]
    assert model - found <= max(half, 1e-3), (model, found, half)
    assert found - model <= max(half, low), (model, found, half)


#: The groups' run alone, the same in each case below: simulated once a worker.
_GROUPS_ALONE: list[dict[str, Any]] = []


@pytest.mark.parametrize(
    "extra",
    [("--jit-share", "0.5", "--step-time", "10s"), ("--notice-share", "0.3"), ("--spares", "2", "--repair", "4h")],
)
def test_simulate_runs_elastic_groups_with_each_in_the_one_engine(run_json: RunJson, extra: tuple[str, ...]) -> None:
    """docs/model.md §18.4, §18.5: simulate steps the groups with the other mechanism (not the groups alone,
    which it once would have dropped it for): another run than the groups', the model within 0.5 pp."""
    both = run_json("simulate", "--groups", "4", *extra, "--cycles", "3000", "--seed", "2")
    if not _GROUPS_ALONE:
        _GROUPS_ALONE.append(run_json("simulate", "--groups", "4", "--cycles", "3000", "--seed", "2"))
    alone = _GROUPS_ALONE[0]
    model = run_json("optimize", "--groups", "4", *extra)["effective"]
    assert both["effective"] != alone["effective"]
    assert both["elastic"]["lost"] > 0.0
    assert abs(both["effective"] - model) <= 5e-3, (both["effective"], model)


def test_just_in_time_and_notice_take_shares_of_the_whole_job_failures() -> None:
    """docs/model.md §18.4: the periodic process runs p_j(1 − D) in place and p_n(1 − D) with notice, D the
    all-down share of the whole-job failures; with every whole-job failure in place a checkpoint is still
    needed, for the all-down ones."""
    from ckptcalc.mechanisms.elastic import home
    from ckptcalc.mechanisms.recovery import JIT, NOTICE, with_shares
    from ckptcalc.model import evaluation

    stated: dict[str, Any] = {"groups": 4, "group_share": 0.95, "rejoin_s": 1800.0, "quorum_pause_s": 0.0,
                              "ft_overhead": 0.02}  # fmt: skip
    base = Config(checkpoint_bytes=SIZE, bandwidth=BW, mtbf_s=MTBF, restart_s=RESTART, **stated)
    config = with_shares(base.replace(step_s=10.0), 0.6, 0.4)
    groups = home.groups_of(config)
    assert 0.0 < groups.all_down_share < 0.1
    whole = home.periodic(config, groups.whole_job_mtbf_s, groups)
    assert getattr(whole, JIT) == pytest.approx(0.6 * (1 - groups.all_down_share), rel=1e-15)
    assert getattr(whole, NOTICE) == pytest.approx(0.4 * (1 - groups.all_down_share), rel=1e-15)
    assert whole.periodic_share == pytest.approx(groups.all_down_share, rel=1e-9)
    assert not evaluation.unneeded(config)
    found = evaluate(config)
    assert math.isfinite(found.interval_s)
    assert found.effective > evaluate(base).effective
    # Shares of the split: the periodic process's and the groups' losses sum to 1.
    assert found.elastic is not None
    parts = found.effective + found.elastic.down + found.elastic.quorum + found.elastic.overhead
    assert parts + found.write + found.rework + found.restart == pytest.approx(1.0, abs=1e-12)


def test_spares_with_elastic_groups_reduce_to_each_alone() -> None:
    """docs/model.md §18.4: a pool that is never short (S large) leaves the groups as they were; with two
    groups, a time out of T_j or T_rep is the exact chain at the mixture."""
    from ckptcalc.mechanisms.elastic import model as elastic

    stated: dict[str, Any] = {"groups": 4, "group_share": 0.95, "rejoin_s": 1800.0, "quorum_pause_s": 0.0,
                              "ft_overhead": 0.02}  # fmt: skip
    base = Config(checkpoint_bytes=SIZE, bandwidth=BW, mtbf_s=MTBF, restart_s=RESTART, **stated)
    pool: dict[str, Any] = {"nodes": 2048, "spares": 60, "repair_s": 14_400.0}
    many = evaluate(base.replace(**pool))
    assert many.effective == pytest.approx(evaluate(base).effective, rel=1e-12)
    # Two groups, B = 1/2: E[min(T, X)] is the mean of the two fixed-T values.
    nu, w = 0.95 / MTBF / 2, 0.05 / MTBF
    mixed = elastic.groups_process(
        groups=2, group_share=0.95, rejoin_s=1800.0, quorum_pause_s=0.0, overhead=0.0, mtbf_s=MTBF,
        out=elastic.Out(rejoin_s=1800.0, slow_s=14_400.0, slow_share=0.5),
    )  # fmt: skip
    leave = nu + w
    one = 0.5 * (1 - math.exp(-leave * 1800.0)) / leave + 0.5 * (1 - math.exp(-leave * 14_400.0)) / leave
    both = 1 / (2 * nu + w)
    drop = 2 * nu * both
    assert mixed.up_share == pytest.approx((2 * both + drop * one) / (2 * (both + drop * one)), rel=1e-12)
