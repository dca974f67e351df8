"""CSV logs: a header line naming the fields, then one row a line (quoted cells may span lines).

Tab-separated files read the same way: a header with more tabs than commas splits on tabs. A header
line may start with ``#`` (``# time<TAB>node``, as trace archives write it): the mark is not a field.

>>> list(rows(["time,kind\\n", "\\n", "1, gpu\\n"]))
[Header(line=1, fields=('time', 'kind')), Row(line=3, value={'time': '1', 'kind': 'gpu'})]
>>> list(rows(["# time\\tkind\\n", "1\\tgpu, hbm\\n"]))
[Header(line=1, fields=('time', 'kind')), Row(line=2, value={'time': '1', 'kind': 'gpu, hbm'})]
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence

from ckptcalc.logs.adapter import Bad, Broken, Context, Header, Row

NAME = "csv"
GIVES = "records"

# Control characters (tab and line ends aside) do not belong in a header: the text is not a CSV log.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


# A header of plain names: words, spaces and a few marks, split by commas or tabs (no brackets, colons or
# dates), perhaps after a "#".
_PLAIN_HEADER = re.compile(r"[ \t]*(?:#[ \t]*)?[\w .\-/()%#]*(?:[,\t][\w .\-/()%#]*)*[ \t]*\r?\n?")

# The mark some tab-separated files put before their header's names.
_HEADER_MARK = re.compile(r"[ \t]*#[ \t]*")


def plain_header(line: str) -> bool:
    """Whether ``line`` can only be a CSV header (so no more lines need be read to tell the format).

    >>> plain_header("time,kind\\n"), plain_header("[rank0]:[titan] 2025-06-25 13:20:46,458 - root - INFO")
    (True, False)
    """
    return bool(line.strip()) and _PLAIN_HEADER.fullmatch(line) is not None


def detect(head: Sequence[str]) -> bool:
    """A header: text that does not open JSON (``[``, ``{``) or markup (``<``), without control characters."""
    text = head[0].strip()
    return bool(text) and text[0] not in "[{<" and _CONTROL.search(text) is None


def rows(lines: Iterable[str], context: Context | None = None) -> Iterator[Row | Bad | Header]:
    """The header, then each row as a dict of stripped cells (``"time, kind"`` headers and ``", gpu"`` cells
    are common); blank lines are not rows."""
    for item in records(lines, context):
        yield Row(*item) if isinstance(item, tuple) else item


def records(
    lines: Iterable[str], context: Context | None = None
) -> Iterator[tuple[int, dict[str, str]] | Bad | Header]:
    """:func:`rows` with each row as a ``(line, record)`` pair, what the reader reads (the same rows,
    without an object per line)."""
    import csv
    import itertools

    source = iter(lines)
    before: list[str] = []  # the blank lines before the header, read again by the CSV reader for its count
    for line in source:
        if line.strip():
            marked = _HEADER_MARK.match(line)
            header_line = line[marked.end() :] if marked else line
            tabbed = header_line.count("\t") > header_line.count(",")
            before.append(header_line)
            break
        before.append(line)
    else:
        return
    reader = csv.reader(itertools.chain(before, source), delimiter="\t" if tabbed else ",")
    header: list[str] | None = None
    consumed = 0  # physical lines read so far, to know where the next row starts
    while header is None:
        start = consumed + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise Broken(f"cannot read the CSV header: {error}", start) from None
        consumed = reader.line_num
        if not "".join(row).strip():
            continue
        header = [cell.strip() for cell in row]
        duplicates = sorted(cell for cell, count in Counter(header).items() if count > 1)
        if duplicates:
            raise Broken(f"duplicate column {duplicates[0]!r} in the header", start)
        yield Header(start, tuple(header))
    width, first, build = len(header), header[0], _builder(header)
    while True:
        try:
            for row in reader:
                start, consumed = consumed + 1, reader.line_num
                if len(row) == width:
                    record = build(row)
                    if record[first] or any(record.values()):  # cells of spaces only: a blank line
                        yield start, record
                elif "".join(row).strip():
                    yield Bad(start, f"{len(row)} fields, but the header has {width}")
            return
        except csv.Error as error:
            start, consumed = consumed + 1, reader.line_num
            yield Bad(start, f"cannot read the CSV row: {error}")


#: Widest header whose rows are read by a function written for it (:func:`_builder`).
BUILT_WIDTH = 256


def _builder(header: Sequence[str]) -> Callable[[list[str]], dict[str, str]]:
    """A function from a row's cells to its record, stripped cells by field name.

    For the usual narrow header it is written out for that header (``{'time': row[0].strip(), ...}``),
    which builds a record several times faster than ``dict(zip(header, map(str.strip, row)))``: this
    runs once per line of the log. The names enter the code only as ``repr`` literals.

    >>> _builder(["time", "kind"])([" 1", "gpu "])
    {'time': '1', 'kind': 'gpu'}
    """
    if len(header) > BUILT_WIDTH:
        names, strip = tuple(header), str.strip
        return lambda row: dict(zip(names, map(strip, row), strict=True))
    cells = ", ".join(f"{name!r}: row[{index}].strip()" for index, name in enumerate(header))
    built: Callable[[list[str]], dict[str, str]] = eval(f"lambda row: {{{cells}}}", {"__builtins__": {}})
    return built
