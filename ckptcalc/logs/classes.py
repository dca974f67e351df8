"""A log's failures split by class: each failure's cause matched to a preset's classes (docs/model.md §20.6).

A preset's ``[[failures.classes]]`` lists, per class, the ``causes`` it stands for. A failure's cause (the
``cause`` field of an event log, what a framework's pattern names, an incident log's cause column) goes
to the first class, in the preset's order, one of whose causes it contains **as a word prefix**: both
are case-folded and every run of characters that is neither a letter nor a digit becomes one space,
and the class's cause must then start the cause or start right after a space. So ``xid`` takes
``Xid 79``, ``XID79`` and ``NVRM: Xid (PCI:0000:3b:00): 79``, ``node failure`` takes ``NODE_FAILURE``
and ``slurmstepd: error: *** NODE FAILURE ***``, and ``ecc`` takes ``Uncorrectable ECC error`` but not
``process``. A cause no class takes is the job's own (its share is 1 − Σ the classes' stated shares).

Each class's measured share is its failures over all of them, with the Wilson score 95 % interval;
the stated share agrees when it lies in that interval. Where the log shows restarts (a failure's
restart that ended with no second failure during it), each class's mean restart is measured too.

>>> word_prefix("xid", "NVRM: Xid (PCI:0000:3b:00): 79"), word_prefix("ecc", "process exited")
(True, False)
>>> split({"Xid 79": 3, "nccl_timeout": 1}, [("gpu", 0.5, ("xid",), None)])["classes"][0]["failures"]
3
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ckptcalc.model.statistics import wilson_interval

#: How a class's cause is matched to a log's, as the documents say.
MATCH = "word_prefix"

_NOT_WORD = re.compile(r"[\W_]+")

#: A class as the split takes it: (name, stated share, causes, stated restart in seconds or None).
Stated = tuple[str, float, Sequence[str], "float | None"]


def normalised(text: str) -> str:
    """``text`` in Unicode's compatibility form (NFKC: a full-width ``ＸＩＤ`` is ``XID``, a decomposed ``é`` the
    composed one), case-folded, its combining marks left out of its words (``İ`` folds to ``i`` and a dot),
    each run of characters that is neither a letter nor a digit one space.

    >>> normalised("  [Rank 3] NCCL_Watchdog--timeout ")
    'rank 3 nccl watchdog timeout'
    >>> normalised("ＸＩＤ 79"), normalised("cafe\u0301 crash") == normalised("caf\u00e9 crash"), normalised("İstanbul")
    ('xid 79', True, 'istanbul')
    """
    import unicodedata

    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    if not folded.isascii():
        folded = "".join(ch for ch in folded if not unicodedata.category(ch).startswith("M"))
    return _NOT_WORD.sub(" ", folded).strip()


def word_prefix(cause: str, found: str) -> bool:
    """Whether a class's ``cause`` matches a log's cause ``found``: it starts ``found`` or a word of it (both
    :func:`normalised`)."""
    wanted = normalised(cause)
    return bool(wanted) and f" {wanted}" in f" {normalised(found)}"


def class_of(found: str, classes: Sequence[Stated]) -> int | None:
    """The index of the first class one of whose causes matches the log's cause ``found``; None: the job's own."""
    return next((i for i, each in enumerate(classes) if any(word_prefix(c, found) for c in each[2])), None)


#: The most of a log's causes a class's row names (the most frequent first): a log of a million distinct
#: causes would otherwise carry them all, once per row.
CAUSES_NAMED = 20


def _named(causes: Iterable[tuple[str, int]]) -> tuple[list[str], int]:
    """The :data:`CAUSES_NAMED` most frequent of ``causes`` ((cause, failures)), in order of name, and how
    many others there are.

    >>> _named([("b", 1), ("a", 5), ("c", 2)])
    (['a', 'b', 'c'], 0)
    """
    import heapq

    every = list(causes)
    top = heapq.nsmallest(CAUSES_NAMED, every, key=lambda item: (-item[1], item[0]))
    return sorted(cause for cause, _ in top), len(every) - len(top)


def _row(
    count: int,
    total: int,
    stated: float,
    causes: Iterable[tuple[str, int]],
    restarts: Sequence[float],
) -> dict[str, Any]:
    """One class's figures: its failures, measured share and its 95 % interval, the stated share and whether
    it lies in the interval, the log's causes it took, and its restarts."""
    named, more = _named(causes)
    if total:
        low, high = wilson_interval(count, total)
        measured: float | None = count / total
        ci95: list[float] | None = [low, high]
        agrees: bool | None = low <= stated <= high
    else:
        measured, ci95, agrees = None, None, None
    return {
        "failures": count,
        "measured_share": measured,
        "share_ci95": ci95,
        "stated_share": stated,
        "agrees": agrees,
        "log_causes": named,
        "log_causes_more": more,
        "restarts": len(restarts),
        "restart_s": sum(restarts) / len(restarts) if restarts else None,
    }


def split(
    counts: Mapping[str, int],
    classes: Sequence[Stated],
    restarts: Mapping[str, Sequence[float]] | None = None,
) -> dict[str, Any]:
    """The failures ``counts`` (by the log's cause) split by ``classes`` (each (name, stated share, causes,
    stated restart)), and the measured restarts by cause (``restarts``: the durations of the restarts of a
    failure of that cause; None: the log shows none), as ``analyze`` and ``fit`` report them."""
    total = sum(counts.values())
    taken: list[list[tuple[str, int]]] = [[] for _ in classes]
    own: list[tuple[str, int]] = []
    tallies = [0] * len(classes)
    durations: list[list[float]] = [[] for _ in classes]
    rest = 0
    rest_durations: list[float] = []
    for cause, count in counts.items():
        index = class_of(cause, classes)
        mine = list((restarts or {}).get(cause, ()))
        if index is None:
            own.append((cause, count))
            rest += count
            rest_durations += mine
            continue
        taken[index].append((cause, count))
        tallies[index] += count
        durations[index] += mine
    rows = [
        {
            "name": name,
            "causes": list(causes),
            **_row(tallies[i], total, share, taken[i], durations[i]),
            "stated_restart_s": restart,
        }
        for i, (name, share, causes, restart) in enumerate(classes)
    ]
    stated_own = max(0.0, 1.0 - sum(each[1] for each in classes))
    return {
        "match": MATCH,
        "failures": total,
        "restarts_shown": restarts is not None,
        "classes": rows,
        "job": _row(rest, total, stated_own, own, rest_durations),
    }


def measured_shares(part: Mapping[str, Any]) -> dict[str, float]:
    """The measured share of each class of a split (:func:`split`), by name; {} where the log has no failure."""
    return {row["name"]: row["measured_share"] for row in part["classes"] if row["measured_share"] is not None}


def job_restart_s(part: Mapping[str, Any] | None) -> float | None:
    """The mean restart of the failures the job's own restart serves in a split (:func:`split`): those no class
    takes and those of the classes that state no restart of their own, each weighted by its restarts; None
    without a split or such a restart. A class with a restart of its own keeps it: the job's restart must
    not average it in (docs/model.md §20.6).

    >>> part = {"classes": [{"restarts": 3, "restart_s": 1200.0, "stated_restart_s": 1200.0},
    ...                     {"restarts": 1, "restart_s": 2400.0, "stated_restart_s": None}],
    ...         "job": {"restarts": 2, "restart_s": 660.0}}
    >>> job_restart_s(part)  # (2 × 660 + 1 × 2400) / 3
    1240.0
    """
    if part is None:
        return None
    rows = [part["job"], *(row for row in part["classes"] if row["stated_restart_s"] is None)]
    counted = [(row["restarts"], row["restart_s"]) for row in rows if row.get("restart_s") is not None]
    total = sum(count for count, _ in counted)
    return sum(count * mean for count, mean in counted) / total if total else None


def schema() -> dict[str, Any]:
    """The JSON Schema of :func:`split`'s record (null included: no class lists a cause, or no preset)."""
    share = {"type": "number", "minimum": 0, "maximum": 1}
    maybe_share = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
    row: dict[str, Any] = {
        "failures": {"type": "integer", "minimum": 0},
        "measured_share": {**maybe_share, "description": "failures of the class / all failures; null: none"},
        "share_ci95": {
            "oneOf": [{"type": "array", "items": share, "minItems": 2, "maxItems": 2}, {"type": "null"}],
            "description": "Wilson score 95 % interval of the measured share",
        },
        "stated_share": {**share, "description": "the preset's share (the job's own: 1 − Σ the classes')"},
        "agrees": {"type": ["boolean", "null"], "description": "the stated share lies in share_ci95"},
        "log_causes": {
            "type": "array",
            "items": {"type": "string"},
            "maxItems": CAUSES_NAMED,
            "description": f"the log's causes it took: the {CAUSES_NAMED} most frequent, in order of name",
        },
        "log_causes_more": {"type": "integer", "minimum": 0, "description": "how many other causes it took"},
        "restarts": {"type": "integer", "minimum": 0, "description": "restarts measured (no failure during them)"},
        "restart_s": {"type": ["number", "null"], "minimum": 0, "description": "their mean, s; null: none"},
    }
    job = {"type": "object", "properties": row, "required": [*row], "additionalProperties": False}
    named = {
        "name": {"type": "string"},
        "causes": {"type": "array", "items": {"type": "string"}, "description": "the preset's causes"},
        **row,
        "stated_restart_s": {"type": ["number", "null"], "minimum": 0, "description": "null: the job's restart"},
    }
    record = {
        "type": "object",
        "description": "the log's failures split by the preset's [[failures.classes]] causes (docs/model.md"
        " §20.6): a failure's cause goes to the first class one of whose causes starts it or a word of it,"
        " case-folded, runs of other characters as one space; the rest are the job's own",
        "properties": {
            "match": {"const": MATCH},
            "failures": {"type": "integer", "minimum": 0},
            "restarts_shown": {"type": "boolean", "description": "whether the log shows restarts (fit's do not)"},
            "classes": {
                "type": "array",
                "items": {"type": "object", "properties": named, "required": [*named], "additionalProperties": False},
            },
            "job": {**job, "description": "the failures no class took: the job's own"},
        },
        "required": ["match", "failures", "restarts_shown", "classes", "job"],
        "additionalProperties": False,
    }
    return {"oneOf": [{"type": "null"}, record]}
