"""Presets written: a :class:`Scenario` as a TOML document, whole or as the keys that differ from a base.

Values are written for a reader: in the unit the tool prints them in, at 4
significant figures (``mtbf = "13.37h"``), or as the user typed them. Where
rounding a value would move the effective time by more than 1e-6 (relative,
the exact model evaluated on the preset loaded back), that value keeps the
digits it needs and its full-precision SI value in a comment on its line. The
file is written atomically and never over an existing one unless forced.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ckptcalc.errors import CkptError, PresetError
from ckptcalc.files import atomic_write, check_new
from ckptcalc.inputs import units
from ckptcalc.inputs.fields import BY_NAME, FIELDS, PARSERS
from ckptcalc.inputs.inherit import WAYS, Parent, merge_layers
from ckptcalc.inputs.preset_document import (
    BAND_PATH,
    BASE,
    LEVELS,
    META,
    SCHEMA_VERSION,
    SOURCES,
    from_document,
)
from ckptcalc.inputs.preset_search import identity, is_path
from ckptcalc.inputs.scenario import BAND, Scenario
from ckptcalc.mechanisms import registry
from ckptcalc.records import Record

_OUT_UNITS = {
    "size": (units.SIZE_UNITS, ["PB", "TB", "GB", "MB", "kB", "B"], ""),
    "rate": (units.SIZE_UNITS, ["PB", "TB", "GB", "MB", "kB", "B"], "/s"),
    "duration": (units.DURATION_UNITS, ["d", "h", "min", "s"], ""),
}
#: The units a rounded value is written in, largest first, as the tool prints it (durations down to ms).
_ROUNDED_UNITS = {
    "size": (["PB", "TB", "GB", "MB", "kB", "B"], ""),
    "rate": (["PB", "TB", "GB", "MB", "kB", "B"], "/s"),
    "duration": (["d", "h", "min", "s", "ms"], ""),
}
#: The SI unit of a full-precision comment.
_SI = {"size": "B", "rate": "B/s", "duration": "s"}

#: Significant figures of a value written for a reader.
DIGITS = 4
#: The most the effective time may move, relative, by rounding the values written.
TOLERANCE = 1e-6
#: Significant figures tried, in turn, for a value whose rounding to :data:`DIGITS` matters (None: exact).
_MORE_DIGITS: tuple[int | None, ...] = (5, 6, 7, 8, 9, 10, 12, 14, None)


class Noted(Record):
    """A value written with its full-precision SI value in a comment on its line."""

    raw: Any
    note: str


#: How each value is written: significant figures by site (a field name, ``tier N.key``, ``band``,
#: ``lever KEY``), None for the exact shortest text; sites missing take :data:`DIGITS`.
Precision = Mapping[str, int | None]
_EXACT: Precision = {}


def to_document(
    scenario: Scenario,
    precision: Precision | None = None,
    *,
    texts: Mapping[str, str] | None = None,
    noted: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The TOML document for ``scenario``. Without ``precision`` every value is exact (it loads back to
    the same numbers); with it, rounded as it says. ``texts`` are values as the user gave them, by field
    name, written as given when they state the value exactly; ``noted`` sites carry a comment."""
    writer = _Writer(precision, texts or {}, noted)
    document: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    for key in ("name", "description", "source", "derived_from"):
        if getattr(scenario, key):
            document[key] = getattr(scenario, key)
    if scenario.changed:
        document["changed"] = list(scenario.changed)
    for name, value in scenario.values().items():
        spec = BY_NAME[name]
        document.setdefault(spec.section, {})[spec.key] = writer.value(name, spec.kind, value)
    document = registry.write_preset_arrays(scenario, document, _written)
    band = scenario.mtbf_ci95
    if band is not None and band[1] is not None:
        document.setdefault("failures", {})[BAND] = [
            writer.plain(BAND, "duration", band[0]),
            writer.plain(BAND, "duration", band[1]),
        ]
    sources = {BY_NAME[name].path: text for name, text in scenario.sources if name in scenario.values()}
    if sources:
        document[SOURCES] = sources
    if scenario.log_patterns is not None:
        document["log"] = {"patterns": scenario.log_patterns}
    if scenario.middle or scenario.tier_names:
        _write_levels(scenario, document, writer)
    if scenario.levers:
        from ckptcalc.inputs.preset_document import LEVER_KEYS, LEVERS

        keys = {name: (key, kind) for key, (kind, name) in LEVER_KEYS.items()}
        document[LEVERS] = {
            keys[name][0]: writer.value(f"lever {keys[name][0]}", keys[name][1], value)
            for name, value in scenario.levers
        }
    return document


class _Writer:
    """Values as written at a :data:`Precision`, with the user's own texts and the comments asked for."""

    def __init__(self, precision: Precision | None, texts: Mapping[str, str], noted: frozenset[str]) -> None:
        self.precision, self.texts, self.noted = precision, texts, noted

    def plain(self, site: str, kind: str, value: float) -> Any:
        if self.precision is None:
            return _written(kind, value)
        given = self.texts.get(site) if kind in _ROUNDED_UNITS else None  # counts and shares stay numbers
        if given is not None and _states(kind, given, value):
            return given.strip()
        return _rounded(kind, value, self.precision.get(site, DIGITS))

    def value(self, site: str, kind: str, value: float) -> Any:
        raw = self.plain(site, kind, value)
        if site not in self.noted:
            return raw
        unit = _SI.get(kind, "")
        unit += "/gpu" if isinstance(value, units.PerGpu) and unit else ""
        return Noted(raw, f"{float(value)!r}{' ' + unit if unit else ''}")


def _states(kind: str, text: str, value: float) -> bool:
    """Whether ``text`` (as a user typed it) reads back as exactly ``value``, per GPU or not alike."""
    try:
        read = PARSERS[kind](text)
    except (CkptError, ValueError):
        return False
    return float(read) == float(value) and isinstance(read, units.PerGpu) == isinstance(value, units.PerGpu)


def _significant(text: str) -> int:
    """The significant figures of a number's text (``"13.37"``: 4, ``"50000"``: 1)."""
    mantissa = re.split("[eE]", text.lstrip("+-"))[0]
    digits = mantissa.replace(".", "").lstrip("0")
    return len(digits.rstrip("0") if "." not in mantissa else digits) or 1


def _rounded(kind: str, value: float, digits: int | None) -> Any:
    """``value`` written at ``digits`` significant figures (exactly when None, or when the exact text is
    no longer), in the unit the tool prints it in."""
    exact = _written(kind, value)
    if digits is None:
        return exact
    if kind in _ROUNDED_UNITS and isinstance(exact, str):
        stated = re.match(r"[+-]?[\d.eE+-]+?(?=[A-Za-z/]|$)", exact)
        if stated is not None and _significant(stated.group(0)) <= digits:
            return exact
        names, suffix = _ROUNDED_UNITS[kind]
        table = units.DURATION_UNITS if kind == "duration" else units.SIZE_UNITS
        unit = next((u for u in names if abs(value) >= table[u] * 0.9995), names[-1])
        text = f"{value / table[unit]:.{digits}g}{unit}{suffix}"
        return text + "/gpu" if isinstance(value, units.PerGpu) else text
    if kind == "count" and abs(value) >= 1e9:  # 70e9 parameters as "70B", where that is exact
        scale, suffix = (1e12, "T") if abs(value) >= 1e12 else (1e9, "B")
        scaled = f"{value / scale:.{digits or 17}g}{suffix}"
        if units.parse_count(scaled) == value:
            return scaled
    if isinstance(exact, (int, str)) and not isinstance(exact, bool):
        return exact  # whole numbers and "auto" are exact already
    number = float(f"{value:.{digits}g}")
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def _write_levels(scenario: Scenario, document: dict[str, Any], writer: _Writer) -> None:
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
        first["serves"] = writer.value("replica_survival", "number", values["replica_survival"])
        if "interval" in memory:
            first["interval"] = memory["interval"]
        tiers.append(first)
        served = _number(first["serves"])
    for i, tier in enumerate(scenario.middle, start=1):
        entry: dict[str, Any] = {"name": tier.name}
        for key, field, kind in (
            ("bandwidth", "bandwidth", "rate"),
            ("restart", "restart_s", "duration"),
            ("read_bandwidth", "read_bandwidth", "rate"),
            ("interval", "interval_s", "duration"),
            *((key.key, key.key, key.kind) for key in registry.tier_keys() if key.middle),
        ):
            value = getattr(tier, field)
            if value is not None:
                stated = units.PerGpu(value) if field in tier.per_gpu else value
                entry[key] = writer.value(f"tier {i}.{key}", kind, stated)
        entry["serves"] = writer.value(f"tier {i}.serves", "number", tier.share)
        served += _number(entry["serves"])
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


def _number(raw: Any) -> float:
    """The share a written ``serves`` states."""
    return float(raw.raw if isinstance(raw, Noted) else raw)


def _written(kind: str, value: float) -> Any:
    text = registry.written(kind, value)  # a mechanism's own unit kind: a value no number states
    if text is not None:
        return text
    if kind in _OUT_UNITS:
        table, choices, suffix = _OUT_UNITS[kind]
        text = units.exact(value, table, choices) + suffix
        return text + "/gpu" if isinstance(value, units.PerGpu) else text
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def toml_text(document: dict[str, Any]) -> str:
    """A preset document as TOML, its tiers as ``[[levels]]`` tables after the others; a :class:`Noted`
    value gets its comment at the end of its line."""
    import tomli_w

    notes: list[Noted] = []

    def marked(value: Any) -> Any:
        if isinstance(value, Noted):
            notes.append(value)
            return f"@@note {len(notes) - 1}@@"
        if isinstance(value, dict):
            return {k: marked(v) for k, v in value.items()}
        if isinstance(value, list):
            return [marked(v) for v in value]
        return value

    tiers = document.get(LEVELS)
    text = str(tomli_w.dumps({k: marked(v) for k, v in document.items() if k != LEVELS}))
    if isinstance(tiers, list):
        for tier in tiers:
            text += f"\n[[{LEVELS}]]\n" + str(tomli_w.dumps(marked(tier)))
    for i, note in enumerate(notes):
        written = str(tomli_w.dumps({"x": note.raw})).removeprefix("x = ").rstrip("\n")
        text = text.replace(f'"@@note {i}@@"\n', f"{written}  # {note.note}\n", 1)
    return text


def _sites(scenario: Scenario) -> list[str]:
    """Every value a preset writes that rounding could move, by its :data:`Precision` site."""
    sites = list(scenario.values())
    for i, tier in enumerate(scenario.middle, start=1):
        keys = ("bandwidth", "restart", "read_bandwidth", "interval", "serves")
        fields = ("bandwidth", "restart_s", "read_bandwidth", "interval_s", "share")
        sites += [
            f"tier {i}.{key}" for key, field in zip(keys, fields, strict=True) if getattr(tier, field) is not None
        ]
    return sites


def _effective(scenario: Scenario) -> tuple[float, float] | None:
    """The exact model's effective time of ``scenario`` at its intervals and at the optimum; None when it
    does not resolve to a model."""
    from ckptcalc.inputs.scenario import resolve
    from ckptcalc.model.evaluation import evaluate

    try:
        result = evaluate(resolve(scenario).config)
        return float(result.effective), float(result.optimal_effective)
    except (CkptError, ArithmeticError, ValueError):
        return None


def _close(reference: tuple[float, float], other: tuple[float, float] | None, tolerance: float = TOLERANCE) -> bool:
    return other is not None and all(abs(a - b) <= tolerance * abs(a) for a, b in zip(reference, other, strict=True))


class Readable(Record):
    """How a scenario is written for a reader: the precision of each value, and the values whose rounding
    to :data:`DIGITS` would move the effective time by more than :data:`TOLERANCE` (they carry a comment)."""

    precision: dict[str, int | None]
    noted: frozenset[str]


def readable(scenario: Scenario, texts: Mapping[str, str] | None = None) -> Readable:
    """Each value at :data:`DIGITS` significant figures, unless rounding it moves the effective time of the
    preset loaded back by more than :data:`TOLERANCE`: that value gets the fewest more figures that keep
    it within half of that, and a comment. A scenario the model cannot evaluate is written exactly."""
    texts = texts or {}
    sites = _sites(scenario)
    exact: dict[str, int | None] = dict.fromkeys(sites)

    def loaded(precision: Precision) -> tuple[float, float] | None:
        document = to_document(scenario, precision, texts=texts)
        return _effective(from_document(document, "preset"))

    reference = _effective(scenario)
    if reference is None:
        return Readable(exact, frozenset())
    rounded: dict[str, int | None] = dict.fromkeys(sites, DIGITS)
    if _close(reference, loaded(rounded)):
        return Readable(rounded, frozenset())
    plain = to_document(scenario, exact, texts=texts)
    noted: set[str] = set()
    for site in sites:
        alone = {**exact, site: DIGITS}
        if to_document(scenario, alone, texts=texts) == plain or _close(reference, loaded(alone)):
            continue
        noted.add(site)
        if _short(scenario, site):
            rounded[site] = None  # exact in few figures already (50790.4h): clearer than rounded further
            continue
        rounded[site] = next(
            (d for d in _MORE_DIGITS if d is None or _close(reference, loaded({**exact, site: d}), TOLERANCE / 2)),
            None,
        )
    if not _close(reference, loaded(rounded)):  # the roundings add up: the noted ones exact
        rounded.update(dict.fromkeys(noted))
    if not _close(reference, loaded(rounded)):
        noted |= {site for site in sites if to_document(scenario, {**exact, site: DIGITS}, texts=texts) != plain}
        rounded = dict(exact)
    return Readable(rounded, frozenset(noted))


#: The most significant figures of an exact value written as it is where rounding it would matter.
_SHORT = 8


def _short(scenario: Scenario, site: str) -> bool:
    """Whether the exact text of field ``site`` has at most :data:`_SHORT` significant figures."""
    spec = BY_NAME.get(site)
    if spec is None:
        return False
    exact = _written(spec.kind, scenario.values()[site])
    stated = re.match(r"[+-]?[\d.eE+-]+?(?=[A-Za-z/]|$)", str(exact))
    return stated is not None and _significant(stated.group(0)) <= _SHORT


def readable_document(scenario: Scenario, texts: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The document of ``scenario`` as written for a reader (see :func:`readable`)."""
    how = readable(scenario, texts)
    return to_document(scenario, how.precision, texts=texts, noted=how.noted)


def dumps(scenario: Scenario) -> str:
    """``scenario`` as TOML with every value exact: it loads back to the same numbers."""
    return toml_text(to_document(scenario))


def readable_text(scenario: Scenario, texts: Mapping[str, str] | None = None) -> str:
    """``scenario`` as TOML for a reader (see :func:`readable`), as :func:`save` writes it."""
    return toml_text(readable_document(scenario, texts))


def dumps_over(scenario: Scenario, base: Parent, path: Path, texts: Mapping[str, str] | None = None) -> str:
    """``scenario`` as a preset at ``path`` that inherits from ``base``: ``base = ...`` (a name as it
    was written, a path made relative to ``path``'s directory) and only the keys whose values differ
    from the base's, written for a reader. A scenario that leaves unset a key its base sets cannot be
    written so."""

    label = str(path)
    if identity(path) is not None and identity(path) == identity(base.path):
        raise PresetError(
            f"{label} is the base {base.ref!r} itself: a preset cannot be saved over its own base", where="save_preset"
        )
    full = to_document(scenario)
    shown = readable_document(scenario, texts)
    mine = from_document(full, label)
    theirs = to_document(from_document(base.layer.document, base.label, base.layer.labels))
    # Compared as written exactly: the writer gives one text for one value.
    differ = {key for key, value in full.items() if key not in META and value != theirs.get(key)}
    stated = {f"{key}.{sub}" for key, value in full.items() if isinstance(value, dict) for sub in value}
    for key in [key for key in differ if isinstance(full[key], dict)]:
        differ.remove(key)
        differ |= {f"{key}.{sub}" for sub, raw in full[key].items() if raw != theirs.get(key, {}).get(sub)}
    for ways in WAYS:
        if ways.whole and differ & ways.keys:
            differ |= stated & (ways.keys | ways.dropped)  # stating one key of these drops all of the base's
    document: dict[str, Any] = {"schema_version": full["schema_version"], BASE: _written_base(base, path)}
    exact: dict[str, Any] = dict(document)
    for written, source in ((document, shown), (exact, full)):
        written.update({key: full[key] for key in META if key in full and key != "schema_version"})
        for key, value in source.items():
            if key in differ:
                written[key] = value
            elif isinstance(value, dict):
                table = {sub: raw for sub, raw in value.items() if f"{key}.{sub}" in differ}
                if table:
                    written[key] = table
    merged = merge_layers(base.layer, exact, label)
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


def changed_from(scenario: Scenario, base: Scenario) -> tuple[str, ...]:
    """The preset keys (``table.key``, ``levels``, ``levers.key``) whose values in ``scenario`` differ from
    those in ``base``, stated, changed or dropped, sorted."""
    mine, theirs = to_document(scenario), to_document(base)
    keys: set[str] = set()
    for key in {*mine, *theirs} - {*META, SOURCES}:
        ours, others = mine.get(key), theirs.get(key)
        if isinstance(ours, dict) or isinstance(others, dict):
            ours, others = ours or {}, others or {}
            keys |= {f"{key}.{sub}" for sub in {*ours, *others} if ours.get(sub) != others.get(sub)}
        elif ours != others:
            keys.add(key)
    return tuple(sorted(keys))


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
    texts: Mapping[str, str] | None = None,
) -> None:
    """Write ``scenario`` to ``path`` atomically; refuse to overwrite without ``force``. With ``base``,
    write it as a preset inheriting from that base (see :func:`dumps_over`). ``texts``: values as the
    user gave them, by field name, written as given where they state the value exactly."""
    text = readable_text(scenario, texts) if base is None else dumps_over(scenario, base, path, texts)
    try:
        check_new(path, force=force, where=where)
        atomic_write(path, text.encode("utf-8"), force=force, where=where)
    except CkptError as error:
        raise PresetError(error.template, where=error.where) from None
