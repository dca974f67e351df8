"""``events``: the event log it writes, its summary document, its table and its schemas."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from ckptcalc.output import documents, wording
from ckptcalc.output.documents import SCHEMA_VERSION
from ckptcalc.output.typed import Bounds
from ckptcalc.records import Record

if TYPE_CHECKING:
    from ckptcalc.output import schema as schemas
    from ckptcalc.simulation.events import Events


#: The forms ``simulate --events`` writes, by the file's extension.
EVENT_LOG_FORMS = ("csv", "jsonl", "json")


_CSV_HEADER = "time_s,event,level,resumed_from,async_persist_end\n"


def event_log(pieces: Iterable[Events], form: str, *, columns: str = "") -> Iterator[str]:
    """A simulated timeline (:class:`ckptcalc.simulation.events.Events`, piece by piece) as an event log
    in ``form`` (csv, jsonl or json), a piece of text at a time: times in seconds in ``time_s``, the
    other times in seconds too, and ``async_persist_end`` ``interrupted`` where a failure cut the persist
    short; with ``columns`` (a CSV header's columns more, those of the replica groups' events: ``group``
    and ``quorum_end``), each group event's group and pause end."""
    import operator

    import numpy

    from ckptcalc.logs.analyze import INTERRUPTED
    from ckptcalc.simulation.events import EVENT_KINDS

    csv = form == "csv"
    end = "" if form == "json" else "\n"  # a JSON array's elements are joined by commas instead
    level = {name: name.startswith("checkpoint") for name in EVENT_KINDS}
    more = "," * columns.count(",")
    if csv:
        tails = [f",{name},{'storage' if level[name] else ''},,{more}\n" for name in EVENT_KINDS]
        restarted = (",restart_end,,{!r}," + more + "\n").format
        persisted = ",checkpoint_end,storage,,{}\n".format
        interrupted = INTERRUPTED
        heads: Any = repr
    else:
        storage = ', "level": "storage"'
        tails = [f', "event": "{name}"{storage if level[name] else ""}}}{end}' for name in EVENT_KINDS]
        restarted = (', "event": "restart_end", "resumed_from": {!r}}}' + end).format
        persisted = (', "event": "checkpoint_end", "level": "storage", "async_persist_end": {}}}' + end).format
        interrupted = f'"{INTERRUPTED}"'
        heads = '{{"time_s": {!r}'.format
    endings = numpy.array(tails, dtype=object)
    header = _CSV_HEADER.replace("\n", columns + "\n")
    yield header if csv else "[\n" if form == "json" else ""
    first = True
    for piece in pieces:
        if not piece.time_s.size:
            continue
        times = list(map(heads, piece.time_s.tolist()))
        rest = endings[piece.kind].tolist()
        # The few rows with a second time: restarts (what they resumed from) and persists.
        for i in numpy.flatnonzero(~numpy.isnan(piece.resumed_from_s)).tolist():
            rest[i] = restarted(float(piece.resumed_from_s[i]))
        persists = numpy.flatnonzero(~numpy.isnan(piece.persist_end_s))
        values = piece.persist_end_s[persists].tolist()
        for i, value in zip(persists.tolist(), values, strict=True):
            rest[i] = persisted(interrupted if value == _INF else repr(value))
        _group_rows(rest, piece, csv, end)
        rows = map(operator.add, times, rest)
        if form == "json":
            if not first:
                yield ",\n"
            yield ",\n".join(rows)
        else:
            yield "".join(rows)
        first = False
    if form == "json":
        yield "\n]\n"


_INF = float("inf")


def _group_rows(rest: list[str], piece: Events, csv: bool, end: str) -> None:
    """The group events of ``piece`` written with their group and pause end, in place in ``rest``."""
    for i, name, group, quorum in piece.group_events():
        if csv:
            rest[i] = f",{name},,,,{group},{'' if quorum is None else repr(quorum)}\n"
        else:
            pause = "" if quorum is None else f', "quorum_end": {quorum!r}'
            rest[i] = f', "event": "{name}", "group": {group}{pause}}}{end}'


class EventsWritten(Record):
    """Where ``events --output --json`` wrote the events, and how many: its JSON and its schema are made from
    these fields (the log's reading, shared with ``analyze``, follows them)."""

    logs: Annotated[tuple[str, ...], "the logs read, in the order given"]
    output: Annotated[str | None, "the file written; null: standard output"]
    form: Annotated[Literal["jsonl", "csv"], "the event log's form, by the file's extension"]
    events: Annotated[int, "events written", Bounds(0)]


def document(counts: Any, logs: list[str], written: int, output: str | None, form: str) -> dict[str, Any]:
    """``events``' summary: what was read, what was inferred, how many events were written where."""
    from ckptcalc.output.typed import document_of

    wrote = EventsWritten(tuple(logs), output, cast(Literal["jsonl", "csv"], form), written)
    return {
        "schema_version": documents.SCHEMA_VERSION,
        "command": "events",
        **document_of(wrote),
        "reading": documents.reading(
            files=counts.files,
            format=counts.format,
            read=counts.read,
            used=counts.kept,
            ignored=counts.ignored,
            filtered=counts.filtered,
            skipped_bad=counts.skipped_bad,
            bad=counts.bad,
            notes=counts.notes,
            year_from=counts.said.get("year_from"),
        ),
    }


def table(document: dict[str, Any]) -> None:
    """``events --output``: where the events went and what reading the logs inferred."""
    from rich.text import Text

    from ckptcalc.output import tables

    out = tables.console()
    out.print(Text(wording.events_header(document), style="bold"))
    reading = document["reading"]
    rows = wording.inference_rows(reading)
    if reading["skipped_bad"]:
        rows.append(("bad lines skipped", f"{reading['skipped_bad']:,}"))
    if rows:
        table = tables.grid("What was inferred", tables.narrow(out))
        table.add_column("", overflow="fold")
        table.add_column("count", justify="right", no_wrap=True)
        for row in rows:
            table.add_row(*row)
        out.print(table)


def schema() -> schemas.Schema:
    from ckptcalc.output import schema as schemas
    from ckptcalc.output.typed import properties_of

    return schemas.document(
        "events",
        "ckptcalc events --output FILE --json",
        {**properties_of(EventsWritten), "reading": schemas.reading()},
    )


def event_schema() -> schemas.Schema:
    """One line of an event log (JSON Lines; a CSV row has the same fields as columns)."""
    from ckptcalc.mechanisms import registry
    from ckptcalc.output import schema as schemas

    time = {"type": ["string", "number"], "description": "ISO-8601 timestamp, or a number in --time-unit"}
    seconds = {"type": ["string", "number"], "description": "seconds from the log's zero (simulate --events)"}
    return {
        "$schema": schemas.DRAFT,
        "$id": f"ckptcalc:event:v{SCHEMA_VERSION}",
        "title": "one event of a run's event log, read by ckptcalc analyze",
        "type": "object",
        "properties": {
            "time": time,
            "time_s": seconds,
            "event": {
                "type": "string",
                "description": "run_start, run_end, checkpoint_start, checkpoint_end, failure, recovery,"
                " restart_end, progress, group_down, group_up, silent_detected or rollback; any other value is"
                " skipped and counted",
            },
            "level": {"type": "string", "description": "checkpoint events: memory, storage, or a tier name"},
            "async_persist_end": {
                **time,
                "description": "checkpoint_end: when its persist became durable, or interrupted (never: a failure"
                " cut it short); other times in the unit of the time field",
            },
            "cause": {
                "type": ["string", "number", "boolean", "null"],
                "description": "failure, silent_detected: its cause",
            },
            "resumed_from": {**time, "description": "restart_end: the checkpoint_start whose state was loaded"},
            "step": {"type": "number", "description": "progress: the training step reached"},
            "kind": {"enum": ["in_place", "notice"], "description": "recovery: in place, or with notice"},
            **registry.event_log_schema(time),
            "onset": {**time, "description": "silent_detected: when the silent event began (no later than it)"},
            "to": {
                **time,
                "description": "rollback: the checkpoint_start of the durable checkpoint rolled back to, or the"
                " run's start; no later than the silent_detected it answers",
            },
            "skip": {
                "type": ["number", "string"],
                "description": "rollback: work discarded beyond the checkpoint, a duration in --time-unit"
                " (seconds for timestamps); 0 when absent",
            },
        },
        "required": ["event"],
        "anyOf": [{"required": ["time"]}, {"required": ["time_s"]}],
    }
