"""A table read a block at a time, by column, gives what reading it row by row gives.

The reader hands a plain block of a CSV log (no quotes, one row a line) to its consumer as
:class:`~ckptcalc.logs.adapter.Columns`; analyze's and fit's consumers take a column at a time. Each
test here reads the same text both ways, the block size and the text drawn at random, and asserts
equal results: rows, bad rows and their lines, counts, and the consumers' state.
"""

from __future__ import annotations

import dataclasses
import io
import os
import tempfile
from collections.abc import Iterator
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from ckptcalc.logs import analyze, csv_format, fit, reader
from ckptcalc.logs.adapter import Columns, Row

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
)


def _chunks(text: str, sizes: list[int]) -> Iterator[str]:
    """``text`` in pieces of whole lines, about ``sizes`` characters each (as the reader cuts its blocks)."""
    start, turn = 0, 0
    while start < len(text):
        cut = text.rfind("\n", start, start + sizes[turn % len(sizes)]) + 1
        end = cut if cut > start else (text.find("\n", start) + 1 or len(text))
        yield text[start:end]
        start, turn = end, turn + 1


def _lines(text: str) -> list[str]:
    """The lines of ``text`` as the reader cuts them: at a newline only."""
    return list(io.StringIO(text, newline="\n"))


# ---------------------------------------------------------------- rows


# Every strategy of the logs below is built once, here: one made anew in each draw has its properties worked
# out anew, which took most of a test's time. A choice that depends on the row is a template the row fills
# in ("{t:g}"), so each row draws from the same elements as before.

_CELL = st.one_of(
    st.sampled_from(["", "1", "2.5", "gpu", " a ", "b\t", "x y"]),
    st.text(alphabet='ab1 ,"\n\r\t', max_size=5),
)


_ROW_KIND = st.sampled_from(["plain"] * 6 + ["quoted", "blank", "spaces", "wide", "narrow", "crlf"])


@st.composite
def tables(draw: st.DrawFn) -> str:
    width = draw(st.integers(1, 4))
    lines = [",".join(f"f{index}" for index in range(width)) + "\n"]
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(_ROW_KIND)
        if kind == "blank":
            lines.append("\n")
        elif kind == "spaces":
            lines.append(",".join([" "] * width) + "\n")
        else:
            count = width + (kind == "wide") - (kind == "narrow" and width > 1)
            cells = [draw(_CELL) for _ in range(count)]
            if kind == "plain":
                cells = [cell.replace('"', "").replace(",", "").replace("\n", "").replace("\r", "") for cell in cells]
            else:
                cells = ['"' + cell.replace('"', '""') + '"' if draw(st.booleans()) else cell for cell in cells]
            lines.append(",".join(cells) + ("\r\n" if kind == "crlf" else "\n"))
    text = "".join(lines)
    return text if draw(st.booleans()) else text.rstrip("\n")


@SETTINGS
@given(tables(), st.lists(st.integers(1, 80), min_size=1, max_size=4))
def test_rows_read_by_blocks_are_the_rows_read_one_by_one(text: str, sizes: list[int]) -> None:
    one_by_one = list(csv_format.rows(_lines(text)))  # a list: no blocks, csv reads it all
    blocks = reader.Lines(_chunks(text, sizes))
    by_blocks = list(csv_format.records(blocks))
    plain = sum(1 for item in by_blocks if isinstance(item, Columns))
    event("some rows came by column" if plain else "every row came through csv")
    flat: list[Any] = []
    for item in by_blocks:
        if isinstance(item, Columns):
            flat.extend(Row(item.line + index, item.record(index)) for index in range(item.count))
        elif isinstance(item, tuple):
            flat.append(Row(*item))
        else:
            flat.append(item)
    assert flat == one_by_one


def test_a_quoted_cell_across_blocks_is_one_cell() -> None:
    text = 'time,note\n1,a\n2,"two\nlines"\n3,c\n'
    got = list(csv_format.rows(reader.Lines(iter(['time,note\n1,a\n2,"two\n', 'lines"\n3,c\n']))))
    assert got == list(csv_format.rows(_lines(text)))
    assert [row.value["note"] for row in got[1:]] == ["a", "two\nlines", "c"]  # type: ignore[union-attr]


# ---------------------------------------------------------------- analyze's and fit's consumers


def _scan(text: str, consumer: Any, block: int, **options: Any) -> reader.Counts:
    with tempfile.TemporaryDirectory() as folder, mock.patch.object(reader, "BLOCK", block):
        path = os.path.join(folder, "log.csv")
        with open(path, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        counts = reader.scan(path, consumer, skip_bad=True, **options)
    return dataclasses.replace(counts, source="log.csv", bad=tuple(line.split(":", 1)[1] for line in counts.bad))


_EVENT = st.sampled_from(
    ["progress"] * 12 + ["checkpoint_start", "checkpoint_end", "failure", "restart_end", "heartbeat", "bad"]
)
_STEP = st.sampled_from([1.0, 1.5, 0.0, -3.0] + [1.0] * 6)
_TIME = st.sampled_from(["{t:g}"] * 12 + ["", "x", "1_0", "inf", " {t:g} "])
_SHOWN = st.sampled_from(["{step}"] * 10 + ["", "n/a"])
_LEVEL = st.sampled_from(["", "storage", "memory"])


@st.composite
def event_logs(draw: st.DrawFn) -> str:
    lines = ["time,event,step,level\n", "0,run_start,,\n"]
    t = 0.0
    for step in range(1, draw(st.integers(1, 120))):
        kind = draw(_EVENT)
        t += draw(_STEP)
        time = draw(_TIME).format(t=t)
        shown = draw(_SHOWN).format(step=step)
        if kind == "bad":
            lines.append(f"{time},progress\n")  # a row of another width
        else:
            lines.append(f"{time},{kind},{shown},{draw(_LEVEL)}\n")
    if draw(st.booleans()):
        lines.append(f"{t + 1:g},run_end,,\n")
    return "".join(lines)


def _count_bulk(consumer: Any) -> list[int]:
    """Count, in the list returned, the rows ``consumer``'s ``bulk`` takes itself."""
    taken = [0]
    bulk = consumer.bulk

    def counted(block: Columns, each: Any) -> int:
        took: int = bulk(block, each)
        taken[0] += took
        return took

    consumer.bulk = counted
    return taken


def _state(run: analyze._Run) -> dict[str, Any]:
    return {
        key: repr(value.tolist()) if hasattr(value, "tolist") else value  # repr: NaN equals NaN
        for key, value in vars(run).items()
        if key not in ("handlers", "clock", "bulk")
    } | {"clock": (run.clock.kind, run.clock.first_line, run.clock.naive)}


@SETTINGS
@given(event_logs(), st.integers(8, 400))
def test_analyze_takes_a_block_as_it_takes_its_rows(text: str, block: int) -> None:
    by_column = analyze._Run(None, "s", "cause")
    taken = _count_bulk(by_column)
    counts = _scan(text, by_column, block, required=("event",))
    one_by_one = analyze._Run(None, "s", "cause")
    one_by_one.bulk = None  # type: ignore[assignment,method-assign]  # the reader then hands every row over
    assert _scan(text, one_by_one, block, required=("event",)) == counts
    event("progress taken by column" if taken[0] else "every row taken one by one")
    event("with bad rows" if counts.skipped_bad else "no bad rows")
    assert _state(by_column) == _state(one_by_one)


_DENSE_KIND = st.sampled_from(["checkpoint_start", "checkpoint_end"] * 10 + ["failure", "restart_end", "heartbeat"])
_DENSE_STEP = st.sampled_from([1.0] * 12 + [0.0, 2.5, -3.0])
_DENSE_TIME = st.sampled_from(["{t:g}"] * 30 + ["", "x", "inf"])
_DENSE_LEVEL = st.sampled_from(["storage"] * 12 + ["", "memory"])
_PERSIST = st.sampled_from([""] * 20 + ["{later:g}", "interrupted", "{earlier:g}"])
_RESUMED = st.sampled_from([""] * 3 + ["{r:g}"])


@st.composite
def dense_logs(draw: st.DrawFn) -> str:
    """What simulate --events writes (checkpoint starts and ends, no progress, failures and restarts
    naming what they resumed from), with the odd level, persist, time and order that must go row by row."""
    lines = ["time_s,event,level,resumed_from,async_persist_end\n", "0,run_start,,,\n"]
    t = 0.0
    for _ in range(draw(st.integers(1, 200))):
        kind = draw(_DENSE_KIND)
        t += draw(_DENSE_STEP)
        time = draw(_DENSE_TIME).format(t=t)
        level = draw(_DENSE_LEVEL) if kind.startswith("checkpoint") else ""
        persist = draw(_PERSIST).format(later=t + 1, earlier=t - 5)
        resumed = draw(_RESUMED).format(r=max(t - 4, 0)) if kind == "restart_end" else ""
        lines.append(f"{time},{kind},{level},{resumed},{persist if kind == 'checkpoint_end' else ''}\n")
    if draw(st.booleans()):
        lines.append(f"{t + 1:g},run_end,,,\n")
    return "".join(lines)


@SETTINGS
@given(dense_logs(), st.integers(8, 400))
def test_analyze_takes_a_dense_block_as_it_takes_its_rows(text: str, block: int) -> None:
    by_column = analyze._Run(None, None, "cause")
    taken = _count_bulk(by_column)
    counts = _scan(text, by_column, block, required=("event",))
    one_by_one = analyze._Run(None, None, "cause")
    one_by_one.bulk = None  # type: ignore[assignment,method-assign]
    assert _scan(text, one_by_one, block, required=("event",)) == counts
    event("checkpoints taken by column" if taken[0] else "every row taken one by one")
    assert _state(by_column) == _state(one_by_one)


_HEADER = st.sampled_from(["time,cause\n", "time,kind,cause\n", "time,node\n"])
_ODD = ["12.5", "3", "7.25", "1e3", "", "nan", "x", "2024-05-01T00:00:00"]
_INCIDENT_TIME = st.sampled_from(_ODD + ["4", "5.5"] * 200)  # an odd time in one row of 50
_CAUSE = st.sampled_from(["gpu", "nic", "", "unknown", " hbm "])


@st.composite
def incident_logs(draw: st.DrawFn) -> str:
    lines = [draw(_HEADER)]
    width = lines[0].count(",") + 1
    for _ in range(draw(st.integers(1, 150))):
        time = draw(_INCIDENT_TIME)
        cells = [time] + [draw(_CAUSE) for _ in range(width - 1)]
        lines.append(",".join(cells) + "\n")
    return "".join(lines)


@SETTINGS
@given(incident_logs(), st.integers(8, 300), st.sampled_from(["s", "h"]), st.sampled_from([(), ("cause!=nic",)]))
def test_fit_takes_a_block_as_it_takes_its_rows(text: str, block: int, unit: str, where: tuple[str, ...]) -> None:
    def read(bulk: bool) -> tuple[reader.Counts, tuple[Any, ...]]:
        incidents = fit._Incidents(None, unit, None, None, None)
        if bulk:
            taken.append(_count_bulk(incidents))
        else:
            incidents.bulk = None  # type: ignore[assignment,method-assign]
        counts = _scan(text, incidents, block, where=where)
        state = (incidents.times.tolist(), incidents.codes.tolist(), incidents.known, incidents.cause)
        return counts, (*state, incidents.clock.kind)

    taken: list[list[int]] = []
    by_column, one_by_one = read(True), read(False)
    event("filtered" if where else "times taken by column" if taken[0][0] else "every row taken one by one")
    assert by_column == one_by_one


# ---------------------------------------------------------------- filters


@SETTINGS
@given(
    st.lists(st.sampled_from(["failure", "progress", "gpu", "", "fail"]), min_size=1, max_size=40),
    st.sampled_from(["event=failure", "event!=failure", "event~^fa", "event in failure, gpu", "other=x", "event="]),
)
def test_a_condition_on_a_column_passes_the_rows_it_passes_one_by_one(column: list[str], condition: str) -> None:
    (parsed,) = reader.parse_where([condition])
    block = Columns(1, len(column), {"event": column}, column, lambda cells: {"event": cells[0]})
    assert parsed.rows(block) == {index for index, value in enumerate(column) if parsed.meets({"event": value})}
    event("some pass" if parsed.rows(block) else "none pass")
