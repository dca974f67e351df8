"""Raw run events (a framework's or scheduler's log, see :mod:`ckptcalc.logs.adapter`) assembled into
the canonical event log that ``analyze`` reads and ``events`` writes.

The rules, one attempt (process) after another:

* the run starts at the first event, and ends at ``run_end`` or the last event;
* where an attempt stops and the next begins with no failure in the log between them, a failure is
  inferred at the attempt's last event (cause ``inferred``) and counted;
* after a failure the run is restarting until training resumes: the next ``progress`` (or save),
  which is the ``restart_end``; when the log says which step was loaded, ``resumed_from`` is the
  start of that step's save, if the log holds it;
* an asynchronous save's ``checkpoint_end`` waits for its ``persist_end`` (the events after it are
  held, at most :data:`HELD` of them), and is written with ``async_persist_end``; a failure before the
  persist ended leaves it ``interrupted``: it never became durable;
* a save that begins again while one of its level is open, or ends without a start, is counted.

>>> from ckptcalc.logs.adapter import Context, Row, Stamp
>>> raw = [("attempt_start", 0), ("progress", 10), ("checkpoint_start", 20), ("checkpoint_end", 25),
...        ("progress", 40), ("attempt_start", 60), ("load_end", 70), ("progress", 80)]
>>> rows = [Row(i + 1, {"time": Stamp(t), "event": e, "step": 100}) for i, (e, t) in enumerate(raw)]
>>> context = Context("x.log")
>>> out = list(assemble(rows, context))
>>> [(row.value["event"], row.value["time"]) for row in out if row.value["event"] != "progress"]
... # doctest: +NORMALIZE_WHITESPACE
[('run_start', 0.0), ('checkpoint_start', 20.0), ('checkpoint_end', 25.0), ('failure', 40.0),
 ('restart_end', 80.0), ('run_end', 80.0)]
>>> next(row.value for row in out if row.value["event"] == "restart_end")["resumed_from"]
20.0
>>> context.notes["inferred_failures"]
1
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

from ckptcalc.logs.adapter import Bad, Context, Header, Row, Stamp

#: Events held while an asynchronous save's persist is under way; past this the save is written as
#: interrupted (its persist never showed).
HELD = 100_000

#: Saves remembered by step, to place ``resumed_from`` (the newest are kept).
SAVES_KEPT = 4096

#: ``async_persist_end`` of a persist that never completed (a failure, or the log's end, came first).
INTERRUPTED = "interrupted"

#: Cause of a failure inferred between two attempts.
INFERRED = "inferred"

#: An attempt boundary the reader adds where a new file begins after every earlier one ended.
NEW_ATTEMPT = "attempt_start"


class _State:
    def __init__(self, context: Context) -> None:
        self.context = context
        self.started = False
        self.attempts = 0
        self.down = False  # failed, and training has not resumed
        self.last: float | None = None  # time of the latest event
        self.last_line = 0
        self.ended: float | None = None  # a run_end seen (held until the end: more attempts may follow)
        self.open: dict[str, tuple[float, Any]] = {}  # level -> (start time, step)
        self.saves: OrderedDict[Any, float] = OrderedDict()  # step -> start time of its completed save
        self.loaded: Any = None  # the step the restore said it loaded
        self.pending: dict[str, Any] | None = None  # an async save's checkpoint_end awaiting its persist
        self.pending_line = 0
        self.held: list[Row] = []

    # -- output

    def emit(self, line: int, record: dict[str, Any]) -> Iterator[Row]:
        row = Row(line, record)
        if self.pending is not None:
            self.held.append(row)
            if len(self.held) > HELD:
                yield from self.release(INTERRUPTED)
            return
        yield row

    def release(self, durable: Any) -> Iterator[Row]:
        assert self.pending is not None
        self.pending["async_persist_end"] = durable
        rows = [Row(self.pending_line, self.pending), *self.held]
        self.pending, self.held = None, []
        yield from rows

    def resume(self, t: float, line: int) -> Iterator[Row]:
        record: dict[str, Any] = {"time": Stamp(t), "event": "restart_end"}
        start = self.saves.get(self.loaded) if self.loaded is not None else None
        if start is not None:
            record["resumed_from"] = Stamp(start)
        self.down, self.loaded = False, None
        yield from self.emit(line, record)

    # -- input

    def take(self, row: Row) -> Iterator[Row]:
        value = row.value
        t, kind, line = float(value["time"]), value["event"], row.line
        if not self.started:
            self.started, self.attempts = True, 1
            yield from self.emit(line, {"time": Stamp(t), "event": "run_start"})
        elif kind == "attempt_start":
            yield from self.boundary(line)
            self.attempts += 1
        self.last, self.last_line = t, line
        handler = getattr(self, f"_{kind}", None)
        if handler is not None:
            yield from handler(t, line, value)

    def boundary(self, line: int) -> Iterator[Row]:
        """A new attempt: the previous one stopped; if the log said nothing, it failed."""
        self.ended = None
        self.open.clear()
        if not self.down:
            assert self.last is not None
            self.context.notes["inferred_failures"] += 1
            yield from self._failure(self.last, self.last_line, {"cause": INFERRED})

    def _progress(self, t: float, line: int, value: dict[str, Any]) -> Iterator[Row]:
        if self.down:
            yield from self.resume(t, line)
        record: dict[str, Any] = {"time": Stamp(t), "event": "progress"}
        if value.get("step") is not None:
            record["step"] = value["step"]
        yield from self.emit(line, record)

    def _checkpoint_start(self, t: float, line: int, value: dict[str, Any]) -> Iterator[Row]:
        if self.down:
            yield from self.resume(t, line)
        level = value.get("level") or "storage"
        step = value.get("step")
        if level in self.open:
            if self.open[level][1] == step:
                self.context.notes["duplicates"] += 1
                return
            self.context.notes["unmatched_starts"] += 1
            yield from self.emit(line, {"time": Stamp(t), "event": "checkpoint_end", "level": level})
        self.open[level] = (t, step)
        record: dict[str, Any] = {"time": Stamp(t), "event": "checkpoint_start", "level": level}
        if step is not None:
            record["step"] = step
        yield from self.emit(line, record)

    def _checkpoint_end(self, t: float, line: int, value: dict[str, Any]) -> Iterator[Row]:
        level = value.get("level") or "storage"
        if level not in self.open:
            self.context.notes["unmatched_ends"] += 1
            return
        start, step = self.open.pop(level)
        step = value.get("step", step)
        if step is not None:
            self.saves[step] = start
            self.saves.move_to_end(step)
            if len(self.saves) > SAVES_KEPT:
                self.saves.popitem(last=False)
        record: dict[str, Any] = {"time": Stamp(t), "event": "checkpoint_end", "level": level}
        if step is not None:
            record["step"] = step
        if value.get("async") and self.pending is None:
            self.pending, self.pending_line = record, line
            return
        yield from self.emit(line, record)

    def _persist_end(self, t: float, line: int, value: dict[str, Any]) -> Iterator[Row]:
        if self.pending is None:
            self.context.notes["unmatched_ends"] += 1
            return
        yield from self.release(Stamp(t))

    def _load_start(self, t: float, line: int, value: dict[str, Any]) -> Iterator[Row]:
        if value.get("step") is not None:
            self.loaded = value["step"]
        return iter(())

    def _load_end(self, t: float, line: int, value: dict[str, Any]) -> Iterator[Row]:
        return self._load_start(t, line, value)

    def _failure(self, t: float, line: int, value: dict[str, Any]) -> Iterator[Row]:
        if self.pending is not None:
            yield from self.release(INTERRUPTED)
        self.open.clear()  # a failure cuts open saves short (analyze counts their stall up to it)
        record: dict[str, Any] = {"time": Stamp(t), "event": "failure"}
        if value.get("cause") is not None:
            record["cause"] = value["cause"]
        if "node" in value:  # an incident's node and end (a trace's two columns), which fit reads (§22 of the model)
            record["node"], record["end"] = value["node"], value.get("end")
        self.down = True
        yield from self.emit(line, record)

    def _run_end(self, t: float, line: int, value: dict[str, Any]) -> Iterator[Row]:
        self.ended = t
        return iter(())

    def finish(self) -> Iterator[Row]:
        if not self.started:
            return
        if self.pending is not None:
            yield from self.release(INTERRUPTED)
        self.context.notes["unmatched_starts"] += len(self.open) if not self.down else 0
        assert self.last is not None
        end = self.last if self.ended is None else max(self.ended, self.last)
        yield Row(self.last_line, {"time": Stamp(end), "event": "run_end"})


def assemble(items: Iterable[Row | Bad | Header], context: Context) -> Iterator[Row | Bad | Header]:
    """The canonical events of one run from its raw events, in order; bad rows pass through, and a
    format's own header (sacct's column names) stays with its adapter."""
    state = _State(context)
    for item in items:
        if type(item) is Row:
            value = item.value
            # Most of a long log is progress while training runs: such a line is already canonical.
            if value["event"] == "progress" and state.started and not state.down and state.pending is None:
                state.last, state.last_line = value["time"], item.line
                yield item
                continue
            yield from state.take(item)
        elif isinstance(item, Bad):
            yield item
    yield from state.finish()
