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
``_WAYS``). Arrays replace the base's whole.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ckptcalc.errors import CkptError, PresetError
from ckptcalc.files import atomic_write, check_new, read_regular
from ckptcalc.inputs import units
from ckptcalc.inputs.scenario import BAND, BY_NAME, FIELDS, PARSERS, MiddleTier, Scenario, per_gpu_rate
from ckptcalc.records import Record

#: Version of the preset format this ckptcalc writes and the newest it reads.
SCHEMA_VERSION = 1

#: Directories searched for presets by name before the shipped ones (os.pathsep separated).
PATH_VARIABLE = "CKPTCALC_PRESET_PATH"

_META = ("schema_version", "name", "description", "source", "derived_from", "changed")
_SECTIONS = {f.section for f in FIELDS}
_BY_PATH = {f.path: f for f in FIELDS}
_NEEDS_UNIT = {"rate": "2TB/s", "duration": "10min"}


class PresetInfo(Record):
    name: str
    description: str
    path: Path


def shipped_dir() -> Path:
    """Where the shipped presets live: inside the package when installed,
    beside it in a source checkout."""
    package = Path(__file__).resolve().parent.parent
    packaged = package / "presets"
    return packaged if packaged.is_dir() else package.parent / "presets"


def search_dirs() -> list[Path]:
    extra = os.environ.get(PATH_VARIABLE, "")
    return [Path(p) for p in extra.split(os.pathsep) if p] + [shipped_dir()]


def is_path(ref: str) -> bool:
    return ref.endswith(".toml") or os.sep in ref or "/" in ref


#: Longest preset name looked up (a file name is at most 255 bytes, ".toml" included).
MAX_NAME = 200

#: What the search of the preset directories had to skip, as sentences: read by :func:`search_warnings`.
_SKIPPED: dict[str, None] = {}


def search_warnings() -> list[str]:
    """Directories and files the preset search skipped (unreadable, not regular), once each."""
    return list(_SKIPPED)


def _skip(message: str) -> None:
    _SKIPPED.setdefault(message, None)


def _presets_in(directory: Path) -> list[Path]:
    """The ``*.toml`` regular files of a search directory; a directory that cannot be read, and entries that
    are not regular files, are skipped with a warning instead of failing every run."""
    import stat

    try:
        with os.scandir(directory) as entries:
            found = []
            for entry in entries:
                if not entry.name.endswith(".toml"):
                    continue
                try:
                    regular = stat.S_ISREG(entry.stat().st_mode)
                except OSError:
                    regular = False
                if regular:
                    found.append(Path(entry.path))
                else:
                    _skip(f"{PATH_VARIABLE}: skipped {entry.path!r}: not a regular file")
            return sorted(found)
    except FileNotFoundError:
        return []
    except OSError as error:
        _skip(f"{PATH_VARIABLE}: skipped {str(directory)!r}: {error.strerror}")
        return []


def find(ref: str, where: str = "preset") -> Path:
    """The file a preset reference (a name or a path) points to; errors name ``where``."""
    if is_path(ref) and ref.strip():
        return Path(ref)
    found = _by_name(ref, where, search_dirs())
    if found is None:
        raise PresetError(_unknown(ref, [p.name for p in available()]), where=where)
    return found


def _by_name(
    ref: str, where: str, directories: Sequence[Path], skip: frozenset[str | None] = frozenset()
) -> Path | None:
    """The first ``ref.toml`` among ``directories`` that is not one of the files ``skip`` (real paths), or
    None. A preset that names its own name as its base so finds the one it shadows."""
    if not ref.strip():
        raise PresetError("empty preset name", where=where)
    if len(ref) > MAX_NAME:
        raise PresetError(f"a preset name is at most {MAX_NAME} characters, got {len(ref)}", where=where)
    for directory in directories:
        for path in _presets_in(directory):
            if path.stem == ref and (not skip or _identity(path) not in skip):
                return path
    return None


def _unknown(ref: str, names: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(ref, names, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown preset {ref!r}{hint} (known: {', '.join(names) or 'none'})"


def available() -> list[PresetInfo]:
    """Every preset found by name, first occurrence wins."""
    seen: dict[str, PresetInfo] = {}
    broken: set[str] = set()
    for directory in search_dirs():
        for path in _presets_in(directory):
            if path.stem in seen or path.stem in broken:
                continue
            try:
                scenario = load_file(path)
            except CkptError as error:
                # The name stays taken: --preset NAME finds this file, and says what is wrong with it.
                broken.add(path.stem)
                _skip(f"{path}: not listed: {error}")
                continue
            seen[path.stem] = PresetInfo(path.stem, scenario.description or "", path)
    return list(seen.values())


def load(ref: str, where: str = "preset") -> Scenario:
    """Load a preset by name or path."""
    path = find(ref, where)
    scenario = load_file(path, label=ref if is_path(ref) else path.name)
    return scenario if scenario.name else _named(scenario, path.stem)


def _named(scenario: Scenario, name: str) -> Scenario:
    return scenario.replace(name=name)


#: The largest preset file read: presets are a few hundred bytes.
MAX_BYTES = 2**20


def read_text(path: Path, label: str | None = None) -> str:
    """A preset's text: a regular UTF-8 file of at most :data:`MAX_BYTES`."""
    label = label or str(path)
    try:
        data = read_regular(path, label=label, limit=MAX_BYTES, noun="preset file")
    except CkptError as error:
        raise PresetError(error.template, where=error.where) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise PresetError(f"not UTF-8 text (byte {error.start})", where=label) from None


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
    chain = (_Link(label, None if path is None else _identity(path)),)
    layer = _resolve(_toml(text, label), label, home, chain, search_dirs())
    return from_document(layer.document, label, layer.labels)


def _toml(text: str, label: str) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PresetError(f"invalid TOML: {error}", where=label) from None
    except RecursionError:
        raise PresetError("invalid TOML: nested too deeply", where=label) from None
    except ValueError as error:  # e.g. an integer beyond Python's digit limit
        raise PresetError(f"invalid TOML: {error}", where=label) from None


# ------------------------------------------------------------------ inheritance

#: The top-level key naming the preset a preset starts from.
BASE = "base"

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
_WAYS = (
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
_JOB_PART_PATHS = frozenset({"failures.detect", "failures.reschedule", "failures.warmup"})


def _restart_drops(base: dict[str, Any], stated: set[str]) -> set[str]:
    """A child's whole storage restart drops the base's job parts unless another level of the base
    still restarts by parts; a child's job parts drop the base's whole restart."""
    if stated & _JOB_PART_PATHS:
        return {"failures.restart"}
    if "failures.restart" not in stated:
        return set()
    memory = base.get("memory")
    tiers = base.get(LEVELS)
    by_parts = (isinstance(memory, dict) and "read_bandwidth" in memory) or (
        isinstance(tiers, list) and any(isinstance(t, dict) and "read_bandwidth" in t for t in tiers[:-1])
    )
    return set() if by_parts else set(_JOB_PART_PATHS)


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


class _Link(Record):
    """One file of a chain of bases: its label, and what identifies it (its real path)."""

    label: str
    identity: str | None


def read_layer(path: Path, label: str, *, search: Sequence[Path] | None = None) -> Layer:
    """The document of the preset file ``path`` with its bases merged in (not yet validated)."""
    document = _toml(read_text(path, label), label)
    chain = (_Link(label, _identity(path)),)
    return _resolve(document, label, path.parent, chain, search_dirs() if search is None else search)


def parent(ref: str, where: str = "preset") -> Parent | None:
    """The base the preset ``ref`` (a name or a path) names, resolved; None when it names none."""
    path = find(ref, where)
    label = ref if is_path(ref) else path.name
    document = _toml(read_text(path, label), label)
    return _base(document, label, path.parent, (_Link(label, _identity(path)),), search_dirs())


def _identity(path: Path) -> str | None:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


def _resolve(
    document: dict[str, Any], label: str, directory: Path, chain: tuple[_Link, ...], search: Sequence[Path]
) -> Layer:
    found = _base(document, label, directory, chain, search)
    return _merge(found.layer if found is not None else Layer({}, {}), document, label)


def _base(
    document: dict[str, Any], label: str, directory: Path, chain: tuple[_Link, ...], search: Sequence[Path]
) -> Parent | None:
    """The base ``document`` names, read and validated on its own; errors name ``label: base`` and the
    chain of files that led there."""
    if BASE not in document:
        return None
    ref = document[BASE]
    where = f"{label}: {BASE}"
    if not isinstance(ref, str):
        raise PresetError(f"must be a string (a preset name or a path), got {_type(ref)}", where=where)
    if not ref.strip():
        raise PresetError("empty preset name", where=where)
    if "\x00" in ref:
        raise PresetError(f"{ref!r} is not a preset name or a path (a NUL character)", where=where)
    names = " -> ".join(link.label for link in chain)
    if is_path(ref):
        path = directory / ref
        base_label = str(path)
    else:
        if _identity(directory) == _identity(shipped_dir()):
            # A shipped preset's base is the shipped one of that name, whatever the user's search path holds.
            search = [shipped_dir()]
        found = _by_name(ref, where, search, frozenset(link.identity for link in chain))
        if found is None and _by_name(ref, where, search) is not None:
            raise PresetError(f"cycle: {names} -> {ref}.toml", where=where)
        if found is None:
            known = sorted({p.stem for d in search for p in _presets_in(d)})
            raise PresetError(f"{_unknown(ref, known)}; chain: {names} -> {ref}", where=where)
        path, base_label = found, found.name
    identity = _identity(path)
    chained = f"{names} -> {base_label}"
    if identity is not None and any(link.identity == identity for link in chain):
        raise PresetError(f"cycle: {chained}", where=where)
    if len(chain) > MAX_DEPTH:
        raise PresetError(f"more than {MAX_DEPTH} bases: {chained}", where=where)
    try:
        text = read_text(path, base_label)
    except PresetError as error:
        raise PresetError(f"{error}; chain: {chained}", where=where) from None
    layer = _resolve(_toml(text, base_label), base_label, path.parent, (*chain, _Link(base_label, identity)), search)
    from_document(layer.document, base_label, layer.labels)  # a base must be a valid preset on its own
    return Parent(ref, path, base_label, layer)


def _merge(base: Layer, child: dict[str, Any], label: str) -> Layer:
    """``child`` over ``base``: tables key by key, anything else whole, the child's metadata only, and
    one way of stating an input (:data:`_WAYS`) dropping the base's other ways."""
    stated = {f"{key}.{sub}" for key, value in child.items() if isinstance(value, dict) for sub in value}
    dropped = set().union(*(ways.drops(stated) for ways in _WAYS)) | _restart_drops(base.document, stated)
    # Tiers are stated one way too: a child's [[levels]] replaces the base's levels (its [memory] and the
    # keys the tiers state), and a child's classic levels replace the base's [[levels]].
    skipped: set[str] = set()
    if LEVELS in child:
        dropped |= set(_TIER_PATHS)
        skipped.add("memory")
    elif LEVELS in base.document and ("memory" in child or stated & set(_TIER_PATHS)):
        key = "memory" if "memory" in child else sorted(stated & set(_TIER_PATHS))[0]
        raise PresetError(
            f"the base lists its tiers as [[{LEVELS}]]: restate them as [[{LEVELS}]] here to change one",
            where=f"{label}: {key}",
        )
    document: dict[str, Any] = {}
    labels: dict[str, str] = {}
    for key, value in child.items():
        if key in _META:
            document[key], labels[key] = value, label
    for key, value in base.document.items():
        if key in _META or key in skipped:
            continue
        if key == LEVELS and isinstance(value, list) and stated & _JOB_PART_PATHS:
            # The child states the job's parts in [failures]: the base's tiers stop stating them.
            parts = {path.split(".")[1] for path in stated & _JOB_PART_PATHS}
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
        if key in _META or key == BASE:
            continue
        if key in _SECTIONS and not isinstance(value, dict):
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
    return Layer(document, labels)


def resolved_document(ref: str, where: str = "preset") -> dict[str, Any]:
    """The preset ``ref`` as one document, its bases merged in and no ``base`` key, after checking
    that it loads."""
    path = find(ref, where)
    label = ref if is_path(ref) else path.name
    layer = read_layer(path, label)
    from_document(layer.document, label, layer.labels)
    return layer.document


def from_document(document: dict[str, Any], label: str, labels: dict[str, str] | None = None) -> Scenario:
    """Validate a preset document; ``labels`` names the file of each key (``label`` otherwise)."""
    files = labels or {}

    def at(key: str) -> str:
        return f"{files.get(key, label)}: {key}"

    meta: dict[str, Any] = {}
    values: dict[str, float] = {}
    origin: dict[str, str] = {}
    middle: tuple[MiddleTier, ...] = ()
    tier_names: tuple[str, ...] = ()
    for key, value in document.items():
        if key == LEVELS:
            middle, tier_names = _levels(value, document, at(key), values, origin)
        elif key in _META:
            meta[key] = _meta(key, value, files.get(key, label))
        elif key in _SECTIONS:
            if not isinstance(value, dict):
                raise PresetError(f"must be a table ([{key}])", where=at(key))
            for sub, raw in value.items():
                spec = _BY_PATH.get(f"{key}.{sub}")
                where = at(f"{key}.{sub}")
                if f"{key}.{sub}" == _BAND_PATH:
                    meta[BAND] = _band(raw, where)
                    origin[BAND] = where
                    continue
                if spec is None:
                    known = ", ".join([*(f.key for f in FIELDS if f.section == key), *_EXTRA_KEYS.get(key, [])])
                    raise PresetError(f"unknown key (known in [{key}]: {known})", where=where)
                values[spec.name] = _value(spec.kind, raw, where)
                origin[spec.name] = where
        else:
            known = ", ".join([*_META, BASE, *sorted(_SECTIONS), LEVELS])
            raise PresetError(f"unknown key (known: {known})", where=at(key))
    version = meta.get("schema_version", SCHEMA_VERSION)
    if version > SCHEMA_VERSION:
        raise PresetError(
            f"schema_version {version} is newer than this ckptcalc reads ({SCHEMA_VERSION}); upgrade ckptcalc",
            where=at("schema_version"),
        )
    return Scenario(
        tier_names=tier_names,
        name=meta.get("name"),
        description=meta.get("description"),
        source=meta.get("source"),
        derived_from=meta.get("derived_from"),
        changed=meta.get("changed"),
        mtbf_ci95=meta.get(BAND),
        middle=middle,
        origin=origin,
        per_gpu=frozenset(),  # a rate stated per GPU is marked by its PerGpu value instead
        **values,
    )


# ---------------------------------------------------------------- tiers

#: The top-level array of tables listing the checkpoint tiers, fastest first.
LEVELS = "levels"

#: The most tiers a preset lists.
MAX_TIERS = 8

#: The keys of one ``[[levels]]`` entry, and the field each stands for on the first and the last tier.
_TIER_KEYS = ("name", "bandwidth", "snapshot_bandwidth", "restart", "detect", "reschedule", "read_bandwidth",
              "warmup", "serves", "interval")  # fmt: skip
_FIRST = {"bandwidth": "memory_bandwidth", "restart": "memory_restart_s", "read_bandwidth": "memory_read_bandwidth",
          "interval": "memory_interval_s", "serves": "replica_survival"}  # fmt: skip
_LAST = {"bandwidth": "bandwidth", "snapshot_bandwidth": "snapshot_bandwidth", "restart": "restart_s",
         "read_bandwidth": "read_bandwidth", "interval": "interval_s"}  # fmt: skip
_JOB_PARTS = {"detect": "detect_s", "reschedule": "reschedule_s", "warmup": "warmup_s"}
#: Keys the tiers state, which the classic tables must then leave out.
_TIER_PATHS = ("storage.bandwidth", "storage.snapshot_bandwidth", "storage.interval", "storage.read_bandwidth",
               "failures.restart")  # fmt: skip


def _levels(
    raw: Any, document: dict[str, Any], where: str, values: dict[str, Any], origin: dict[str, str]
) -> tuple[tuple[MiddleTier, ...], tuple[str, ...]]:
    """The ``[[levels]]`` tiers, fastest first: the first becomes the in-memory level, the last storage,
    those between the middle tiers (docs/model.md §12), and every tier's name. Fills ``values`` and
    ``origin`` for the first and last; detection, rescheduling and warm-up are the job's, equal on every
    tier that states them."""
    if not isinstance(raw, list) or not raw or not all(isinstance(t, dict) for t in raw):
        raise PresetError("must be an array of tables ([[levels]]), one per tier, fastest first", where=where)
    if len(raw) > MAX_TIERS:
        raise PresetError(f"at most {MAX_TIERS} tiers, got {len(raw)}", where=where)
    if "memory" in document:
        raise PresetError("give the tiers as [[levels]] or with [memory], not both", where=where)
    for path in _TIER_PATHS:
        table, key = path.split(".")
        if isinstance(document.get(table), dict) and key in document[table]:
            raise PresetError(f"the tiers in [[levels]] state it; drop {path}", where=where)
    file = where[: -len(LEVELS)].rstrip(": ") or where
    count = len(raw)
    names: set[str] = set()
    ordered: list[str] = []
    shares: list[float] = []
    middle: list[MiddleTier] = []
    for i, tier in enumerate(raw):
        here = f"{file}: {LEVELS}[{i}]"
        for key in tier:
            if key not in _TIER_KEYS:
                raise PresetError(f"unknown key (known: {', '.join(_TIER_KEYS)})", where=f"{here}.{key}")
        name = tier.get("name", f"tier {i + 1}")
        _tier_name(name, f"{here}.name", middle=0 < i < count - 1)
        if name in names:
            raise PresetError(f"two tiers named {name!r}", where=f"{here}.name")
        names.add(name)
        ordered.append(name)
        if "bandwidth" not in tier:
            raise PresetError("a tier needs its write bandwidth", where=f"{here}.bandwidth")
        if "snapshot_bandwidth" in tier and i != count - 1:
            raise PresetError("only the last tier is written asynchronously", where=f"{here}.snapshot_bandwidth")
        parts = [key for key in ("detect", "reschedule", "read_bandwidth", "warmup") if key in tier]
        if "restart" in tier and parts:
            raise PresetError(f"give restart or its parts, not both (here {parts[0]})", where=f"{here}.restart")
        job_parts = isinstance(document.get("failures"), dict) and any(k in document["failures"] for k in _JOB_PARTS)
        if "restart" not in tier and ("read_bandwidth" not in tier if i < count - 1 else not (parts or job_parts)):
            needed = "read_bandwidth" if i < count - 1 else "detect, reschedule, read_bandwidth, warmup"
            raise PresetError(f"a tier needs its restart, or its parts ({needed})", where=f"{here}.restart")
        if "serves" not in tier:
            raise PresetError("the share of failures this tier recovers, e.g. 0.9", where=f"{here}.serves")
        share = _value("fraction", tier["serves"], f"{here}.serves")
        if not 0.0 <= share <= 1.0:
            raise PresetError(f"must be a share in [0, 1], got {share:g}", where=f"{here}.serves")
        if i == count - 1 and share <= 0.0:
            raise PresetError(
                "the last tier recovers the failures no faster tier survives: its share must be above 0",
                where=f"{here}.serves",
            )
        shares.append(share)
        for key, field in _JOB_PARTS.items():
            if key in tier and isinstance(document.get("failures"), dict) and key in document["failures"]:
                raise PresetError(f"give {key} once: in [failures] or on the tiers", where=f"{here}.{key}")
            if key in tier:
                value = _value("duration", tier[key], f"{here}.{key}")
                if field in values and values[field] != value:
                    raise PresetError(
                        f"{key} follows every failure, whichever tier restores it: give the same value on"
                        f" every tier (here {units.format_duration(value)}, before"
                        f" {units.format_duration(values[field])})",
                        where=f"{here}.{key}",
                    )
                values[field], origin[field] = value, f"{here}.{key}"
        kinds = {"bandwidth": "rate", "snapshot_bandwidth": "rate", "restart": "duration",
                 "read_bandwidth": "rate", "interval": "duration", "serves": "fraction"}  # fmt: skip
        fields = _LAST if i == count - 1 else _FIRST if i == 0 else None
        if fields is not None:
            for key, field in fields.items():
                if key in tier:
                    values[field] = share if key == "serves" else _value(kinds[key], tier[key], f"{here}.{key}")
                    origin[field] = f"{here}.{key}"
            continue
        found = {key: _value(kinds[key], tier[key], f"{here}.{key}") for key in kinds if key in tier}
        per_gpu = frozenset(k for k, v in found.items() if isinstance(v, units.PerGpu))
        for key in ("bandwidth", "read_bandwidth", "restart", "interval"):
            stated = found.get(key)
            if stated is not None and not (math.isfinite(stated) and stated > 0):
                raise PresetError(f"must be positive, got {float(stated):g}", where=f"{here}.{key}")
        middle.append(
            MiddleTier(
                name=name,
                bandwidth=float(found["bandwidth"]),
                share=share,
                restart_s=None if "restart" not in found else float(found["restart"]),
                read_bandwidth=None if "read_bandwidth" not in found else float(found["read_bandwidth"]),
                interval_s=None if "interval" not in found else float(found["interval"]),
                where=here,
                per_gpu=per_gpu,
            )
        )
    if abs(sum(shares) - 1.0) > 1e-9:
        raise PresetError(f"the tiers' shares of failures (serves) must sum to 1, got {sum(shares):.10g}", where=where)
    return (tuple(middle) if count > 1 else ()), tuple(ordered)


#: The longest tier name: it labels table rows.
MAX_TIER_NAME = 40

#: Names the first and last tiers are shown by, which a middle tier cannot take.
_RESERVED = ("memory", "storage")


def _tier_name(name: Any, where: str, *, middle: bool) -> None:
    """A tier's name: short printable text; a middle tier's not one the outer tiers are shown by."""
    if not isinstance(name, str):
        raise PresetError(f"must be a string, got {_type(name)}", where=where)
    if not name.strip():
        raise PresetError("must not be empty", where=where)
    if len(name) > MAX_TIER_NAME:
        raise PresetError(f"at most {MAX_TIER_NAME} characters, got {len(name)}", where=where)
    if not name.isprintable():
        raise PresetError("must be printable text (no control characters, tabs or newlines)", where=where)
    if middle and name.strip().lower() in _RESERVED:
        raise PresetError(
            f"{name!r} names the first or last tier in the output; choose another name for a middle tier",
            where=where,
        )


#: The preset key of the job MTBF's 95 % interval: an array of two durations.
_BAND_PATH = f"failures.{BAND}"
_EXTRA_KEYS = {"failures": [BAND]}


def _band(raw: Any, where: str) -> tuple[float, float]:
    if not (isinstance(raw, list) and len(raw) == 2):
        raise PresetError('must be an array of two durations, e.g. ["3.04h", "3.73h"]', where=where)
    low, high = (_value("duration", item, where) for item in raw)
    return low, high


def _meta(key: str, value: Any, label: str) -> Any:
    where = f"{label}: {key}"
    if key == "schema_version":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise PresetError("must be a positive integer", where=where)
        return value
    if key == "changed":
        if not (isinstance(value, list) and all(isinstance(item, str) for item in value)):
            raise PresetError("must be an array of strings (the preset keys changed)", where=where)
        return tuple(value)
    if not isinstance(value, str):
        raise PresetError(f"must be a string, got {_type(value)}", where=where)
    return value


def _type(value: Any) -> str:
    names = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "a table",
    }
    return names.get(type(value), type(value).__name__)


def _value(kind: str, raw: Any, where: str) -> float:
    if isinstance(raw, str):
        try:
            value = PARSERS[kind](raw)
            # A rate per GPU ("25GB/s/gpu") stays one: Scenario records the mark.
            return value if isinstance(value, units.PerGpu) else float(value)
        except CkptError as error:
            raise PresetError(error.template, where=where) from None
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        if kind in _NEEDS_UNIT:
            raise PresetError(
                f'a {kind} needs its unit: write it as a string such as "{_NEEDS_UNIT[kind]}"', where=where
            )
        try:
            return float(raw)
        except OverflowError:
            raise PresetError("number too large", where=where) from None
    raise PresetError(f"expected a {kind}, got {_type(raw)}", where=where)


# ------------------------------------------------------------------ writing

_OUT_UNITS = {
    "size": (units.SIZE_UNITS, ["PB", "TB", "GB", "MB", "kB", "B"], ""),
    "rate": (units.SIZE_UNITS, ["PB", "TB", "GB", "MB", "kB", "B"], "/s"),
    "duration": (units.DURATION_UNITS, ["d", "h", "min", "s"], ""),
}


def to_document(scenario: Scenario) -> dict[str, Any]:
    """The TOML document for ``scenario``; it loads back to the same numbers."""
    document: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    for key in ("name", "description", "source", "derived_from"):
        if getattr(scenario, key):
            document[key] = getattr(scenario, key)
    if scenario.changed:
        document["changed"] = list(scenario.changed)
    for name, value in scenario.values().items():
        spec = BY_NAME[name]
        document.setdefault(spec.section, {})[spec.key] = _written(spec.kind, value)
    band = scenario.mtbf_ci95
    if band is not None and band[1] is not None:
        document.setdefault("failures", {})[BAND] = [_written("duration", band[0]), _written("duration", band[1])]
    if scenario.middle or scenario.tier_names:
        _write_levels(scenario, document)
    return document


def _write_levels(scenario: Scenario, document: dict[str, Any]) -> None:
    """The levels as ``[[levels]]``, fastest first (memory, the middle tiers, storage), with the names
    they were given, taking the keys the tiers state out of the classic tables."""
    values = scenario.values()
    count = len(scenario.middle) + (2 if "replica_survival" in values else 1)
    names = scenario.tier_names if len(scenario.tier_names) == count else ()
    tiers: list[dict[str, Any]] = []
    served = 0.0
    memory = document.pop("memory", None)
    if memory is not None:
        first: dict[str, Any] = {"name": names[0] if names else "memory"}
        first.update({k: memory[k] for k in ("bandwidth", "restart", "read_bandwidth") if k in memory})
        first["serves"] = _written("number", values["replica_survival"])
        if "interval" in memory:
            first["interval"] = memory["interval"]
        tiers.append(first)
        served = float(values["replica_survival"])
    for tier in scenario.middle:
        entry: dict[str, Any] = {"name": tier.name}
        for key, field, kind in (
            ("bandwidth", "bandwidth", "rate"),
            ("restart", "restart_s", "duration"),
            ("read_bandwidth", "read_bandwidth", "rate"),
            ("interval", "interval_s", "duration"),
        ):
            value = getattr(tier, field)
            if value is not None:
                entry[key] = _written(kind, units.PerGpu(value) if field in tier.per_gpu else value)
        entry["serves"] = _written("number", tier.share)
        served += tier.share
        tiers.append(entry)
    last: dict[str, Any] = {"name": names[-1] if names else "storage"}
    storage, failures = document.get("storage", {}), document.get("failures", {})
    for key in ("bandwidth", "snapshot_bandwidth", "read_bandwidth", "interval"):
        if key in storage:
            last[key] = storage.pop(key)
    if "restart" in failures:
        last["restart"] = failures.pop("restart")
    last["serves"] = _written("number", float(f"{1.0 - served:.12g}"))  # the rest, as the others add up
    tiers.append(last)
    for table in ("storage", "failures"):
        if table in document and not document[table]:
            del document[table]
    document[LEVELS] = tiers


def _written(kind: str, value: float) -> Any:
    if kind in _OUT_UNITS:
        table, choices, suffix = _OUT_UNITS[kind]
        text = units.exact(value, table, choices) + suffix
        return text + "/gpu" if isinstance(value, units.PerGpu) else text
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def toml_text(document: dict[str, Any]) -> str:
    """A preset document as TOML, its tiers as ``[[levels]]`` tables after the others."""
    import tomli_w

    tiers = document.get(LEVELS)
    text = str(tomli_w.dumps({k: v for k, v in document.items() if k != LEVELS}))
    if isinstance(tiers, list):
        for tier in tiers:
            text += f"\n[[{LEVELS}]]\n" + str(tomli_w.dumps(tier))
    return text


def dumps(scenario: Scenario) -> str:
    return toml_text(to_document(scenario))


def dumps_over(scenario: Scenario, base: Parent, path: Path) -> str:
    """``scenario`` as a preset at ``path`` that inherits from ``base``: ``base = ...`` (a name as it
    was written, a path made relative to ``path``'s directory) and only the keys whose values differ
    from the base's. A scenario that leaves unset a key its base sets cannot be written so."""

    label = str(path)
    if _identity(path) is not None and _identity(path) == _identity(base.path):
        raise PresetError(
            f"{label} is the base {base.ref!r} itself: a preset cannot be saved over its own base", where="save_preset"
        )
    full = to_document(scenario)
    mine = from_document(full, label)
    theirs = to_document(from_document(base.layer.document, base.label, base.layer.labels))
    # Compared as written: the writer gives one text for one value.
    differ = {key for key, value in full.items() if key not in _META and value != theirs.get(key)}
    stated = {f"{key}.{sub}" for key, value in full.items() if isinstance(value, dict) for sub in value}
    for key in [key for key in differ if isinstance(full[key], dict)]:
        differ.remove(key)
        differ |= {f"{key}.{sub}" for sub, raw in full[key].items() if raw != theirs.get(key, {}).get(sub)}
    for ways in _WAYS:
        if ways.whole and differ & ways.keys:
            differ |= stated & (ways.keys | ways.dropped)  # stating one key of these drops all of the base's
    document: dict[str, Any] = {"schema_version": full["schema_version"], BASE: _written_base(base, path)}
    document.update({key: full[key] for key in _META if key in full and key != "schema_version"})
    for key, value in full.items():
        if key in differ:
            document[key] = value
        elif isinstance(value, dict):
            table = {sub: raw for sub, raw in value.items() if f"{key}.{sub}" in differ}
            if table:
                document[key] = table
    merged = _merge(base.layer, document, label)
    back = from_document(merged.document, label, merged.labels)
    if back != mine:
        lost = [f.path for f in FIELDS if getattr(back, f.name) != getattr(mine, f.name)]
        lost += [_BAND_PATH] if back.mtbf_ci95 != mine.mtbf_ci95 else []
        raise PresetError(
            f"the base {base.ref!r} sets {', '.join(lost) or 'values'} that this configuration leaves unset,"
            " and a preset can only add to its base: save without {keep_base}",
            where="keep_base",
        )
    return toml_text(document)


def _written_base(base: Parent, path: Path) -> str:
    """The ``base`` line of a preset written to ``path``: a name as it is, a path relative to ``path``."""
    if base.by_name:
        return base.ref
    target = os.path.abspath(path.parent if str(path.parent) else Path("."))
    try:
        relative = os.path.relpath(os.path.abspath(base.path), target)
    except ValueError:  # another drive: only the absolute path reaches it
        relative = os.path.abspath(base.path)
    text = Path(relative).as_posix()
    return text if is_path(text) else f"./{text}"


def save(
    scenario: Scenario,
    path: Path,
    *,
    force: bool = False,
    where: str = "save_preset",
    base: Parent | None = None,
) -> None:
    """Write ``scenario`` to ``path`` atomically; refuse to overwrite without ``force``. With ``base``,
    write it as a preset inheriting from that base (see :func:`dumps_over`)."""
    text = dumps(scenario) if base is None else dumps_over(scenario, base, path)
    try:
        check_new(path, force=force, where=where)
        atomic_write(path, text.encode("utf-8"), force=force, where=where)
    except CkptError as error:
        raise PresetError(error.template, where=error.where) from None


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
