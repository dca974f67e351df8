"""The pieces of the JSON Schemas (draft 2020-12) of ckptcalc's ``--json`` documents: each command's
schema is in its module of ckptcalc.commands, and ckptcalc.commands.catalogue lists them.

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


def object_schema(properties: Mapping[str, object], description: str | None = None) -> Schema:
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
    return object_schema(parts, description)


#: A rate stated per GPU (``25GB/s/gpu``), beside its aggregate over the GPUs under the key without ``_per_gpu``.
PER_GPU_RATE: Schema = {
    "type": ["number", "null"],
    "exclusiveMinimum": 0,
    "description": "bytes per second per GPU, when stated per GPU; null otherwise",
}

#: One level's restart taken apart (docs/model.md §12.1).
RESTART_PARTS = object_schema(
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
TIER = object_schema(
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

INPUTS = object_schema(
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
def pair(item: Schema) -> Schema:
    high = {**item, "type": [item["type"], "null"]} if isinstance(item.get("type"), str) else item
    return {"type": "array", "prefixItems": [item, high], "minItems": 2, "maxItems": 2}


UNCERTAINTY: Schema = {
    "oneOf": [
        {"type": "null"},
        object_schema(
            {
                "source": {"enum": ["stated", "failures", "failures_bound"]},
                "mtbf_s": pair(SECONDS),
                "effective": pair(FRACTION),
                "optimal_interval_s": pair(SECONDS),
                "optimal_effective": pair(FRACTION),
                "robust_interval_s": SECONDS,
                "robust_memory_interval_s": MAYBE_SECONDS,
                "robust_storage_every": {"type": ["integer", "null"], "minimum": 1},
                "robust_effective": pair(FRACTION),
                "robust_regret_pp": {"type": ["number", "null"], "minimum": 0},
                "point_regret_pp": {"type": ["number", "null"], "minimum": 0},
            },
            "the answer across the MTBF's 95 % interval (docs/model.md §9); null without an interval",
        ),
    ]
}

LEVEL = object_schema(
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
    key: {"oneOf": [{"type": "null"}, object_schema(properties, description)]}
    for key, (properties, description) in registry.record_schemas().items()
}

FIRST_ORDER = object_schema(
    {
        "optimal_interval_s": INTERVAL,
        "interval_s": INTERVAL,
        "loss": _loss(exact=False),
        "effective": FRACTION,
    },
    "Young's first-order model of the same configuration: the explanation, not the decision",
)

#: What a mechanism's schema parts are built of (``registry.result_schema``).
PARTS: dict[str, Any] = {"fraction": FRACTION, "seconds": SECONDS, "object": object_schema}

#: What the checkpoints cost the storage (docs/model.md §17).
STORAGE_TIER = object_schema(
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

STORAGE = object_schema(
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
}, registry.result_schema(PARTS))  # fmt: skip

HEADER: Schema = {"schema_version": {"const": SCHEMA_VERSION}}


def document(command: str, title: str, properties: Mapping[str, object]) -> Schema:
    schema = object_schema({**HEADER, "command": {"const": command}, **properties})
    return {
        "$schema": DRAFT,
        "$id": f"ckptcalc:{command.replace(' ', '-')}:v{SCHEMA_VERSION}",
        "title": title,
        **schema,
    }


def with_optional(schema: Schema, optional: Mapping[str, object]) -> Schema:
    """Add properties that appear only with some flags (not required)."""
    schema["properties"] = {**cast(Schema, schema["properties"]), **optional}
    return schema


def reading() -> Schema:
    """What reading a log did: lines, bad rows and every inference."""
    from ckptcalc.logs.adapter import NOTES

    count = {"type": "integer", "minimum": 0}
    return object_schema(
        {
            "files": {"type": "integer", "minimum": 1},
            "format": {"type": "string", "description": "the format read (several, comma-separated)"},
            "read": count, "used": count, "ignored": count, "filtered": count, "skipped_bad": count,
            "bad": {"type": "array", "items": {"type": "string"}, "description": "the first bad lines, FILE:LINE"},
            "inferred": object_schema({key: count for key in NOTES}, "what the reading inferred (0: nothing)"),
            "year_from": {"enum": [None, "year", "mtime", "today"],
                          "description": "where the year of timestamps without one came from"},
        },
        "what reading the log did",
    )  # fmt: skip
