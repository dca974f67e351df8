"""JSON logs: one array of records, read element by element as its lines arrive.

A syntax error inside the array is :class:`~ckptcalc.logs.adapter.Broken` (fatal even when bad rows
are skipped): after it there is no telling where the next element starts.

>>> [(row.line, row.value) for row in rows(["[\\n", '  {"time": 1},\\n', '  {"time":\\n', "2}]\\n"])]
[(2, {'time': 1}), (3, {'time': 2})]
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ckptcalc.logs.adapter import Bad, Broken, Context, Header, Row

NAME = "json"
GIVES = "records"

_SPACE = re.compile(r"[ \t\n\r]*")


#: A line that opens a JSON array: ``[`` and then a value's start, or nothing more (not a log line's
#: ``[2024-05-01 12:00:00,104]`` or ``[INFO|trainer.py:2078]``).
_OPENING = re.compile(r"\s*\[\s*(?:$|[\[{\"\]]|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\s*(?:[,\]]|$)|(?:true|false|null)\b)")


def detect(head: Sequence[str]) -> bool:
    """A first line that opens a JSON array.

    >>> detect(['[{"time": 1}']), detect(["[1, 2]"]), detect(["["]), detect(["[2024-05-01 12:00:00,104] [INFO] x"])
    (True, True, True, False)
    """
    return _OPENING.match(head[0]) is not None


class _Text:
    """The lines read and not yet consumed, the line number of their first character, and a cursor."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.source = iter(lines)
        self.text = ""
        self.pos = 0
        self.line = 1  # the line of text[0]
        self.counted = (0, 1)  # (offset, its line): counting newlines once, not from the start each time

    def more(self) -> bool:
        """Drop the consumed text and add the next line; False at the end of the input."""
        if self.pos:
            self.line = self.line_at(self.pos)
            self.text, self.pos = self.text[self.pos :], 0
            self.counted = (0, self.line)
        line = next(self.source, None)
        if line is None:
            return False
        self.text += line
        return True

    def line_at(self, offset: int) -> int:
        start, line = self.counted if offset >= self.counted[0] else (0, self.line)
        line += self.text.count("\n", start, offset)
        self.counted = (offset, line)
        return line

    def skip_space(self) -> str:
        """Move past white space, reading lines as needed; the next character, or "" at the end."""
        while True:
            match = _SPACE.match(self.text, self.pos)
            assert match is not None  # the pattern matches the empty string
            self.pos = match.end()
            if self.pos < len(self.text) or not self.more():
                return self.text[self.pos : self.pos + 1]


def rows(lines: Iterable[str], context: Context | None = None) -> Iterator[Row | Bad | Header]:
    """Each element of the array, with the line its value starts on."""
    decoder = json.JSONDecoder()
    text = _Text(lines)
    if text.skip_space() != "[":
        raise Broken("expected a JSON array of objects", text.line_at(text.pos))
    text.pos += 1
    if text.skip_space() == "]":
        text.pos += 1
    else:
        while True:
            start = text.line_at(text.pos)
            yield Row(start, _element(decoder, text, start))
            following = text.skip_space()
            if following == ",":
                text.pos += 1
                text.skip_space()
                continue
            if following == "]":
                text.pos += 1
                break
            raise Broken("malformed JSON: expected ',' or ']'", text.line_at(text.pos))
    if text.skip_space():
        raise Broken("unexpected text after the JSON array", text.line_at(text.pos))


def _element(decoder: json.JSONDecoder, text: _Text, start: int) -> Any:
    while True:
        try:
            value, text.pos = decoder.raw_decode(text.text, text.pos)
        except json.JSONDecodeError as error:
            # Lines are whole, so an element is unfinished only when the error is at the very end.
            if error.pos >= len(text.text) and text.more():
                continue
            raise Broken(f"malformed JSON: {error.msg}", text.line + error.lineno - 1) from None
        except RecursionError:
            raise Broken("malformed JSON: nested too deeply", start) from None
        except ValueError as error:  # e.g. an integer longer than Python converts
            raise Broken(f"malformed JSON: {error}", start) from None
        return value
