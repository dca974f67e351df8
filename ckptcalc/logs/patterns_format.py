"""Any log read by the pattern library (and the user's ``--patterns``): the format of a log whose first
lines no framework adapter recognises, but in which a pattern matches a line (docs/formats/patterns.md).

The lines are read by :class:`ckptcalc.logs.patterns.Matcher`: NCCL watchdog timeouts and aborts,
torchrun's ``ChildFailedError`` summary, CUDA errors, Xid and OOM-kill lines, signals, Slurm and
Kubernetes failures, and the save and restore lines of Megatron, NeMo, DeepSpeed, Hugging Face,
Lightning, torchtune, Orbax and torchtitan, behind any rank prefix and interleaved across ranks.

>>> from ckptcalc.logs.adapter import Context
>>> lines = ["[rank0]:2024-11-02 10:00:00,000 - INFO - Saving checkpoint. This may take some time.\\n",
...          "[rank0]:INFO:torchtune.utils._logging:Saving checkpoint took 109.51 secs\\n"]
>>> [(row.value["event"], round(row.value["time"] % 3600, 2)) for row in rows(lines, Context("x.log"))]
[('checkpoint_start', 0.0), ('checkpoint_end', 109.51)]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ckptcalc.logs import csv_format, patterns
from ckptcalc.logs.adapter import Bad, Context, Header, Row

NAME = "patterns"
GIVES = "events"


def detect(head: Sequence[str], user: Sequence[Any] = ()) -> bool:
    """A line among the first that a pattern (the user's or the library's) matches; never a log that
    opens a JSON document or a CSV header."""
    return not table(head) and bool(patterns.head_matches(head, user))


def table(head: Sequence[str]) -> bool:
    """Whether the first line opens a JSON document or is a CSV header of several columns."""
    first = head[0].strip()
    return first.startswith(("{", "[{")) or ("," in first and csv_format.plain_header(head[0]))


def rows(lines: Iterable[str], context: Context | None = None) -> Iterator[Row | Bad | Header]:
    """The raw events of the lines any pattern matches, in order."""
    matcher = patterns.Matcher(context or Context("log"))
    out = matcher.out
    take = matcher.take
    for number, line in enumerate(lines, start=1):
        take(number, line)
        if out:
            yield from out
            out.clear()
    matcher.finish()
    yield from out
