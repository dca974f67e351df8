"""One preset document (TOML, its bases already merged in) checked and turned into a :class:`Scenario`.

Every problem is reported as ``file: table.key``; unknown tables and keys are
errors. The format itself is described in :mod:`ckptcalc.inputs.presets`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ckptcalc.errors import CkptError, InputError, PresetError
from ckptcalc.files import read_regular
from ckptcalc.inputs import units
from ckptcalc.inputs.fields import FIELDS, PARSERS
from ckptcalc.inputs.scenario import BAND, MiddleTier, Scenario
from ckptcalc.mechanisms import registry

#: Version of the preset format this ckptcalc writes and the newest it reads.
SCHEMA_VERSION = 1

META = ("schema_version", "name", "description", "source", "derived_from", "changed")
SECTIONS = {f.section for f in FIELDS}
_BY_PATH = {f.path: f for f in FIELDS}
_NEEDS_UNIT = {"rate": "2TB/s", "duration": "10min"}


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


def parse_toml(text: str, label: str) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PresetError(f"invalid TOML: {error}", where=label) from None
    except RecursionError:
        raise PresetError("invalid TOML: nested too deeply", where=label) from None
    except ValueError as error:  # e.g. an integer beyond Python's digit limit
        raise PresetError(f"invalid TOML: {error}", where=label) from None


#: The top-level key naming the preset a preset starts from.
BASE = "base"


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
    levers: tuple[tuple[str, float], ...] = ()
    sources: dict[str, str] = {}
    log_patterns: str | None = None
    for key, value in document.items():
        if key == SOURCES:
            sources = _sources(value, at)
        elif key == LOG:
            log_patterns = _log(value, at)
        elif key == LEVELS:
            middle, tier_names = _levels(value, document, at(key), values, origin)
        elif key == LEVERS:
            if not isinstance(value, dict):
                raise PresetError(f"must be a table ([{LEVERS}])", where=at(key))
            # The just-in-time lever's keys are the job's (a per-GPU rate needs its GPUs); the rest, the levers'.
            _lever_table({k: v for k, v in value.items() if k in _LEVER_KEYS}, at(key), meta, origin)
            levers = _levers({k: v for k, v in value.items() if k not in _LEVER_KEYS}, at)
        elif key in META:
            meta[key] = _meta(key, value, files.get(key, label))
        elif key in SECTIONS:
            if not isinstance(value, dict):
                raise PresetError(f"must be a table ([{key}])", where=at(key))
            for sub, raw in value.items():
                spec = _BY_PATH.get(f"{key}.{sub}")
                where = at(f"{key}.{sub}")
                reader = registry.preset_array(key, sub)
                if reader is not None:  # an array of tables a mechanism reads ([[failures.classes]])
                    found, came = reader.read_preset_array(key, sub, raw, at, value_of)
                    values.update(found)
                    origin.update(came)
                    continue
                if f"{key}.{sub}" == BAND_PATH:
                    meta[BAND] = _band(raw, where)
                    origin[BAND] = where
                    continue
                if spec is None:
                    known = ", ".join([*(f.key for f in FIELDS if f.section == key), *_EXTRA_KEYS.get(key, [])])
                    raise PresetError(f"unknown key (known in [{key}]: {known})", where=where)
                values[spec.name] = value_of(spec.kind, raw, where)
                origin[spec.name] = where
        else:
            known = ", ".join([*META, BASE, *sorted(SECTIONS), LEVELS, LEVERS, SOURCES, LOG])
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
        **{name: meta[name] for name in _LEVER_FIELDS if name in meta},
        middle=middle,
        levers=levers,
        sources=tuple((name, text) for name, text in sources.items() if name in values),
        log_patterns=log_patterns,
        origin=origin,
        per_gpu=frozenset(),  # a rate stated per GPU is marked by its PerGpu value instead
        **values,
    )


#: The table of what reading the run's logs needs: ``patterns``, a file of line patterns (docs/formats/patterns.md).
LOG = "log"


def _log(raw: Any, at: Any) -> str | None:
    """The ``[log]`` table: ``patterns``, the path of a TOML file of line patterns."""
    if not isinstance(raw, dict):
        raise PresetError(f"must be a table ([{LOG}])", where=at(LOG))
    for key, value in raw.items():
        if key != "patterns":
            raise PresetError(f"unknown key (known in [{LOG}]: patterns)", where=at(f"{LOG}.{key}"))
        if not isinstance(value, str) or not value.strip() or not value.isprintable():
            raise PresetError('must be the path of a patterns file, e.g. "lines.toml"', where=at(f"{LOG}.{key}"))
    patterns = raw.get("patterns")
    return None if patterns is None else str(patterns)


#: The longest name or description a saved preset takes.
MAX_LABEL = 500


def check_label(text: str | None, where: str) -> None:
    """A saved preset's name or description, checked: one line of printable text, not empty, of at most
    :data:`MAX_LABEL` characters (None: not given)."""
    if text is None:
        return
    if not text.strip():
        raise InputError("must not be empty", where=where)
    if not text.isprintable():
        raise InputError("must be one line of printable text (no newline, tab or control character)", where=where)
    if len(text) > MAX_LABEL:
        raise InputError(f"at most {MAX_LABEL} characters, got {len(text)}", where=where)


#: The table saying where values came from: preset key (``table.key``) -> how (``fitted from FILE``).
SOURCES = "sources"

#: How a value came to be, the first word of its ``[sources]`` entry; a value with none was given.
HOW = ("given", "fitted", "measured", "derived")

#: The longest ``[sources]`` entry.
MAX_SOURCE = 200


def _sources(raw: Any, at: Any) -> dict[str, str]:
    """The ``[sources]`` table, checked, by field name: each key a preset key, each value a line
    starting with one of :data:`HOW` (``"fitted from incidents.jsonl"``)."""
    if not isinstance(raw, dict):
        raise PresetError(f"must be a table ([{SOURCES}])", where=at(SOURCES))
    found: dict[str, str] = {}
    for path, text in raw.items():
        where = at(f"{SOURCES}.{path}")
        spec = _BY_PATH.get(path)
        if spec is None:
            raise PresetError('unknown preset key: name one as table.key, e.g. "failures.mtbf"', where=where)
        if not isinstance(text, str):
            raise PresetError(
                f'must be a string such as "fitted from incidents.jsonl", got {type_name(text)}', where=where
            )
        if text.split(" ", 1)[0] not in HOW or len(text) > MAX_SOURCE or not text.isprintable():
            raise PresetError(
                f"must be one line of at most {MAX_SOURCE} characters starting with {', '.join(HOW)}"
                ' (e.g. "fitted from incidents.jsonl")',
                where=where,
            )
        found[spec.name] = text
    return found


#: The table of what the levers assume, where a preset overrides it (docs/model.md §14).
LEVERS = "levers"

#: ``[levers]`` keys: (unit kind, field of :class:`ckptcalc.model.decisions.LeverAssumptions`).
LEVER_KEYS = {
    "elastic_groups": ("count", "elastic_groups"),
    "elastic_group_share": ("fraction", "elastic_group_share"),
    "elastic_rejoin": ("duration", "elastic_rejoin_s"),
    "elastic_quorum_pause": ("duration", "elastic_quorum_pause_s"),
    "elastic_ft_overhead": ("fraction", "elastic_ft_overhead"),
}


def _levers(raw: Any, at: Any) -> tuple[tuple[str, float], ...]:
    """The ``[levers]`` table: what the elastic groups lever assumes, checked, by assumption field."""
    if not isinstance(raw, dict):
        raise PresetError(f"must be a table ([{LEVERS}])", where=at(LEVERS))
    found = []
    for sub, value in raw.items():
        where = at(f"{LEVERS}.{sub}")
        if sub not in LEVER_KEYS:
            raise PresetError(
                f"unknown key (known in [{LEVERS}]: {', '.join([*_LEVER_KEYS, *LEVER_KEYS])})", where=where
            )
        kind, name = LEVER_KEYS[sub]
        number = value_of(kind, value, where)
        if kind == "count" and not (number >= 2 and float(number).is_integer()):
            raise PresetError(f"must be a whole number of groups, 2 or more, got {number:g}", where=where)
        if kind == "fraction" and not 0 <= number <= 1:
            raise PresetError(f"must be a share in [0, 1], got {number:g}", where=where)
        if kind == "duration" and not (0 <= number <= 1e21):
            raise PresetError(f"must be 0 or a positive duration, got {number:g} s", where=where)
        found.append((name, float(number)))
    return tuple(found)


#: The keys of ``[levers]`` that set what a mechanism's lever assumes (its home's ``lever_presets``, such as the
#: just-in-time share, bandwidth and step, docs/model.md §13): key -> (unit kind, Scenario field).
_LEVER_KEYS = {key: (kind, field) for key, kind, field in registry.lever_presets()}
_LEVER_FIELDS = tuple(field for _, field in _LEVER_KEYS.values())


def _lever_table(raw: Any, where: str, meta: dict[str, Any], origin: dict[str, str]) -> None:
    """``[levers]``: the just-in-time lever's share (in [0, 1]), save bandwidth and step time (positive)."""
    if not isinstance(raw, dict):
        raise PresetError(f"must be a table ([{LEVERS}])", where=where)
    for sub, value in raw.items():
        here = f"{where}.{sub}"
        if sub not in _LEVER_KEYS:
            known = ", ".join([*_LEVER_KEYS, *LEVER_KEYS])
            raise PresetError(f"unknown key (known in [{LEVERS}]: {known})", where=here)
        kind, field = _LEVER_KEYS[sub]
        found = value_of(kind, value, here)
        if not math.isfinite(found) or (found > 1 if kind == "fraction" else False) or found < 0:
            raise PresetError(f"must be a share in [0, 1], got {found:g}", where=here)
        if kind != "fraction" and found <= 0:
            raise PresetError(f"must be positive, got {found:g}", where=here)
        meta[field], origin[field] = found, here


#: The top-level array of tables listing the checkpoint tiers, fastest first.
LEVELS = "levels"

#: The most tiers a preset lists.
MAX_TIERS = 8

#: Keys of the registered mechanisms a tier states (ckptcalc.mechanisms): key -> its declaration.
STORAGE_TIER_KEYS = {key.key: key for key in registry.tier_keys()}
_MIDDLE_COSTS = tuple(key for key, spec in STORAGE_TIER_KEYS.items() if spec.middle)  # a middle tier carries these
#: The keys of one ``[[levels]]`` entry, and the field each stands for on the first and the last tier.
_TIER_KEYS = ("name", "bandwidth", "snapshot_bandwidth", "restart", "detect", "reschedule", "read_bandwidth",
              "warmup", "serves", "interval", *STORAGE_TIER_KEYS)  # fmt: skip
_FIRST = {"bandwidth": "memory_bandwidth", "restart": "memory_restart_s", "read_bandwidth": "memory_read_bandwidth",
          "interval": "memory_interval_s", "serves": "replica_survival"}  # fmt: skip
_LAST = {"bandwidth": "bandwidth", "snapshot_bandwidth": "snapshot_bandwidth", "restart": "restart_s",
         "read_bandwidth": "read_bandwidth", "interval": "interval_s"}  # fmt: skip
_LAST.update({key: key for key in STORAGE_TIER_KEYS})
_JOB_PARTS = {"detect": "detect_s", "reschedule": "reschedule_s", "warmup": "warmup_s"}
#: Keys the tiers state, which the classic tables must then leave out.
TIER_PATHS = ("storage.bandwidth", "storage.snapshot_bandwidth", "storage.interval", "storage.read_bandwidth",
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
    for path in TIER_PATHS:
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
        for key, spec in STORAGE_TIER_KEYS.items():
            refused = i != count - 1 if spec.place == "last" else i == 0 and count > 1
            if key in tier and refused:
                raise PresetError(spec.refusal, where=f"{here}.{key}")
        parts = [key for key in ("detect", "reschedule", "read_bandwidth", "warmup") if key in tier]
        if "restart" in tier and parts:
            raise PresetError(f"give restart or its parts, not both (here {parts[0]})", where=f"{here}.restart")
        job_parts = isinstance(document.get("failures"), dict) and any(k in document["failures"] for k in _JOB_PARTS)
        if "restart" not in tier and ("read_bandwidth" not in tier if i < count - 1 else not (parts or job_parts)):
            needed = "read_bandwidth" if i < count - 1 else "detect, reschedule, read_bandwidth, warmup"
            raise PresetError(f"a tier needs its restart, or its parts ({needed})", where=f"{here}.restart")
        if "serves" not in tier:
            raise PresetError("the share of failures this tier recovers, e.g. 0.9", where=f"{here}.serves")
        share = value_of("fraction", tier["serves"], f"{here}.serves")
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
                value = value_of("duration", tier[key], f"{here}.{key}")
                if field in values and values[field] != value:
                    raise PresetError(
                        f"{key} follows every failure, whichever tier restores it: give the same value on"
                        f" every tier (here {units.format_duration(value)}, before"
                        f" {units.format_duration(values[field])})",
                        where=f"{here}.{key}",
                    )
                values[field], origin[field] = value, f"{here}.{key}"
        kinds = {"bandwidth": "rate", "snapshot_bandwidth": "rate", "restart": "duration",
                 "read_bandwidth": "rate", "interval": "duration", "serves": "fraction",
                 **{key: spec.kind for key, spec in STORAGE_TIER_KEYS.items()}}  # fmt: skip
        fields = _LAST if i == count - 1 else _FIRST if i == 0 else None
        if fields is not None:
            for key, field in fields.items():
                if key in tier:
                    values[field] = share if key == "serves" else value_of(kinds[key], tier[key], f"{here}.{key}")
                    origin[field] = f"{here}.{key}"
            continue
        found = {key: value_of(kinds[key], tier[key], f"{here}.{key}") for key in kinds if key in tier}
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
                **{
                    k: None if k not in found else float(found[k])
                    for k, spec in STORAGE_TIER_KEYS.items()
                    if spec.middle
                },
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
        raise PresetError(f"must be a string, got {type_name(name)}", where=where)
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
BAND_PATH = f"failures.{BAND}"
_EXTRA_KEYS = {"failures": [BAND]}


def _band(raw: Any, where: str) -> tuple[float, float]:
    if not (isinstance(raw, list) and len(raw) == 2):
        raise PresetError('must be an array of two durations, e.g. ["3.04h", "3.73h"]', where=where)
    low, high = (value_of("duration", item, where) for item in raw)
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
        raise PresetError(f"must be a string, got {type_name(value)}", where=where)
    return value


def type_name(value: Any) -> str:
    names = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "a table",
    }
    return names.get(type(value), type(value).__name__)


def value_of(kind: str, raw: Any, where: str) -> float:
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
    raise PresetError(f"expected a {kind}, got {type_name(raw)}", where=where)
