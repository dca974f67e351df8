"""Framework logs assembled into a run: attempts, inferred failures, ranks, async persists (logs/assembly.py)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import sys
import types
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import ckptcalc.logs
from ckptcalc.errors import InputError
from ckptcalc.logs import assembly, reader
from ckptcalc.logs.adapter import Bad, Context, Header, Row


@pytest.mark.parametrize("name", sorted(m.name for m in pkgutil.iter_modules(ckptcalc.logs.__path__)))
def test_logs_doctests(name: str) -> None:
    module = importlib.import_module(f"ckptcalc.logs.{name}")
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0


# A minimal framework format for the tests: "T EVENT [key=value ...]" a line, T in seconds since 1970.
_LINE = re.compile(r"(\d+(?:\.\d+)?) (\w+)((?: \w+=\S+)*)\s*")


def _rows(lines: Iterable[str], context: Context | None = None) -> Iterator[Row | Bad | Header]:
    from ckptcalc.logs.adapter import Stamp

    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            yield Bad(number, "not a test line")
            continue
        value: dict[str, Any] = {"time": Stamp(float(match[1])), "event": match[2]}
        for pair in match[3].split():
            key, _, text = pair.partition("=")
            value[key] = True if text == "yes" else int(text) if text.isdigit() else text
        yield Row(number, value)


def _detect(head: Sequence[str]) -> bool:
    return _LINE.fullmatch(head[0]) is not None


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("tiny_format")
    module.NAME, module.GIVES, module.detect, module.rows = "tiny", "events", _detect, _rows  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tiny_format", module)
    monkeypatch.setattr(reader, "ADAPTERS", (module, *reader.ADAPTERS))
    monkeypatch.setattr(reader, "FORMATS", tuple(sorted((*reader.FORMATS, "tiny"))))


class Collect:
    def __init__(self) -> None:
        self.records: list[tuple[str, float, dict[str, Any]]] = []

    def fields(self, names: Sequence[str], line: int) -> None:
        pass

    def record(self, record: dict[str, Any], line: int) -> bool:
        self.records.append((record["event"], float(record["time"]), record))
        return True


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_two_attempts_in_two_files_infer_one_failure(tiny: None, tmp_path: Path) -> None:
    first = _write(tmp_path, "a.log", "0 attempt_start\n10 progress step=1\n20 checkpoint_start step=2\n"
                   "25 checkpoint_end step=2\n40 progress step=3\n")  # fmt: skip
    second = _write(tmp_path, "b.log", "100 load_end step=2\n130 progress step=3\n150 run_end\n")
    consumer = Collect()
    counts = reader.scan([second, first], consumer)  # the order given does not matter: time does
    events = [(kind, t) for kind, t, _ in consumer.records]
    assert events == [
        ("run_start", 0.0), ("progress", 10.0), ("checkpoint_start", 20.0), ("checkpoint_end", 25.0),
        ("progress", 40.0), ("failure", 40.0), ("restart_end", 130.0), ("progress", 130.0), ("run_end", 150.0),
    ]  # fmt: skip
    restart = next(record for kind, _, record in consumer.records if kind == "restart_end")
    assert restart["resumed_from"] == 20.0
    failure = next(record for kind, _, record in consumer.records if kind == "failure")
    assert failure["cause"] == assembly.INFERRED
    assert counts.notes == {"inferred_failures": 1}
    assert counts.files == 2 and counts.format == "tiny"


def test_a_parallel_rank_adds_only_its_failures(tiny: None, tmp_path: Path) -> None:
    rank0 = _write(tmp_path, "rank0.log", "0 attempt_start\n10 progress step=1\n20 progress step=2\n")
    rank1 = _write(tmp_path, "rank1.log", "1 attempt_start\n11 progress step=1\n21 failure cause=xid79\n")
    consumer = Collect()
    counts = reader.scan([rank0, rank1], consumer)
    events = [(kind, t) for kind, t, _ in consumer.records]
    assert events == [("run_start", 0.0), ("progress", 10.0), ("progress", 20.0), ("failure", 21.0), ("run_end", 21.0)]
    assert consumer.records[3][2]["cause"] == "xid79"
    assert counts.notes == {"duplicates": 2}


def test_async_persist_waits_and_a_failure_interrupts_it(tiny: None) -> None:
    text = (
        "0 attempt_start\n10 checkpoint_start step=1\n12 checkpoint_end step=1 async=yes\n"
        "15 progress step=2\n40 persist_end step=1\n50 checkpoint_start step=3\n52 checkpoint_end step=3 async=yes\n"
        "60 progress step=4\n70 failure\n90 progress step=4\n"
    )
    consumer = Collect()
    reader.scan_text(text, consumer, name="x.log")
    ends = [record for kind, _, record in consumer.records if kind == "checkpoint_end"]
    assert [end.get("async_persist_end") for end in ends] == [40.0, assembly.INTERRUPTED]
    times = [t for _, t, _ in consumer.records]
    assert times == sorted(times)  # what waited for its persist still comes out in time order


def test_bad_lines_name_their_file(tiny: None, tmp_path: Path) -> None:
    first = _write(tmp_path, "a.log", "0 attempt_start\n10 progress step=1\n")
    second = _write(tmp_path, "b.log", "50 attempt_start\nnonsense\n")
    with pytest.raises(InputError) as caught:
        reader.scan([first, second], Collect(), format="tiny")
    assert caught.value.where == f"{second}:2"
    counts = reader.scan([first, second], Collect(), format="tiny", skip_bad=True)
    assert counts.skipped_bad == 1 and counts.bad[0].startswith(f"{second}:2: ")


# ---------------------------------------------------------------- a save's step, a resume's, two async saves


def _assembled(*raw: dict[str, Any]) -> list[dict[str, Any]]:
    rows = [Row(line, value) for line, value in enumerate(raw, start=1)]
    out = assembly.assemble(rows, Context("x.log"))
    return [{key: float(v) if key in ("time", "resumed_from") and not isinstance(v, str) else v
             for key, v in row.value.items()} for row in out if isinstance(row, Row)]  # fmt: skip


def test_the_step_a_save_end_names_is_the_save_step() -> None:
    events = _assembled(
        {"time": 0, "event": "progress", "step": 1},
        {"time": 5, "event": "checkpoint_start", "step": 10},
        {"time": 8, "event": "checkpoint_end", "step": 12},  # the end's own step wins over the start's
        {"time": 9, "event": "checkpoint_start"},
        {"time": 11, "event": "checkpoint_end"},  # no step either side
        {"time": 12, "event": "checkpoint_start", "step": 20},
        {"time": 14, "event": "checkpoint_end"},  # the start's step is kept
    )
    ends = [event for event in events if event["event"] == "checkpoint_end"]
    assert [event.get("step") for event in ends] == [12, None, 20]


def test_a_resume_goes_back_to_the_start_of_the_save_of_the_step_loaded() -> None:
    events = _assembled(
        {"time": 0, "event": "progress", "step": 1},
        {"time": 5, "event": "checkpoint_start", "step": 10},
        {"time": 8, "event": "checkpoint_end", "step": 10},
        {"time": 15, "event": "checkpoint_start", "step": 20},
        {"time": 18, "event": "checkpoint_end", "step": 20},
        {"time": 30, "event": "failure", "cause": "xid"},
        {"time": 40, "event": "load_end", "step": 10},  # an older save than the newest
        {"time": 45, "event": "progress", "step": 11},
        {"time": 60, "event": "failure", "cause": "xid"},
        {"time": 70, "event": "progress", "step": 12},  # no restore said: resumed_from unknown
    )
    restarts = [event for event in events if event["event"] == "restart_end"]
    assert restarts == [{"time": 45.0, "event": "restart_end", "resumed_from": 5.0},
                        {"time": 70.0, "event": "restart_end"}]  # fmt: skip


def test_two_async_saves_in_flight_hold_the_events_after_the_first() -> None:
    """The first async save's end waits for its persist; the second, ending meanwhile, is held in order
    behind it and written as it came (one persist is awaited at a time)."""
    events = _assembled(
        {"time": 0, "event": "progress", "step": 1},
        {"time": 5, "event": "checkpoint_start", "step": 10},
        {"time": 6, "event": "checkpoint_end", "step": 10, "async": True},
        {"time": 7, "event": "progress", "step": 11},
        {"time": 8, "event": "checkpoint_start", "step": 12},
        {"time": 9, "event": "checkpoint_end", "step": 12, "async": True},
        {"time": 20, "event": "persist_end", "step": 10},
        {"time": 25, "event": "progress", "step": 13},
    )
    shown = [(event["time"], event["event"], event.get("step"), event.get("async_persist_end")) for event in events]
    assert shown == [
        (0.0, "run_start", None, None),
        (0.0, "progress", 1, None),
        (5.0, "checkpoint_start", 10, None),
        (6.0, "checkpoint_end", 10, 20.0),
        (7.0, "progress", 11, None),
        (8.0, "checkpoint_start", 12, None),
        (9.0, "checkpoint_end", 12, None),
        (25.0, "progress", 13, None),
        (25.0, "run_end", None, None),
    ]
