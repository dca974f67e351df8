"""Presets written: a :class:`Scenario` as a TOML document, whole or as the keys that differ from a base.

Values are written with the unit that states them exactly; the file is written
atomically and never over an existing one unless forced.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ckptcalc.errors import CkptError, PresetError
from ckptcalc.files import atomic_write, check_new
from ckptcalc.inputs import units
from ckptcalc.inputs.fields import AUTO_SPARES, BY_NAME, FIELDS
from ckptcalc.inputs.inherit import WAYS, Parent, merge_layers
from ckptcalc.inputs.preset_document import BAND_PATH, BASE, LEVELS, META, SCHEMA_VERSION, from_document
from ckptcalc.inputs.preset_search import identity, is_path
from ckptcalc.inputs.scenario import BAND, Scenario

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
    if scenario.levers:
        from ckptcalc.inputs.preset_document import LEVER_KEYS, LEVERS

        keys = {name: (key, kind) for key, (kind, name) in LEVER_KEYS.items()}
        document[LEVERS] = {keys[name][0]: _written(keys[name][1], value) for name, value in scenario.levers}
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
            ("compression", "compression", "number"),
            ("codec_bandwidth", "codec_bandwidth", "rate"),
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
    if kind == "spares" and value == AUTO_SPARES:
        return "auto"
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
    if identity(path) is not None and identity(path) == identity(base.path):
        raise PresetError(
            f"{label} is the base {base.ref!r} itself: a preset cannot be saved over its own base", where="save_preset"
        )
    full = to_document(scenario)
    mine = from_document(full, label)
    theirs = to_document(from_document(base.layer.document, base.label, base.layer.labels))
    # Compared as written: the writer gives one text for one value.
    differ = {key for key, value in full.items() if key not in META and value != theirs.get(key)}
    stated = {f"{key}.{sub}" for key, value in full.items() if isinstance(value, dict) for sub in value}
    for key in [key for key in differ if isinstance(full[key], dict)]:
        differ.remove(key)
        differ |= {f"{key}.{sub}" for sub, raw in full[key].items() if raw != theirs.get(key, {}).get(sub)}
    for ways in WAYS:
        if ways.whole and differ & ways.keys:
            differ |= stated & (ways.keys | ways.dropped)  # stating one key of these drops all of the base's
    document: dict[str, Any] = {"schema_version": full["schema_version"], BASE: _written_base(base, path)}
    document.update({key: full[key] for key in META if key in full and key != "schema_version"})
    for key, value in full.items():
        if key in differ:
            document[key] = value
        elif isinstance(value, dict):
            table = {sub: raw for sub, raw in value.items() if f"{key}.{sub}" in differ}
            if table:
                document[key] = table
    merged = merge_layers(base.layer, document, label)
    back = from_document(merged.document, label, merged.labels)
    if back != mine:
        lost = [f.path for f in FIELDS if getattr(back, f.name) != getattr(mine, f.name)]
        lost += [BAND_PATH] if back.mtbf_ci95 != mine.mtbf_ci95 else []
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
