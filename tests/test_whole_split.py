"""``simulate``'s whole split (docs/model.md §18.5, "The whole split"): every share of elapsed time the route
measured, summing to 1, the model's share of the same time beside it, on every route simulate takes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import hypothesis
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckptcalc import api
from ckptcalc.commands import simulate as simulate_command
from ckptcalc.model.evaluation import evaluate
from ckptcalc.simulation import split, timeline

RunJson = Callable[..., dict[str, Any]]

CYCLES = "2000"

#: Two tiers, silent events and stragglers as tests/test_one_engine.py and docs/model.md §18.5 set them.
TIERS = ["--replica-survival", "0.9", "--memory-bw", "2TB/s", "--memory-restart", "1min"]
SILENT = ["--silent-mtbf", "1d", "--detect-latency", "30min"]
STRAGGLERS = ["--slow-mtbf", "6h", "--slow-factor", "0.1", "--slow-duration", "2h", "--slow-detect", "10min"]

#: Each route simulate takes, by the flags that send a job there (on llama3-405b, or elastic-hsdp for groups),
#: with what the whole split then holds beyond the four shares every route measures, and what it folds.
ROUTES: dict[str, tuple[list[str], set[str], list[str]]] = {
    "one level (vectorised)": (["-p", "llama3-405b"], set(), []),
    "two tiers (vectorised)": (
        ["-p", "llama3-405b", *TIERS],
        set(),
        [],
    ),
    "async (vectorised)": (["-p", "llama3-405b", "--snapshot-bw", "600TB/s"], set(), []),
    "async slowdown (interference)": (
        ["-p", "llama3-405b", "--snapshot-bw", "600TB/s", "--persist-slowdown", "0.5"],
        set(),
        [],
    ),
    "spares (vectorised)": (["-p", "llama3-405b", "--spares", "2", "--repair", "4h"], set(), ["waiting"]),
    "groups (elastic runner)": (["-p", "elastic-hsdp"], {"groups_down", "overhead"}, ["quorum"]),
    "groups without pauses (elastic runner)": (
        ["-p", "elastic-hsdp", "--quorum-pause", "0s"],
        {"groups_down", "quorum", "overhead"},
        [],
    ),
    "groups and async (the one engine)": (
        ["-p", "elastic-hsdp", "--snapshot-bw", "600TB/s"],
        {"groups_down", "overhead"},
        ["quorum"],
    ),
    "silent (its stepper)": (["-p", "llama3-405b", *SILENT], set(), ["silent"]),
    "silent on two tiers (its stepper)": (["-p", "llama3-405b", *SILENT, *TIERS], set(), ["silent"]),
    "silent and spares (the one engine)": (
        ["-p", "llama3-405b", *SILENT, "--spares", "2", "--repair", "4h"],
        {"waiting", "silent"},
        [],
    ),
    "silent and groups (the one engine)": (
        ["-p", "elastic-hsdp", *SILENT],
        {"groups_down", "quorum", "overhead", "silent"},
        [],
    ),
    "stragglers (the one engine)": (["-p", "llama3-405b", *STRAGGLERS], set(), ["stragglers"]),
    "stragglers and spares (the one engine)": (
        ["-p", "llama3-405b", *STRAGGLERS, "--spares", "2", "--repair", "4h"],
        {"waiting"},
        ["stragglers"],
    ),
    "weibull, two tiers (no exact model)": (
        ["-p", "llama3-405b", "--shape", "0.7", *TIERS],
        set(),
        [],
    ),
}

FOUR = {"useful", "write", "rework", "restart"}

#: STRAGGLERS as the Python API takes them.
WITH_STRAGGLERS: dict[str, Any] = {"slow_mtbf": "6h", "slow_factor": 0.1, "slow_duration": "2h", "slow_detect": "10min"}


def _simulated(document: dict[str, Any]) -> dict[str, float]:
    return {name: share["simulated"] for name, share in document["whole_split"].items()
            if name != "folded" and share is not None}  # fmt: skip


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each route's document, through the command line (so that each is validated against its schema), with
    no user presets, as every test has it."""
    from conftest import validate
    from typer.testing import CliRunner

    from ckptcalc.cli import app

    found = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CKPTCALC_PRESET_PATH", str(tmp_path_factory.mktemp("user-presets")))
        for name, (args, _, _) in ROUTES.items():
            found[name] = _document(app, CliRunner(), name, args)
            validate(found[name])
    return found


def _document(app: Any, runner: Any, name: str, args: list[str]) -> dict[str, Any]:
    result = runner.invoke(app, ["simulate", *args, "--cycles", CYCLES, "--json"])
    assert result.exit_code == 0, (name, result.stderr)
    document: dict[str, Any] = json.loads(result.stdout)
    return document


@pytest.mark.parametrize("route", ROUTES)
def test_every_route_sums_to_one(documents: dict[str, dict[str, Any]], route: str) -> None:
    """docs/model.md §18.5: the shares not null are the whole of elapsed time, on every route."""
    shares = _simulated(documents[route])
    assert sum(shares.values()) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("route", ROUTES)
def test_every_route_shows_what_the_job_has_and_names_what_it_folds(
    documents: dict[str, dict[str, Any]], route: str
) -> None:
    _, more, folded = ROUTES[route]
    document = documents[route]
    assert set(_simulated(document)) == FOUR | more
    assert document["whole_split"]["folded"] == folded


@pytest.mark.parametrize("route", ROUTES)
def test_the_old_split_keeps_its_numbers(documents: dict[str, dict[str, Any]], route: str) -> None:
    """The four shares in the model's terms are the whole split's, summed as the model sums them."""
    document = documents[route]
    old, whole = document["split"], _simulated(document)
    assert old["useful"] == whole["useful"] == document["effective"]
    assert old["write"] == whole["write"]
    lost = (document["elastic"] or {"lost": 0.0})["lost"]
    assert old["rework"] + old["restart"] + lost == pytest.approx(
        sum(whole.get(k, 0.0) for k in ("rework", "restart", "waiting", "silent", "groups_down", "quorum",
                                        "overhead")), abs=1e-12)  # fmt: skip


def test_the_useful_share_is_the_effective_time_with_its_interval(documents: dict[str, dict[str, Any]]) -> None:
    document = documents["one level (vectorised)"]
    useful = document["whole_split"]["useful"]
    low, high = document["effective_ci95"]
    assert useful["half_width"] == pytest.approx((high - low) / 2.0, rel=1e-12)
    assert useful["model"] == document["analytic"]["exact"]
    assert useful["agrees"] == document["agreement"]["exact"]["agrees"]
    assert useful["difference_pp"] == pytest.approx(document["agreement"]["exact"]["difference_pp"], abs=1e-12)


def test_the_groups_overhead_is_its_share_of_useful_work(documents: dict[str, dict[str, Any]]) -> None:
    """docs/model.md §18.5: kept work runs at (1 − o) for useful work and o for the overhead, so the overhead is
    o/(1 − o) of the useful share; elastic-hsdp's o = 0.03."""
    for route in ("groups (elastic runner)", "groups and async (the one engine)"):
        whole = _simulated(documents[route])
        assert whole["overhead"] == pytest.approx(whole["useful"] * 0.03 / 0.97, rel=1e-12)
    # Where the engine times the overhead itself (with silent events), it is the same identity.
    whole = _simulated(documents["silent and groups (the one engine)"])
    assert whole["overhead"] == pytest.approx(whole["useful"] * 0.03 / 0.97, rel=1e-9)


def test_the_model_stands_beside_the_shares_it_gives_alike(documents: dict[str, dict[str, Any]]) -> None:
    """The model's shares beside the simulated ones: the model's own split where it counts the time alike,
    none where it does not (docs/model.md §18.5)."""
    plain = documents["one level (vectorised)"]["whole_split"]
    result = evaluate(api.job("llama3-405b").config)
    assert [plain[k]["model"] for k in ("useful", "write", "rework", "restart")] == pytest.approx(
        [float(result.effective), float(result.write), float(result.rework), float(result.restart)], rel=1e-12
    )
    assert sum(plain[k]["model"] for k in FOUR) == pytest.approx(1.0, abs=1e-12)
    # Spares on the vectorised stepper: the waits are in restart, the model's restart holds them too.
    spares = documents["spares (vectorised)"]["whole_split"]
    pooled = evaluate(api.job("llama3-405b", spares=2, repair="4h").config)
    assert spares["restart"]["model"] == pytest.approx(float(pooled.restart), rel=1e-12)
    # Groups with pauses folded: the model's groups down holds its quorum share too.
    groups = documents["groups (elastic runner)"]["whole_split"]
    elastic = evaluate(api.job("elastic-hsdp").config).elastic
    assert groups["groups_down"]["model"] == pytest.approx(float(elastic.down + elastic.quorum), rel=1e-12)
    assert groups["overhead"]["model"] == pytest.approx(float(elastic.overhead), rel=1e-12)
    # The engine with silent events: the model counts their replays in rework, so none beside it.
    engine = documents["silent and spares (the one engine)"]["whole_split"]
    assert [engine[k]["model"] for k in ("rework", "restart", "silent")] == [None, None, None]
    assert engine["waiting"]["model"] == pytest.approx(float(pooled.pool.waiting), rel=0.05)
    assert all(engine[k]["half_width"] is not None for k in ("rework", "restart", "waiting", "silent"))
    # The silent stepper counts as the model does; no exact model for two tiers under Weibull failures.
    assert documents["silent (its stepper)"]["whole_split"]["rework"]["model"] is not None
    # Slow periods run in the one engine, whose restart holds the time lost to running slow as the model's
    # does (docs/model.md §21.3, §21.6): the model stands beside rework and restart, within the run's interval
    # or 0.1 pp, and there is no silent share.
    slow = documents["stragglers (the one engine)"]["whole_split"]
    assert slow["silent"] is None
    for name in ("rework", "restart"):
        assert slow[name]["model"] is not None
        assert slow[name]["agrees"] or abs(slow[name]["difference_pp"]) <= 0.1
    # With spares the engine times the waits apart: the model's restart beside it is its restart less its waits.
    pooled_slow = evaluate(api.job("llama3-405b", **WITH_STRAGGLERS, spares=2, repair="4h").config)
    assert pooled_slow.pool is not None
    both = documents["stragglers and spares (the one engine)"]["whole_split"]
    expected = float(pooled_slow.restart - pooled_slow.pool.waiting)
    assert both["restart"]["model"] == pytest.approx(expected, rel=1e-12)
    assert both["waiting"]["model"] == pytest.approx(float(pooled_slow.pool.waiting), rel=1e-12)
    weibull = documents["weibull, two tiers (no exact model)"]["whole_split"]
    assert all(weibull[k]["model"] is None for k in FOUR)


def test_agreement_is_the_model_inside_the_interval() -> None:
    """A share's verdict: inside simulated ± half-width, none without a half-width or a model."""
    inside = split._share(0.5, 0.01, 0.505)
    assert inside.agrees is True
    assert inside.difference_pp == pytest.approx(0.5, rel=1e-9)
    assert split._share(0.5, 0.01, 0.52).agrees is False
    assert split._share(0.5, None, 0.52).agrees is None
    assert split._share(0.5, 0.01, None) == split.Share(0.5, 0.01, None, None, None)


def test_a_bare_schedule_has_the_four_shares() -> None:
    schedule = timeline.Schedule.single(interval_s=600.0, stall_s=10.0, restart_s=300.0)
    whole = split.whole_of(timeline.run_schedule(schedule, timeline.Failures(7200.0), cycles=400, seed=2), None,
                           model=False)  # fmt: skip
    assert {k for k, v in whole.shares.items() if v is not None} == FOUR
    assert whole.shares["useful"] is not None and whole.shares["useful"].model is None


def test_the_table_rows_are_the_json_keys(run: Callable[..., Any], documents: dict[str, dict[str, Any]]) -> None:
    """The terminal's split shows one row per share the document holds, and a note per share folded."""
    result = run("simulate", *ROUTES["groups (elastic runner)"][0], "--cycles", CYCLES)
    rows = [line.split("  ")[0].strip() for line in result.stdout.splitlines()]
    names = simulate_command.SHARE_NAMES
    shown = {key for key, name in names.items() if name in rows}
    assert shown == set(_simulated(documents["groups (elastic runner)"]))
    assert "quorum pauses are counted in groups down" in " ".join(result.stdout.split())


@settings(max_examples=12)
@given(
    interval=st.floats(60.0, 3600.0),
    stall=st.floats(0.0, 300.0),
    restart=st.floats(0.0, 1800.0),
    mtbf=st.floats(600.0, 86400.0),
    every=st.sampled_from([(), (3,), (2, 4)]),
)
def test_a_schedule_s_shares_sum_to_one(
    interval: float, stall: float, restart: float, mtbf: float, every: tuple[int, ...]
) -> None:
    """docs/model.md §18.5: whatever the schedule, the shares measured are the whole of elapsed time and the
    four of the model's terms."""
    tiers = len(every) + 1
    hypothesis.event(f"{tiers} tiers")
    schedule = timeline.Schedule(
        interval_s=interval, every=every, stalls=(stall,) * tiers, restarts=(restart,) * tiers,
        shares=tuple(1.0 / tiers for _ in range(tiers)),
    )  # fmt: skip
    run = timeline.run_schedule(schedule, timeline.Failures(mtbf), cycles=200, seed=7)
    whole = split.whole_of(run, None, model=False)
    shares = {name: share.simulated for name, share in whole.shares.items() if share is not None}
    assert set(shares) == FOUR
    assert sum(shares.values()) == pytest.approx(1.0, abs=1e-12)
    assert [shares[name] for name in ("useful", "write", "rework", "restart")] == [
        run.split.useful, run.split.write, run.split.rework, run.split.restart,
    ]  # fmt: skip


@settings(max_examples=8)
@given(
    groups=st.integers(2, 8),
    share=st.floats(0.5, 0.95),
    pause=st.sampled_from(["0s", "30s"]),
    overhead=st.floats(0.0, 0.1),
)
def test_groups_shares_sum_to_one_and_the_overhead_is_exact(
    groups: int, share: float, pause: str, overhead: float
) -> None:
    """docs/model.md §18.5: on the elastic runner, useful + write + rework + restart + the groups' losses = 1,
    and the overhead is useful·o/(1 − o); the quorum pauses are measured alone only where there are none."""
    hypothesis.event(f"pause {pause}")
    config = api.job("elastic-hsdp", groups=groups, group_share=share, quorum_pause=pause,
                     ft_overhead=overhead).config  # fmt: skip
    run = timeline.run(config, timeline.Failures(float(config.mtbf_s)), cycles=200, seed=3)
    whole = split.whole_of(run, evaluate(config), model=True)
    shares = {name: found.simulated for name, found in whole.shares.items() if found is not None}
    assert sum(shares.values()) == pytest.approx(1.0, abs=1e-12)
    assert shares["overhead"] == pytest.approx(shares["useful"] * overhead / (1.0 - overhead), rel=1e-12, abs=1e-15)
    assert ("quorum" in shares) == (pause == "0s") and whole.folded == (() if pause == "0s" else ("quorum",))
