"""JSON Schemas (draft 2020-12) of every ``--json`` document ckptcalc prints.

The promise: within one ``schema_version`` keys are only ever added, never
removed or changed in meaning. So the schemas list every key as required and
allow additional ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias, cast

from ckptcalc.mechanisms import registry
from ckptcalc.output.documents import SCHEMA_VERSION


def _input_paths() -> list[str]:
    """Every input's preset key (``failures.restart``), the keys ``inputs.sources`` may hold."""
    from ckptcalc.inputs.fields import FIELDS

    return [spec.path for spec in FIELDS]


#: A JSON Schema, or a part of one.
Schema: TypeAlias = dict[str, object]

DRAFT = "https://json-schema.org/draft/2020-12/schema"

NUMBER: Schema = {"type": "number"}
FRACTION: Schema = {"type": "number", "minimum": 0, "maximum": 1}
#: Whether a headline is the exact model or contains an approximate form (docs/model.md §18.2).
HEADLINE_MODEL: Schema = {
    "enum": ["exact", "approximate"],
    "description": "approximate where any part of the headline is: elastic replica groups, silent events,"
    " a spare pool under Weibull failures (docs/model.md §18.2)",
}
SECONDS: Schema = {"type": "number", "minimum": 0, "description": "seconds"}
MAYBE_NUMBER: Schema = {"type": ["number", "null"]}
MAYBE_SECONDS: Schema = {"type": ["number", "null"], "minimum": 0, "description": "seconds"}
TERM: Schema = {"enum": ["write", "rework", "restart"]}
#: A periodic interval: null when no periodic checkpoint is needed (every failure recovered in place or
#: met with notice, docs/model.md §13.3).
INTERVAL: Schema = {
    "type": ["number", "null"],
    "minimum": 0,
    "description": "seconds; null when no periodic checkpoint is needed",
}
WARNINGS: Schema = {"type": "array", "items": {"type": "string"}}


def _object(properties: Mapping[str, object], description: str | None = None) -> Schema:
    schema: Schema = {"type": "object", "properties": properties, "required": list(properties)}
    if description:
        schema["description"] = description
    return schema


def _loss(exact: bool) -> Schema:
    """Exact losses are shares of elapsed time (0 to 1); first-order ones are charged per unit of
    useful time and may exceed 1."""
    share = FRACTION if exact else {"type": "number", "minimum": 0}
    parts = {"write": share, "rework": share, "restart": share, "total": share}
    description = "shares of elapsed time lost" if exact else "first-order losses per unit of useful time"
    return _object(parts, description)


#: A rate stated per GPU (``25GB/s/gpu``), beside its aggregate over the GPUs under the key without ``_per_gpu``.
PER_GPU_RATE: Schema = {
    "type": ["number", "null"],
    "exclusiveMinimum": 0,
    "description": "bytes per second per GPU, when stated per GPU; null otherwise",
}

#: One level's restart taken apart (docs/model.md §12.1).
RESTART_PARTS = _object(
    {
        "detect_s": SECONDS,
        "reschedule_s": SECONDS,
        "reload_s": SECONDS,
        "read_bandwidth_bytes_per_s": {
            "type": ["number", "null"],
            "description": "bytes per second; null when no read bandwidth is given (reload 0)",
        },
        "warmup_s": SECONDS,
        "total_s": SECONDS,
    },
    "detect + reschedule + reload (checkpoint size / read bandwidth) + warmup = total",
)

#: One checkpoint tier of a configuration of three or more, fastest first.
TIER = _object(
    {
        "name": {"type": "string"},
        "bandwidth_bytes_per_s": NUMBER,
        "bandwidth_per_gpu_bytes_per_s": PER_GPU_RATE,
        "stall_s": SECONDS,
        "share_of_failures": FRACTION,
        "restart_s": SECONDS,
        **registry.tier_schema(),
    }
)

INPUTS = _object(
    registry.placed_before(
        {
            "params": MAYBE_NUMBER,
            "bytes_per_param": MAYBE_NUMBER,
            "checkpoint_bytes": NUMBER,
            "bandwidth_bytes_per_s": NUMBER,
            "mtbf_s": SECONDS,
            "mtbf_source": {"enum": ["mtbf", "gpu_mtbf", "failures", "failures_bound", "scaled"]},
            "restart_s": SECONDS,
            "restart_components": {
                "type": ["object", "null"],
                "additionalProperties": RESTART_PARTS,
                "description": "by level name, the levels whose restart is given by its parts; null when none is",
            },
            "gpus": MAYBE_NUMBER,
            "gpu_mtbf_s": MAYBE_SECONDS,
            "snapshot_bandwidth_bytes_per_s": MAYBE_NUMBER,
            "replica_survival": MAYBE_NUMBER,
            "memory_bandwidth_bytes_per_s": MAYBE_NUMBER,
            "bandwidth_per_gpu_bytes_per_s": PER_GPU_RATE,
            "snapshot_bandwidth_per_gpu_bytes_per_s": PER_GPU_RATE,
            "memory_bandwidth_per_gpu_bytes_per_s": PER_GPU_RATE,
            "memory_restart_s": MAYBE_SECONDS,
            "tiers": {
                "type": ["array", "null"],
                "items": TIER,
                "description": "every tier, fastest first, with three or more; null otherwise",
            },
            "failure_dist": {"enum": ["exponential", "weibull"]},
            "shape": MAYBE_NUMBER,
            "mtbf_ci95": {
                "type": ["array", "null"],
                "prefixItems": [SECONDS, MAYBE_SECONDS],
                "minItems": 2,
                "maxItems": 2,
                "description": "the job MTBF's 95 % interval, seconds; the high end null when only a bound exists",
            },
            **registry.input_schema(),
            "keep": {"type": ["integer", "null"], "minimum": 1, "description": "newest storage checkpoints kept"},
            "work_s": {**MAYBE_SECONDS, "description": "the run's length in useful work"},
            "sources": {
                "type": "object",
                # Every input's preset key may appear (listed, so that --value completes them).
                "properties": {path: {"type": "string"} for path in _input_paths()},
                "additionalProperties": {"type": "string"},
                "description": "by preset key (failures.mtbf), how a value not given came: 'fitted from FILE',"
                " 'measured from FILE', 'derived from ...' (a preset's [sources]); 'default, NAME preset' (the"
                " default preset's, when no preset was named), 'rate held from NAME at N GPUs' (a per-GPU failure"
                " rate held at a new GPU count), 'default' (the model's own); a key not listed was given",
            },
            "assumed": {
                "type": "array",
                "items": {"type": "string"},
                "description": "one line per value assumed (not given, nor from a preset named), with where it"
                " came from: 'restart 10.0 min (default, llama3-405b preset)'",
            },
        },
        registry.echo_schema_parts(),
    ),
    "normalised inputs, SI units; null where unused",
)


#: [at the low end of the MTBF's interval, at the high end]; the high end null when only a bound exists.
def _pair(item: Schema) -> Schema:
    high = {**item, "type": [item["type"], "null"]} if isinstance(item.get("type"), str) else item
    return {"type": "array", "prefixItems": [item, high], "minItems": 2, "maxItems": 2}


UNCERTAINTY: Schema = {
    "oneOf": [
        {"type": "null"},
        _object(
            {
                "source": {"enum": ["stated", "failures", "failures_bound"]},
                "mtbf_s": _pair(SECONDS),
                "effective": _pair(FRACTION),
                "optimal_interval_s": _pair(SECONDS),
                "optimal_effective": _pair(FRACTION),
                "robust_interval_s": SECONDS,
                "robust_memory_interval_s": MAYBE_SECONDS,
                "robust_storage_every": {"type": ["integer", "null"], "minimum": 1},
                "robust_effective": _pair(FRACTION),
                "robust_regret_pp": {"type": ["number", "null"], "minimum": 0},
                "point_regret_pp": {"type": ["number", "null"], "minimum": 0},
            },
            "the answer across the MTBF's 95 % interval (docs/model.md §9); null without an interval",
        ),
    ]
}

LEVEL = _object(
    {
        "name": {"type": "string", "description": "memory, storage, or a middle tier's name"},
        "stall_s": SECONDS,
        "lag_s": SECONDS,
        "slowdown_s": {**SECONDS, "description": "seconds per checkpoint lost to training slowed while it persists"},
        "interval_s": INTERVAL,
        "optimal_interval_s": INTERVAL,
        "share_of_failures": FRACTION,
        "restart_s": SECONDS,
        "optimal_interval_steps": {"type": ["integer", "null"], "minimum": 1},
    }
)

MAYBE_COUNT: Schema = {"type": ["integer", "null"], "minimum": 1}

#: Each failure-class mechanism's record of a result (its home's ``record_schema``), null where the job has
#: none of its classes.
RECOVERY: dict[str, Schema] = {
    key: {"oneOf": [{"type": "null"}, _object(properties, description)]}
    for key, (properties, description) in registry.record_schemas().items()
}

FIRST_ORDER = _object(
    {
        "optimal_interval_s": INTERVAL,
        "interval_s": INTERVAL,
        "loss": _loss(exact=False),
        "effective": FRACTION,
    },
    "Young's first-order model of the same configuration: the explanation, not the decision",
)

#: What a mechanism's schema parts are built of (``registry.result_schema``).
_PARTS: dict[str, Any] = {"fraction": FRACTION, "seconds": SECONDS, "object": _object}

#: What the checkpoints cost the storage (docs/model.md §17).
STORAGE_TIER = _object(
    {
        "name": {"type": "string"},
        "write_s": {**SECONDS, "description": "seconds the tier's storage writes per checkpoint (persist, or write)"},
        "interval_s": INTERVAL,
        "storage_busy_share": {"type": "number", "minimum": 0, "exclusiveMaximum": 1,
                               "description": "write_s / (interval_s + the stall training waits)"},
        "checkpoint_bytes": NUMBER,
        "bytes_written_per_day": {"type": "number", "minimum": 0},
    }
)  # fmt: skip

STORAGE = _object(
    registry.placed(
        {
            "tiers": {"type": "array", "items": STORAGE_TIER, "minItems": 1, "maxItems": 8},
            "bytes_written_per_day": {"type": "number", "minimum": 0, "description": "over every tier"},
            "max_busy": {**FRACTION, "description": "the busy share above which a warning is given (--max-busy)"},
            "slowdown_share": {
                **FRACTION,
                "description": "share of elapsed time lost to training slowed by the persist",
            },
            "bytes_retained": {
                "type": ["number", "null"],
                "minimum": 0,
                "description": "with --keep: size x (keep + work / --keep-every), the newest alone without --work;"
                " null: all kept",
            },
            "kept_for_good_bytes_per_day": {
                "type": ["number", "null"],
                "minimum": 0,
                "description": "with --keep and --keep-every, without --work: bytes a day of work the checkpoints"
                " kept for good add",
            },
            "retained_over_run": {"type": "boolean", "description": "bytes_retained is at the end of the run (--work)"},
        },
        registry.load_schema(),
    ),
    "what the checkpoints cost the storage, and the persist's slowdown (docs/model.md §17); null for a grid",
)
MAYBE_STORAGE: Schema = {**STORAGE, "type": ["object", "null"]}
EVALUATION: Schema = registry.placed({
    "inputs": INPUTS,
    "model": HEADLINE_MODEL,
    "write_s": SECONDS,
    "optimal_interval_s": INTERVAL,
    "interval_s": INTERVAL,
    "memory_interval_s": MAYBE_SECONDS,
    "storage_every": MAYBE_COUNT,
    "optimal_memory_interval_s": MAYBE_SECONDS,
    "optimal_storage_every": MAYBE_COUNT,
    "young_interval_s": INTERVAL,
    "daly_interval_s": MAYBE_SECONDS,
    "loss": _loss(exact=True),
    "effective": FRACTION,
    "optimal_effective": FRACTION,
    "interval_penalty_pp": NUMBER,
    "dominant": TERM,
    "first_order": FIRST_ORDER,
    "levels": {"type": "array", "items": LEVEL, "minItems": 1, "maxItems": 8},
    "uncertainty": UNCERTAINTY,
    **RECOVERY,
    **registry.own_schemas(),
    **registry.class_schema(),
    "warnings": WARNINGS,
    "storage": MAYBE_STORAGE,
}, registry.result_schema(_PARTS))  # fmt: skip

HEADER: Schema = {"schema_version": {"const": SCHEMA_VERSION}}


def _document(command: str, title: str, properties: Mapping[str, object]) -> Schema:
    schema = _object({**HEADER, "command": {"const": command}, **properties})
    return {
        "$schema": DRAFT,
        "$id": f"ckptcalc:{command.replace(' ', '-')}:v{SCHEMA_VERSION}",
        "title": title,
        **schema,
    }


def _with_optional(schema: Schema, optional: Mapping[str, object]) -> Schema:
    """Add properties that appear only with some flags (not required)."""
    schema["properties"] = {**cast(Schema, schema["properties"]), **optional}
    return schema


#: Where a lever with a cost starts to pay (docs/guide/decisions.md): re-run at ``value`` its gain is zero.
BREAK_EVEN = _object(
    {
        "key": {"type": "string", "description": "the input the lever turns on"},
        "value": {"type": "number", "description": "that input's value where the lever's gain is zero, in SI units"},
        "unit": {
            "enum": ["fraction", "duration", "rate"],
            "description": "the value's unit kind: fraction (0 to 1), duration (seconds), rate (bytes per second)",
        },
        "pays": {"enum": ["above", "below"], "description": "on which side of the value the lever pays"},
    },
    "where a lever with a cost starts to pay; null for a lever without one",
)


def optimize() -> Schema:
    lever = _object(
        {
            "key": {
                "enum": [
                    "bandwidth_x2",
                    "restart_half",
                    "mtbf_x2",
                    "async",
                    "memory_replica",
                    "detect_half",
                    "read_bw_x2",
                    "without_jit",
                    "without_notice",
                    *registry.running_lever_keys(),
                    "without_elastic",
                    *registry.lever_keys(),
                    "without_tier",
                    *registry.other_lever_keys(),
                ]
            },
            "name": {"type": "string"},
            "effective": FRACTION,
            "gain_pp": NUMBER,
            "break_even": {"oneOf": [{"type": "null"}, BREAK_EVEN]},
        }
    )
    # A running share's levers only: their gain over job and idle capacity (spare nodes, docs/model.md §15).
    lever["properties"] = {**cast(dict[str, object], lever["properties"]), "cluster_gain_pp": NUMBER}
    targets = _object(
        {
            "bandwidth_bytes_per_s": MAYBE_NUMBER,
            "restart_s": MAYBE_SECONDS,
            "mtbf_s": MAYBE_SECONDS,
            "gpus": MAYBE_NUMBER,
            "unbounded": {"type": "array", "items": {"type": "string"}},
        },
        "the value each input alone must reach for the target; null where none does, unless the key is"
        " listed in unbounded: every value does",
    )
    document = _document(
        "optimize",
        "ckptcalc optimize --json",
        {
            "preset": {"type": ["string", "null"]},
            **EVALUATION,
            "levers": {"type": "array", "items": lever},
            "discard": FRACTION,
            "goodput": FRACTION,
            "target": {"type": ["number", "null"], "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "targets": {"oneOf": [targets, {"type": "null"}]},
            "lost_gpu_hours_per_day": {"type": ["number", "null"], "minimum": 0},
            "lost_cost_per_day": MAYBE_NUMBER,
            "lost_cost_per_30_days": MAYBE_NUMBER,
            "step_time_s": MAYBE_SECONDS,
            "optimal_interval_steps": {"type": ["integer", "null"], "minimum": 1},
        },
    )
    settings = {
        "type": "object",
        "description": "lines to paste into training frameworks (with --step-time)",
        "additionalProperties": {"type": "string"},
    }
    return _with_optional(document, {"settings": settings, **registry.scale_schema()})


def sweep() -> Schema:
    column: Schema = {"type": "array", "items": NUMBER}
    fractions: Schema = {"type": "array", "items": FRACTION}
    document = _document(
        "sweep",
        "ckptcalc sweep --json",
        {
            "preset": {"type": ["string", "null"]},
            "inputs": INPUTS,
            "over": {"type": "string"},
            "values_name": {"type": "string"},
            "log": {"type": "boolean"},
            "model": HEADLINE_MODEL,
            "base_optimal_interval_s": SECONDS,
            "base_effective": FRACTION,
            "values": column,
            "interval_s": column,
            "optimal_interval_s": column,
            "memory_interval_s": {"oneOf": [column, {"type": "null"}]},
            "storage_every": {"oneOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]},
            "write_s": column,
            "loss": _object({k: fractions for k in ("write", "rework", "restart", "total")}),
            "effective": fractions,
            "first_order_effective": fractions,
            **registry.sweep_schema(fractions),
            "dominant": {"type": "array", "items": TERM},
            "storage_busy_share": {**column, "description": "the storage tier's write / time between its checkpoints"},
            "bytes_written_per_day": {**column, "description": "bytes the storage tier takes a day"},
            "warnings": WARNINGS,
        },
    )
    return _with_optional(document, registry.sweep_part_schema())


def compare() -> Schema:
    scenario = _object({"name": {"type": "string"}, **EVALUATION})
    return _document(
        "compare", "ckptcalc compare --json", {"scenarios": {"type": "array", "items": scenario, "minItems": 1}}
    )


def simulate() -> Schema:
    agreement = {
        "oneOf": [_object({"agrees": {"type": "boolean"}, "difference_pp": NUMBER}), {"type": "null"}],
    }
    search = _object(
        {
            "interval_s": SECONDS,
            "effective": FRACTION,
            "evaluations": {"type": "integer", "minimum": 1},
            "memory_interval_s": MAYBE_SECONDS,
            "storage_every": MAYBE_COUNT,
            "young_interval_s": SECONDS,
            "exponential_exact_interval_s": MAYBE_SECONDS,
        }
    )
    return _document(
        "simulate",
        "ckptcalc simulate --json",
        registry.placed({
            "preset": {"type": ["string", "null"]},
            "inputs": INPUTS,
            "failure_dist": {"enum": ["exponential", "weibull"]},
            "shape": {"type": ["number", "null"], "exclusiveMinimum": 0},
            "seed": {"type": "integer", "minimum": 0},
            "cycles": {"type": "integer", "minimum": 1},
            "interval_s": INTERVAL,
            "memory_interval_s": MAYBE_SECONDS,
            "storage_every": {"type": ["integer", "null"], "minimum": 1},
            "tier_intervals": {
                "type": ["array", "null"],
                "items": _object({"name": {"type": "string"}, "interval_s": SECONDS}),
                "description": "each tier's interval, fastest first, with three or more tiers; null otherwise",
            },
            **RECOVERY,
            "effective": FRACTION,
            "effective_ci95": {"type": "array", "items": NUMBER, "minItems": 2, "maxItems": 2},
            "split": _object({k: FRACTION for k in ("useful", "write", "rework", "restart")}),
            "elastic": {
                "oneOf": [
                    {"type": "null"},
                    _object(
                        {"lost": FRACTION},
                        "with --groups: the share of elapsed time the groups down, the quorum pauses and the"
                        " overhead took from kept work (split + this = 1); null otherwise",
                    ),
                ]
            },
            **registry.class_simulated_schema(),
            "failures": {"type": "integer", "minimum": 0},
            "failures_in_restart": {"type": "integer", "minimum": 0},
            "analytic": _object({"first_order": FRACTION, "exact": {"type": ["number", "null"]}}),
            "agreement": _object({"first_order": agreement, "exact": agreement}),
            "optimize": {"oneOf": [search, {"type": "null"}]},
            "warnings": WARNINGS,
            "storage": MAYBE_STORAGE,
        }, registry.simulated_schema(_PARTS)),
    )  # fmt: skip


def check() -> Schema:
    row = _object(
        {
            "preset": {"type": "string"},
            "effective": FRACTION,
            "effective_ci95": {"oneOf": [{"type": "null"}, _pair(FRACTION)]},
            "tested": {"enum": ["point", "low"], "description": "where the floor was tested"},
            "interval_s": SECONDS,
            "interval_pinned": {"type": "boolean"},
            "passed": {"type": "boolean"},
            **registry.checked_schema(),
        }
    )
    return _document(
        "check",
        "ckptcalc check --json",
        {
            "min_effective": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "max_silent_risk": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "at": {"enum": ["point", "low"]},
            "results": {"type": "array", "items": row},
            "passed": {"type": "boolean"},
            "warnings": WARNINGS,
        },
    )


def presets_list() -> Schema:
    row = _object(
        {
            "name": {"type": "string"},
            "description": {"type": "string"},
            "path": {"type": "string"},
            "title": {"type": "string", "description": "the preset's own name key; the file's stem where it has none"},
        }
    )
    return _document("presets list", "ckptcalc presets list --json", {"presets": {"type": "array", "items": row}})


def fit() -> Schema:
    maybe_pair = {"oneOf": [{"type": "array", "items": MAYBE_SECONDS, "minItems": 2, "maxItems": 2}, {"type": "null"}]}
    weibull = _object(
        {
            "shape": {"type": "number", "exclusiveMinimum": 0},
            "shape_ci95": {"type": "array", "items": MAYBE_NUMBER, "minItems": 2, "maxItems": 2},
            "scale_s": SECONDS,
            "mean_s": MAYBE_SECONDS,  # null where Γ(1 + 1/k) overflows a double (k near 0)
            "lr_statistic": {"type": "number", "minimum": 0},
            "p_value": FRACTION,
            "p_value_underflow": {"type": "boolean", "description": "p < 1e-300; p_value is then 0.0"},
            "verdict": {"enum": ["exponential", "clustered", "wear_out"]},
        },
        "Weibull fit of the gaps (the time to the window's end censored)",
    )
    coalescing_row = _object(
        {
            "coalesce_s": SECONDS,
            "interruptions": {"type": "integer", "minimum": 0},
            "mtbf_s": MAYBE_SECONDS,
            "shape": {"type": ["number", "null"], "exclusiveMinimum": 0},
            "verdict": {"enum": ["exponential", "clustered", "wear_out", None]},
        }
    )
    maybe_text = {"type": ["string", "null"]}
    cause = _object({"cause": {"type": "string"}, "count": {"type": "integer", "minimum": 0}, "share": FRACTION})
    return _document(
        "fit",
        "ckptcalc fit --json",
        {
            "source": {"enum": ["log", "counts"], "description": "logs read, or --failures counted in --window"},
            "logs": {"type": "array", "items": {"type": "string"}},
            "where": {"type": "array", "items": {"type": "string"}},
            "where_any": {"type": "array", "items": {"type": "string"}},
            "time_kind": {"enum": ["timestamp", "number"]},
            "time_field": maybe_text,
            "cause_field": maybe_text,
            "naive_timestamps": {"type": "integer", "minimum": 0},
            "tz": {**maybe_text, "description": "the zone naive timestamps were read in; null: UTC, none given"},
            "reading": {"oneOf": [{"type": "null"}, reading()], "description": "null: counts, no log"},
            "events_read": {"type": "integer", "minimum": 0},
            "events_kept": {"type": "integer", "minimum": 0},
            "skipped_bad": {"type": "integer", "minimum": 0},
            "interruptions": {"type": "integer", "minimum": 0},
            "interruptions_note": {
                **maybe_text,
                "description": "why fewer interruptions are counted than events kept (outside the window,"
                " coalesced, the first opening the window); null when as many, or for counts",
            },
            "window_start_s": MAYBE_NUMBER,
            "window_end_s": MAYBE_NUMBER,
            "window_s": MAYBE_SECONDS,
            "mtbf_s": MAYBE_SECONDS,
            "mtbf_ci95": {"type": "array", "items": MAYBE_SECONDS, "minItems": 2, "maxItems": 2},
            "mtbf_lower_bound_s": MAYBE_SECONDS,
            "gpu_mtbf_s": MAYBE_SECONDS,
            "gpu_mtbf_ci95": maybe_pair,
            "weibull": {"oneOf": [weibull, {"type": "null"}]},
            "causes": {"type": "array", "items": cause},
            "histogram": _object(
                {
                    "edges_s": {"type": "array", "items": SECONDS},
                    "counts": {"type": "array", "items": {"type": "integer"}},
                }
            ),
            "near_zero_gaps": {"type": "integer", "minimum": 0, "description": "gaps under 1 min"},
            "coalescing": {
                "oneOf": [{"type": "array", "items": coalescing_row}, {"type": "null"}],
                "description": "the fit at 0, 1, 5 and 30 min of coalescing (and the window used), when at"
                " least 10 % of the gaps are under 1 min; null otherwise",
            },
            **registry.incident_log_schema(),
            "warnings": WARNINGS,
        },
    )


#: Schema builders by command name, as ``ckptcalc schema COMMAND`` takes them.
def plan() -> Schema:
    def spread(item: Schema) -> Schema:
        return _object({"p10": item, "p50": item, "p90": item, "p95": item, "mean": item})

    maybe_spread = {"oneOf": [{"type": "null"}, spread({"type": "number", "minimum": 0})]}
    interval = {"type": "array", "prefixItems": [FRACTION, FRACTION], "minItems": 2, "maxItems": 2}

    def ends(item: Schema) -> Schema:
        return {"type": "array", "items": {"oneOf": [{"type": "null"}, item]}, "minItems": 2, "maxItems": 2}

    iso = {"type": ["string", "null"], "format": "date-time"}
    band = _object(
        {
            "source": {"enum": ["failures", "failures_bound", "stated"]},
            "mtbf_s": ends(SECONDS),
            "completion_s": ends(spread(SECONDS)),
            "expected_s": ends(SECONDS),
            "failures": ends(spread({"type": "number", "minimum": 0})),
            "p_deadline": {"oneOf": [{"type": "null"}, ends(FRACTION)]},
            "p_deadline_ci95": {"oneOf": [{"type": "null"}, ends(interval)]},
        },
        "the same runs (schedule, runs, seed) at either end of the job MTBF's 95 % interval; pairs are [at low"
        " M, at high M], null at an open end; null without an interval",
    )
    return _document(
        "plan",
        "ckptcalc plan --json",
        {
            "preset": {"type": ["string", "null"]},
            "inputs": INPUTS,
            "work_s": SECONDS,
            "steps": {"type": ["integer", "null"], "minimum": 1},
            "failure_dist": {"enum": ["exponential", "weibull"]},
            "shape": MAYBE_NUMBER,
            "interval_s": INTERVAL,
            "memory_interval_s": MAYBE_SECONDS,
            "storage_every": {"type": ["integer", "null"], "minimum": 1},
            "effective": FRACTION,
            "runs": {"type": "integer", "minimum": 1},
            "seed": {"type": "integer", "minimum": 0},
            "completion_s": spread(SECONDS),
            "expected_s": {**MAYBE_SECONDS, "description": "W / effective by the exact model; null without one"},
            "mean_vs_expected": MAYBE_NUMBER,
            "failures": spread({"type": "number", "minimum": 0}),
            "p_no_failure": FRACTION,
            "p_no_failure_ci95": interval,
            "gpu_hours": maybe_spread,
            "cost": maybe_spread,
            "deadline_s": MAYBE_SECONDS,
            "p_deadline": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "p_deadline_ci95": {"oneOf": [{"type": "null"}, interval]},
            "start": {**iso, "description": "with a --deadline date or --start: when the run starts (ISO 8601)"},
            "deadline": {**iso, "description": "with a --deadline date or --start: the deadline (ISO 8601)"},
            "uncertainty": {"oneOf": [{"type": "null"}, band]},
            **registry.class_schema(),
            "warnings": WARNINGS,
            "storage": MAYBE_STORAGE,
        },
    )


def analyze() -> Schema:
    share = FRACTION
    level = _object(
        {
            "name": {"type": "string"},
            "checkpoints": {"type": "integer", "minimum": 1},
            "write_s": SECONDS,
            "write_p90_s": SECONDS,
            "persist_s": MAYBE_SECONDS,
            "restarts": {"type": "integer", "minimum": 0},
            "restart_s": MAYBE_SECONDS,
        }
    )
    model = _object(
        {
            "effective_at_interval": FRACTION,
            "difference_pp": NUMBER,
            "agrees": {"type": "boolean"},
            "optimal_interval_s": SECONDS,
            "optimal_memory_interval_s": MAYBE_SECONDS,
            "optimal_effective": FRACTION,
            "robust_interval_s": SECONDS,
            "gain_pp": NUMBER,
            "gain_gpu_hours": MAYBE_NUMBER,
            "elastic": {
                **registry.own_schemas()["elastic"],
                "description": "the elastic model at the measured G, e, T_j, q_p, o (as"
                " optimize --json's elastic); null without group events",
            },
        },
        "the exact model at the measured inputs; null when they do not make one",
    )
    window = _object(
        {
            "start_s": NUMBER,
            "end_s": NUMBER,
            "effective": share,
            "write": share,
            "rework": share,
            "restart": share,
            "groups_down": share,
            "quorum": share,
            "overhead": share,
            "silent": share,
            "below_slo": {"type": ["boolean", "null"]},
        }
    )
    maybe_count = {"type": ["integer", "null"], "minimum": 1}
    return _document(
        "analyze",
        "ckptcalc analyze --json",
        {
            "log": {"type": "string"},
            "time_kind": {"enum": ["timestamp", "number"]},
            "reading": reading(),
            "lines": _object({k: {"type": "integer", "minimum": 0} for k in
                              ("read", "used", "unknown_events", "skipped_bad", "progress")}),
            "start_s": NUMBER,
            "end_s": NUMBER,
            "wall_s": SECONDS,
            "realised": _object(
                {
                    "useful": share,
                    "write": share,
                    "rework": share,
                    "restart": share,
                    "groups_down": {**share, "description": "kept work lost to groups down (group-time / G)"},
                    "quorum": {**share, "description": "kept work lost to quorum pauses (the running groups)"},
                    "overhead": {**share, "description": "kept work lost to --ft-overhead outside pauses"},
                    "silent": {
                        **share,
                        "description": "kept work lost to silent events: rolled back past (to the detection) and"
                        " skipped, less what is stall, restart or rework already",
                    },
                    "effective": share,
                    "effective_ci95": {"type": "array", "items": NUMBER, "minItems": 2, "maxItems": 2},
                    "goodput": share,
                },
                "shares of the run's wall time (useful + write + rework + restart + the groups' three + silent"
                " = 1)",
            ),
            "discard": FRACTION,
            "measured": _object(
                {
                    "write_s": MAYBE_SECONDS,
                    "write_p90_s": MAYBE_SECONDS,
                    "restart_s": MAYBE_SECONDS,
                    "restart_p90_s": MAYBE_SECONDS,
                    "restarts": {"type": "integer", "minimum": 0},
                    "interval_s": MAYBE_SECONDS,
                    "storage_every": maybe_count,
                    "memory_share": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                    "approximate": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "the quantiles read from a KLL sketch, past 1e5 values of a quantity:"
                        " interval_s, restart_p90_s, LEVEL.write_p90_s (empty: every one exact)",
                    },
                    "failures": {"type": "integer", "minimum": 0},
                    "mtbf_s": MAYBE_SECONDS,
                    "mtbf_ci95": {"type": "array", "prefixItems": [SECONDS, MAYBE_SECONDS], "minItems": 2,
                                  "maxItems": 2},
                    "shape": MAYBE_NUMBER,
                    "shape_p_value": MAYBE_NUMBER,
                    "levels": {"type": "array", "items": level},
                    **registry.measured_entry_schemas(),
                    **registry.measured_schema(),
                }
            ),
            "model": {"oneOf": [{"type": "null"}, model]},
            "gpus": MAYBE_NUMBER,
            "causes": {
                "type": "array",
                "items": _object({"cause": {"type": "string"}, "failures": {"type": "integer", "minimum": 1},
                                  "lost_s": SECONDS, "share_of_wall": share}),
            },
            "slo": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "windows": {"oneOf": [{"type": "null"}, {"type": "array", "items": window}]},
            "warnings": WARNINGS,
        },
    )  # fmt: skip


def reading() -> Schema:
    """What reading a log did: lines, bad rows and every inference."""
    from ckptcalc.logs.adapter import NOTES

    count = {"type": "integer", "minimum": 0}
    return _object(
        {
            "files": {"type": "integer", "minimum": 1},
            "format": {"type": "string", "description": "the format read (several, comma-separated)"},
            "read": count, "used": count, "ignored": count, "filtered": count, "skipped_bad": count,
            "bad": {"type": "array", "items": {"type": "string"}, "description": "the first bad lines, FILE:LINE"},
            "inferred": _object({key: count for key in NOTES}, "what the reading inferred (0: nothing)"),
            "year_from": {"enum": [None, "year", "mtime", "today"],
                          "description": "where the year of timestamps without one came from"},
        },
        "what reading the log did",
    )  # fmt: skip


def events() -> Schema:
    return _document(
        "events",
        "ckptcalc events --output FILE --json",
        {
            "logs": {"type": "array", "items": {"type": "string"}},
            "output": {"type": ["string", "null"], "description": "the file written; null: standard output"},
            "form": {"enum": ["jsonl", "csv"]},
            "events": {"type": "integer", "minimum": 0, "description": "events written"},
            "reading": reading(),
        },
    )


def event() -> Schema:
    """One line of an event log (JSON Lines; a CSV row has the same fields as columns)."""
    time = {"type": ["string", "number"], "description": "ISO-8601 timestamp, or a number in --time-unit"}
    seconds = {"type": ["string", "number"], "description": "seconds from the log's zero (simulate --events)"}
    return {
        "$schema": DRAFT,
        "$id": f"ckptcalc:event:v{SCHEMA_VERSION}",
        "title": "one event of a run's event log, read by ckptcalc analyze",
        "type": "object",
        "properties": {
            "time": time,
            "time_s": seconds,
            "event": {
                "type": "string",
                "description": "run_start, run_end, checkpoint_start, checkpoint_end, failure, recovery,"
                " restart_end, progress, group_down, group_up, silent_detected or rollback; any other value is"
                " skipped and counted",
            },
            "level": {"type": "string", "description": "checkpoint events: memory, storage, or a tier name"},
            "async_persist_end": {
                **time,
                "description": "checkpoint_end: when its persist became durable, or interrupted (never: a failure"
                " cut it short); other times in the unit of the time field",
            },
            "cause": {
                "type": ["string", "number", "boolean", "null"],
                "description": "failure, silent_detected: its cause",
            },
            "resumed_from": {**time, "description": "restart_end: the checkpoint_start whose state was loaded"},
            "step": {"type": "number", "description": "progress: the training step reached"},
            "kind": {"enum": ["in_place", "notice"], "description": "recovery: in place, or with notice"},
            "group": {
                "type": ["integer", "string"],
                "description": "group_down, group_up: the replica group, a whole number from 0 (below --groups)",
            },
            "quorum_end": {
                **time,
                "description": "group_down: when the running groups resumed after the quorum change (a pause)",
            },
            "onset": {**time, "description": "silent_detected: when the silent event began (no later than it)"},
            "to": {
                **time,
                "description": "rollback: the checkpoint_start of the durable checkpoint rolled back to, or the"
                " run's start; no later than the silent_detected it answers",
            },
            "skip": {
                "type": ["number", "string"],
                "description": "rollback: work discarded beyond the checkpoint, a duration in --time-unit"
                " (seconds for timestamps); 0 when absent",
            },
        },
        "required": ["event"],
        "anyOf": [{"required": ["time"]}, {"required": ["time_s"]}],
    }


SCHEMAS = {
    "optimize": optimize,
    "sweep": sweep,
    "compare": compare,
    "simulate": simulate,
    "check": check,
    "presets-list": presets_list,
    "fit": fit,
    "plan": plan,
    "analyze": analyze,
    "events": events,
    "event": event,
}


def for_command(command: str) -> Schema:
    """The schema of one command's ``--json`` output (``presets list`` is ``presets-list``)."""
    return SCHEMAS[command.replace(" ", "-")]()


def everything() -> Schema:
    """All schemas in one document, under ``$defs``, keyed by command."""
    return {
        "$schema": DRAFT,
        "$id": f"ckptcalc:all:v{SCHEMA_VERSION}",
        "title": "ckptcalc --json documents",
        "$defs": {name: build() for name, build in SCHEMAS.items()},
        "oneOf": [{"$ref": f"#/$defs/{name}"} for name in SCHEMAS if name != "event"],
    }
