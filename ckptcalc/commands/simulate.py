"""``simulate``: its JSON document, its table and its schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from ckptcalc.inputs import units
from ckptcalc.inputs.scenario import Job
from ckptcalc.mechanisms import registry
from ckptcalc.model.evaluation import Result
from ckptcalc.output import documents, wording
from ckptcalc.output.typed import Bounds, NonNegative, Share
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


def _whole_split(whole: Whole) -> WholeSplitPart:
    """The whole split as its typed part."""
    shares: dict[str, Any] = {
        name: None if share is None else SharePart(**{key: getattr(share, key) for key in SharePart._fields})
        for name, share in whole.shares.items()
    }
    return WholeSplitPart(**shares, folded=whole.folded)


def _tier_intervals(result: Result) -> tuple[TierInterval, ...]:
    """Each tier's name and interval, fastest first."""
    return tuple(TierInterval(str(plan.level.name), float(plan.interval_s)) for plan in result.levels)


class TierInterval(Record):
    """One tier's interval in ``simulate``'s document."""

    name: Annotated[str, "the tier"]
    interval_s: Annotated[NonNegative, "its interval, seconds"]


class SimulatedSchedule(Record):
    """What ``simulate --json`` says of the run's law and schedule, after the model: its JSON and its schema
    are made from these fields."""

    failure_dist: Annotated[Literal["exponential", "weibull"], "the law of the time between failures simulated"]
    shape: Annotated[Annotated[float, Bounds(above=0)] | None, "the Weibull shape; null under exponential failures"]
    seed: Annotated[int, "the random seed; the same seed gives the same run", Bounds(0)]
    cycles: Annotated[int, "the failure cycles simulated", Bounds(1)]
    interval_s: Annotated[
        NonNegative | None, "the storage checkpoint interval, seconds; null when no periodic checkpoint is needed"
    ]
    memory_interval_s: Annotated[NonNegative | None, "the memory checkpoint interval, seconds; null without one"]
    storage_every: Annotated[
        int | None, "memory checkpoints per storage checkpoint; null without memory checkpoints", Bounds(1)
    ]
    tier_intervals: Annotated[
        tuple[TierInterval, ...] | None, "each tier's interval, fastest first, with three or more tiers; null otherwise"
    ]


class FourTerms(Record):
    """The measured split in the model's four terms."""

    useful: Annotated[Share, "useful work: the effective time"]
    write: Annotated[Share, "checkpoint stalls"]
    rework: Annotated[Share, "work redone, with the work silent events threw away"]
    restart: Annotated[Share, "restarts, with the waits for a node and the detections' restarts"]


#: What :class:`FourTerms`'s part of the schema says of the whole.
FOUR_TERMS = (
    "the measured split in the model's four terms: rework holds the work silent events threw away, restart the"
    " waits for a node and the detections' restarts; with elastic replica groups, their losses are"
    " elastic.lost (whole_split takes every share apart)"
)
#: What :class:`WholeSplitPart`'s part of the schema says of the whole.
WHOLE_SPLIT = (
    "every share of elapsed time the run measured: the shares not null sum to 1, each with the model's share of"
    " the same time beside it where the model gives one (docs/model.md §18.5)"
)


class SimulatedMeasure(Record):
    """What ``simulate --json`` measured, after the recovery's keys: its JSON and its schema are made from these
    fields."""

    effective: Annotated[Share, "the simulated effective time"]
    effective_ci95: Annotated[tuple[float, ...], "its batch-means 95 % confidence interval", Bounds(items=2)]
    split: Annotated[FourTerms, FOUR_TERMS]
    whole_split: Annotated[WholeSplitPart, WHOLE_SPLIT]


class Analytic(Record):
    """The models' effective time at the schedule run."""

    first_order: Annotated[Share, "the first-order (Young) model's"]
    exact: Annotated[float | None, "the exact model's (the renewal series under Weibull failures); null without"]


class Verdict(Record):
    """A model's verdict on the run."""

    agrees: Annotated[bool, "the model's effective time lies in the run's 95 % interval"]
    difference_pp: Annotated[float, "the model's less the simulated, in percentage points"]


class Agreement(Record):
    """Each model's verdict on the run, null where there is no such model."""

    first_order: Annotated[Verdict | None, "the first-order model's; null without"]
    exact: Annotated[Verdict | None, "the exact model's; null without"]


class SearchPart(Record):
    """``simulate --optimize``'s best schedule, beside the models' optima."""

    interval_s: Annotated[NonNegative, "the best storage interval the simulation found, seconds"]
    memory_interval_s: Annotated[NonNegative | None, "its memory interval, seconds; null without memory checkpoints"]
    storage_every: Annotated[
        int | None, "its memory checkpoints per storage checkpoint; null without memory checkpoints", Bounds(1)
    ]
    effective: Annotated[Share, "the simulated effective time there"]
    evaluations: Annotated[int, "the simulations the search ran", Bounds(1)]
    young_interval_s: Annotated[NonNegative, "Young's first-order optimum, seconds"]
    exponential_exact_interval_s: Annotated[
        NonNegative | None, "the exact optimum under exponential failures, whatever law was simulated, seconds"
    ]


class SimulatedCounts(Record):
    """What ``simulate --json`` says after the failure classes' parts: the failures, the models beside the run
    and the search. Its JSON and its schema are made from these fields."""

    failures: Annotated[int, "the failures simulated", Bounds(0)]
    failures_in_restart: Annotated[int, "of them, those that struck during a restart", Bounds(0)]
    analytic: Annotated[Analytic, "the models' effective time at the schedule run"]
    agreement: Annotated[Agreement, "each model's verdict on the run"]
    optimize: Annotated[SearchPart | None, "with --optimize: the best schedule the simulation found; null without"]


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
    from ckptcalc.output.typed import document_of, record_of

    first, exact = analytic
    low, high = outcome.ci95
    notes = [*([] if given is None else documents.warnings(given)), *documents.warnings(result)]
    notes = [*dict.fromkeys(notes), *([wording.NO_EXACT] if exact is None else [])]
    intervals: tuple[float | None, float | None, int | None] = (
        outcome.interval_s,
        outcome.memory_interval_s,
        outcome.storage_every,
    )
    if job.config.has_recovery:
        # The periodic schedule run, not the one-step tier under it (docs/model.md §13).
        intervals = (
            documents.interval(result.interval_s),
            documents.interval(result.memory_interval_s),
            documents.whole(result.storage_every),
        )
    schedule = SimulatedSchedule(
        "exponential" if failures.shape is None else "weibull",
        failures.shape,
        outcome.seed,
        outcome.cycles,
        *intervals,
        _tier_intervals(result) if job.config.is_nested else None,
    )
    split = outcome.split
    measure = SimulatedMeasure(
        outcome.effective,
        (low, high),
        FourTerms(split.useful, split.write, split.rework, split.restart),
        _whole_split(whole),
    )
    verdicts = {key: None if found is None else record_of(Verdict, found) for key, found in agreement.items()}
    counts = SimulatedCounts(
        outcome.failures,
        outcome.failures_in_restart,
        Analytic(first, exact),
        Agreement(verdicts["first_order"], verdicts["exact"]),
        None if search is None or base is None else _search(search, base),
    )
    document: dict[str, Any] = {
        "schema_version": documents.SCHEMA_VERSION,
        "command": "simulate",
        "preset": preset,
        "inputs": documents.inputs(job),
        # The model beside the run: first order alone where no exact model exists.
        "model": result.model if exact is not None else "approximate",
        **document_of(schedule),
        **documents.recovery(job),
        **document_of(measure),
        **registry.class_simulated_parts(outcome.late, result),
        **document_of(counts),
        "warnings": [*documents.input_warnings(job), *notes, *documents.storage_warnings(job, result)],
        "storage": documents.storage(job, result),
    }
    document = registry.placed(document, registry.simulated_parts(outcome, result))
    return document


def _search(search: Search, base: Result) -> SearchPart:
    """The best schedule the simulation found, beside the job's optima (``base``)."""
    return SearchPart(
        search.interval_s,
        search.memory_interval_s,
        search.storage_every,
        search.effective,
        search.evaluations,
        float(base.young_interval_s),
        # The exact optimum under exponential failures, whatever the simulated distribution.
        float(base.optimal_interval_s),
    )


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
    from ckptcalc.output.typed import properties_of

    return schemas.document(
        "simulate",
        "ckptcalc simulate --json",
        registry.placed({
            "preset": {"type": ["string", "null"]},
            "inputs": schemas.INPUTS,
            "model": schemas.HEADLINE_MODEL,
            **properties_of(SimulatedSchedule),
            **schemas.RECOVERY,
            **properties_of(SimulatedMeasure),
            **registry.class_simulated_schema(),
            **properties_of(SimulatedCounts),
            "warnings": schemas.WARNINGS,
            "storage": schemas.MAYBE_STORAGE,
        }, registry.simulated_schema(schemas.PARTS)),
    )  # fmt: skip
