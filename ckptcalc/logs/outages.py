"""Incidents with an end: each node's outages in an incident log, for the repair figures (docs/model.md §22).

Two layouts of a table (CSV, tab-separated, ``|``-separated, JSON, JSON Lines) give them, both keyed by a
node field (:data:`NODE_FIELDS`, any case):

* *two columns*: the start in the time field and the end in an end field (:data:`END_FIELDS`) on one row;
  an empty end (or ``Unknown``, ``None``) is an incident still open at the log's end;
* *paired rows*: an event-type field (:data:`KIND_FIELDS`) whose value says a row starts an incident
  (``fault_start``, ``down``...) or ends one (``fault_end``, ``up``...): :func:`kind`.

Only a start is an interruption: an end row is read and ignored by the failure count. Rows of another
event type count as interruptions without an end, as before. Per node, an end closes the incidents open
at its time (overlapping incidents of a node are one outage, to the end of the last); an end with no
open incident of its node (the log began during the outage) is left out, counted and named; an incident
with no end runs to the window's end. A row whose end comes before its start is a bad row.

>>> kind("fault_start"), kind("FAULT_END"), kind("node-down"), kind("reboot")
('start', 'end', 'start', None)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ckptcalc.logs.reader import MISSING, BadRecord, get_path, text_form

#: Fields naming an incident's node, tried in order (any case).
NODE_FIELDS = ("node", "node_id", "nodename", "node_name", "host", "hostname", "nodelist")

#: Fields holding an incident's end on its start's row, tried in order (any case).
END_FIELDS = ("end", "end_time", "event_end_time", "event_stop_time", "stop_time", "timeend", "time_end")

#: Fields saying whether a row starts or ends an incident, tried in order (any case).
KIND_FIELDS = ("event_type", "event")

#: Event types that start an incident, and those that end one (after lower case, ``-`` and spaces as ``_``);
#: beside them, any ending ``_start``/``_begin`` starts one and any ending ``_end``/``_stop`` ends one.
START_WORDS = frozenset({"start", "begin", "down", "fail", "unavailable", "outage"})
END_WORDS = frozenset({"end", "stop", "up", "resume", "resumed", "repaired", "resolved", "recovered", "available"})
_START_TAILS, _END_TAILS = ("_start", "_begin", "_down"), ("_end", "_stop", "_up", "_resolved", "_repaired")

#: Cells that say an end is not known yet: the incident is open.
OPEN_CELLS = ("", "unknown", "none", "null", "nan")

#: Ends with no start named by line in a warning, at most.
NAMED = 5

Span = tuple[str, float, "float | None"]


def kind(value: Any) -> str | None:
    """``"start"``, ``"end"`` or None (another event) for an event type's value."""
    text = str(value).strip().lower().replace("-", "_").replace(" ", "_")
    if text in START_WORDS or text.endswith(_START_TAILS):
        return "start"
    if text in END_WORDS or text.endswith(_END_TAILS):
        return "end"
    return None


#: Words an event of a run's log must hold to be a node's fault starting or ending (``analyze``, beside the
#: run's own events): a run's other events (``eval_start``, ``epoch_end``) are none.
FAULT_WORDS = ("fault", "fail", "outage", "down", "up", "repair", "resolved", "recovered", "unavailable", "available")


def fault_kind(value: Any) -> str | None:
    """:func:`kind` of an event of a run's log that names a fault (one of :data:`FAULT_WORDS`), else None.

    >>> fault_kind("fault_start"), fault_kind("node_up"), fault_kind("eval_start"), fault_kind("upload_end")
    ('start', 'end', None, None)
    """
    text = str(value).strip().lower().replace("-", "_").replace(" ", "_")
    words = text.split("_")
    # A word of the event, or its start for the longer fault words (``failure``, ``downtime``, ``repaired``).
    if not any(part == word or (len(word) > 2 and part.startswith(word)) for part in words for word in FAULT_WORDS):
        return None
    return kind(text)


def node_name(value: Any) -> str:
    """A node field's value as the name its rows are matched by: a string as it is, a whole number as one
    (``7`` and ``7.0`` are one node: a column with gaps is written as floats), any other number as JSON
    writes it. Anything else (true, a list, an object) names no node.

    >>> node_name("gpu-07"), node_name(7), node_name(7.0), node_name(7.5)
    ('gpu-07', '7', '7', '7.5')
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRecord(f"a node is a name or a number, not {text_form(value)[:40]}")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return text_form(value)


def _find(names: Sequence[str], candidates: Sequence[str], but: str | None) -> str | None:
    folded = {name.casefold(): name for name in reversed(list(names)) if name != but}
    for candidate in candidates:
        if candidate in folded:
            return folded[candidate]
    return None


@dataclass(frozen=True)
class Found:
    """A log's outages as read: the layout (``columns`` or ``paired``), the spans (node, start, end or None
    while open), and where each end with no start is (``FILE:LINE``)."""

    layout: str
    spans: tuple[Span, ...]
    unmatched: tuple[str, ...] = ()

    @staticmethod
    def joined(found: Sequence[Found | None]) -> Found | None:
        """The outages of logs read together (None where none has any)."""
        real = [item for item in found if item is not None]
        if not real:
            return None
        layouts = sorted({item.layout for item in real})
        return Found(", ".join(layouts), tuple(s for item in real for s in item.spans),
                     tuple(u for item in real for u in item.unmatched))  # fmt: skip


class Outages:
    """The collector: told each kept record's start in seconds, it keeps the spans and says whether the record
    is an interruption (an end row is not)."""

    def __init__(self, node: str, end: str | None, event: str | None) -> None:
        self.node, self.end, self.event = node, end, event
        self.spans: list[Span] = []
        self.marks: list[tuple[str, float, int, int]] = []  # paired rows: (node, time, 0 start / 1 end, line)

    @staticmethod
    def layout(names: Sequence[str], time_field: str | None) -> Outages | None:
        """The collector for a table with these fields, or None where it gives no incident's end."""
        node = _find(names, NODE_FIELDS, time_field)
        if node is None:
            return None
        end = _find(names, END_FIELDS, time_field)
        event = None if end is not None else _find(names, KIND_FIELDS, time_field)
        if end is None and event is None:
            return None
        return Outages(node, end, event)

    def _node(self, record: dict[str, Any]) -> str:
        value = record[self.node] if self.node in record else get_path(record, self.node, MISSING)
        if value is MISSING or value is None or value == "":
            raise BadRecord(f"no node: field {self.node!r} is missing or empty")
        return node_name(value)

    def take(self, record: dict[str, Any], line: int, start: float, seconds: Any) -> bool:
        """Keep ``record``'s part (its time read: ``start``; ``seconds(raw)`` reads another); whether it is an
        interruption."""
        if self.end is not None:
            raw = record.get(self.end, MISSING)
            if raw is MISSING or raw is None or str(raw).strip().lower() in OPEN_CELLS:
                self.spans.append((self._node(record), start, None))
                return True
            end = seconds(raw)
            if end < start:
                raise BadRecord(f"ends before it starts: {self.end} {str(raw)[:40]!r} is before its start")
            self.spans.append((self._node(record), start, end))
            return True
        assert self.event is not None
        said = kind(record.get(self.event, ""))
        if said is None:
            return True  # another event: an interruption with no end
        self.marks.append((self._node(record), start, 0 if said == "start" else 1, line))
        return said == "start"

    def found(self, source: str) -> Found:
        """The spans, paired rows matched node by node in time order (a start before an end at one time)."""
        if self.end is not None:
            return Found("columns", tuple(self.spans))
        spans: list[Span] = []
        unmatched: list[str] = []
        open_node, depth, begun = None, 0, 0.0
        for node, time, end, line in sorted(self.marks):
            if node != open_node:
                if depth:
                    spans.append((open_node, begun, None))  # type: ignore[arg-type]
                open_node, depth = node, 0
            if not end:
                if not depth:
                    begun = time
                depth += 1
            elif not depth:
                unmatched.append(f"{source}:{line}")
            else:
                depth -= 1
                if not depth:
                    spans.append((node, begun, time))
        if depth:
            spans.append((open_node, begun, None))  # type: ignore[arg-type]
        return Found("paired", tuple(spans), tuple(unmatched))
