"""Preset inheritance: a child's ``base`` read and validated, and the child's keys layered over it.

Merging happens on the TOML documents, before validation, and every key keeps
the file it came from for messages. Stating an input one way drops the base's
other ways (:data:`WAYS`), as the flags do over a preset.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ckptcalc.errors import PresetError
from ckptcalc.inputs.preset_document import (
    BASE,
    LEVELS,
    META,
    SECTIONS,
    SOURCES,
    TIER_PATHS,
    from_document,
    parse_toml,
    read_text,
    type_name,
)
from ckptcalc.inputs.preset_search import by_name, identity, is_path, presets_in, search_dirs, shipped_dir, unknown
from ckptcalc.inputs.scenario import BAND
from ckptcalc.records import Record

#: The most ``base`` links followed from one preset: deeper chains are errors.
MAX_DEPTH = 8


class _Ways(Record):
    """Keys (``table.key``) that state one input different ways, as :func:`ckptcalc.inputs.scenario.merge`
    treats the flags: a preset stating a key of one way drops its base's keys of the other ways, or
    with ``whole`` of every way, its own too, and the base's ``dropped`` keys with them."""

    ways: tuple[frozenset[str], ...]
    whole: bool = False
    dropped: frozenset[str] = frozenset()

    @property
    def keys(self) -> frozenset[str]:
        return frozenset().union(*self.ways)

    def drops(self, stated: set[str]) -> set[str]:
        """The base's keys a preset stating ``stated`` drops."""
        if not stated & self.keys:
            return set()
        if self.whole:
            return set(self.keys | self.dropped)
        return {key for way in self.ways if not stated & way for key in way}


#: The inputs a preset can state more than one way (a key no version of the format has is never stated).
WAYS = (
    _Ways((frozenset({"checkpoint.size"}), frozenset({"checkpoint.params", "checkpoint.bytes_per_param"}))),
    _Ways(
        (
            frozenset({"failures.mtbf"}),
            frozenset({"failures.gpu_mtbf"}),
            frozenset({"failures.count", "failures.window"}),
        ),
        whole=True,
        dropped=frozenset({f"failures.{BAND}"}),
    ),
    _Ways((frozenset({"failures.restart"}), frozenset({"storage.read_bandwidth"}))),
    _Ways((frozenset({"memory.restart"}), frozenset({"memory.read_bandwidth"}))),
)

#: The restart's parts that are the job's (they serve every level restarted by parts).
JOB_PART_PATHS = frozenset({"failures.detect", "failures.reschedule", "failures.warmup"})


def _restart_drops(base: dict[str, Any], stated: set[str]) -> set[str]:
    """A child's whole storage restart drops the base's job parts unless another level of the base
    still restarts by parts; a child's job parts drop the base's whole restart."""
    if stated & JOB_PART_PATHS:
        return {"failures.restart"}
    if "failures.restart" not in stated:
        return set()
    memory = base.get("memory")
    tiers = base.get(LEVELS)
    by_parts = (isinstance(memory, dict) and "read_bandwidth" in memory) or (
        isinstance(tiers, list) and any(isinstance(t, dict) and "read_bandwidth" in t for t in tiers[:-1])
    )
    return set() if by_parts else set(JOB_PART_PATHS)


class Layer(Record):
    """A preset document with its bases merged in, and for each key (``table.key``, or a top-level
    key) the label of the file it came from."""

    document: dict[str, Any]
    labels: dict[str, str]


class Parent(Record):
    """The base a preset names: as written, the file it was found in, and its values (bases merged)."""

    ref: str
    path: Path
    label: str
    layer: Layer

    @property
    def by_name(self) -> bool:
        return not is_path(self.ref)


class Link(Record):
    """One file of a chain of bases: its label, and what identifies it (its real path)."""

    label: str
    identity: str | None


def read_layer(path: Path, label: str, *, search: Sequence[Path] | None = None) -> Layer:
    """The document of the preset file ``path`` with its bases merged in (not yet validated)."""
    document = parse_toml(read_text(path, label), label)
    chain = (Link(label, identity(path)),)
    return resolve_layer(document, label, path.parent, chain, search_dirs() if search is None else search)


def resolve_layer(
    document: dict[str, Any], label: str, directory: Path, chain: tuple[Link, ...], search: Sequence[Path]
) -> Layer:
    found = base_of(document, label, directory, chain, search)
    return merge_layers(found.layer if found is not None else Layer({}, {}), document, label)


def base_of(
    document: dict[str, Any], label: str, directory: Path, chain: tuple[Link, ...], search: Sequence[Path]
) -> Parent | None:
    """The base ``document`` names, read and validated on its own; errors name ``label: base`` and the
    chain of files that led there."""
    if BASE not in document:
        return None
    ref = document[BASE]
    where = f"{label}: {BASE}"
    if not isinstance(ref, str):
        raise PresetError(f"must be a string (a preset name or a path), got {type_name(ref)}", where=where)
    if not ref.strip():
        raise PresetError("empty preset name", where=where)
    if "\x00" in ref:
        raise PresetError(f"{ref!r} is not a preset name or a path (a NUL character)", where=where)
    names = " -> ".join(link.label for link in chain)
    if is_path(ref):
        path = directory / ref
        base_label = str(path)
    else:
        if identity(directory) == identity(shipped_dir()):
            # A shipped preset's base is the shipped one of that name, whatever the user's search path holds.
            search = [shipped_dir()]
        found = by_name(ref, where, search, frozenset(link.identity for link in chain))
        if found is None and by_name(ref, where, search) is not None:
            raise PresetError(f"cycle: {names} -> {ref}.toml", where=where)
        if found is None:
            known = sorted({p.stem for d in search for p in presets_in(d)})
            raise PresetError(f"{unknown(ref, known)}; chain: {names} -> {ref}", where=where)
        path, base_label = found, found.name
    real = identity(path)
    chained = f"{names} -> {base_label}"
    if real is not None and any(link.identity == real for link in chain):
        raise PresetError(f"cycle: {chained}", where=where)
    if len(chain) > MAX_DEPTH:
        raise PresetError(f"more than {MAX_DEPTH} bases: {chained}", where=where)
    try:
        text = read_text(path, base_label)
    except PresetError as error:
        raise PresetError(f"{error}; chain: {chained}", where=where) from None
    layer = resolve_layer(
        parse_toml(text, base_label), base_label, path.parent, (*chain, Link(base_label, real)), search
    )
    from_document(layer.document, base_label, layer.labels)  # a base must be a valid preset on its own
    return Parent(ref, path, base_label, layer)


def merge_layers(base: Layer, child: dict[str, Any], label: str) -> Layer:
    """``child`` over ``base``: tables key by key, anything else whole, the child's metadata only, and
    one way of stating an input (:data:`WAYS`) dropping the base's other ways."""
    stated = {f"{key}.{sub}" for key, value in child.items() if isinstance(value, dict) for sub in value}
    dropped = set().union(*(ways.drops(stated) for ways in WAYS)) | _restart_drops(base.document, stated)
    # Tiers are stated one way too: a child's [[levels]] replaces the base's levels (its [memory] and the
    # keys the tiers state), and a child's classic levels replace the base's [[levels]].
    skipped: set[str] = set()
    if LEVELS in child:
        dropped |= set(TIER_PATHS)
        skipped.add("memory")
    elif LEVELS in base.document and ("memory" in child or stated & set(TIER_PATHS)):
        key = "memory" if "memory" in child else sorted(stated & set(TIER_PATHS))[0]
        raise PresetError(
            f"the base lists its tiers as [[{LEVELS}]]: restate them as [[{LEVELS}]] here to change one",
            where=f"{label}: {key}",
        )
    document: dict[str, Any] = {}
    labels: dict[str, str] = {}
    for key, value in child.items():
        if key in META:
            document[key], labels[key] = value, label
    for key, value in base.document.items():
        if key in META or key in skipped:
            continue
        if key == LEVELS and isinstance(value, list) and stated & JOB_PART_PATHS:
            # The child states the job's parts in [failures]: the base's tiers stop stating them.
            parts = {path.split(".")[1] for path in stated & JOB_PART_PATHS}
            value = [{k: v for k, v in t.items() if k not in parts} if isinstance(t, dict) else t for t in value]
        if isinstance(value, dict):
            kept = {sub: raw for sub, raw in value.items() if f"{key}.{sub}" not in dropped}
            if value and not kept:
                continue  # every key of the table stated another way by the child
            document[key] = kept
            labels.update({f"{key}.{sub}": base.labels[f"{key}.{sub}"] for sub in kept})
        else:
            document[key] = value
        labels[key] = base.labels[key]
    for key, value in child.items():
        if key in META or key == BASE:
            continue
        if key in SECTIONS and not isinstance(value, dict):
            raise PresetError(f"must be a table ([{key}])", where=f"{label}: {key}")
        if isinstance(value, dict) and isinstance(document.get(key), dict):
            document[key] = {**document[key], **value}
            labels.setdefault(key, label)
        else:
            for path in [p for p in labels if p.startswith(f"{key}.")]:
                del labels[path]
            document[key] = value
            labels[key] = label
        if isinstance(value, dict):
            labels.update({f"{key}.{sub}": label for sub in value})
    _drop_sources(document, child, stated | dropped)
    return Layer(document, labels)


def _drop_sources(document: dict[str, Any], child: dict[str, Any], restated: set[str]) -> None:
    """A base's ``[sources]`` entry no longer describes a key the child states anew (or drops), unless the
    child says how its own value came."""
    sources = document.get(SOURCES)
    if not isinstance(sources, dict):
        return
    own = child.get(SOURCES)
    own = own if isinstance(own, dict) else {}
    kept = {path: how for path, how in sources.items() if path not in restated or path in own}
    if kept:
        document[SOURCES] = kept
    else:
        del document[SOURCES]
