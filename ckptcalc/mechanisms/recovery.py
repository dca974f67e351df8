"""Recovery that loses (almost) no work: just-in-time recovery and failures with notice (docs/model.md §13).

Two failure classes of the one recursion (docs/architecture.md, "Mechanisms"; MODEL.md §17–§18):

* **just-in-time**: a share p_j of failures is recovered in place from a healthy data-parallel
  replica. It loses the work since the last step boundary and restarts in c_j = r + δ_j (the
  restart plus the save from the replica, δ_j = size / its bandwidth). That is a class landing
  ``in_place``: a tier whose interval is one step and whose stall is zero, under the periodic
  tiers, with share p_j and restart c_j.
* **notice**: a share p_n comes with enough notice to write a checkpoint first (δ), then restarts
  (r) and loses nothing: a class that goes back ``nowhere``, restarting in r + δ.

Both take their shares from the job's own failures: the periodic tiers serve the rest,
1 − p_j − p_n, each its own part of it (a replica that survives a share q of the failures that roll
back serves q·(1 − p_j − p_n) of all of them). The home declares its inputs, checks them, gives the
model its two classes and their first-order term, offers the just-in-time lever and says where it
starts to pay (:func:`break_even_share`), and reports its record (``recovery``).

>>> round(in_place_only(step_s=10.0, jit_restart_s=603.24, mtbf_s=11160.0), 6)
0.946957
>>> first_order_terms(step_s=10.0, jit_share=0.9, jit_restart_s=603.24, notice_share=0.0,
...                   notice_restart_s=603.24, mtbf_s=11160.0)[0] == 0.9 * 10.0 / (2 * 11160.0)
True
"""

from __future__ import annotations

import math
from typing import Any

from ckptcalc.errors import InputError, UnitError
from ckptcalc.mechanisms.base import IN_PLACE, NOWHERE, CauseClass, Cell, FailureClass, Input, Mechanism, Num
from ckptcalc.records import Record

JIT = "jit_share"
BANDWIDTH = "jit_bandwidth"
NOTICE = "notice_share"
#: The JSON column of the save's bandwidth, and the flags of the three inputs (a sweep's ``--over``).
BANDWIDTH_COLUMN = "jit_bandwidth_bytes_per_s"
FLAGS = {JIT: "jit-share", BANDWIDTH: "jit-bw", NOTICE: "notice-share"}
_BY_FLAG = {flag: name for name, flag in FLAGS.items()}

#: What the just-in-time lever assumes where a preset's ``[levers]`` does not say: the share recovered
#: in place (the save runs at the storage bandwidth unless a bandwidth is stated).
ASSUMED_SHARE = 0.9
#: The step the lever replays where neither the job nor the preset states one.
ASSUMED_STEP_S = 10.0
#: The scenario attributes the keys of a preset's ``[levers]`` the lever reads set.
LEVER_SHARE, LEVER_BANDWIDTH, LEVER_STEP = "lever_jit_share", "lever_jit_bandwidth", "lever_jit_step_s"

LEVER = "jit_recovery"
#: The lever that recovers the job's first stated class in place instead of rolling it back (§20).
CLASS_LEVER = "class_in_place"

# ------------------------------------------------------------------ failure classes of their own (§20)

#: The fields of one stated class (the first of a preset's ``[[failures.classes]]``, or the flags').
CLASS_SHARE, CLASS_RESTART, CLASS_PATH, CLASS_TIER, CLASS_FALLBACK = (
    "class_share",
    "class_restart_s",
    "class_recovery",
    "class_tier",
    "class_fallback",
)
#: The carried field holding every class a preset states, in order (the first's numbers are the fields above).
STATED = "failure_classes"
#: The preset's array of tables, and each table's keys by field.
CLASS_SECTION, CLASS_TABLE = "failures", "classes"
CLASS_KEYS = {
    CLASS_SHARE: "share",
    CLASS_RESTART: "restart",
    CLASS_PATH: "recovery",
    CLASS_TIER: "tier",
    CLASS_FALLBACK: "fallback",
}
#: A class's recovery path and the tier it rolls back to, as numbers (their own unit kinds).
PATH_KIND, TIER_KIND = "recovery_path", "rollback_tier"
ROLLBACK, PLACE, PEER = 0.0, 1.0, 2.0
PATHS = {"rollback": ROLLBACK, "in_place": PLACE, "peer": PEER}
STORAGE, MEMORY = 0.0, 1.0
TIERS = {"storage": STORAGE, "memory": MEMORY}
#: Each class field's unit kind, and its attribute of a :class:`StatedClass`.
_KINDS = {
    CLASS_SHARE: "fraction",
    CLASS_RESTART: "duration",
    CLASS_PATH: PATH_KIND,
    CLASS_TIER: TIER_KIND,
    CLASS_FALLBACK: "fraction",
}
_ATTRS = {
    CLASS_SHARE: "share",
    CLASS_RESTART: "restart_s",
    CLASS_PATH: "path",
    CLASS_TIER: "tier",
    CLASS_FALLBACK: "fallback",
}
#: The flag of the first class's share (a sweep's ``--over``).
CLASS_FLAG = "class-share"
#: The name of a class stated by flags alone.
FLAG_CLASS = "class"

#: The levels table's rows of the two classes (they go back less far than any periodic tier).
NOTICE_CLASS = "with notice (goes back nowhere)"
IN_PLACE_CLASS = "in place (the step in progress)"


def in_place_only(*, step_s: float, jit_restart_s: float, mtbf_s: float) -> float:
    """Effective time when every failure is recovered in place: Daly's exact form with τ = t_step,
    δ = 0 and r = c_j, t_step·e^{−c_j/M} / (M·(e^{t_step/M} − 1)). No periodic checkpoint is needed."""
    return step_s * math.exp(-jit_restart_s / mtbf_s) / (mtbf_s * math.expm1(step_s / mtbf_s))


def first_order_terms(
    *, step_s: Num, jit_share: Num, jit_restart_s: Num, notice_share: Num, notice_restart_s: Num, mtbf_s: Num
) -> tuple[Num, Num]:
    """The (rework, restart) first order charges the failures recovered in place or met with notice:
    p_j·t_step/2M and p_j·c_j/M + p_n·(δ + r)/M."""
    rework = jit_share * step_s / (2.0 * mtbf_s)
    restart = (jit_share * jit_restart_s + notice_share * notice_restart_s) / mtbf_s
    return rework, restart


def break_even_share(*, stall_s: float, mtbf_s: float, step_s: float, save_s: float, rest: float) -> float | None:
    """The share p* of failures recovered in place at which just-in-time recovery starts to pay, first
    order (docs/model.md §13.1): its gain over the job without it is
    √(2δ/M)·(√a − √(a − p)) − p·(t_step/2 + δ_j)/M, a = 1 − p_n the share it may take, which is zero at
    p = 0 and at p* = a − (√(2δ/M)/k − √a)², k = (t_step/2 + δ_j)/M. None where it pays at every share
    (the save is cheap: √(2δ/M)/k ≥ 2√a) or at none (√(2δ/M)/k ≤ √a).

    >>> round(break_even_share(stall_s=3.24, mtbf_s=11160.0, step_s=10.0, save_s=200.0, rest=1.0), 6)
    0.902784
    >>> break_even_share(stall_s=3.24, mtbf_s=11160.0, step_s=10.0, save_s=3.24, rest=1.0) is None
    True
    """
    k = (step_s / 2.0 + save_s) / mtbf_s
    root = math.sqrt(rest)
    x = math.sqrt(2.0 * stall_s / mtbf_s) / k - root
    if not 0.0 <= x < root:
        return None
    return rest - x * x


class StatedClass(Record):
    """One failure class as stated (docs/model.md §20): its name, share of all failures, restart (None: the
    job's), path (:data:`ROLLBACK`, :data:`PLACE`, :data:`PEER`), the tier a rollback goes back to (None:
    storage), the share of a peer recovery that falls back to storage (None: none), and the causes of a log's
    failures it takes (``analyze``). Where its table was stated (``file: failures.classes[1]``) is the
    scenario's origin of ``failure_classes[1]``."""

    name: str
    share: float | None = None
    restart_s: float | None = None
    path: float | None = None
    tier: float | None = None
    fallback: float | None = None
    causes: tuple[str, ...] = ()


def _has_word(text: str) -> bool:
    """Whether a cause holds a letter or a digit (what a log's cause is matched on, docs/model.md §20.6)."""
    return any(ch.isalnum() for ch in text)


def _word(table: dict[str, float], raw: str, what: str) -> float:
    key = raw.strip().lower().replace("-", "_")
    if key not in table:
        raise UnitError(f"expected {what} ({', '.join(table)}), got {raw!r}")
    return table[key]


def parse_path(raw: str) -> float:
    """A class's recovery path: ``rollback``, ``in_place`` or ``peer``."""
    return _word(PATHS, raw, "a recovery path")


def parse_tier(raw: str) -> float:
    """The tier a class rolls back to: ``storage`` or ``memory`` (the in-memory tier)."""
    return _word(TIERS, raw, "a tier")


def path_name(value: float) -> str:
    return next(name for name, code in PATHS.items() if code == value)


def tier_name(value: float) -> str:
    return next(name for name, code in TIERS.items() if code == value)


def stated_classes(holder: Any) -> tuple[StatedClass, ...]:
    """Every class ``holder`` (a scenario or a model ``Config``) states, the first's numbers from its fields
    (the flags' or a preset's first table), the rest from a preset's further tables; () for none."""
    share = getattr(holder, CLASS_SHARE)
    tables: tuple[StatedClass, ...] = getattr(holder, STATED) or ()
    rest = tables[1:]
    if share is None:
        return rest
    first = tables[0] if tables else StatedClass(FLAG_CLASS)
    first = first.replace(
        share=share,
        restart_s=getattr(holder, CLASS_RESTART),
        path=getattr(holder, CLASS_PATH),
        tier=getattr(holder, CLASS_TIER),
        fallback=getattr(holder, CLASS_FALLBACK),
    )
    return (first, *rest)


def class_restart_s(config: Any, found: StatedClass) -> Num:
    """A class's restart: its own, or the job's (from storage, reload included)."""
    return config.storage_restart_s if found.restart_s is None else found.restart_s


def failure_classes(config: Any) -> tuple[FailureClass, ...]:
    """The model's classes of every stated class of ``config`` (docs/model.md §20.1): a rollback lands on the
    tier it names (storage the top, memory the fastest, index 0), or, naming none, as the job's own failures
    do (each tier its share of it, at the tier's restart unless the class states one: on a job of one
    tier, storage); in place on the one-step tier; a peer recovery in place but for its fallback share,
    which rolls back to storage at the same restart."""
    found: list[FailureClass] = []
    top = (config.replica_survival is not None) + len(config.middle)  # storage's index, fastest 0
    for each in stated_classes(config):
        restart = class_restart_s(config, each)
        share: Num = 0.0 if each.share is None else each.share
        path = _coded(each.path, ROLLBACK)
        if path == ROLLBACK and each.tier is None:
            # As the job's own failures roll back: each tier its share, at its own restart unless stated.
            for index, level in enumerate(config._levels()):
                own = level.restart_s if each.restart_s is None else restart
                found.append(FailureClass(each.name, share * level.share, own, index, label=each.name))
            continue
        if path == ROLLBACK:
            tier = 0 if _coded(each.tier, STORAGE) == MEMORY else top
            found.append(FailureClass(each.name, share, restart, tier, label=each.name))
            continue
        fallback = 0.0 if each.fallback is None else each.fallback
        found.append(FailureClass(each.name, share * (1.0 - fallback), restart, IN_PLACE, label=each.name))
        if path == PEER and each.fallback is not None:
            found.append(
                FailureClass(f"{each.name} fallback", share * fallback, restart, top, label=f"{each.name} (falls back)")
            )
    return tuple(found)


#: The key of the classes' part of a document.
PART = "failure_classes"
_MAYBE_SECONDS = {"type": ["number", "null"], "minimum": 0, "description": "seconds; null: the job's restart"}
PART_SCHEMA: dict[str, Any] = {
    "oneOf": [
        {"type": "null"},
        {
            "type": "object",
            "description": "the failure classes the job states, each with its share, restart and recovery path"
            " (docs/model.md §20); null without one",
            "properties": {
                "classes": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "share": {"type": "number", "minimum": 0, "maximum": 1},
                            "restart_s": _MAYBE_SECONDS,
                            "recovery": {"enum": list(PATHS)},
                            "tier": {
                                "enum": [*TIERS, None],
                                "description": "where a rollback goes back to; null: as the job's own failures",
                            },
                            "fallback": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                        },
                        "required": ["name", "share", "restart_s", "recovery", "tier", "fallback"],
                    },
                },
                "job_share": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1,
                    "description": "the share that keeps the job's own restart and rollback",
                },
            },
            "required": ["classes", "job_share"],
        },
    ]
}


def class_record(config: Any) -> dict[str, Any] | None:
    """The classes ``config`` states, as ``failure_classes`` reports them (plain floats; a grid's first point)."""
    stated = stated_classes(config)
    if not stated:
        return None
    rows = [
        {
            "name": each.name,
            "share": _coded(each.share, 0.0),
            "restart_s": None if each.restart_s is None else _coded(each.restart_s, 0.0),
            "recovery": path_name(_coded(each.path, ROLLBACK)),
            "tier": None if each.tier is None else tier_name(_coded(each.tier, STORAGE)),
            "fallback": None if each.fallback is None else _coded(each.fallback, 0.0),
        }
        for each in stated
    ]
    return {"classes": rows, "job_share": _coded(config.periodic_share, 0.0)}


def _path_words(row: dict[str, Any], restart: str | None, pct: Any) -> str:
    """``roll back to storage, restart 1.00 min``."""
    again = f"restart {restart}" if restart is not None else "the job's restart"
    if row["recovery"] == "rollback":
        where = f"to {row['tier']}" if row["tier"] is not None else "as the job's own failures do"
        return f"roll back {where}, {again}"
    if row["recovery"] == "in_place":
        return f"in place (the step in flight), {again}"
    fallback = row["fallback"] or 0.0
    return f"in place from a healthy replica ({pct(fallback)} fall back to storage), {again}"


def _class_note(config: Any, each: StatedClass, duration: Any, pct: Any) -> str:
    """``of failures: rolls back to storage, restart 1.00 min`` (docs/model.md §20)."""
    path = _coded(each.path, ROLLBACK)
    restart = f"restart {duration(_coded(class_restart_s(config, each), 0.0))}"
    if path == ROLLBACK and each.tier is None:
        return f"of failures: roll back as the job's own do, {restart}"
    if path == ROLLBACK:
        return f"of failures: roll back to {tier_name(_coded(each.tier, STORAGE))}, {restart}"
    if path == PLACE:
        return f"of failures: in place (the step in flight), {restart}"
    fallback = _coded(each.fallback, 0.0)
    return f"of failures: in place from a healthy replica ({pct(fallback)} fall back to storage), {restart}"


def _scaled_stated(config: Any, factor: Num) -> Any:
    """``config`` with the share of every class it states scaled by ``factor``."""
    share, tables = getattr(config, CLASS_SHARE), getattr(config, STATED)
    if share is None and not tables:
        return config
    return config.replace(
        **{
            CLASS_SHARE: None if share is None else share * factor,
            STATED: None if tables is None else tuple(t.replace(share=(t.share or 0.0) * factor) for t in tables),
        }
    )


def _coded(value: Any, default: float) -> float:
    """A path's or a tier's code (``default`` where unstated); one word holds for every point of a grid."""
    if value is None:
        return default
    flat = getattr(value, "flat", None)
    return float(value if flat is None else next(iter(flat)))


def stated_share(holder: Any) -> float:
    """The share every stated class takes together (plain floats)."""
    return float(sum(_coded(c.share, 0.0) for c in stated_classes(holder)))


def _or_zero(value: Num | None) -> Num:
    return 0.0 if value is None else value


def save_s(config: Any) -> Num:
    """δ_j: the save from the healthy replica, size / its bandwidth (the storage bandwidth by default)."""
    bandwidth = getattr(config, BANDWIDTH)
    return config.checkpoint_bytes / (config.bandwidth if bandwidth is None else bandwidth)


def jit_restart_s(config: Any) -> Num:
    """c_j = r + δ_j: the restart plus the save from the healthy replica."""
    return config.storage_restart_s + save_s(config)


def notice_restart_s(config: Any) -> Num:
    """The checkpoint written on notice (δ) and the restart (r)."""
    return config.storage_restart_s + config.write_s


def assumed_step(holder: Any) -> float:
    """The step the just-in-time lever assumes where the job states none: a preset's ``[levers]``
    ``jit_step_time`` (``holder``, a scenario or the levers' assumptions), else :data:`ASSUMED_STEP_S`."""
    stated = getattr(holder, LEVER_STEP)
    return ASSUMED_STEP_S if stated is None else float(stated)


def with_shares(config: Any, jit: Num | None, notice: Num | None) -> Any:
    """``config`` (a model ``Config``) with the two shares (None: none)."""
    return config.replace(**{JIT: jit, NOTICE: notice})


class Recovery(Mechanism):
    name = "recovery"
    kind = "failure_class"
    inputs = (
        Input(
            JIT,
            "fraction",
            FLAGS[JIT],
            "recovery",
            JIT,
            "Share of failures recovered in place from a healthy replica (just-in-time; needs --step-time), e.g. 0.9.",
            after="discard",
        ),
        Input(
            BANDWIDTH,
            "rate",
            FLAGS[BANDWIDTH],
            "recovery",
            BANDWIDTH,
            "Bandwidth of the just-in-time save from the healthy replica (default: the storage bandwidth).",
            after=JIT,
        ),
        Input(
            NOTICE,
            "fraction",
            FLAGS[NOTICE],
            "recovery",
            NOTICE,
            "Share of failures that come with notice: a checkpoint is written first and no work is lost.",
            after=BANDWIDTH,
        ),
        Input(
            CLASS_SHARE,
            "fraction",
            "class-share",
            f"{CLASS_SECTION}.{CLASS_TABLE}",
            CLASS_KEYS[CLASS_SHARE],
            "A failure class's share of all failures, with its own restart and path (a preset's first"
            " [[failures.classes]]), e.g. 0.15.",
            after=NOTICE,
        ),
        Input(
            CLASS_RESTART,
            "duration",
            "class-restart",
            f"{CLASS_SECTION}.{CLASS_TABLE}",
            CLASS_KEYS[CLASS_RESTART],
            "The failure class's restart, e.g. 1min (default: the job's).",
            after=CLASS_SHARE,
        ),
        Input(
            CLASS_PATH,
            PATH_KIND,
            "class-recovery",
            f"{CLASS_SECTION}.{CLASS_TABLE}",
            CLASS_KEYS[CLASS_PATH],
            "The failure class's path: rollback (to a tier's newest checkpoint, the default), in_place (only the"
            " step in flight is lost; needs --step-time) or peer (in place from a healthy replica).",
            after=CLASS_RESTART,
        ),
        Input(
            CLASS_TIER,
            TIER_KIND,
            "class-tier",
            f"{CLASS_SECTION}.{CLASS_TABLE}",
            CLASS_KEYS[CLASS_TIER],
            "The tier a rollback class goes back to: storage (the default) or memory.",
            after=CLASS_PATH,
        ),
        Input(
            CLASS_FALLBACK,
            "fraction",
            "class-fallback",
            f"{CLASS_SECTION}.{CLASS_TABLE}",
            CLASS_KEYS[CLASS_FALLBACK],
            "The share of a peer class that finds no healthy replica or hot spare and rolls back to storage.",
            after=CLASS_PATH,
            before=CLASS_TIER,
        ),
    )
    levers = (LEVER,)
    levers_with = (CLASS_LEVER,)  # a stated class recovered in place
    break_even_words = ((JIT, "", "of failures in place"), (CLASS_RESTART, "", "restart in place"))
    example = (
        ("step_time_s", "10s"),
        (NOTICE, "0.05"),
        (JIT, "0.6"),
        (BANDWIDTH, "1TB/s"),
        (CLASS_SHARE, "0.1"),
        (CLASS_RESTART, "1min"),
        (CLASS_TIER, "storage"),
    )
    # A peer class with its fallback (a path and a fallback exclude a tier).
    alternative = (
        ("step_time_s", "10s"),
        (CLASS_SHARE, "0.3"),
        (CLASS_RESTART, "1min"),
        (CLASS_PATH, "peer"),
        (CLASS_FALLBACK, "0.2"),
    )
    # No share stated: every failure rolls back as the job's own.
    limit = ((NOTICE, ""), (JIT, ""), (BANDWIDTH, ""), *((name, "") for name in CLASS_KEYS))
    sweeps = (
        (FLAGS[JIT], JIT, "share recovered in place"),
        (FLAGS[BANDWIDTH], BANDWIDTH_COLUMN, "just-in-time save bandwidth"),
        (FLAGS[NOTICE], NOTICE, "share with notice"),
        ("class-share", CLASS_SHARE, "failure class share"),
        ("class-restart", CLASS_RESTART, "failure class restart"),
    )
    sweeps_after = "memory-restart"
    class_inputs = (("jit", JIT), ("notice", NOTICE))
    carried_fields = (STATED,)  # every class a preset's [[failures.classes]] states
    panels = ((f"{CLASS_SECTION}.{CLASS_TABLE}", "Failure classes"),)
    preset_arrays = ((CLASS_SECTION, CLASS_TABLE),)
    # The simulation draws the stated classes beside the tiers' (docs/model.md §20.5); not those that step
    # events one by one (silent events, --events, the simulated search) nor the slowed persist.
    simulated_name = "classes"
    simulated_after = "notice"
    simulated_input = (CLASS_SHARE, "class_share")
    not_simulated_with = ("silent", "events", "search", "slowdown", "weibull")

    def simulated_held(self, config: Any) -> bool:
        return bool(stated_classes(config))

    # ------------------------------------------------------------- presets: [[failures.classes]]

    def read_preset_array(
        self, section: str, key: str, rows: Any, at: Any, value_of: Any
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """Each table of ``[[failures.classes]]``: ``name``, ``share``, ``restart``, ``recovery``, ``tier``,
        ``fallback``, ``causes``. The first's numbers are the class fields (a flag or a what-if changes
        them); every table is carried, in order, with its name and causes."""
        from ckptcalc.errors import PresetError

        path = f"{section}.{key}"
        if not isinstance(rows, list) or not rows or not all(isinstance(row, dict) for row in rows):
            raise PresetError("must be an array of tables, each a [[failures.classes]]", where=at(path))
        by_key = {word: name for name, word in CLASS_KEYS.items()}
        values: dict[str, Any] = {}
        origin: dict[str, str] = {}
        tables: list[StatedClass] = []
        names: set[str] = set()
        for index, row in enumerate(rows):
            prefix = f"{path}[{index}]"
            read: dict[str, Any] = {}
            for word, raw in row.items():
                where = at(f"{prefix}.{word}")
                if word == "name":
                    if not isinstance(raw, str) or not raw.strip() or not raw.isprintable() or len(raw) > 40:
                        raise PresetError("must be a name of at most 40 printable characters", where=where)
                    if raw in names:
                        raise PresetError(f"a second class named {raw!r}", where=where)
                    names.add(raw)
                    continue
                if word == "causes":
                    if not isinstance(raw, list) or not all(isinstance(c, str) and _has_word(c) for c in raw):
                        raise PresetError(
                            'must be a list of failure causes, each with a letter or a digit, e.g. ["xid", "nccl"]',
                            where=where,
                        )
                    continue
                name = by_key.get(word)
                if name is None:
                    known = ", ".join(["name", *CLASS_KEYS.values(), "causes"])
                    raise PresetError(f"unknown key (known in [[{path}]]: {known})", where=where)
                read[name] = value_of(_KINDS[name], raw, where)
                if index == 0:
                    values[name] = read[name]
                    origin[name] = where
            tables.append(
                StatedClass(
                    str(row.get("name", f"{FLAG_CLASS} {index + 1}")),
                    read.get(CLASS_SHARE),
                    read.get(CLASS_RESTART),
                    read.get(CLASS_PATH),
                    read.get(CLASS_TIER),
                    read.get(CLASS_FALLBACK),
                    tuple(str(c) for c in row.get("causes", ())),
                )
            )
            origin[f"{STATED}[{index}]"] = at(prefix)
        values[STATED] = tuple(tables)
        return values, origin

    def write_preset_array(self, scenario: Any, document: dict[str, Any], written: Any) -> dict[str, Any]:
        """The class fields (written in their own table) as the first ``[[failures.classes]]``, then the
        further tables a preset stated."""
        flat = document.pop(f"{CLASS_SECTION}.{CLASS_TABLE}", None)
        tables: tuple[StatedClass, ...] = getattr(scenario, STATED) or ()
        if flat is None and not tables:
            return document
        rows: list[dict[str, Any]] = []
        if flat is not None:
            rows.append({"name": tables[0].name if tables else FLAG_CLASS, **flat})
        for each in tables[1 if flat is not None else 0 :]:
            row: dict[str, Any] = {"name": each.name}
            for name, word in CLASS_KEYS.items():
                value = getattr(each, _ATTRS[name])
                if value is not None:
                    row[word] = written(_KINDS[name], float(value))
            rows.append(row)
        for row, each in zip(rows, tables, strict=False):
            if each.causes:
                row["causes"] = list(each.causes)
        document.setdefault(CLASS_SECTION, {})[CLASS_TABLE] = rows
        return document

    # ------------------------------------------------------------- a log's failures by cause (§20.6)

    def cause_classes(self, scenario: Any) -> tuple[CauseClass, ...]:
        """Every stated class, in order, once any of them lists the causes it stands for (a class that lists
        none takes none of a log's failures); () where none lists a cause."""
        stated = stated_classes(scenario)
        if not any(each.causes for each in stated):
            return ()
        return tuple(
            CauseClass(
                each.name,
                _coded(each.share, 0.0),
                each.causes,
                None if each.restart_s is None else _coded(each.restart_s, 0.0),
            )
            for each in stated
        )

    def with_cause_shares(self, scenario: Any, shares: dict[str, float]) -> Any:
        """The stated classes' shares replaced by those measured, by name (the first's in its field too)."""
        tables: tuple[StatedClass, ...] = getattr(scenario, STATED) or ()
        if not tables or not any(each.name in shares for each in tables):
            return scenario
        changed = tuple(each.replace(share=shares.get(each.name, each.share)) for each in tables)
        found: dict[str, Any] = {STATED: changed}
        if getattr(scenario, CLASS_SHARE) is not None and tables[0].name in shares:
            found[CLASS_SHARE] = shares[tables[0].name]
        return scenario.replace(**found)

    log_kinds = (("in_place", IN_PLACE), ("notice", NOWHERE))  # a log's recovery events (docs/logs.md)
    cells = (Cell("in place (just-in-time)", ("recovery", JIT)), Cell("with notice", ("recovery", NOTICE)))

    # ------------------------------------------------------------- the model (failure classes)

    def classes(self, config: Any) -> tuple[FailureClass, ...]:
        found: list[FailureClass] = []
        jit, notice = getattr(config, JIT), getattr(config, NOTICE)
        if jit is not None:
            found.append(FailureClass("jit", jit, jit_restart_s(config), IN_PLACE, label=IN_PLACE_CLASS))
        if notice is not None:
            found.append(FailureClass("notice", notice, notice_restart_s(config), NOWHERE, label=NOTICE_CLASS))
        if getattr(config, CLASS_SHARE) is not None or getattr(config, STATED):
            found.extend(failure_classes(config))
        return tuple(found)

    def scaled_classes(self, config: Any, factor: Num) -> Any:
        jit, notice = getattr(config, JIT), getattr(config, NOTICE)
        found = with_shares(config, None if jit is None else jit * factor, None if notice is None else notice * factor)
        return _scaled_stated(found, factor)

    def first_order(self, config: Any, mtbf_s: Num) -> tuple[Num, Num] | None:
        jit, notice = getattr(config, JIT), getattr(config, NOTICE)
        own = _own_first_order(config, mtbf_s)
        if jit is None and notice is None:
            return own
        found = first_order_terms(
            step_s=config.step if getattr(config, JIT) is not None else 0.0,
            jit_share=_or_zero(jit),
            jit_restart_s=jit_restart_s(config),
            notice_share=_or_zero(notice),
            notice_restart_s=notice_restart_s(config),
            mtbf_s=mtbf_s,
        )
        return found if own is None else (found[0] + own[0], found[1] + own[1])

    def without(self, config: Any) -> Any:
        return with_shares(config, None, None).replace(
            **{BANDWIDTH: None, "step_s": None}, **{name: None for name in (*CLASS_KEYS, STATED)}
        )

    # ------------------------------------------------------------- levers

    def assumed_levers(self, config: Any, assume: Any) -> list[tuple[str, Any]]:
        """Just-in-time recovery where the job has none (the share assumed, at most what notice leaves);
        where it has it, or notice, the job without each, so that its worth shows (docs/model.md §13).
        None under Weibull failures, where the classes have no exact model."""
        if config.shape is not None:
            return []
        found: list[tuple[str, Any]] = []
        notice = getattr(config, NOTICE)
        if getattr(config, JIT) is not None:
            found.append(("without_jit", config.replace(**{JIT: None, BANDWIDTH: None, "step_s": None})))
        elif assume is not None:
            assumed = getattr(assume, LEVER_SHARE)
            rest = 1.0 - float(notice or 0.0)
            share = min(ASSUMED_SHARE if assumed is None else assumed, rest)
            step = assume.job_step_s if assume.job_step_s is not None else assumed_step(assume)
            changed = config.replace(**{JIT: share, BANDWIDTH: getattr(assume, LEVER_BANDWIDTH), "step_s": step})
            if stated_classes(config) and rest > 0:
                # The job's classes keep their parts of the failures it leaves to roll back (docs/model.md §20).
                changed = _scaled_stated(changed, (rest - share) / rest)
            found.append((LEVER, changed))
        if notice is not None:
            found.append(("without_notice", config.replace(**{NOTICE: None})))
        first = stated_classes(config)[:1]
        if first and first[0].restart_s is not None and _coded(first[0].path, ROLLBACK) == ROLLBACK:
            # The first class recovered in place (only the step in flight lost), at its own restart; a class
            # without a restart of its own is the job's own failures, as every lever already treats them.
            step = config.step_s
            if step is None and assume is not None:
                step = assume.job_step_s if assume.job_step_s is not None else assumed_step(assume)
            if step is not None:
                changed = config.replace(**{CLASS_PATH: PLACE, CLASS_TIER: None, "step_s": step})
                changed = changed.replace(**{CLASS_RESTART: class_restart_s(config, first[0])})
                found.append((CLASS_LEVER, changed))
        return found

    def assumed_lever_name(self, key: str, changed: Any, assume: Any, words: Any) -> str | None:
        if key == LEVER:
            bandwidth = getattr(changed, BANDWIDTH)
            save = "storage bandwidth" if bandwidth is None else words.rate(bandwidth)
            step = "" if assume.job_step_s is not None else f", {words.duration(changed.step_s)} steps assumed"
            return (
                f"just-in-time recovery ({words.pct(getattr(changed, JIT))} of failures in place, save at {save}{step})"
            )
        if key == CLASS_LEVER:
            first = stated_classes(changed)[0]
            step = "" if assume.job_step_s is not None else f", {words.duration(changed.step_s)} steps assumed"
            return (
                f"{first.name} failures in place ({words.pct(_coded(first.share, 0.0))} of failures, the step in"
                f" flight lost, restart {words.duration(_coded(first.restart_s, 0.0))}{step})"
            )
        if key == "without_jit":
            return "without just-in-time recovery (every such failure rolls back)"
        if key == "without_notice":
            return "without notice (no checkpoint before those failures)"
        return None

    def break_even(self, key: str, config: Any, gpus: float | None) -> tuple[str, float, str] | None:
        """The share at which the just-in-time lever (``config`` the job with it) starts to pay, first order
        on the storage tier (:func:`break_even_share`); None where it pays at every share or at none."""
        if key == CLASS_LEVER and config.shape is None and _plain(config):
            # First order: rolled back, the class loses half the interval; in place, half a step. The lever
            # pays while its restart is below the rollback's plus that difference (refined exactly).
            first = stated_classes(config)[0]
            interval = math.sqrt(2.0 * float(config.write_s) * float(config.mtbf_s))
            return (
                CLASS_RESTART,
                float(_coded(first.restart_s, 0.0)) + (interval - float(config.step)) / 2.0,
                "duration",
            )
        if key != LEVER or config.shape is not None or not _plain(config):
            return None
        storage = config.levels()[-1]
        found = break_even_share(
            stall_s=float(storage.stall_s),
            mtbf_s=float(config.mtbf_s),
            step_s=float(config.step),
            save_s=float(save_s(config)),
            rest=1.0 - float(_or_zero(getattr(config, NOTICE))),
        )
        return None if found is None else (JIT, found, "fraction")

    def lever_presets(self) -> tuple[tuple[str, str, str], ...]:
        return (
            (JIT, "fraction", LEVER_SHARE),
            (BANDWIDTH, "rate", LEVER_BANDWIDTH),
            ("jit_step_time", "duration", LEVER_STEP),
        )

    # ------------------------------------------------------------- inputs

    def unit_parsers(self, count: Any) -> dict[str, Any]:
        return {PATH_KIND: parse_path, TIER_KIND: parse_tier}

    def unit_shown(self, kind: str) -> str | None:
        return "number" if kind in (PATH_KIND, TIER_KIND) else None

    def written(self, kind: str, value: float) -> str | None:
        if kind == PATH_KIND:
            return path_name(value)
        return tier_name(value) if kind == TIER_KIND else None

    def check(self, where: Any, name: str, value: float) -> bool:
        if name in (CLASS_PATH, CLASS_TIER):
            return True  # read from their words
        if name not in (JIT, NOTICE, CLASS_SHARE, CLASS_FALLBACK):
            return False  # the save's bandwidth, a class's restart: positive, as the core checks every one
        if not (math.isfinite(value) and 0 <= value <= 1):
            raise InputError(f"must be a share in [0, 1], got {value:g}", where=where(name))
        return True

    def resolve(self, scenario: Any, config: Any) -> Any:
        """The job's own classes (docs/model.md §20) after just-in-time recovery and notice (§13)."""
        return _resolve_classes(scenario, self._resolve_jit(scenario, config))

    def _resolve_jit(self, scenario: Any, config: Any) -> Any:
        """In-place recovery replays at most a step, so it needs the step time; the two shares cannot
        exceed all failures (docs/model.md §13)."""
        jit, notice, bandwidth = getattr(scenario, JIT), getattr(scenario, NOTICE), getattr(scenario, BANDWIDTH)
        if jit is None and notice is None:
            if bandwidth is not None:
                raise InputError(f"needs {{{JIT}}} (just-in-time recovery)", where=scenario.where(BANDWIDTH))
            return config
        if jit is not None and scenario.step_time_s is None:
            raise InputError(
                "just-in-time recovery replays the step in progress: it needs {step_time}",
                where=scenario.where(JIT),
            )
        if jit is not None and notice is not None and jit + notice > 1.0 + 1e-12:
            raise InputError(
                f"{jit:g} of failures in place and {notice:g} with notice make {jit + notice:.10g},"
                " more than all of them",
                where=scenario.where(NOTICE),
            )
        if bandwidth is not None and jit is None:
            raise InputError(f"needs {{{JIT}}} (just-in-time recovery)", where=scenario.where(BANDWIDTH))
        return with_shares(config, jit, notice).replace(
            step_s=scenario.step_time_s if jit is not None else None, **{BANDWIDTH: bandwidth}
        )

    def what_if(self, name: str, scenario: Any, base: Any) -> Any:
        if name == JIT and scenario.step_time_s is None:
            # As the just-in-time lever does: the step it replays is assumed where the job states none.
            return scenario.replace(step_time_s=assumed_step(base))
        return scenario

    def sweep_start(self, name: str, config: Any) -> float | None:
        if name == BANDWIDTH and getattr(config, JIT) is not None:
            return float(config.bandwidth)  # the save runs at the storage bandwidth unless stated
        if name == CLASS_RESTART and getattr(config, CLASS_SHARE) is not None:
            return float(config.storage_restart_s)  # the class restarts as the job does unless stated
        return None

    def sweep_range(self, over: str, result: Any) -> tuple[float, float] | None:
        """A swept share: up to what the other share leaves, short of it (there no periodic checkpoint
        is needed)."""
        name = _BY_FLAG.get(over)
        if over == CLASS_FLAG:
            high = 1.0 - _class_others(result.config)  # the class may take every failure the others leave
            return min(0.05, high / 2.0), high
        if name not in (JIT, NOTICE):
            return None
        high = 0.99 * (1.0 - _other_share(name, result.config))
        return min(0.05, high / 2.0), high

    def check_sweep(self, over: str, config: Any, low: float, high: float, where: str) -> bool:
        """A swept share lies in [0, 1) and leaves, with the other, some failures to roll back: where none
        does no periodic checkpoint is needed (``optimize`` says so); the save's bandwidth needs in-place
        recovery."""
        name = _BY_FLAG.get(over)
        if over == CLASS_FLAG:
            other = _class_others(config)
            if low < 0 or high > 1.0 - other + 1e-12:
                raise InputError(
                    f"{over} must lie in [0, {1.0 - other:g}] (just-in-time recovery, notice and the other"
                    f" classes take {other:g} of the failures)",
                    where="stop" if low >= 0 else "start",
                )
            return True
        if name == BANDWIDTH and getattr(config, JIT) is None:
            raise InputError(f"sweeping {over} needs just-in-time recovery ({{{JIT}}})", where="over")
        if name not in (JIT, NOTICE):
            return False
        other = _other_share(name, config)
        if low < 0 or high + other >= 1.0:
            raise InputError(
                f"{over} must lie in [0, {1.0 - other:g}) (the other share is {other:g}): where every failure"
                " is recovered in place or met with notice no periodic checkpoint is needed, as optimize says",
                where="stop" if low >= 0 else "start",
            )
        return True

    def varied(self, name: str, config: Any, values: Any, scenario: Any) -> Any:
        """A swept in-place share replays the job's step, which it needs."""
        if name != JIT:
            return None
        if scenario.step_time_s is None:
            raise InputError(f"sweeping {FLAGS[JIT]} needs the step time ({{step_time}})", where="over")
        return config.replace(**{JIT: values}, step_s=scenario.step_time_s)

    # ------------------------------------------------------------- results

    def echo(self, config: Any) -> dict[str, float | None]:
        jit, bandwidth = getattr(config, JIT), getattr(config, BANDWIDTH)
        return {
            JIT: _f(jit),
            BANDWIDTH_COLUMN: _f(bandwidth if bandwidth is not None or jit is None else config.bandwidth),
            NOTICE: _f(getattr(config, NOTICE)),
        }

    def input_schema(self) -> dict[str, Any]:
        maybe = {"type": ["number", "null"]}
        return {
            JIT: {**maybe, "description": "share of failures recovered in place (just-in-time)"},
            BANDWIDTH_COLUMN: {**maybe, "description": "bandwidth of the just-in-time save"},
            NOTICE: {**maybe, "description": "share of failures that come with notice"},
        }

    def class_rows(self, config: Any, rate: Any, duration: Any, pct: Any) -> tuple[tuple[str, str, str], ...]:
        rows: list[tuple[str, str, str]] = []
        jit, notice = getattr(config, JIT), getattr(config, NOTICE)
        if jit is not None:
            note = (
                f"of failures: replay the step in progress; save from a healthy replica"
                f" {duration(save_s(config))}, restart {duration(jit_restart_s(config))}"
            )
            rows.append(("in place (just-in-time)", pct(float(jit or 0.0)), note))
        if notice is not None:
            note = f"of failures: checkpoint first, lose nothing; restart {duration(notice_restart_s(config))}"
            rows.append(("with notice", pct(float(notice)), note))
        for each in stated_classes(config):
            rows.append((f"class {each.name}", pct(_coded(each.share, 0.0)), _class_note(config, each, duration, pct)))
        return tuple(rows)

    def class_part(self, job: Any, result: Any) -> dict[str, Any]:
        """``failure_classes``: every class the job states (docs/model.md §20), null without one."""
        return {PART: class_record(job.config)}

    def class_schema(self) -> dict[str, Any]:
        return {PART: PART_SCHEMA}

    def part_rows(self, key: str, found: dict[str, Any], words: Any) -> list[tuple[str, str, str]] | None:
        if key != PART:
            return None
        rows = [
            (
                row["name"],
                words.pct(row["share"]),
                _path_words(row, words.dur(row["restart_s"]) if row["restart_s"] is not None else None, words.pct),
            )
            for row in found["classes"]
        ]
        rows.append(("the job's own", words.pct(found["job_share"]), "its own restart and rollback"))
        return rows

    def part_title(self, key: str, caption: bool = False) -> str | None:
        if key != PART:
            return None
        return "Failure classes" if caption else "Failure classes (share, restart and recovery path)"

    def record(self, config: Any, needed: bool) -> dict[str, Any] | None:
        """Just-in-time recovery and failures with notice (docs/model.md §13); None when neither is configured."""
        jit, notice = getattr(config, JIT), getattr(config, NOTICE)
        if jit is None and notice is None:
            return None
        return {
            JIT: float(jit or 0.0),
            NOTICE: float(notice or 0.0),
            "periodic_share": float(config.rollback_share),
            "step_time_s": _f(config.step_s),
            "jit_save_s": float(save_s(config)) if jit is not None else None,
            "jit_restart_s": float(jit_restart_s(config)) if jit is not None else None,
            "notice_restart_s": float(notice_restart_s(config)) if notice is not None else None,
            "periodic_needed": needed,
        }

    def record_schema(self) -> tuple[str, dict[str, Any]] | None:
        fraction = {"type": "number", "minimum": 0, "maximum": 1}
        seconds = {"type": ["number", "null"], "minimum": 0, "description": "seconds"}
        return (
            "recovery",
            {
                "properties": {
                    JIT: fraction,
                    NOTICE: fraction,
                    "periodic_share": {
                        **fraction,
                        "description": "share of failures that roll back, 1 − jit − notice",
                    },
                    "step_time_s": seconds,
                    "jit_save_s": {**seconds, "description": "the save from the healthy replica, size / its bandwidth"},
                    "jit_restart_s": {**seconds, "description": "restart of an in-place recovery, c_j = r + save"},
                    "notice_restart_s": {
                        **seconds,
                        "description": "checkpoint written on notice plus the restart",
                    },
                    "periodic_needed": {"type": "boolean"},
                },
                "description": "just-in-time recovery and failures with notice (docs/model.md §13);"
                " null when neither is configured",
            },
        )

    def input_report_lines(self, inputs: dict[str, Any], rate: Any) -> tuple[str, ...]:
        """``90 % in place (save at 2.00 TB/s), 5 % with notice``."""
        parts = []
        jit, notice = inputs[JIT], inputs[NOTICE]
        if jit is not None:
            parts.append(f"{jit * 100:.3g} % in place (save at {rate(inputs[BANDWIDTH_COLUMN] or 0.0)})")
        if notice is not None:
            parts.append(f"{notice * 100:.3g} % with notice (checkpoint first)")
        return (", ".join(parts),) if parts else ()


def _own_first_order(config: Any, mtbf_s: Num) -> tuple[Num, Num] | None:
    """First order's (rework, restart) of the stated classes (docs/model.md §20.3): in place, t_step/2 and
    r_c each; a rollback is its tier's share already (half the tier's interval and the tier's restart r_k),
    so it adds r_c − r_k."""
    rework: Num = 0.0
    restart: Num = 0.0
    found = False
    levels = config.levels()
    for c in failure_classes(config):
        found = True
        if c.landing == IN_PLACE:
            rework = rework + c.share * config.step / (2.0 * mtbf_s)
            restart = restart + c.share * c.restart_s / mtbf_s
        else:
            restart = restart + c.share * (c.restart_s - levels[int(c.landing)].restart_s) / mtbf_s
    return (rework, restart) if found else None


def _resolve_classes(scenario: Any, config: Any) -> Any:
    """``config`` with the stated failure classes (docs/model.md §20), each checked: a share in [0, 1], the
    shares with just-in-time recovery's and notice's at most all failures, a rollback to a tier the job
    has, a fallback share on a peer class only, a step time for a class recovered in place. Errors name
    the flag or the preset key (``file: failures.classes[1].share``)."""
    share, tables = getattr(scenario, CLASS_SHARE), getattr(scenario, STATED) or ()
    if share is None:
        for name in (CLASS_RESTART, CLASS_PATH, CLASS_TIER, CLASS_FALLBACK):
            if getattr(scenario, name) is not None:
                raise InputError(
                    "needs {class_share} (the failure class's share of all failures)", where=scenario.where(name)
                )
        if not tables:
            return config
    total = float(getattr(scenario, JIT) or 0.0) + float(getattr(scenario, NOTICE) or 0.0)
    for index, each in enumerate(stated_classes(scenario)):

        def where(name: str, index: int = index) -> str:
            return scenario.where(name) if index == 0 else f"{scenario.where(f'{STATED}[{index}]')}.{CLASS_KEYS[name]}"

        if index:
            _check_table(each, where)
        path = ROLLBACK if each.path is None else each.path
        if each.fallback is not None and path != PEER:
            raise InputError(
                "a fallback share is the part of a peer class that rolls back: it needs the recovery path peer",
                where=where(CLASS_FALLBACK),
            )
        if each.tier is not None and path != ROLLBACK:
            raise InputError(
                "a tier is where a rollback class goes back to: it needs the recovery path rollback",
                where=where(CLASS_TIER),
            )
        if each.tier == MEMORY and scenario.replica_survival is None:
            raise InputError(
                "the job has no in-memory tier to roll back to (give {replica_survival})", where=where(CLASS_TIER)
            )
        if path != ROLLBACK and scenario.step_time_s is None:
            raise InputError(
                f"a class recovered in place ({path_name(path)}) loses the step in flight: it needs {{step_time}}",
                where=where(CLASS_PATH),
            )
        total += float(each.share or 0.0)
        if total > 1.0 + 1e-12:
            raise InputError(
                f"the failure classes' shares, with just-in-time recovery's and notice's, make {total:.10g}:"
                " more than all failures",
                where=where(CLASS_SHARE),
            )
    placed = any(c.path not in (None, ROLLBACK) for c in stated_classes(scenario))
    step = {"step_s": scenario.step_time_s} if placed else {}
    return config.replace(**{name: getattr(scenario, name) for name in CLASS_KEYS}, **{STATED: tables or None}, **step)


def _check_table(each: StatedClass, where: Any) -> None:
    """A further preset class's numbers (the first's are checked as every input is)."""
    if each.share is None:
        raise InputError("a failure class needs its share of all failures", where=where(CLASS_SHARE))
    if not (math.isfinite(each.share) and 0 <= each.share <= 1):
        raise InputError(f"must be a share in [0, 1], got {each.share:g}", where=where(CLASS_SHARE))
    if each.restart_s is not None and not (math.isfinite(each.restart_s) and each.restart_s > 0):
        raise InputError(f"must be a positive duration, got {each.restart_s:g} s", where=where(CLASS_RESTART))
    if each.fallback is not None and not (math.isfinite(each.fallback) and 0 <= each.fallback <= 1):
        raise InputError(f"must be a share in [0, 1], got {each.fallback:g}", where=where(CLASS_FALLBACK))


def _f(value: Any) -> float | None:
    return None if value is None else float(value)


def _plain(config: Any) -> bool:
    """Whether ``config``'s numbers are plain floats (a break-even is worked out for one job)."""
    return all(isinstance(v, float | int) for v in (config.mtbf_s, config.checkpoint_bytes, config.bandwidth))


def _other_share(name: str, config: Any) -> float:
    """The share a sweep over the other one holds, with every stated class's."""
    return float(getattr(config, NOTICE if name == JIT else JIT) or 0.0) + stated_share(config)


def _class_others(config: Any) -> float:
    """What a sweep over the first class's share leaves it: just-in-time recovery's, notice's and the further
    classes' shares."""
    rest = stated_classes(config)[1:] if getattr(config, CLASS_SHARE) is not None else stated_classes(config)
    return (
        float(getattr(config, JIT) or 0.0)
        + float(getattr(config, NOTICE) or 0.0)
        + sum(_coded(c.share, 0.0) for c in rest)
    )


MECHANISM = Recovery()
