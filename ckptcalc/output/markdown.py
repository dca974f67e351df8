"""Markdown that survives whatever a cell holds.

A preset's name, a log's failure cause or a path may hold ``|``, a newline, a backtick or HTML. Each
cell goes through :func:`cell`, so that a table keeps its columns and nothing in it is read as markup:
Markdown's punctuation is escaped with a backslash, ``<``, ``>`` and ``&`` become entities, and line
breaks become spaces. :func:`table` writes a GitHub-flavoured table of such cells.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

#: Characters Markdown may read as markup inside a table cell; each is written with a backslash.
_PUNCTUATION = re.compile(r"([\\`*_\[\]{}|#~!])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_BREAKS = re.compile(r"\r\n|[\r\n\u2028\u2029\x0b\x0c\x85]")


def cell(text: object) -> str:
    r"""``text`` as one table cell that reads as written.

    >>> cell("a|b\n<script>`x`")
    'a\\|b &lt;script&gt;\\`x\\`'
    """
    plain = _BREAKS.sub(" ", str(text))
    plain = "".join(_ENTITIES.get(char, char) for char in plain)
    return _PUNCTUATION.sub(r"\\\1", plain).strip() or " "


def table(header: Sequence[object], rows: Iterable[Sequence[object]]) -> list[str]:
    """A GitHub-flavoured table, one line per list item, every cell escaped by :func:`cell`."""
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a row of {len(row)} cells under a header of {len(header)}")
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    return lines
