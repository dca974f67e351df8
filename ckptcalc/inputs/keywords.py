"""The Python API's keyword inputs, from :data:`ckptcalc.inputs.fields.FIELDS`: typed for type checkers
and listed, with their units, in the docstrings of the functions that take them.

:class:`ModelInputs` names every field by its public name (``bw``, ``restart``…), each a plain SI number
or a string with its unit; a function writes ``**inputs: Unpack[ModelInputs]`` so that mypy checks its
callers' keywords. A test holds its keys equal to the fields' public names. :func:`document` adds the
"Inputs" section, made from the same table at import, so that ``help(ckptcalc.optimize)`` cannot drift
from what the function accepts.

>>> print(section("").splitlines()[3])
params : count (or "405B", "16k")
"""

# No ``from __future__ import annotations``: TypedDict would compile each of its 52 annotations as a
# forward reference at import; evaluated, ``str | float`` costs nothing.
import functools
import re
from typing import TypedDict

from ckptcalc.inputs.fields import BY_FLAG, FIELDS


class PlanInputs(TypedDict, total=False):
    """Every input but ``work``, which :func:`ckptcalc.plan` takes by name."""

    params: str | float
    bytes_per_param: str | float
    size: str | float
    bw: str | float
    snapshot_bw: str | float
    interval: str | float
    mtbf: str | float
    gpu_mtbf: str | float
    failures: str | float
    window: str | float
    restart: str | float
    detect: str | float
    reschedule: str | float
    read_bw: str | float
    warmup: str | float
    shape: str | float
    gpus: str | float
    restart_growth: str | float
    restart_scaled: str | float
    restart_at_gpus: str | float
    replica_survival: str | float
    memory_bw: str | float
    memory_restart: str | float
    memory_read_bw: str | float
    memory_interval: str | float
    step_time: str | float
    discard: str | float
    jit_share: str | float
    jit_bw: str | float
    notice_share: str | float
    class_share: str | float
    class_restart: str | float
    class_recovery: str | float
    class_fallback: str | float
    class_tier: str | float
    persist_slowdown: str | float
    max_busy: str | float
    max_written_per_day: str | float
    compression: str | float
    codec_bw: str | float
    gpu_hour_cost: str | float
    nodes: str | float
    gpus_per_node: str | float
    spares: str | float
    repair: str | float
    spare_risk: str | float
    groups: str | float
    group_share: str | float
    rejoin: str | float
    quorum_pause: str | float
    ft_overhead: str | float
    silent_mtbf: str | float
    silent_events: str | float
    detect_latency: str | float
    skip: str | float
    silent_risk: str | float
    keep: str | float
    max_retained: str | float
    keep_every: str | float
    slow_mtbf: str | float
    slow_factor: str | float
    slow_duration: str | float
    slow_detect: str | float


class ModelInputs(PlanInputs, total=False):
    """Every input of :data:`~ckptcalc.inputs.fields.FIELDS` by its public name: a plain SI number (bytes,
    bytes per second, seconds, a share from 0 to 1) or a string with its unit."""

    work: str | float


class LogInputs(TypedDict, total=False):
    """What a mechanism's events in a log cannot show, by public name (:func:`ckptcalc.analyze`; each
    registered mechanism's ``log_inputs``): a plain SI number or a string with its unit."""

    groups: str | float
    ft_overhead: str | float


#: What each kind of input is in SI, and how it may be written with its unit.
UNITS = {
    "size": 'bytes (or "6.5TB", "500GiB")',
    "rate": 'bytes/s (or "2TB/s", "100Gbps")',
    "duration": 's (or "10min", "3.1h")',
    "count": 'count (or "405B", "16k")',
    "fraction": 'share from 0 to 1 (or "95%")',
    "number": "number",
    "spares": 'whole number of nodes (or "auto")',
    "recovery_path": '"rollback", "in_place" or "peer"',
    "rollback_tier": '"storage" or "memory"',
}

_FLAG = re.compile(r"--([a-z][a-z0-9-]*)")


def _named(help_text: str) -> str:
    """The help with each ``--flag`` written as the keyword the API takes."""
    return _FLAG.sub(lambda m: BY_FLAG[m.group(1)].public if m.group(1) in BY_FLAG else m.group(0), help_text)


@functools.cache
def section(indent: str) -> str:
    """The "Inputs" section: every field's keyword, its unit, what it is and its preset key."""
    lines = [
        "Inputs",
        "------",
        "Keywords, each a plain SI number or a string with its unit; an input not given keeps the preset's value.",
    ]
    for field in FIELDS:
        lines.append(f"{field.public} : {UNITS[field.kind]}")
        lines.append(f"    {_named(field.help)} Preset key: {field.path}.")
    return "\n".join(f"{indent}{line}" for line in lines)


def document(doc: str | None) -> str:
    """``doc`` with the "Inputs" section before its examples (at its end without any), indented as it is."""
    text = doc or ""
    lines = text.split("\n")
    body = [line for line in lines[1:] if line.strip()]
    indent = min((line[: len(line) - len(line.lstrip())] for line in body), key=len, default="")
    added = section(indent).split("\n")
    where = next((i for i, line in enumerate(lines) if line.lstrip().startswith(">>>")), None)
    if where is None:
        return "\n".join([text.rstrip(), "", *added, indent])
    return "\n".join([*lines[:where], *added, "", *lines[where:]])
