"""The replica groups' losses read off an event log (ckptcalc.mechanisms.elastic.log, docs/model.md §11.6), at the run's
edges: a group down at the run's end, one never up again, and a pause that begins at a whole-job failure."""

from __future__ import annotations

import math

import numpy
import pytest

from ckptcalc.mechanisms.elastic import log as groups

NONE = (numpy.array([]), numpy.array([]))


def _losses(start: float, end: float, quorum_end: float = math.nan, failures: tuple[float, ...] = ()) -> groups.Losses:
    """Four groups over a run [0, 100]: one down from ``start`` (to ``end``, NaN: never up again)."""
    columns = groups.GroupColumns(numpy.array([start]), numpy.array([end]), numpy.array([0]),
                                  numpy.array([quorum_end]), 4, True)  # fmt: skip
    return groups.losses(columns, start_s=0.0, end_s=100.0, blocked=NONE, restarts=NONE,
                         failures_s=numpy.array(failures), overhead=0.0)  # fmt: skip


def test_a_group_never_up_again_is_down_to_the_run_end() -> None:
    found = _losses(60.0, math.nan)
    assert found.within(0.0, 100.0)[0] == pytest.approx(40.0 / 4, rel=1e-12)  # 40 s of one group in four
    assert found.exposure[-1] == pytest.approx(60.0 + 40.0 * 0.75, rel=1e-12)


def test_a_group_down_at_the_run_end_loses_nothing() -> None:
    found = _losses(100.0, math.nan)
    assert found.within(0.0, 100.0) == (0.0, 0.0, 0.0)
    assert found.exposure[-1] == pytest.approx(100.0, rel=1e-12)


@pytest.mark.parametrize(("failure", "pause"), [(60.0, 0.0), (70.0, 10.0), (59.0, 20.0)])
def test_a_pause_ends_at_the_first_whole_job_failure_from_its_start(failure: float, pause: float) -> None:
    """A pause from 60 to its quorum_end 80 is cut by a whole-job failure at or after 60: at 60 itself it
    lasts nothing; one before it (59) leaves it whole. The running groups' share is 3/4."""
    found = _losses(60.0, 90.0, quorum_end=80.0, failures=(failure,))
    assert found.within(0.0, 100.0)[1] == pytest.approx(pause * 0.75, abs=1e-12)
