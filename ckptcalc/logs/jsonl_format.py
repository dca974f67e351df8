"""JSON Lines logs: one JSON value a line; a line that is not JSON is a bad row, the next one is read.

>>> [(row.line, row.value) for row in rows(['{"time": 1}\\n', "\\n", '{"time": 2}\\n'])]
[(1, {'time': 1}), (3, {'time': 2})]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ckptcalc.logs.adapter import Bad, Context, Header, Row

NAME = "jsonl"
GIVES = "records"


def detect(head: Sequence[str]) -> bool:
    """A first line that opens a JSON object."""
    return head[0].lstrip().startswith("{")


def rows(lines: Iterable[str], context: Context | None = None) -> Iterator[Row | Bad | Header]:
    """Each non-blank line parsed on its own."""
    for item in records(lines, context):
        yield Row(*item) if isinstance(item, tuple) else item


def records(lines: Iterable[str], context: Context | None = None) -> Iterator[tuple[int, Any] | Bad | Header]:
    """:func:`rows` with each row as a ``(line, value)`` pair, what the reader reads."""
    loads = json.loads
    for number, line in enumerate(lines, start=1):
        if not line or line.isspace():
            continue
        try:
            yield number, loads(line)
        except RecursionError:
            yield Bad(number, "malformed JSON: nested too deeply")
        except ValueError as error:  # JSONDecodeError, or an integer longer than Python converts
            message = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
            yield Bad(number, f"malformed JSON: {message}")
