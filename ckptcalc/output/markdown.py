"""Markdown that survives whatever a cell holds: ``--markdown`` of every command that has it.

A preset's name, a log's failure cause or a path may hold ``|``, a newline, a backtick or HTML. Each
cell goes through :func:`cell` and every other piece of text through :func:`inline`, so that a table
keeps its columns and nothing is read as markup: Markdown's punctuation is escaped with a backslash,
``<``, ``>`` and ``&`` become entities, line breaks become spaces, and control characters (an ESC)
their code (``\\x1b``). :func:`table` writes a
GitHub-flavoured table of such cells.

Every document starts with a heading and ends with one blank line, so that documents appended to
one file (``optimize --markdown >> review.md; compare --markdown >> review.md``) stay apart.
Sentences come from :mod:`ckptcalc.output.wording`; the numbers were all computed before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ckptcalc.inputs import units
from ckptcalc.output import wording

#: Characters Markdown may read as markup inside a line; each is written with a backslash. ``$`` is
#: among them because GitHub reads ``$…$`` as mathematics.
_PUNCTUATION = re.compile(r"([\\`*_\[\]{}|#~!$])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_BREAKS = re.compile(r"\r\n|[\r\n\u2028\u2029\x0b\x0c\x85]")
#: Where text opening a line would make it a list item, a thematic break or an underline (``- x``,
#: ``+ x``, ``1. x``, ``2) x``, ``---``, ``===``): a backslash goes before that punctuation.
_OPENING = re.compile(r"^(?:\d{1,9}(?=[.)](?:\s|$))|(?=([-+=])(?:\s|$|\1)))")

dur = units.format_duration
pct = units.format_percent


#: Control characters (C0 but the line breaks above, DEL, C1): written as their code, ``\x1b``, so that
#: an ESC from a log's cause never reaches a terminal or a page raw. A tab is a space.
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")


def visible(text: str) -> str:
    """``text`` with each control character written as its code (the HTML report's escaping uses it too).

    >>> print(visible("a\\x1b[31mb\\x07\\tc\\x9b"))
    a\\x1b[31mb\\x07 c\\x9b
    """
    return _CONTROLS.sub(lambda found: f"\\x{ord(found.group()):02x}", text.replace("\t", " "))


def _escaped(text: object) -> str:
    plain = visible(_BREAKS.sub(" ", str(text)))
    plain = "".join(_ENTITIES.get(char, char) for char in plain)
    return _PUNCTUATION.sub(r"\\\1", plain).strip()


def cell(text: object) -> str:
    r"""``text`` as one table cell that reads as written.

    >>> cell("a|b\n<script>`x`")
    'a\\|b &lt;script&gt;\\`x\\`'
    >>> cell("+4.40 pp"), cell("llama3-405b"), cell("")
    ('+4.40 pp', 'llama3-405b', ' ')
    """
    return _escaped(text) or " "


def inline(text: object) -> str:
    r"""``text`` as plain words anywhere in a line, even where it opens one: in a heading, a paragraph
    or a block quote, as in a cell, and a leading ``-``, ``+``, ``=`` or ``1.`` read as itself.

    >>> inline("- 1. <b>")
    '\\- 1. &lt;b&gt;'
    >>> inline("12) done"), inline("4.45 min"), inline("-0.74 pp")
    ('12\\) done', '4.45 min', '-0.74 pp')
    """
    escaped = _escaped(text)
    opening = _OPENING.match(escaped)
    return escaped if opening is None else escaped[: opening.end()] + "\\" + escaped[opening.end() :]


def table(header: Sequence[object], rows: Iterable[Sequence[object]]) -> list[str]:
    """A GitHub-flavoured table as a list of lines, every cell escaped by :func:`cell`."""
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a row of {len(row)} cells under a header of {len(header)}")
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    return lines


def finished(lines: list[str]) -> str:
    """Blocks separated by one blank line, the document ending with one, however the parts were laid."""
    text = "\n".join(lines).strip("\n")
    return re.sub(r"\n{3,}", "\n\n", text) + "\n\n"


def quotes(lead: str, messages: Iterable[str]) -> list[str]:
    """One block quote per message, each its own block."""
    out: list[str] = []
    for message in messages:
        out += ["", "> " + lead + inline(message)]
    return out


def interval(value: float | None) -> str:
    """An interval of a JSON document, null where no periodic checkpoint is needed."""
    return wording.periodic_interval(math.inf if value is None else value)


#: The columns of a schedule by level.
LEVEL_HEADER = ["level", "interval", "stall", "serves", "restart"]


def levels(levels: list[dict[str, Any]]) -> list[list[str]]:
    """The rows of a schedule by level: interval, stall, share of failures served, restart."""
    return [
        [v["name"], interval(v["optimal_interval_s"]), dur(v["stall_s"]), pct(v["share_of_failures"]),
         dur(v["restart_s"])]
        for v in levels
    ]  # fmt: skip
