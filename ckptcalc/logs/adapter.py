"""What a format adapter gives the reader: rows with the line they start on.

A format adapter is one module under ``ckptcalc/logs/`` with three names:

* ``NAME``: the format's name (what ``format=`` takes, e.g. ``"csv"``);
* ``detect(first_line) -> bool``: whether the first non-blank line of a log is in this format;
* ``rows(lines) -> Iterator[Row | Bad | Header]``: the log's rows, from its physical lines (the first
  is line 1, each ends with its newline, blank ones included). A row that cannot be read is a
  :class:`Bad` (the reader reports it, or counts and skips it); a problem after which nothing more
  can be read raises :class:`Broken`.

The reader (:mod:`ckptcalc.logs.reader`) opens, decompresses and decodes the log, picks the adapter,
and does everything else: bad rows, filters, counts, ``FILE:LINE`` in messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Row:
    """One record as the format gives it: a dict, or for JSON any value (the reader refuses non-objects)."""

    line: int
    value: Any


@dataclass(frozen=True, slots=True)
class Bad:
    """A row that cannot be read, and why."""

    line: int
    message: str


@dataclass(frozen=True, slots=True)
class Header:
    """Field names a format declares before its rows (a CSV header)."""

    line: int
    fields: tuple[str, ...]


class Broken(Exception):
    """A problem at ``line`` after which no more rows can be read (a broken JSON array, a bad CSV header)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
