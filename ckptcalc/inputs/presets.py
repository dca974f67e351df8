"""Presets: TOML files describing a job, loaded into a :class:`Scenario`.

A preset looks like this (every table and key optional except as noted)::

    schema_version = 1
    name = "llama3-405b"
    description = "..."
    source = "arXiv:2407.21783 §3.3"

    [checkpoint]
    params = 405e9            # or size = "6.48TB"
    bytes_per_param = 16

    [storage]
    bandwidth = "2TB/s"
    snapshot_bandwidth = "400TB/s"   # asynchronous checkpoints

    [failures]
    mtbf = "3.1h"             # or gpu_mtbf, or count + window
    mtbf_ci95 = ["2.8h", "3.4h"]   # optional: the MTBF's 95 % interval
    shape = 0.77              # optional: Weibull failures with this shape
    restart = "10min"

    [cluster]
    gpus = 16384

    [memory]                  # an in-memory replica level
    replica_survival = 0.99
    bandwidth = "2TB/s"
    restart = "1min"

Rates and durations are strings with their unit; sizes, counts and fractions
may also be bare numbers (bytes, units, 0-1). Unknown tables or keys are
errors, reported as ``file: table.key``.

A preset may inherit: ``base = "llama3-405b"`` at the top (a preset name,
looked up as ``--preset`` looks it up, or a path relative to the file's own
directory) starts from that preset's tables, and the file's own keys override
them key by key. Metadata is never inherited. Merging happens on the TOML
documents, before validation, and every key keeps the file it came from for
messages. Stating a checkpoint size one way (``size``, or ``params`` and
``bytes_per_param``), or a failure interval one way (``mtbf``, ``gpu_mtbf``,
``count`` and ``window``), drops the base's other way, and a failure interval
drops the base's ``mtbf_ci95`` with it, as the flags do over a preset (see
:data:`ckptcalc.inputs.inherit.WAYS`). Arrays replace the base's whole.

This module holds the entry points (find, list, load, parse); the search lives
in :mod:`~ckptcalc.inputs.preset_search`, the check of one document in
:mod:`~ckptcalc.inputs.preset_document`, the layering of bases in
:mod:`~ckptcalc.inputs.inherit` and the writer in :mod:`~ckptcalc.inputs.preset_write`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ckptcalc.errors import CkptError, PresetError
from ckptcalc.inputs.inherit import Link, Parent, base_of, read_layer, resolve_layer
from ckptcalc.inputs.preset_document import from_document, parse_toml, read_text
from ckptcalc.inputs.preset_search import (
    by_name,
    identity,
    is_path,
    presets_in,
    search_dirs,
    shipped_dir,
    skip,
    unknown,
)
from ckptcalc.inputs.scenario import Scenario, per_gpu_rate
from ckptcalc.records import Record


class PresetInfo(Record):
    name: str  # what --preset takes: the file's stem
    description: str
    path: Path
    title: str = ""  # the preset's own name key, the stem where it has none


def find(ref: str, where: str = "preset") -> Path:
    """The file a preset reference (a name or a path) points to; errors name ``where``."""
    if is_path(ref) and ref.strip():
        return Path(ref)
    found = by_name(ref, where, search_dirs())
    if found is None:
        raise PresetError(unknown(ref, [p.name for p in available()]), where=where)
    return found


def beside(ref: str, relative: str) -> str:
    """The path of a file a preset names (its ``[log] patterns``), read relative to the preset file's
    directory, ``~`` expanded."""
    import os

    return os.fspath(find(ref).parent.joinpath(os.path.expanduser(relative)))


def available() -> list[PresetInfo]:
    """Every preset found by name, first occurrence wins."""
    seen: dict[str, PresetInfo] = {}
    broken: set[str] = set()
    for directory in search_dirs():
        for path in presets_in(directory):
            if path.stem in seen or path.stem in broken:
                continue
            try:
                scenario = load_file(path)
            except CkptError as error:
                # The name stays taken: --preset NAME finds this file, and says what is wrong with it.
                broken.add(path.stem)
                skip(f"{path}: not listed: {error}")
                continue
            seen[path.stem] = PresetInfo(path.stem, scenario.description or "", path, scenario.name or path.stem)
    return sorted(seen.values(), key=lambda info: natural(info.name))


def natural(name: str) -> tuple[tuple[str, int], ...]:
    """The key that sorts preset names naturally: a base before its variants (``llama3-405b`` before
    ``llama3-405b-async``), the numbers in names as numbers (``rsc1-16k`` before ``rsc1-131k``).

    >>> sorted(["llama3-405b-tiered", "rsc1-131k", "llama3-405b", "rsc1-16k"], key=natural)
    ['llama3-405b', 'llama3-405b-tiered', 'rsc1-16k', 'rsc1-131k']
    """
    parts = re.split(r"(\d+)", name)
    # Text and numbers alternate, text first: (text, 0) and ("", number) never compare a str with an int.
    return tuple((part.casefold(), 0) if i % 2 == 0 else ("", int(part)) for i, part in enumerate(parts))


def load(ref: str, where: str = "preset") -> Scenario:
    """Load a preset by name or path."""
    path = find(ref, where)
    scenario = load_file(path, label=ref if is_path(ref) else path.name)
    return scenario if scenario.name else _named(scenario, path.stem)


def _named(scenario: Scenario, name: str) -> Scenario:
    return scenario.replace(name=name)


def load_file(path: Path, label: str | None = None, *, search: Sequence[Path] | None = None) -> Scenario:
    """Read and validate one preset file, its bases merged in (names of bases are looked up in
    ``search``, the preset search directories by default)."""
    label = label or str(path)
    layer = read_layer(path, label, search=search)
    return from_document(layer.document, label, layer.labels)


def parse(text: str, label: str, path: Path | None = None) -> Scenario:
    """Validate the TOML document ``text``; ``label`` names it in messages. ``path`` is the file it was
    read from, if any: a ``base`` given as a path is relative to its directory (to that of ``label``
    otherwise)."""
    home = path.parent if path is not None else Path(label).parent
    chain = (Link(label, None if path is None else identity(path)),)
    layer = resolve_layer(parse_toml(text, label), label, home, chain, search_dirs())
    return from_document(layer.document, label, layer.labels)


def parent(ref: str, where: str = "preset") -> Parent | None:
    """The base the preset ``ref`` (a name or a path) names, resolved; None when it names none."""
    path = find(ref, where)
    label = ref if is_path(ref) else path.name
    document = parse_toml(read_text(path, label), label)
    return base_of(document, label, path.parent, (Link(label, identity(path)),), search_dirs())


def resolved_document(ref: str, where: str = "preset") -> dict[str, Any]:
    """The preset ``ref`` as one document, its bases merged in and no ``base`` key, after checking
    that it loads."""
    path = find(ref, where)
    label = ref if is_path(ref) else path.name
    layer = read_layer(path, label)
    from_document(layer.document, label, layer.labels)
    return layer.document


#: The shipped presets whose assumptions the asynchronous and in-memory levers borrow.
ASYNC_PRESET = "llama3-405b-async"
MEMORY_PRESET = "gemini-inmemory"


def lever_assumptions() -> dict[str, float]:
    """Per-GPU snapshot and replica figures from the shipped async and in-memory presets, by the
    fields of :class:`ckptcalc.model.decisions.LeverAssumptions`."""
    directory = shipped_dir()
    # Their bases are the shipped ones too: a preset of the same name on the search path must not
    # change what the levers assume.
    snapshot = load_file(directory / f"{ASYNC_PRESET}.toml", f"{ASYNC_PRESET}.toml", search=[directory])
    memory = load_file(directory / f"{MEMORY_PRESET}.toml", f"{MEMORY_PRESET}.toml", search=[directory])
    # The shipped files carry every one of these (tested); the asserts narrow the types.
    snapshot_rate = per_gpu_rate(snapshot, "snapshot_bandwidth")
    memory_rate = per_gpu_rate(memory, "memory_bandwidth")
    assert snapshot_rate and memory_rate and memory.replica_survival and memory.memory_restart_s
    return {
        "snapshot_bandwidth_per_gpu": snapshot_rate,
        "replica_survival": memory.replica_survival,
        "memory_bandwidth_per_gpu": memory_rate,
        "memory_restart_s": memory.memory_restart_s,
    }
