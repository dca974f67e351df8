"""Every value a job runs with that nobody stated is listed with where it came from: in the table, the
JSON (``inputs.sources``, ``inputs.assumed``) and Markdown (issue 35, item 2)."""

from __future__ import annotations

import doctest
from collections.abc import Callable
from typing import Any

from ckptcalc import api
from ckptcalc.inputs import assumed

RunJson = Callable[..., dict[str, Any]]
Run = Callable[..., Any]
JOB = ("--params", "70B", "--gpus", "4096", "--bw", "400GB/s")
#: The 70B job over the default preset: its restart and bytes per parameter are llama3-405b's, and its
#: failure rate is llama3-405b's per GPU (3.1 h × 16384 GPUs = 2116 d) held at 4096 GPUs: 12.4 h.
LINES = [
    "bytes_per_param 16 (default, llama3-405b preset)",
    "MTBF 12.4 h (per-GPU 2120 d, rate held from llama3-405b at 16384 GPUs)",
    "restart 10.0 min (default, llama3-405b preset)",
    "a replacement node always free (no spare pool; with none free, 73.8 %)",
]


def test_doctests() -> None:
    failures, tried = doctest.testmod(assumed)
    assert tried > 0 and failures == 0


def test_json_lists_what_was_assumed_and_where_it_came_from(run_json: RunJson) -> None:
    inputs = run_json("optimize", *JOB)["inputs"]
    assert inputs["sources"] == {
        "checkpoint.bytes_per_param": "default, llama3-405b preset",
        "failures.gpu_mtbf": "rate held from llama3-405b at 16384 GPUs",
        "failures.restart": "default, llama3-405b preset",
    }
    assert inputs["assumed"] == LINES


def test_a_named_preset_and_given_values_are_not_assumed(run_json: RunJson) -> None:
    inputs = run_json("optimize", "--preset", "llama3-405b", "--restart", "5min")["inputs"]
    assert inputs["sources"] == {}
    assert [line for line in inputs["assumed"] if "replacement" not in line] == []
    # The default preset's values, when no preset is named, are all assumed.
    stated = run_json("optimize")["inputs"]["sources"]
    assert set(stated) == {
        "checkpoint.params", "checkpoint.bytes_per_param", "storage.bandwidth", "failures.mtbf", "failures.restart",
        "cluster.gpus",
    }  # fmt: skip


def test_the_models_own_defaults_are_listed(run_json: RunJson) -> None:
    inputs = run_json("optimize", "--preset", "llama3-405b", "--groups", "8", "--spares", "auto", "--repair", "4h")
    sources = inputs["inputs"]["sources"]
    assert sources == {
        "elastic.group_share": "default",
        "elastic.rejoin": "default",
        "elastic.quorum_pause": "default",
        "elastic.ft_overhead": "default",
        "spares.gpus_per_node": "default",
        "spares.spare_risk": "default",
    }
    assert "ft_overhead 2.00 % (default)" in inputs["inputs"]["assumed"]
    assert not [line for line in inputs["inputs"]["assumed"] if "replacement" in line]  # it has a pool


def test_table_and_markdown_list_them_under_the_inputs(run: Run) -> None:
    table = run("optimize", *JOB, env={"COLUMNS": "120"}).stdout
    head = table.split("Optimal storage interval")[0]
    assert "Assumed (not given, nor from a preset you named):" in head
    for line in LINES:
        assert line in head
    text = run("optimize", *JOB, "--markdown").stdout
    for line in LINES:
        assert f"- {line.replace('_', chr(92) + '_')}" in text


def test_compare_columns_carry_their_own(run_json: RunJson) -> None:
    first, elastic = run_json("compare", *JOB, "--what-if", "groups=8")["scenarios"]
    assert "failures.restart" in first["inputs"]["sources"]
    assert elastic["inputs"]["sources"]["elastic.ft_overhead"] == "default"
    assert elastic["inputs"]["sources"]["failures.restart"] == "default, llama3-405b preset"


def test_the_api_job_lists_them() -> None:
    names = [item.name for item in api.job(params="70B", gpus=4096, bw="400GB/s").assumed]
    assert names == ["bytes_per_param", "gpu_mtbf_s", "restart_s"]
    assert api.job("llama3-405b", gpus=4096).assumed[0].how == "held"


def test_compare_lists_what_its_columns_assume(run: Run) -> None:
    args = ("compare", *JOB, "--what-if", "elastic: groups=8")
    table = run(*args).stdout
    tail = " ".join(table.split("best: ")[1].split())  # the lines as read, however the terminal wraps them
    assert "Assumed (not given, nor from a preset you named):" in tail
    assert f"params=70B bw=400GB/s gpus=4096: {'; '.join(LINES[:3])}" in tail
    assert "elastic: also group_share 95.0 % (default); rejoin 30.0 min (default)" in tail
    text = run(*args, "--markdown").stdout
    assert "- elastic: also group\\_share 95.0 % (default)" in text
