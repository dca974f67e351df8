"""The Failure Trace Archive's event traces (``event_trace.tab``): when each node was unavailable.

A tab-separated table whose first line, ``# `` and the column names, says where each field is; the
columns are the archive's ``event_id``, ``component_id``, ``node_id``, ``platform_id``, ``node_name``,
``event_type``, ``event_start_time``, ``event_stop_time`` and ``event_end_reason``, in any order, of
which ``event_type`` and ``event_start_time`` are needed. Times are seconds since 1970 (UTC).
``event_type`` 0 is an unavailability, 1 an availability.

Each unavailability's start is a ``failure``, for ``fit``; its cause is the row's ``event_end_reason``
as written (the archive's code), and none when the field is absent, empty or ``NULL``. With ``node_id``
and ``event_stop_time`` it carries its node and its end too (``node``, ``end``; an empty stop: still
unavailable), from which ``fit`` measures the repairs (docs/model.md §22). Availability
rows are no events. The archive orders a trace by node, not by time: failures come out in the file's
order, one row at a time, which ``fit`` counts whatever their order.

>>> lines = ["# event_id\\tnode_id\\tevent_type\\tevent_start_time\\tevent_stop_time\\tevent_end_reason\\n",
...          "1\\t3\\t1\\t1100000000\\t1100003600\\tNULL\\n", "2\\t3\\t0\\t1100003600\\t1100007200\\t2\\n"]
>>> [row.value for row in rows(lines)]
[{'time': 1100003600.0, 'event': 'failure', 'cause': '2', 'node': '3', 'end': 1100007200.0}]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence

from ckptcalc.logs.adapter import Bad, Broken, Context, Header, Row, Stamp

NAME = "fta"
GIVES = "events"

#: Columns a header must name.
NEEDED = ("event_type", "event_start_time")

#: ``event_type`` codes.
UNAVAILABLE, AVAILABLE = "0", "1"

#: Values that say a field is empty, in lower case (MySQL's ``\\N`` among them: the archive was dumped
#: from MySQL).
_EMPTY = ("", "null", "\\n")

#: Largest time read, in seconds (a Unix timestamp is about 1.7e9): beyond it a value is not a time.
MAX_TIME = 1e13


def _names(line: str) -> list[str] | None:
    """The column names of a header line (``# `` then names split by tabs), or None for another line."""
    text = line.strip()
    if text.startswith("#"):
        text = text[1:]
    elif "\t" not in text:
        return None
    parts = text.split("\t") if "\t" in text else text.split()
    return [part.strip().lower() for part in parts]


def detect(head: Sequence[str]) -> bool:
    """A first line naming at least ``event_type`` and ``event_start_time``, split by tabs, after ``#``.

    >>> detect(["# event_id\\tnode_id\\tevent_type\\tevent_start_time\\n"]), detect(["event_type,event_start_time"])
    (True, False)
    """
    names = _names(head[0])
    return names is not None and set(NEEDED) <= set(names)


def _seconds(cell: str) -> float | None:
    """A time in seconds since 1970, or None for a cell that is not one."""
    try:
        seconds = float(cell)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and abs(seconds) <= MAX_TIME else None


def rows(lines: Iterable[str], context: Context | None = None) -> Iterator[Row | Bad | Header]:
    """A ``failure`` for each unavailability; a :class:`Bad` for a row that cannot be read."""
    index: dict[str, int] | None = None
    count = 0
    for number, line in enumerate(lines, start=1):
        text = line.rstrip("\r\n")
        if not text.strip():
            continue
        if index is None:
            names = _names(text)
            missing = [name for name in NEEDED if name not in (names or [])]
            if names is None or missing:
                shown = missing[0] if missing else NEEDED[0]
                raise Broken(f"not a Failure Trace Archive header: no {shown!r} column", number)
            repeated = sorted({name for name in names if names.count(name) > 1})
            if repeated:
                raise Broken(f"column {repeated[0]!r} twice in the header", number)
            index, count = {name: names.index(name) for name in names}, len(names)
            continue
        if text.lstrip().startswith("#"):
            continue  # a comment
        cells = text.split("\t")
        if len(cells) != count:
            yield Bad(number, f"{len(cells)} fields, but the header has {count}")
            continue
        kind = cells[index["event_type"]].strip()
        if kind == AVAILABLE:
            continue
        if kind != UNAVAILABLE:
            yield Bad(number, f"event_type {kind[:20]!r}: expected 0 (unavailable) or 1 (available)")
            continue
        start = cells[index["event_start_time"]].strip()
        seconds = _seconds(start)
        if seconds is None:
            yield Bad(number, f"cannot read event_start_time {start[:40]!r}: expected seconds since 1970")
            continue
        event: dict[str, object] = {"time": Stamp(seconds), "event": "failure"}
        if "event_end_reason" in index:
            reason = cells[index["event_end_reason"]].strip()
            if reason.lower() not in _EMPTY:
                event["cause"] = reason
        node = cells[index["node_id"]].strip() if "node_id" in index else ""
        if node and "event_stop_time" in index:
            stop = cells[index["event_stop_time"]].strip()
            end = _seconds(stop)
            if stop.lower() not in _EMPTY and end is None:
                yield Bad(number, f"cannot read event_stop_time {stop[:40]!r}: expected seconds since 1970")
                continue
            event["node"], event["end"] = node, None if end is None else Stamp(end)
        yield Row(number, event)
