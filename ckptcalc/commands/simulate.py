"""``simulate``: its JSON document, its table and its schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from ckptcalc.inputs import units
from ckptcalc.inputs.scenario import Job
from ckptcalc.mechanisms import registry
from ckptcalc.model.evaluation import Result
from ckptcalc.output import documents, wording
from ckptcalc.records import Record

if TYPE_CHECKING:
    from ckptcalc.output import schema as schemas
    from ckptcalc.simulation.search import Search
    from ckptcalc.simulation.split import Whole
    from ckptcalc.simulation.timeline import Failures, Simulation

dur = units.format_duration
pct = units.format_percent


class SharePart(Record):
    """One share of ``simulate``'s whole split: its JSON and its schema are made from these fields."""

    simulated: Annotated[float, "the share of elapsed time the run measured"]
    half_width: Annotated[
        float | None,
        "its batch-means 95 % half-width; null where the route keeps no batches of it (the useful share always"
        " has one: the effective time's)",
    ]
    model: Annotated[
        float | None,
        "the model's share of the same time at the schedule run; null where the model gives none alike: under"
        " Weibull failures on two or more tiers (no exact model), for rework, restart and silent when the one"
        " engine steps silent events (the model counts their replays in rework and their restarts in restart),"
        " and for write, rework and restart when a class's own stepper counts its losses otherwise",
    ]
    agrees: Annotated[bool | None, "the model's share lies within simulated ± half_width; null without both"]
    difference_pp: Annotated[float | None, "model − simulated, in percentage points; null without the model's"]


class WholeSplitPart(Record):
    """``simulate``'s whole split of elapsed time: its JSON and its schema are made from these fields."""

    useful: Annotated[SharePart, "useful work: the effective time"]
    write: Annotated[SharePart, "checkpoint stalls and the training the persist slows"]
    rework: Annotated[SharePart, "work redone after fail-stop failures"]
    restart: Annotated[SharePart, "restarts after fail-stop failures"]
    waiting: Annotated[
        SharePart | None, "waits for a spare node back from repair; null without a spare pool, or folded"
    ]
    groups_down: Annotated[SharePart | None, "kept work lost to replica groups down; null without elastic groups"]
    quorum: Annotated[SharePart | None, "kept work lost to quorum pauses; null without elastic groups, or folded"]
    overhead: Annotated[SharePart | None, "kept work lost to the groups' overhead; null without elastic groups"]
    silent: Annotated[
        SharePart | None,
        "work silent events threw away at detection, with their restarts and skips; null without, or folded",
    ]
    folded: Annotated[
        tuple[str, ...],
        "what this run counts inside other shares, its own share then null: 'waiting' inside restart (every"
        " route but the one engine with silent events keeps no elapsed time to divide the waits by), 'quorum'"
        " inside groups_down (the groups' pauses are kept with groups down), a class its own stepper runs by its"
        " name ('silent') inside write, rework and restart (its part of the document gives its share), and"
        " 'stragglers': the time lost to running slow inside restart, as the model counts it",
    ]


def _whole_split(whole: Whole) -> dict[str, Any]:
    """The whole split as its typed part's JSON."""
    from ckptcalc.output.typed import document_of

    shares: dict[str, Any] = {
        name: None if share is None else SharePart(**{key: getattr(share, key) for key in SharePart._fields})
        for name, share in whole.shares.items()
    }
    return document_of(WholeSplitPart(**shares, folded=whole.folded))


def _tier_intervals(result: Result) -> list[dict[str, Any]]:
    """Each tier's name and interval, fastest first."""
    return [{"name": str(plan.level.name), "interval_s": float(plan.interval_s)} for plan in result.levels]


def document(
    job: Job,
    outcome: Simulation,
    failures: Failures,
    preset: str | None,
    search: Search | None,
    *,
    analytic: tuple[float, float | None],
    agreement: dict[str, dict[str, Any] | None],
    result: Result,
    base: Result | None,
    whole: Whole,
    given: Result | None = None,
) -> dict[str, Any]:
    """Everything ``simulate --json`` prints: the run, and the models at the schedule it ran
    (``result``; ``base`` is the job at its optimum, with ``search``; ``given`` the job as stated,
    whose intervals may have been rounded to run); ``agreement`` is each model's verdict on the run, ``whole``
    the run's whole split with the model's shares beside it."""
    first, exact = analytic
    low, high = outcome.ci95
    notes = [*([] if given is None else documents.warnings(given)), *documents.warnings(result)]
    notes = [*dict.fromkeys(notes), *([wording.NO_EXACT] if exact is None else [])]
    document: dict[str, Any] = {
        "schema_version": documents.SCHEMA_VERSION,
        "command": "simulate",
        "preset": preset,
        "inputs": documents.inputs(job),
        # The model beside the run: first order alone where no exact model exists.
        "model": result.model if exact is not None else "approximate",
        "failure_dist": "exponential" if failures.shape is None else "weibull",
        "shape": failures.shape,
        "seed": outcome.seed,
        "cycles": outcome.cycles,
        "interval_s": outcome.interval_s,
        "memory_interval_s": outcome.memory_interval_s,
        "storage_every": outcome.storage_every,
        "tier_intervals": _tier_intervals(result) if job.config.is_nested else None,
        **documents.recovery(job),
        "effective": outcome.effective,
        "effective_ci95": [low, high],
        "split": {
            "useful": outcome.split.useful,
            "write": outcome.split.write,
            "rework": outcome.split.rework,
            "restart": outcome.split.restart,
        },
        "whole_split": _whole_split(whole),
        **registry.class_simulated_parts(outcome.late, result),
        "failures": outcome.failures,
        "failures_in_restart": outcome.failures_in_restart,
        "analytic": {"first_order": first, "exact": exact},
        "agreement": {"first_order": agreement["first_order"], "exact": agreement["exact"]},
        "optimize": None,
        "warnings": [*documents.input_warnings(job), *notes, *documents.storage_warnings(job, result)],
        "storage": documents.storage(job, result),
    }
    document = registry.placed(document, registry.simulated_parts(outcome, result))
    if job.config.has_recovery:
        # The periodic schedule run, not the one-step tier under it (docs/model.md §13).
        document["interval_s"] = documents.interval(result.interval_s)
        document["memory_interval_s"] = documents.interval(result.memory_interval_s)
        document["storage_every"] = documents.whole(result.storage_every)
    if search is not None and base is not None:
        document["optimize"] = {
            "interval_s": search.interval_s,
            "memory_interval_s": search.memory_interval_s,
            "storage_every": search.storage_every,
            "effective": search.effective,
            "evaluations": search.evaluations,
            "young_interval_s": float(base.young_interval_s),
            # The exact optimum under exponential failures, whatever the simulated distribution.
            "exponential_exact_interval_s": float(base.optimal_interval_s),
        }
    return document


#: Each share of the whole split as its row in the table names it.
SHARE_NAMES = {
    "useful": "useful work", "write": "checkpoint stalls", "rework": "rework", "restart": "restarts",
    "waiting": "waiting for a node", "groups_down": "groups down", "quorum": "quorum pauses",
    "overhead": "groups' overhead", "silent": "silent events",
}  # fmt: skip


def _beside(share: dict[str, Any]) -> tuple[str, str]:
    """The model's share beside a simulated one, and its verdict."""
    if share["model"] is None:
        return "-", ""
    agrees, difference = share["agrees"], f"{share['difference_pp']:+.3f} pp"
    verdict = difference if agrees is None else "agrees (inside the CI)" if agrees else f"off by {difference}"
    return pct(share["model"], 4), verdict


def table(document: dict[str, Any]) -> None:
    from rich.text import Text

    from ckptcalc.output import tables

    out = tables.console()
    narrow = tables.narrow(out)
    shape = f", shape {units.sig(document['shape'])}" if document["shape"] is not None else ""
    out.print(
        Text(
            f"ckptcalc simulate: preset {document['preset']}, {document['failure_dist']} failures{shape},"
            f" {document['cycles']:,} cycles, seed {document['seed']}",
            style="bold",
        )
    )
    line = "" if document["interval_s"] is None else f"Storage interval {dur(document['interval_s'])}"
    if document["tier_intervals"] is not None:
        tiers = document["tier_intervals"]
        line = wording.sentence(wording.nesting([t["name"] for t in tiers], [t["interval_s"] for t in tiers]))
    elif document["memory_interval_s"] is not None:
        line += (
            f"; memory interval {dur(document['memory_interval_s'])}"
            f" (storage every {document['storage_every']} memory checkpoints)"
        )
    if document["interval_s"] is None:
        line = wording.no_periodic_needed()
    out.print(line)
    low, high = document["effective_ci95"]
    out.print(Text(f"Simulated effective time: {pct(document['effective'], 4)}", style="bold"))
    out.print(f"95 % confidence interval: {pct(low, 4)} – {pct(high, 4)}")
    out.print()
    table = tables.grid("Measured split of elapsed time", narrow)
    table.add_column("")
    table.add_column("simulated", justify="right")
    table.add_column("model", justify="right")
    table.add_column("verdict")
    whole = document["whole_split"]
    for key, name in SHARE_NAMES.items():
        share = whole[key]
        if share is not None:
            table.add_row(name, pct(share["simulated"], 4), *_beside(share))
    out.print(table)
    for line in wording.folded_shares(whole["folded"]):
        out.print(line)
    out.print(f"Failures: {document['failures']:,} ({document['failures_in_restart']:,} during a restart)")
    for line in registry.simulated_lines(document, wording.SHOW):
        out.print(line)
    for line in registry.class_simulated_lines(document, wording):
        out.print(line)
    for line in wording.storage_lines(document.get("storage")):
        out.print(line)
    out.print()
    table = tables.grid("Against the analytic model", narrow)
    table.add_column("model")
    table.add_column("effective", justify="right")
    table.add_column("verdict")
    names = {"first_order": "first order (Young)", "exact": "exact" if document["shape"] is None else "renewal series"}
    if document.get("elastic") is not None:
        names["exact"] = "elastic (approximate)"
    for key in ("first_order", "exact"):
        value = document["analytic"][key]
        if value is None:
            table.add_row(names[key], "-", "no closed form: the simulation is the answer")
            continue
        agreement = document["agreement"][key]
        verdict = "agrees (inside the CI)" if agreement["agrees"] else f"off by {agreement['difference_pp']:+.3f} pp"
        table.add_row(names[key], pct(value, 4), verdict)
    out.print(table)
    found = document["optimize"]
    if found is not None:
        out.print()
        two = found["storage_every"] is not None
        table = tables.grid("Best storage interval" if two else "Best interval", narrow)
        table.add_column("method")
        table.add_column("interval", justify="right")
        table.add_row("simulation (golden section)", dur(found["interval_s"]))
        if two:
            table.add_row("  = memory interval × m", f"{dur(found['memory_interval_s'])} × {found['storage_every']}")
        table.add_row("Young (first order)", dur(found["young_interval_s"]))
        exact = found["exponential_exact_interval_s"]
        if exact is not None:
            # The exact model's optimum assumes exponential failures, whatever distribution was simulated; for
            # one level it is the Lambert-W closed form, for two a joint search over τ₁ and m.
            label = "exact, exponential failures" + (" (joint τ₁, m)" if two else " (Lambert W)")
            table.add_row(label, dur(exact))
        out.print(table)
        out.print(
            f"Simulated effective time at the best interval: {pct(found['effective'], 4)}"
            f" ({found['evaluations']} evaluations, common random numbers)."
        )
    tables.warn(document["warnings"])


def schema() -> schemas.Schema:
    from ckptcalc.output import schema as schemas
    from ckptcalc.output.typed import schema_of

    agreement = {
        "oneOf": [
            schemas.object_schema({"agrees": {"type": "boolean"}, "difference_pp": schemas.NUMBER}),
            {"type": "null"},
        ],
    }
    search = schemas.object_schema(
        {
            "interval_s": schemas.SECONDS,
            "effective": schemas.FRACTION,
            "evaluations": {"type": "integer", "minimum": 1},
            "memory_interval_s": schemas.MAYBE_SECONDS,
            "storage_every": schemas.MAYBE_COUNT,
            "young_interval_s": schemas.SECONDS,
            "exponential_exact_interval_s": schemas.MAYBE_SECONDS,
        }
    )
    return schemas.document(
        "simulate",
        "ckptcalc simulate --json",
        registry.placed({
            "preset": {"type": ["string", "null"]},
            "inputs": schemas.INPUTS,
            "model": schemas.HEADLINE_MODEL,
            "failure_dist": {"enum": ["exponential", "weibull"]},
            "shape": {"type": ["number", "null"], "exclusiveMinimum": 0},
            "seed": {"type": "integer", "minimum": 0},
            "cycles": {"type": "integer", "minimum": 1},
            "interval_s": schemas.INTERVAL,
            "memory_interval_s": schemas.MAYBE_SECONDS,
            "storage_every": {"type": ["integer", "null"], "minimum": 1},
            "tier_intervals": {
                "type": ["array", "null"],
                "items": schemas.object_schema({"name": {"type": "string"}, "interval_s": schemas.SECONDS}),
                "description": "each tier's interval, fastest first, with three or more tiers; null otherwise",
            },
            **schemas.RECOVERY,
            "effective": schemas.FRACTION,
            "effective_ci95": {"type": "array", "items": schemas.NUMBER, "minItems": 2, "maxItems": 2},
            "split": schemas.object_schema(
                {k: schemas.FRACTION for k in ("useful", "write", "rework", "restart")},
                "the measured split in the model's four terms: rework holds the work silent events threw away,"
                " restart the waits for a node and the detections' restarts; with elastic replica groups, their"
                " losses are elastic.lost (whole_split takes every share apart)",
            ),
            "whole_split": schema_of(
                WholeSplitPart,
                "every share of elapsed time the run measured: the shares not null sum to 1, each with the"
                " model's share of the same time beside it where the model gives one (docs/model.md §18.5)",
            ),
            **registry.class_simulated_schema(),
            "failures": {"type": "integer", "minimum": 0},
            "failures_in_restart": {"type": "integer", "minimum": 0},
            "analytic": schemas.object_schema({"first_order": schemas.FRACTION, "exact": {"type": ["number", "null"]}}),
            "agreement": schemas.object_schema({"first_order": agreement, "exact": agreement}),
            "optimize": {"oneOf": [search, {"type": "null"}]},
            "warnings": schemas.WARNINGS,
            "storage": schemas.MAYBE_STORAGE,
        }, registry.simulated_schema(schemas.PARTS)),
    )  # fmt: skip
