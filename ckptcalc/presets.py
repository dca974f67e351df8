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
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from . import units
from .errors import CkptError, PresetError
from .files import atomic_write, check_new, read_regular
from .records import Record
from .scenario import BAND, BY_NAME, FIELDS, PARSERS, Scenario

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
    here = Path(__file__).resolve().parent
    packaged = here / "presets"
    return packaged if packaged.is_dir() else here.parent / "presets"


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
    if not ref.strip():
        raise PresetError("empty preset name", where=where)
    if is_path(ref):
        return Path(ref)
    if len(ref) > MAX_NAME:
        raise PresetError(f"a preset name is at most {MAX_NAME} characters, got {len(ref)}", where=where)
    for directory in search_dirs():
        for path in _presets_in(directory):
            if path.stem == ref:
                return path
    import difflib

    names = [p.name for p in available()]
    close = difflib.get_close_matches(ref, names, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise PresetError(f"unknown preset {ref!r}{hint} (known: {', '.join(names) or 'none'})", where=where)


def available() -> list[PresetInfo]:
    """Every preset found by name, first occurrence wins."""
    seen: dict[str, PresetInfo] = {}
    for directory in search_dirs():
        for path in _presets_in(directory):
            if path.stem in seen:
                continue
            try:
                scenario = load_file(path)
            except CkptError:
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


def load_file(path: Path, label: str | None = None) -> Scenario:
    """Read and validate one preset file."""
    label = label or str(path)
    return parse(read_text(path, label), label)


def parse(text: str, label: str) -> Scenario:
    """Validate the TOML document ``text``; ``label`` names it in messages."""
    import tomllib

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PresetError(f"invalid TOML: {error}", where=label) from None
    except RecursionError:
        raise PresetError("invalid TOML: nested too deeply", where=label) from None
    except ValueError as error:  # e.g. an integer beyond Python's digit limit
        raise PresetError(f"invalid TOML: {error}", where=label) from None
    return from_document(document, label)


def from_document(document: dict[str, Any], label: str) -> Scenario:
    meta: dict[str, Any] = {}
    values: dict[str, float] = {}
    origin: dict[str, str] = {}
    for key, value in document.items():
        if key in _META:
            meta[key] = _meta(key, value, label)
        elif key in _SECTIONS:
            if not isinstance(value, dict):
                raise PresetError(f"must be a table ([{key}])", where=f"{label}: {key}")
            for sub, raw in value.items():
                spec = _BY_PATH.get(f"{key}.{sub}")
                where = f"{label}: {key}.{sub}"
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
            known = ", ".join([*_META, *sorted(_SECTIONS)])
            raise PresetError(f"unknown key (known: {known})", where=f"{label}: {key}")
    version = meta.get("schema_version", SCHEMA_VERSION)
    if version > SCHEMA_VERSION:
        raise PresetError(
            f"schema_version {version} is newer than this ckptcalc reads ({SCHEMA_VERSION}); upgrade ckptcalc",
            where=f"{label}: schema_version",
        )
    return Scenario(
        name=meta.get("name"),
        description=meta.get("description"),
        source=meta.get("source"),
        derived_from=meta.get("derived_from"),
        changed=meta.get("changed"),
        mtbf_ci95=meta.get(BAND),
        origin=origin,
        **values,
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
            return float(PARSERS[kind](raw))
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
    return document


def _written(kind: str, value: float) -> Any:
    if kind in _OUT_UNITS:
        table, choices, suffix = _OUT_UNITS[kind]
        return units.exact(value, table, choices) + suffix
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def dumps(scenario: Scenario) -> str:
    import tomli_w

    return tomli_w.dumps(to_document(scenario))


def save(scenario: Scenario, path: Path, *, force: bool = False, where: str = "save_preset") -> None:
    """Write ``scenario`` to ``path`` atomically; refuse to overwrite without ``force``."""
    text = dumps(scenario)
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
    fields of :class:`ckptcalc.decide.LeverAssumptions`."""
    directory = shipped_dir()
    snapshot = load_file(directory / f"{ASYNC_PRESET}.toml", f"{ASYNC_PRESET}.toml")
    memory = load_file(directory / f"{MEMORY_PRESET}.toml", f"{MEMORY_PRESET}.toml")
    # The shipped files carry every one of these (tested); the asserts narrow the types.
    assert snapshot.snapshot_bandwidth and snapshot.gpus and memory.replica_survival
    assert memory.memory_bandwidth and memory.gpus and memory.memory_restart_s
    return {
        "snapshot_bandwidth_per_gpu": snapshot.snapshot_bandwidth / snapshot.gpus,
        "replica_survival": memory.replica_survival,
        "memory_bandwidth_per_gpu": memory.memory_bandwidth / memory.gpus,
        "memory_restart_s": memory.memory_restart_s,
    }
