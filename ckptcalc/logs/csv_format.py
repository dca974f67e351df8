"""CSV logs: a header line naming the fields, then one row a line (quoted cells may span lines).

Tab-separated files read the same way: a header with more tabs than commas splits on tabs, and one with
more ``|`` than either on ``|`` (what ``sacctmgr --parsable2`` prints). A header
line may start with ``#`` (``# time<TAB>node``, as trace archives write it): the mark is not a field.

>>> list(rows(["time,kind\\n", "\\n", "1, gpu\\n"]))
[Header(line=1, fields=('time', 'kind')), Row(line=3, value={'time': '1', 'kind': 'gpu'})]
>>> list(rows(["# time\\tkind\\n", "1\\tgpu, hbm\\n"]))
[Header(line=1, fields=('time', 'kind')), Row(line=2, value={'time': '1', 'kind': 'gpu, hbm'})]
"""

from __future__ import annotations

import io
import itertools
import re
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import Any

from ckptcalc.logs.adapter import Bad, Broken, Columns, Context, Header, Row

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
        if isinstance(item, Columns):
            yield from (Row(item.line + index, item.record(index)) for index in range(item.count))
        else:
            yield Row(*item) if isinstance(item, tuple) else item


def records(
    lines: Iterable[str], context: Context | None = None
) -> Iterator[tuple[int, dict[str, str]] | Columns | Bad | Header]:
    """:func:`rows` with each row as a ``(line, record)`` pair, what the reader reads (the same rows,
    without an object per line); from lines that can be read a block at a time (the reader's), rows
    of plain cells come as :class:`Columns` instead."""
    import csv
    import itertools

    source = iter(lines)
    blanks = 0  # the blank lines before the header: counted, not kept (a log may hold 10^9 of them)
    for line in source:
        if line.strip():
            marked = _HEADER_MARK.match(line)
            header_line = line[marked.end() :] if marked else line
            counts = {mark: header_line.count(mark) for mark in (",", "\t", "|")}
            delimiter = max(counts, key=lambda mark: (counts[mark], mark == ","))  # commas unless others outnumber
            break
        blanks += 1
    else:
        return
    reader = csv.reader(itertools.chain([header_line], source), delimiter=delimiter)
    header: list[str] | None = None
    consumed = blanks  # physical lines read so far, to know where the next row starts
    while header is None:
        start = consumed + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise Broken(f"cannot read the CSV header: {error}", start) from None
        consumed = blanks + reader.line_num
        if not "".join(row).strip():
            continue
        header = [cell.strip() for cell in row]
        duplicates = sorted(cell for cell, count in Counter(header).items() if count > 1)
        if duplicates:
            raise Broken(f"duplicate column {duplicates[0]!r} in the header", start)
        yield Header(start, tuple(header))
    blocks = getattr(lines, "blocks", None)
    table = _Table(header, delimiter)
    if blocks is None:
        yield from table.parsed(reader, blanks)
    else:
        yield from table.blocks(blocks(), consumed)


class _Table:
    """The rows after a header: parsed by ``csv`` one by one, or, a block of lines at a time, split in C
    where the block holds nothing ``csv`` would read differently from a split at the delimiter."""

    def __init__(self, header: Sequence[str], delimiter: str) -> None:
        import csv

        self.header, self.delimiter = list(header), delimiter
        self.width, self.first, self.build = len(header), header[0], _builder(header)
        self.longest = csv.field_size_limit()
        # What a split cannot read as csv does (quotes, carriage returns, NUL), and the ASCII white space
        # str.strip removes (but the line ends): each looked for by ``in``, a search in C far quicker than a
        # regular expression's character class.
        self.unplain = ('"', "\r", "\x00")
        self.spaces = tuple(mark for mark in " \t\x0b\x0c\x1c\x1d\x1e\x1f" if mark != delimiter)

    def parsed(self, reader: Any, offset: int) -> Iterator[tuple[int, dict[str, str]] | Bad]:
        """The rows ``reader`` (a ``csv.reader`` of the lines after the first ``offset``) gives, each at its line."""
        import csv

        width, first, build = self.width, self.first, self.build
        consumed = offset + reader.line_num  # physical lines read so far, to know where the next row starts
        while True:
            try:
                for row in reader:
                    start, consumed = consumed + 1, offset + reader.line_num
                    if len(row) == width:
                        record = build(row)
                        if record[first] or any(record.values()):  # cells of spaces only: a blank line
                            yield start, record
                    elif "".join(row).strip():
                        yield Bad(start, f"{len(row)} fields, but the header has {width}")
                return
            except csv.Error as error:
                start, consumed = consumed + 1, offset + reader.line_num
                yield Bad(start, f"cannot read the CSV row: {error}")

    def blocks(self, texts: Iterator[str], consumed: int) -> Iterator[tuple[int, dict[str, str]] | Columns | Bad]:
        """The rows of ``texts`` (blocks of whole lines, ``consumed`` lines in): a plain block as
        :class:`Columns`, any other through ``csv``, with as many more blocks as a quoted cell spans."""
        for text in texts:
            columns = self._plain(text, consumed + 1)
            if columns is not None:
                consumed += columns.count
                yield columns
            else:
                consumed = yield from self._through_csv(text, texts, consumed)

    def _through_csv(
        self, text: str, texts: Iterator[str], consumed: int
    ) -> Generator[tuple[int, dict[str, str]] | Bad, None, int]:
        """The rows of ``text`` read by ``csv`` (and of the blocks after it that a quoted cell runs into);
        returns the lines consumed after them."""
        import csv

        asked = [0]  # lines the csv reader has taken for the row it is reading

        def feed(text: str) -> Iterator[str]:
            while True:
                for line in io.StringIO(text, newline="\n"):
                    asked[0] += 1
                    yield line
                if not asked[0]:  # the reader wants a new row: the next block is looked at afresh
                    return
                following = next(texts, None)  # a quoted cell goes on into the next block
                if following is None:
                    return
                text = following

        reader = csv.reader(feed(text), delimiter=self.delimiter)
        yield from self.parsed(_Counted(reader, asked), consumed)
        return consumed + reader.line_num

    def _plain(self, text: str, line: int) -> Columns | None:
        """``text``'s rows by column when each line is one row of the header's width in plain cells."""
        if "\r" in text:  # a file written with CRLF line ends reads as one written with LF
            text = text.replace("\r\n", "\n")
        if any(mark in text for mark in self.unplain):
            return None
        body = text[:-1] if text.endswith("\n") else text
        lines = body.split("\n")
        separators = self.width - 1
        delimiter = self.delimiter
        if set(map(str.count, lines, itertools.repeat(delimiter))) != {separators}:
            return None  # a blank line, or a row of another width: read one by one
        if max(map(len, lines)) > self.longest:
            return None  # perhaps a cell longer than csv reads (it says so)
        cells = body.replace("\n", delimiter).split(delimiter)
        width = self.width
        if not text.isascii() or any(mark in text for mark in self.spaces):
            columns = {name: list(map(str.strip, cells[index::width])) for index, name in enumerate(self.header)}
        else:
            columns = {name: cells[index::width] for index, name in enumerate(self.header)}
        if "" in columns[self.first]:
            return None  # perhaps a row of empty cells, which is no row
        return Columns(line, len(lines), columns, cells, self.build)


class _Counted:
    """A csv reader whose ``asked`` count starts again at each row (see :meth:`_Table.blocks`)."""

    def __init__(self, reader: Any, asked: list[int]) -> None:
        self.reader, self.asked = reader, asked

    @property
    def line_num(self) -> int:
        return int(self.reader.line_num)

    def __iter__(self) -> _Counted:
        return self

    def __next__(self) -> list[str]:
        self.asked[0] = 0
        row: list[str] = next(self.reader)
        return row


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
