"""``sweep``: its JSON document (whole or streamed), its CSV, its table, its Markdown and its schema."""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import TYPE_CHECKING, Annotated, Any, Literal, TextIO

from ckptcalc.inputs import units
from ckptcalc.inputs.scenario import Job
from ckptcalc.mechanisms import registry
from ckptcalc.model.evaluation import TERMS
from ckptcalc.output import documents, wording
from ckptcalc.output.typed import NonNegative, Share
from ckptcalc.records import Record

if TYPE_CHECKING:
    from ckptcalc.inputs.grid import Sweep
    from ckptcalc.model.evaluation import Result
    from ckptcalc.output import schema as schemas

dur = units.format_duration
pct = units.format_percent

#: A column of shares, one a point.
Shares = tuple[Share, ...]
#: A column of seconds (or other amounts of zero or more), one a point.
Amounts = tuple[NonNegative, ...]


class SweepLoss(Record):
    """The loss split at each point: shares of elapsed time (docs/model.md §3)."""

    write: Annotated[Shares, "checkpoint writes"]
    rework: Annotated[Shares, "work redone after failures"]
    restart: Annotated[Shares, "restarts after failures"]
    total: Annotated[Shares, "the three together"]


class SweepCurve(Record):
    """What ``sweep --json`` swept and the curve over it, column by column (one entry a point), after the
    inputs: its JSON and its schema are made from these fields."""

    over: Annotated[str, "the input swept, as its flag names it (bw, mtbf, interval)"]
    values_name: Annotated[str, "the swept values' column name in the CSV, with its SI unit"]
    log: Annotated[bool, "the points are spaced evenly in the logarithm (otherwise linearly)"]
    base_optimal_interval_s: Annotated[NonNegative, "the optimal interval of the job as given, seconds"]
    base_effective: Annotated[Share, "the effective time of the job as given, at its interval"]
    values: Annotated[tuple[float, ...], "the swept input's values, SI units"]
    interval_s: Annotated[Amounts, "the storage checkpoint interval at each point, seconds"]
    optimal_interval_s: Annotated[Amounts, "the optimal storage checkpoint interval at each point, seconds"]
    memory_interval_s: Annotated[Amounts | None, "the memory checkpoint interval, seconds; null without one"]
    storage_every: Annotated[
        tuple[int, ...] | None, "memory checkpoints per storage checkpoint; null without memory checkpoints"
    ]
    write_s: Annotated[Amounts, "the write time of a checkpoint at each point, seconds"]
    loss: Annotated[SweepLoss, "the loss split at each point"]
    effective: Annotated[Shares, "the effective time at each point"]
    first_order_effective: Annotated[Shares, "Young's first-order effective time at each point"]


class SweepTail(Record):
    """What ``sweep --json`` says of each point after the mechanisms' own columns: its JSON and its schema
    are made from these fields."""

    dominant: Annotated[tuple[Literal["write", "rework", "restart"], ...], "the largest loss at each point"]
    storage_busy_share: Annotated[Amounts, "the storage tier's write / time between its checkpoints"]
    bytes_written_per_day: Annotated[Amounts, "bytes the storage tier takes a day"]


def document(job: Job, run: Sweep, preset: str | None) -> dict[str, Any]:
    """Columns of equal length, one entry per swept point."""
    columns = _columns(run)

    def column(name: str) -> Any:
        values = run.values if name == "values" else columns[name]
        if name == "dominant":
            return [TERMS[int(i)] for i in values]
        return [int(v) for v in values] if name == "storage_every" else _column(values)

    return _assembled(
        job, preset, (run.over, run.log, run.base, run.result), column, columns,
        warnings=documents.warnings(run.result), peak=registry.sweep_peak(run.values, columns, (0, 0), {}),
    )  # fmt: skip


def _assembled(
    job: Job,
    preset: str | None,
    grid: tuple[str, bool, Result, Result],
    get: Callable[[str], Any],
    present: Container[str],
    *,
    warnings: list[str],
    peak: dict[str, Any],
) -> dict[str, Any]:
    """``sweep --json`` around its columns: ``get(name)`` is a column's JSON value (``values`` too), of the
    columns ``present`` (the streamed document's are placeholders, written out after); ``grid`` is what was
    swept, whether log-spaced, the job as given and the result (of the first slice, when streamed)."""
    from ckptcalc.inputs.grid import SI_NAME
    from ckptcalc.output.typed import document_of

    over, log, base, result = grid
    two = "storage_every" in present
    curve = SweepCurve(
        over=over,
        values_name=SI_NAME[over],
        log=log,
        base_optimal_interval_s=float(base.optimal_interval_s),
        base_effective=float(base.effective),
        values=get("values"),
        interval_s=get("interval_s"),
        optimal_interval_s=get("optimal_interval_s"),
        memory_interval_s=get("memory_interval_s") if two else None,
        storage_every=get("storage_every") if two else None,
        write_s=get("write_s"),
        loss=SweepLoss(*(get(f"loss_{k}") for k in ("write", "rework", "restart", "total"))),
        effective=get("effective"),
        first_order_effective=get("first_order_effective"),
    )
    tail = SweepTail(get("dominant"), get("storage_busy_share"), get("bytes_written_per_day"))
    return {
        "schema_version": documents.SCHEMA_VERSION,
        "command": "sweep",
        "preset": preset,
        "model": result.model,
        "inputs": documents.inputs(job),
        **document_of(curve),
        **{name: get(name) if name in present else None for name in registry.sweep_schema({})},
        **document_of(tail),
        "warnings": [*documents.input_warnings(job), *warnings],
        **{name: get(name) for name in registry.sweep_part_schema() if name in present},
        **peak,
    }


def _column(values: Any) -> list[float]:
    return [float(v) for v in values]


def _broadcast(value: Any, like: Any) -> Any:
    import numpy

    return numpy.broadcast_to(numpy.asarray(value, dtype=float), numpy.shape(like))


def _columns(run: Sweep) -> dict[str, Any]:
    """Every per-point column of a sweep, broadcast to the swept values (numpy arrays)."""
    import numpy

    result = run.result
    values = run.values
    columns: dict[str, Any] = {
        "interval_s": result.interval_s,
        "optimal_interval_s": result.optimal_interval_s,
        "write_s": result.config.write_s,
        "loss_write": result.write,
        "loss_rework": result.rework,
        "loss_restart": result.restart,
        "loss_total": result.total,
        "effective": result.effective,
        "first_order_effective": result.first_order.effective,
    }
    if result.memory_interval_s is not None:
        columns["memory_interval_s"] = result.memory_interval_s
        columns["storage_every"] = result.storage_every
    columns.update(registry.sweep_columns(result))
    columns.update(registry.sweep_parts(run.over, values, result))
    from ckptcalc.model.storage import top_load

    columns["storage_busy_share"], columns["bytes_written_per_day"] = top_load(result)
    shaped = {name: _broadcast(value, values) for name, value in columns.items()}
    shaped["dominant"] = numpy.broadcast_to(result.dominant, numpy.shape(values))
    return shaped


def csv(run: Sweep, *, header: bool = True) -> str:
    """Header row (unless ``header`` is false: a later slice) and one row per point; SI units in the
    column names."""
    import io

    import numpy

    from ckptcalc.inputs.grid import SI_NAME

    shaped = _columns(run)
    dominant = shaped.pop("dominant")
    columns: dict[str, Any] = {SI_NAME[run.over]: run.values}
    for name, value in shaped.items():
        columns.setdefault(name, value)
    names = numpy.asarray(TERMS)[dominant]
    buffer = io.StringIO()
    if header:
        buffer.write(",".join([*columns, "dominant"]) + "\n")
    table = numpy.column_stack(list(columns.values()))
    for row, name in zip(table.tolist(), names.tolist(), strict=True):
        buffer.write(",".join(repr(x) for x in row) + f",{name}\n")
    return buffer.getvalue()


_SLOT = "\x00column\x00"


#: Characters of a spooled column copied at a time.
_BLOCK = 1 << 20


def stream_json(job: Job, plan: Any, preset: str | None, out: TextIO) -> None:
    """``sweep --json`` written slice by slice: each column is spooled to a temporary file as its slices
    are evaluated, then the document is written around them. The same document as :func:`sweep`."""
    import tempfile

    from ckptcalc.model.evaluation import Caveat
    from ckptcalc.model.statistics import tally

    spools: dict[str, Any] = {}
    caveats: list[tuple[tuple[str, str | None], int]] = []
    first: Any = None
    peak: dict[str, Any] = {}
    try:
        for number, run in enumerate(plan.runs()):
            if first is None:
                first = run
            columns = _columns(run)
            peak = registry.sweep_peak(run.values, columns, (number, plan.CHUNK), peak)
            texts: dict[str, str] = {"values": _numbers(run.values)}
            for name, values in columns.items():
                if name == "dominant":
                    names = [f'"{term}"' for term in TERMS]
                    texts[name] = "\n".join(names[i] for i in values.tolist())
                elif name == "storage_every":
                    texts[name] = "\n".join(str(int(v)) for v in values.tolist())
                else:
                    texts[name] = _numbers(values)
            for name, text in texts.items():
                spool = spools.get(name)
                if spool is None:
                    spool = spools[name] = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - closed below
                elif text:
                    spool.write("\n")
                spool.write(text)
            caveats.extend(((caveat.kind, caveat.level), caveat.points) for caveat in run.result.caveats)
        assert first is not None
        counts = tally(caveats)
        slot = {name: f"{_SLOT}{name}" for name in spools}
        caveated = [wording.caveat(Caveat(kind, level, None, points)) for (kind, level), points in counts.items()]
        document = _assembled(
            job, preset, (plan.over, plan.log, first.base, first.result), slot.__getitem__, slot,
            warnings=caveated, peak=peak,
        )  # fmt: skip
        text = documents.dumps(document)
        for line in text.split("\n"):
            marker = line.find('"\\u0000column\\u0000')
            if marker == -1:
                out.write(line + "\n")
                continue
            name = line[marker:].split("\\u0000")[2].rstrip('",')
            indent = line.removesuffix(line.lstrip(" "))
            comma = "," if line.rstrip().endswith(",") else ""
            out.write(line[:marker] + "[\n")
            spool = spools[name]
            spool.seek(0)
            pad = indent + "  "
            out.write(pad)
            while block := spool.read(_BLOCK):
                out.write(block.replace("\n", ",\n" + pad))
            out.write("\n" + indent + "]" + comma + "\n")
    finally:
        for spool in spools.values():
            spool.close()


def _numbers(values: Any) -> str:
    """A slice of a column as JSON numbers, one a line (JSON has no NaN or infinity: refused)."""
    import numpy

    array = numpy.asarray(values, dtype=float).reshape(-1)
    if not bool(numpy.isfinite(array).all()):
        raise ValueError("a sweep value is not finite")
    return "\n".join(map(repr, array.tolist()))


def _formatter(kind: str) -> Callable[[float], str]:
    return {
        "size": units.format_size,
        "rate": units.format_rate,
        "duration": units.format_duration,
        "count": units.format_count,
        "fraction": lambda v: units.sig(v, 4),
        "number": lambda v: units.sig(v, 4),
    }[registry.unit_shown(kind)]


#: The columns a terminal too narrow for the whole table leaves out first, in order.
_LEFT_OUT_FIRST = ("memory × m", "write", "rework", "restart", "total")


def table(job: Job, run: Sweep, preset: str | None, points: int | None = None) -> None:
    """The sweep's rows (at most :data:`MAX_ROWS`); ``points`` is the whole grid's size when ``run``
    holds only the rows shown."""
    import numpy
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from ckptcalc.inputs.grid import kind
    from ckptcalc.output import tables

    out = tables.console()
    result = run.result
    n = len(run.values)
    total = n if points is None else points
    rows = (
        list(range(n))
        if n <= tables.MAX_ROWS
        else sorted({round(i * (n - 1) / (tables.MAX_ROWS - 1)) for i in range(tables.MAX_ROWS)})
    )
    nearest = run.nearest_optimum
    if nearest >= 0 and nearest not in rows:
        rows = sorted({*rows, nearest})
    fmt = _formatter(kind(run.over))
    reoptimised = run.over != "interval"
    two = result.memory_interval_s is not None
    spacing = "log" if run.log else "linear"
    out.print(Text(f"ckptcalc sweep over {run.over}: {total} points, {spacing} spacing; preset {preset}", style="bold"))
    base = run.base
    if not reoptimised:
        optimum = f"Exact optimum τ* = {dur(base.optimal_interval_s)}"
        if base.optimal_storage_every is not None:
            optimum += f" = {dur(base.optimal_memory_interval_s or 0.0)} × {int(base.optimal_storage_every)} in memory"
        free = two and job.config.memory_interval_s is None
        out.print(optimum + " (marked ◀)" + ("; each row re-optimises the memory interval." if free else ""))
    elif two:
        out.print("Each row re-optimises the memory interval and how often storage follows (exact model).")
    else:
        out.print("Each row re-optimises the checkpoint interval (exact model).")

    def column(value: Any) -> Any:
        return numpy.broadcast_to(value, (n,))

    columns = {name: column(getattr(result, name)) for name in ("write", "rework", "restart", "total", "effective")}
    intervals = column(result.interval_s)
    memory = column(result.memory_interval_s) if two else None
    every = column(result.storage_every) if two else None
    dominant = column(result.dominant)
    scale = float(columns["total"][rows].max())
    cells_by_row = []
    for i in rows:
        cells: list[Any] = [fmt(float(run.values[i]))]
        if reoptimised:
            cells.append(dur(float(intervals[i])))
        if memory is not None and every is not None:
            cells.append(f"{dur(float(memory[i]))} × {int(every[i])}")
        cells += [
            units.sig_percent(float(columns[name][i])) for name in ("write", "rework", "restart", "total", "effective")
        ]
        if reoptimised:
            cells.append(TERMS[int(dominant[i])])
        cells_by_row.append(cells)
    headers = [run.over, *(["interval"] if reoptimised else []), *(["memory × m"] if two else [])]
    headers += ["write", "rework", "restart", "total", "effect."]
    headers.extend(["dominant"] if reoptimised else [])
    extra = registry.sweep_cells(run.over, run.values, result, wording.SHOW)
    after = headers.index("effect.") + 1
    for k, (header, cells) in enumerate(extra):
        at = after + k
        headers.insert(at, header)
        for i, row in zip(rows, cells_by_row, strict=True):
            row.insert(at, cells[i])
    narrow = out.width < (100 if reoptimised else 80) + (14 if two else 0) + (24 if extra else 0)
    if narrow and reoptimised:
        # The bar already shows which term dominates; keep room for it.
        headers.pop()
        cells_by_row = [cells[:-1] for cells in cells_by_row]
    gap = 1 if narrow else 2
    widths = [max(len(h), *(len(str(row[k])) for row in cells_by_row)) for k, h in enumerate(headers)]
    # Too narrow for every column: leave out the least telling first (the memory schedule, then the shares the
    # total sums, then a mechanism's own from the last), never the swept value nor the effective time, and say
    # which; a column Rich had to squeeze would be cut without a word.
    left_out: list[str] = []
    order = [*_LEFT_OUT_FIRST, *(header for header, _ in extra), "interval"]
    for header in order:
        if sum(widths) + (gap + 1) * (len(widths) - 1) <= out.width:
            break
        if header in headers:
            k = headers.index(header)
            del headers[k], widths[k]
            for cells in cells_by_row:
                del cells[k]
            left_out.append(header)
    # Every column but the last takes its width, the gap and a one-space divider. The bar column holds the bar
    # and " ◀", so the marker is never cropped; without room for bars, a column of its own holds the marker
    # when there is room for it (otherwise only the row's style marks it).
    room = out.width - sum(widths) - (gap + 1) * len(widths)
    width = min(40, room - 2)
    bars = width >= 6
    marker = bars or room >= 1

    table = Table(box=box.SIMPLE_HEAD, padding=(0, gap, 0, 0), pad_edge=False, show_edge=False)
    for header, size in zip(headers, widths, strict=True):
        table.add_column(header, justify="left" if header == "dominant" else "right", no_wrap=True, min_width=size)
    if marker:
        table.add_column("loss" if bars else "", no_wrap=True, min_width=width + 2 if bars else 1)
    for i, cells in zip(rows, cells_by_row, strict=True):
        cell = Text()
        if bars:
            write, rework, restart = (float(columns[name][i]) for name in ("write", "rework", "restart"))
            cell = tables.bar(write, rework, restart, scale, width)
        if i == nearest:
            cell.append(" ◀" if bars else "◀")
        table.add_row(*cells, *([cell] if marker else []), style="bold reverse" if i == nearest else None)
    out.print("Shares of elapsed time, in % (exact model).")
    out.print(table)
    if len(rows) < n:
        out.print(f"({len(rows)} of {n} rows shown; --json or --csv give every point)")
    if left_out:
        out.print(f"(too narrow for {', '.join(left_out)}: --json or --csv give every column)")
    if bars:
        out.print(tables.legend())
    elif marker or nearest < 0:
        out.print("(the terminal is too narrow for the loss bars)")
    else:
        out.print(f"(too narrow for the loss bars; ◀ marks {fmt(float(run.values[nearest]))})")
    tables.warn([*documents.input_warnings(job), *documents.warnings(result)])


def schema() -> schemas.Schema:
    from ckptcalc.output import schema as schemas
    from ckptcalc.output.typed import properties_of

    fractions: schemas.Schema = {"type": "array", "items": schemas.FRACTION}
    document = schemas.document(
        "sweep",
        "ckptcalc sweep --json",
        {
            "preset": {"type": ["string", "null"]},
            "model": schemas.HEADLINE_MODEL,
            "inputs": schemas.INPUTS,
            **properties_of(SweepCurve),
            **registry.sweep_schema(fractions),
            **properties_of(SweepTail),
            "warnings": schemas.WARNINGS,
        },
    )
    return schemas.with_optional(document, registry.sweep_part_schema())


def markdown(doc: dict[str, Any]) -> list[str]:
    from ckptcalc.inputs.fields import BY_FLAG
    from ckptcalc.output import markdown as md

    kind = BY_FLAG[doc["over"]].kind
    show: Callable[[float], str] = {"duration": dur, "fraction": pct}.get(kind, lambda v: f"{v:.4g}")
    lines = ["## " + md.inline(wording.markdown_sweep_title(doc["over"], doc["preset"])), ""]
    return [*lines, *md.table(
        [doc["over"], "interval", "write", "rework", "restart", "effective", "dominant"],
        [
            [show(v), md.interval(i), pct(w), pct(rw), pct(rs), pct(e), d]
            for v, i, w, rw, rs, e, d in zip(
                doc["values"], doc["interval_s"], doc["loss"]["write"], doc["loss"]["rework"],
                doc["loss"]["restart"], doc["effective"], doc["dominant"], strict=True,
            )
        ],
    )]  # fmt: skip
