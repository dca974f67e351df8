"""The Python API: a preset and plain values in, frozen results out.

The command line is a thin adapter over these functions, so a notebook gets
exactly what ``ckptcalc COMMAND --json`` prints: every result's
:meth:`Outcome.to_dict` is that document. Inputs are the fields of
:data:`ckptcalc.inputs.fields.FIELDS` by their public names (``bw``, ``restart``,
``memory_interval``…), each a plain SI number (bytes, bytes per second,
seconds) or a string with its unit (``"2TB/s"``, ``"10min"``). Invalid input
raises :class:`ckptcalc.InputError` (a :class:`ValueError`) naming the field.

Nothing here imports Typer or Rich; numpy only where a sweep or a simulation
needs it.
"""

from __future__ import annotations

import copy
import functools
import io
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO, TypeVar, Unpack, cast

from ckptcalc.errors import InputError
from ckptcalc.inputs import keywords
from ckptcalc.inputs.arguments import ArgumentError, checked
from ckptcalc.inputs.fields import BY_NAME, BY_PUBLIC, parse_value
from ckptcalc.inputs.keywords import LogInputs, ModelInputs, PlanInputs
from ckptcalc.inputs.scenario import SCALED, Job, Scenario, check_stated, merge, others_by_parts, resolve
from ckptcalc.mechanisms import registry
from ckptcalc.model.evaluation import Result, headline_model
from ckptcalc.records import Record

if TYPE_CHECKING:  # loaded where they are used, for start-up
    from ckptcalc.errors import CkptError
    from ckptcalc.inputs.grid import Sweep
    from ckptcalc.logs.analyze import Analysis
    from ckptcalc.logs.fit import FailureFit
    from ckptcalc.model.band import Band as ModelBand
    from ckptcalc.model.decisions import LeverAssumptions, Steps
    from ckptcalc.model.evaluation import Config
    from ckptcalc.simulation.plan import Completion
    from ckptcalc.simulation.timeline import Failures, Schedule

#: The preset a call starts from when it names none.
DEFAULT_PRESET = "llama3-405b"

#: What a value may be: a plain SI number, or a string with its unit.
Value = float | int | str

#: A preset: a name, a path to a TOML file, or one already loaded.
PresetRef = str | os.PathLike[str] | Scenario


class Outcome(Record):
    """What every result has: the document ``--json`` prints, and the job it describes."""

    document: dict[str, Any]
    job: Job | None

    def to_dict(self) -> dict[str, Any]:
        """The command's ``--json`` document (a copy: SI units, full precision)."""
        return copy.deepcopy(self.document)

    def __getitem__(self, key: str) -> Any:
        return copy.deepcopy(self.document[key])

    # How a result shows itself (ckptcalc.output.display): the headline figures only, in one line for
    # repr() and as a small table in a notebook; to_dict() has everything.
    def __repr__(self) -> str:
        from ckptcalc.output import display

        return display.short(type(self).__name__, self._headline())

    def _repr_markdown_(self) -> str:
        from ckptcalc.output import display

        return display.as_markdown(type(self).__name__, self._headline())

    def _repr_html_(self) -> str:
        from ckptcalc.output import display

        return display.as_html(type(self).__name__, self._headline())

    def _headline(self) -> Any:
        from ckptcalc.output import display

        found = display.headline(self.document)
        return found.replace(subject=self.label) if self.job is not None else found

    @property
    def label(self) -> str:
        """What the result is about as the user gave it: the preset's name, or the inputs given over it
        (``params=70.0B gpus=4096``; after the preset's name when one was named)."""
        from ckptcalc.output import notebook

        preset = self.document.get("preset")
        return notebook.label(self.job, preset) or str(preset if preset is not None else DEFAULT_PRESET)

    def to_rows(self) -> list[dict[str, Any]]:
        """The result as plain rows (dicts of single values, dotted keys for nested ones): one per point of
        a sweep, scenario of a comparison or preset of a check, else one row of every figure."""
        from ckptcalc.output import notebook

        return notebook.rows(self.document)

    def to_pandas(self) -> Any:
        """:meth:`to_rows` as a :class:`pandas.DataFrame` (pandas is the optional ``pandas`` extra)."""
        from ckptcalc.output import notebook

        return notebook.frame(self.to_rows())


def _image(result: Any, form: str) -> bytes | str | None:
    """A result's plot as an image for Jupyter (PNG or SVG), or None without matplotlib."""
    from ckptcalc.output import notebook

    try:
        figure = result.plot()
    except InputError:
        return None
    return notebook.image(figure, form)


class Optimization(Outcome):
    """:func:`optimize`'s result; the model's own :class:`ckptcalc.model.evaluation.Result` is ``result``."""

    result: Result | None = None
    preset: str | None = None
    default_preset: bool = False

    @property
    def effective(self) -> float:
        """Share of elapsed time spent on kept work (exact model)."""
        return float(self.document["effective"])

    @property
    def optimal_interval_s(self) -> float:
        return float(self.document["optimal_interval_s"])

    @property
    def interval_s(self) -> float:
        return float(self.document["interval_s"])

    @property
    def loss(self) -> dict[str, float]:
        return dict(self.document["loss"])

    @property
    def dominant(self) -> str:
        return str(self.document["dominant"])

    @property
    def first_order(self) -> dict[str, Any]:
        return copy.deepcopy(self.document["first_order"])

    @property
    def levers(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self.document["levers"])

    @property
    def warnings(self) -> list[str]:
        return list(self.document["warnings"])


@checked
def load_preset(preset: PresetRef | None = None) -> Scenario:
    """A preset by name or path (or one already loaded), as a :class:`ckptcalc.inputs.scenario.Scenario`.

    >>> load_preset("llama3-405b").restart_s
    600.0
    """
    from ckptcalc.inputs import presets

    if isinstance(preset, Scenario):
        return preset
    return presets.load(os.fspath(preset) if preset is not None else DEFAULT_PRESET)


@checked
def preset_patterns(preset: PresetRef) -> str | None:
    """The line patterns file a preset's ``[log] patterns`` names (docs/formats/patterns.md), relative to
    the preset file's directory; None when it names none.

    >>> preset_patterns("llama3-405b") is None
    True
    """
    from ckptcalc.inputs import presets

    loaded = load_preset(preset)
    if loaded.log_patterns is None:
        return None
    if isinstance(preset, Scenario):
        return loaded.log_patterns
    return presets.beside(os.fspath(preset), loaded.log_patterns)


@checked
def save_preset(
    preset: Scenario,
    path: str | os.PathLike[str],
    *,
    force: bool = False,
    name: str | None = None,
    description: str | None = None,
    keep_base_of: str | os.PathLike[str] | None = None,
    derived_from: PresetRef | None = None,
    texts: Mapping[str, str] | None = None,
) -> None:
    """Write ``preset`` (e.g. ``optimize(...).job.scenario``) as a TOML preset, atomically, never over
    an existing file unless ``force``. Values are written in the units the tool prints them in, at 4
    significant figures (``texts``: values as the user typed them, by field name, kept as typed), and
    exactly, with a comment, where rounding would move the effective time by more than 1e-6.

    ``name`` (the file's stem unless given) and ``description`` are written as its ``name`` and
    ``description``. With ``derived_from`` (the preset ``preset`` started from), the file records it
    and the keys that differ from it (``derived_from``, ``changed``). With ``keep_base_of`` (the preset
    ``preset`` was loaded from), the file inherits from that preset's ``base`` and holds only the keys
    whose values differ from it.
    """
    from pathlib import Path

    from ckptcalc.inputs import presets
    from ckptcalc.inputs.preset_document import BASE
    from ckptcalc.inputs.preset_write import save

    for text, option in ((name, "preset_name"), (description, "preset_description")):
        check_label(text, option)
    target = Path(path)
    saved = preset.replace(name=name or target.stem, description=description or preset.description)
    if derived_from is not None:
        saved = derived(saved, derived_from)
    base = None
    if keep_base_of is not None:
        base = presets.parent(os.fspath(keep_base_of))
        if base is None:
            raise InputError(
                f"the preset {os.fspath(keep_base_of)!r} names no base to keep (a preset inherits with"
                f' {BASE} = "NAME")',
                where="keep_base",
            )
    save(saved, target, force=force, base=base, texts=texts)


def check_label(text: str | None, where: str) -> None:
    """A saved preset's name or description: one line of printable text, not empty."""
    from ckptcalc.inputs.preset_document import check_label as checked_label

    checked_label(text, where)


def derived(preset: Scenario, base: PresetRef) -> Scenario:
    """``preset`` recording that it started from ``base``: ``derived_from`` names it and ``changed`` lists
    the preset keys whose values differ from it now (none: unchanged).

    >>> derived(load_preset("llama3-405b").replace(restart_s=300.0), "llama3-405b").changed
    ('failures.restart',)
    """
    from ckptcalc.inputs.preset_write import changed_from

    changed = changed_from(preset, load_preset(base))
    return preset.replace(derived_from=_label(base), changed=changed or None)


def presets_list() -> Outcome:
    """The presets found by name (``CKPTCALC_PRESET_PATH`` first, then the shipped ones), sorted naturally
    (a base before its variants); ``title`` is a preset's own ``name`` key, the file's stem where it has none."""
    from ckptcalc.inputs import presets
    from ckptcalc.output import documents

    rows = [
        {"name": r.name, "description": r.description, "path": str(r.path), "title": r.title}
        for r in presets.available()
    ]
    return Outcome({"schema_version": documents.SCHEMA_VERSION, "command": "presets list", "presets": rows}, None)


@checked
def preset_text(preset: str, *, resolved: bool = False) -> str:
    """A preset's TOML as written, after checking that it loads; ``resolved``: with its bases merged
    in and no ``base`` key, as one document."""
    from ckptcalc.inputs import presets
    from ckptcalc.inputs.preset_document import read_text
    from ckptcalc.inputs.preset_search import is_path
    from ckptcalc.inputs.preset_write import toml_text

    if resolved:
        return toml_text(presets.resolved_document(preset, "name"))
    path = presets.find(preset, "name")
    label = preset if is_path(preset) else path.name
    text = read_text(path, label)
    presets.parse(text, label, path)
    return text


def _label(preset: PresetRef | None) -> str | None:
    if preset is None:
        return DEFAULT_PRESET
    if isinstance(preset, Scenario):
        return preset.name
    return os.fspath(preset)


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``; did you mean 'bw'?`` for the closest choice, when one is close."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def overrides(inputs: Mapping[str, Value | None]) -> dict[str, float]:
    """Inputs by public name (SI numbers or strings with units) as SI values by field name."""
    found: dict[str, float] = {}
    for key, value in inputs.items():
        if value is None:
            continue
        spec = BY_PUBLIC.get(key)
        if spec is None:
            from ckptcalc.inputs import what_ifs

            raise InputError(what_ifs.unknown(key), where=key)
        if isinstance(value, str):
            found[spec.name] = parse_value(spec, value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
            if math.isnan(number):
                raise InputError("is not a number", where=key)
            found[spec.name] = number
        else:
            raise InputError(f"must be a number or a string with its unit, got {type(value).__name__}", where=key)
    return found


#: What the time between failures may be: ``failure_dist`` takes these.
FAILURE_DISTS = ("exponential", "weibull")

#: A 95 % interval of the job MTBF: ``"3h:4h"``, or a pair of SI numbers or strings.
Band = str | tuple[Value, Value]


@checked
def scenario(
    preset: PresetRef | None = None,
    *,
    failure_dist: str | None = None,
    mtbf_ci: Band | None = None,
    **inputs: Value | None,
) -> Scenario:
    """The preset with ``inputs`` applied on top (see :func:`ckptcalc.inputs.scenario.merge`).

    ``failure_dist`` ``"weibull"`` needs a ``shape`` (given or the preset's); ``"exponential"``
    drops a preset's shape. ``mtbf_ci`` is the 95 % interval of the job MTBF.
    """
    values = overrides(inputs)
    merged = merge(load_preset(preset), values, band=_band(mtbf_ci) if mtbf_ci is not None else None)
    return _with_law(merged, failure_dist, shape_given="shape" in values)


def _with_law(merged: Scenario, failure_dist: str | None, *, shape_given: bool) -> Scenario:
    """``merged`` under the failure law asked for: Weibull keeps (and needs) a shape, exponential drops it."""
    if failure_dist is None:
        return merged
    if failure_dist not in FAILURE_DISTS:
        raise InputError(f"choose exponential or weibull, not {failure_dist!r}", where="failure_dist")
    if failure_dist == "exponential":
        if shape_given:
            raise InputError("{shape} applies to a Weibull {failure_dist}", where="shape")
        return merged.replace(shape=None)
    if merged.shape is None:
        raise InputError("a Weibull {failure_dist} needs {shape}", where="shape")
    return merged


def _band(value: Band, where: str = "mtbf_ci") -> tuple[float, float]:
    """``"LOW:HIGH"`` or a pair, as SI seconds."""
    from ckptcalc.inputs.fields import BY_NAME as fields

    spec = fields["mtbf_s"]
    if isinstance(value, str):
        low_text, sep, high_text = value.partition(":")
        if not sep or not low_text.strip() or not high_text.strip():
            raise InputError(f"expected LOW:HIGH, e.g. 3h:4h, got {value!r}", where=where)
        pair: tuple[Value, Value] = (low_text.strip(), high_text.strip())
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        pair = (value[0], value[1])
    else:
        raise InputError(f"expected LOW:HIGH or a pair, got {value!r}", where=where)
    low, high = (parse_value(spec, v, where) if isinstance(v, str) else _plain(v, where) for v in pair)
    return low, high


def _plain(value: Value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"must be a number or a string with its unit, got {type(value).__name__}", where=where)
    number = float(value)
    if math.isnan(number):
        raise InputError("is not a number", where=where)
    return number


@checked
def job(
    preset: PresetRef | None = None,
    *,
    failure_dist: str | None = None,
    mtbf_ci: Band | None = None,
    **inputs: Value | None,
) -> Job:
    """The checked, resolved job: ranges and combinations validated, the model configuration built, and
    what it assumes (``Job.assumed``) listed."""
    return _with_assumed(resolve(scenario(preset, failure_dist=failure_dist, mtbf_ci=mtbf_ci, **inputs)), preset)


def _with_assumed(one: Job, preset: PresetRef | None) -> Job:
    """``one`` with what it assumes: ``preset`` is what it started from, the default when None."""
    from ckptcalc.inputs import assumed

    held = one.scenario.origin.get("gpu_mtbf_s") == SCALED
    # A loaded scenario no longer knows the GPU count its rate was held from.
    base_gpus = load_preset(preset).gpus if held and not isinstance(preset, Scenario) else None
    found = assumed.of(one, _label(preset), default=preset is None, base_gpus=base_gpus)
    return one.replace(assumed=found)


def _number(parser: Callable[[str], float], value: Value, where: str) -> float:
    """A plain number, or text read by ``parser``; errors name ``where``."""
    from ckptcalc.errors import CkptError

    try:
        return parser(value) if isinstance(value, str) else float(value)
    except CkptError as error:
        raise InputError(error.template, where=where) from None


def _fraction(value: Value, where: str) -> float:
    from ckptcalc.errors import CkptError
    from ckptcalc.inputs.units import parse_open_fraction

    try:
        return parse_open_fraction(value)
    except CkptError as error:
        raise InputError(error.template, where=where) from None


@checked
def optimize(
    preset: PresetRef | None = None,
    *,
    target: Value | None = None,
    failure_dist: str | None = None,
    mtbf_ci: Band | None = None,
    **inputs: Unpack[ModelInputs],
) -> Optimization:
    """The optimal checkpoint interval, where the time goes, the levers and (with ``target``) the
    value each input must reach for that effective time.

    >>> r = optimize(preset="llama3-405b", restart="2min")
    >>> round(r.effective, 4), round(r.optimal_interval_s, 1), r.dominant
    (0.9657, 266.8, 'rework')
    """
    from ckptcalc.commands import optimize as optimize_command
    from ckptcalc.inputs import presets
    from ckptcalc.model import decisions as decide
    from ckptcalc.model.evaluation import evaluate, unneeded

    goal = _fraction(target, "target") if target is not None else None
    the_job = job(preset, failure_dist=failure_dist, mtbf_ci=mtbf_ci, **inputs)
    result = _as_stated(the_job, lambda: evaluate(the_job.config))
    _loadable(the_job, result)
    assume = _jit_assumptions(
        decide.LeverAssumptions(
            **{**presets.lever_assumptions(), **dict(the_job.scenario.levers)},
            running=registry.assumed(the_job.scenario),
        ),
        the_job,
    )
    levers = decide.levers(
        the_job.config, the_job.gpus, assume, base=float(result.optimal_effective),
        more=[*_part_levers(the_job), *_storage_levers(the_job)],
    )  # fmt: skip
    # A tier subset is a lever only where dropping the tiers gains (docs/model.md §17.4).
    levers = [lever for lever in levers if lever.key != "without_tier" or lever.gains]
    targets = decide.targets(the_job.config, goal, the_job.gpu_mtbf_s, _at_gpus(the_job)) if goal is not None else None
    s = the_job.scenario
    cost = decide.cost(result, the_job.gpus, s.gpu_hour_cost) if the_job.gpus is not None else None
    # No periodic checkpoint to count in steps when every failure is recovered in place or with notice.
    periodic = not unneeded(the_job.config)
    steps = decide.interval_steps(result, s.step_time_s) if s.step_time_s is not None and periodic else None
    label = _label(preset)
    discard = s.discard or 0.0
    document = optimize_command.document(
        the_job, result, label, levers=levers, assume=assume, target=goal, targets=targets, cost=cost, steps=steps,
        band=_uncertainty(the_job, result), penalty_pp=_penalty_pp(result), discard=discard,
        goodput=_goodput(float(result.effective), discard),
    )  # fmt: skip
    document.update(registry.scale_parts(the_job, result, functools.partial(_sized, the_job)))
    return Optimization(document, the_job, result, label, preset is None)


def _sized(one: Job, gpus: Any) -> Result:
    """The job evaluated, re-optimised, at ``gpus`` GPUs, as a sweep over GPUs runs it."""
    from ckptcalc.inputs import grid as sweeps
    from ckptcalc.model.evaluation import evaluate

    return evaluate(sweeps.vary(one, "gpus", gpus))


_T = TypeVar("_T")


def _jit_assumptions(assume: LeverAssumptions, the_job: Job) -> LeverAssumptions:
    """What the mechanisms' levers assume: a preset's ``[levers]`` overrides (each home's ``lever_presets``:
    the just-in-time share, bandwidth and step time), and the job's own step time where it states one."""
    from ckptcalc.inputs.scenario import total
    from ckptcalc.mechanisms import registry

    s = the_job.scenario
    changes: dict[str, Any] = {}
    for _, kind, name in registry.lever_presets():  # what a mechanism's lever assumes, from [levers]
        stated = getattr(s, name)
        if stated is not None:
            changes[name] = total(stated, s.gpus, s.where(name)) if kind == "rate" else stated
    if s.step_time_s is not None:
        changes["job_step_s"] = s.step_time_s
    return assume.replace(**changes) if changes else assume


def _penalty_pp(result: Result) -> float:
    """What the interval used costs against the optimum, in points of effective time."""
    from ckptcalc.model.statistics import points

    return float(points(result.optimal_effective, result.effective))


def _goodput(effective: float, discard: float) -> float:
    """The share of wall time that is useful work kept (:func:`ckptcalc.model.statistics.goodput`)."""
    from ckptcalc.model.statistics import goodput

    return goodput(effective, discard)


def _as_stated(one: Job, compute: Callable[[], _T]) -> _T:
    """``compute()``, its input errors naming the input as the job states it (``f.toml: failures.shape``
    for a preset's key) rather than by its option."""
    try:
        return compute()
    except InputError as error:
        if error.where in BY_NAME:  # the same kind of error (a unit or a preset error stays one)
            raise type(error)(error.template, where=one.scenario.where(error.where)) from None
        raise


def _storage_levers(one: Job) -> list[tuple[str, Config, float | None]]:
    """The storage levers (docs/model.md §17): each registered tier cost's, and with three or more tiers
    every subset that drops some below storage."""
    from ckptcalc.model import storage

    found: list[tuple[str, Config, float | None]] = [
        (key, changed, None) for key, changed in registry.levers(one.config, one.gpus)
    ]
    found.extend(("without_tier", changed, None) for _, changed in storage.subsets(one.config))
    return found


def _loadable(one: Job, result: Result) -> None:
    """Refuse a schedule whose tier would keep its storage busy all the time or more (docs/model.md §17.2):
    it names the tier's interval where one is given, its bandwidth otherwise."""
    from ckptcalc.model import storage
    from ckptcalc.model.arrays import scalar
    from ckptcalc.output import wording

    if not scalar(result.effective):
        return
    found = storage.load(one.config, result).overloaded
    if found is None:
        return
    *lower, top = [plan.level.name for plan in result.levels]  # memory (where the job has it), the tiers, storage
    middle = lower[1:] if one.config.has_memory else lower
    s = one.scenario
    where: str
    if found.name == top:
        where = s.where("interval_s" if s.interval_s is not None else "bandwidth")
    elif found.name not in middle:  # the memory level
        where = s.where("memory_interval_s" if s.memory_interval_s is not None else "memory_bandwidth")
    else:
        tier = s.middle[middle.index(found.name)]
        where = f"{tier.where}.{'interval' if tier.interval_s is not None else 'bandwidth'}"
    raise InputError(wording.overloaded(found.name, found.busy_share), where=where)


def _at_gpus(one: Job) -> Callable[[float], Config] | None:
    """The job at another GPU count, when some of its rates are per GPU; None otherwise."""
    s = one.scenario
    if not (s.per_gpu or any(t.per_gpu for t in s.middle)) or one.gpu_mtbf_s is None:
        return None
    from ckptcalc.inputs import grid as sweeps

    return lambda gpus: sweeps.vary(one, "gpus", gpus)


def _part_levers(one: Job) -> list[tuple[str, Config, float | None]]:
    """The levers on the restart's parts (docs/model.md §12.1): detection halved, where the restart
    counts one, and every read bandwidth doubled, where a reload is counted."""
    from ckptcalc.model.decisions import detection_halved, reads_doubled

    s = one.scenario
    found: list[tuple[str, Config, float | None]] = []
    if s.detect_s and (s.restart_s is None or others_by_parts(s)):
        halved = detection_halved(s.detect_s)
        found.append(("detect_half", resolve(s.replace(detect_s=halved)).config, halved))
    c = one.config
    reads = [c.read_bandwidth, c.memory_read_bandwidth, *(t.read_bandwidth for t in c.middle)]
    if any(r is not None for r in reads):
        doubled = reads_doubled(c)
        found.append(("read_bw_x2", doubled, None if doubled.read_bandwidth is None else float(doubled.read_bandwidth)))
    return found


def _uncertainty(one: Job, result: Result) -> ModelBand | None:
    """The model across the job MTBF's 95 % interval, when there is one (:mod:`ckptcalc.model.band`)."""
    if one.mtbf_band is None:
        return None
    from ckptcalc.model import band as robust

    low, high = one.mtbf_band
    return robust.band(one.config, result, low, high)


class Check(Outcome):
    """:func:`check`'s result: one row per preset, and whether all pass."""

    @property
    def passed(self) -> bool:
        return bool(self.document["passed"])

    @property
    def results(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self.document["results"])

    @property
    def errors(self) -> list[str]:
        """The presets that could not be checked, each with what is wrong."""
        return [row["error"] for row in self.document["results"] if row["error"] is not None]


@checked
def check(
    presets: Iterable[PresetRef],
    *,
    min_effective: Value | None = None,
    at: str = "point",
    max_silent_risk: Value | None = None,
) -> Check:
    """Each preset at the interval it pins (its optimum otherwise) against a floor.

    ``at="low"`` tests the effective time at the low end of the preset's MTBF interval
    (``failures.mtbf_ci95``, or the χ² interval of ``failures.count`` in ``failures.window``);
    a preset without one is tested at its point value. ``max_silent_risk`` fails a preset whose
    retention leaves a larger chance than that of a silent event with no clean checkpoint over its
    run (``[run] work``); give it, ``min_effective`` or both.

    >>> check(["llama3-405b", "rsc1-131k"], min_effective=0.9).passed
    False
    """
    from ckptcalc.commands import check as check_command
    from ckptcalc.commands.check import CheckRow, where_tested
    from ckptcalc.model.evaluation import evaluate
    from ckptcalc.model.statistics import at_least
    from ckptcalc.output import documents

    if min_effective is None and max_silent_risk is None:
        raise InputError("give {min_effective}, {max_silent_risk} or both", where="min_effective")
    floor = _fraction(min_effective, "min_effective") if min_effective is not None else None
    limit = _fraction(max_silent_risk, "max_silent_risk") if max_silent_risk is not None else None
    if at not in ("point", "low"):
        raise InputError(f"choose point or low, not {at!r}", where="at")
    from ckptcalc.errors import CkptError

    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    empty = registry.checked_empty()  # the failure classes' verdicts of a row that judged nothing
    for ref in presets:
        try:
            one = resolve(_load_named(ref))
            result = evaluate(one.config)
            notes.extend(documents.input_warnings(one))  # each names the preset file and key
        except CkptError as error:
            # One broken preset must not hide the verdict on the others: it gets its own row.
            failed = CheckRow.failed(_label(ref), where_tested(at, True), _error_text(error, ref))
            rows.append(check_command.row(failed, empty))
            continue
        verdicts = registry.checked(result, limit)  # each failure class's risk against the limit
        missing = next((text for text in verdicts.values() if isinstance(text, str)), None)
        if missing is not None:
            failed = CheckRow.failed(_label(ref), where_tested(at, True), f"{_label(ref)}: {missing}")
            rows.append(check_command.row(failed, empty))
            continue
        effective = float(result.effective)
        pinned = one.config.interval_s is not None or one.config.memory_interval_s is not None
        band = _uncertainty(one, result)
        tested = where_tested(at, band is not None)
        value = band.effective[0] if band is not None and tested == "low" else effective
        floor_passed = at_least(value, floor)
        found = CheckRow(
            preset=_label(ref),
            effective=effective,
            effective_ci95=None if band is None else tuple(band.effective),
            tested=tested,
            interval_s=float(result.interval_s),
            interval_pinned=pinned,
            min_effective_passed=floor_passed,
            passed=floor_passed is not False and all(v is None or v["passed"] for v in verdicts.values()),
            error=None,
            model=result.model,
        )
        rows.append(check_command.row(found, verdicts))
    document = {
        "schema_version": documents.SCHEMA_VERSION,
        "command": "check",
        "model": headline_model(row["model"] for row in rows),
        "min_effective": floor,
        "max_silent_risk": limit,
        "at": at,
        "results": rows,
        "passed": all(row["passed"] for row in rows),
        "warnings": notes,
    }
    return Check(document, None)


def _error_text(error: CkptError, ref: PresetRef) -> str:
    """An error about one preset of several: ``FILE: table.key: message``, inputs named by their keys."""

    def key(name: str) -> str:
        return BY_PUBLIC[name].path if name in BY_PUBLIC else name

    label = str(_label(ref))
    message = error.render_message(key)
    where = error.where
    if where is None or where == "presets":
        return f"{label}: {message}"
    if where in BY_PUBLIC:
        return f"{label}: {key(where)}: {message}"
    return f"{where}: {message}" if where.startswith(label) else f"{label}: {where}: {message}"


def _load_named(ref: PresetRef) -> Scenario:
    """A preset whose errors name the preset (a positional argument), not an input."""
    from ckptcalc.inputs import presets

    if isinstance(ref, Scenario):
        return ref
    return presets.load(os.fspath(ref), "presets")


class Comparison(Outcome):
    """:func:`compare`'s result: one evaluated scenario per column."""

    rows: tuple[tuple[str, Job, Result], ...] = ()

    @property
    def scenarios(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self.document["scenarios"])


def what_if(base: Scenario, key: str, value: Value, where: str) -> Scenario:
    """``base`` with one input changed; intervals are re-optimised unless the change is an interval."""
    return what_if_all(base, [(key, value)], where)


def what_if_all(base: Scenario, pairs: Iterable[tuple[str, Value]], where: str) -> Scenario:
    """``base`` with several inputs changed at once (as a preset stating them would be); intervals are
    re-optimised unless one of the changes is an interval."""
    values: dict[str, float] = {}
    for key, value in pairs:
        spec = BY_PUBLIC.get(key)
        if spec is None:
            from ckptcalc.inputs import what_ifs

            raise InputError(what_ifs.unknown(key, "key"), where=where)
        values[spec.name] = parse_value(spec, value, where) if isinstance(value, str) else float(value)
    changed = merge(base, values, origin={name: where for name in values})
    for name in values:
        # What a mechanism's change needs beside it (the step just-in-time recovery replays, where none is stated).
        changed = cast(Scenario, registry.what_if(name, changed, base))
    if {"interval_s", "memory_interval_s"} & set(values):
        return changed
    return changed.replace(
        interval_s=None, memory_interval_s=None, middle=tuple(t.replace(interval_s=None) for t in changed.middle)
    )


def what_if_pair(text: str) -> tuple[str, str]:
    """``KEY=VALUE``, the command line's form of a what-if, as (input, value).

    >>> what_if_pair("--read-bw = 5GB/s")
    ('read_bw', '5GB/s')
    """
    key, sep, raw = text.partition("=")
    key = key.strip().removeprefix("--").replace("-", "_")
    if not sep or not raw.strip():
        example = f"{text.strip().removeprefix('--')}=VALUE" if text.strip() else "restart=2min"
        raise InputError(f"expected KEY=VALUE: write --what-if {example}, e.g. restart=2min", where=f"what_if {text}")
    return key, raw.strip()


#: A what-if as the API takes it: ``(input, value)``, ``{input: value, ...}`` or the command line's
#: ``"[NAME:] KEY=VALUE [KEY=VALUE ...]"``.
WhatIf = tuple[str, Value] | Mapping[str, Value] | str


def _what_if_items(item: WhatIf) -> tuple[str | None, list[tuple[str, Value]]]:
    """A what-if as (its own name or None, its changes)."""
    from ckptcalc.inputs import what_ifs

    if isinstance(item, str):
        name, pairs = what_ifs.parse(item)
        return name, list(pairs)
    if isinstance(item, Mapping) and item and all(isinstance(k, str) for k in item):
        return None, [(k, v) for k, v in item.items()]
    if not isinstance(item, tuple | list) or len(item) != 2 or not isinstance(item[0], str):
        raise ArgumentError(
            f"each what-if is (input, value), {{input: value}} or 'KEY=VALUE ...', got {item!r}", where="what_ifs"
        )
    return None, [(item[0], item[1])]


def _what_if_columns(
    base: Scenario, items: Iterable[tuple[str | None, list[tuple[str, Value]]]]
) -> list[tuple[str, Scenario]]:
    """Each what-if (as :func:`_what_if_items` reads it) applied to ``base``, with the name its column goes by."""
    from ckptcalc.inputs import what_ifs
    from ckptcalc.output import wording

    columns = []
    for own, pairs in items:
        name = own if own is not None else what_ifs.label(pairs)
        changed = what_if_all(base, pairs, f"what_if {name}")
        if changed.step_time_s is not None and base.step_time_s is None:
            name = wording.step_assumed(name, changed.step_time_s)
        columns.append((name, changed))
    return columns


def job_label(preset: PresetRef | None, inputs: Mapping[str, Any]) -> str:
    """What a job goes by in a column or a chart: the preset's name alone, the inputs given over it
    (``params=70B gpus=4096``) when it is the default, or both (``elastic-hsdp gpus=4096``).

    >>> job_label(None, {"params": "70B", "gpus": 4096})
    'params=70B gpus=4096'
    """
    from ckptcalc.inputs import what_ifs

    given = [(key, value) for key, value in inputs.items() if value is not None]
    if not given:
        return str(_label(preset))
    changes = what_ifs.label(given)
    return changes if preset is None else f"{_label(preset)} {changes}"


@checked
def compare(
    presets: Iterable[PresetRef] | None = None,
    *,
    what_ifs: Iterable[WhatIf] = (),
    failure_dist: str | None = None,
    shape: Value | None = None,
    mtbf_ci: Band | None = None,
    **inputs: Value | None,
) -> Comparison:
    """Presets side by side, each at its pinned or optimal intervals, and what-if variations of the first.

    ``inputs`` (as :func:`optimize` takes them), ``failure_dist``, ``shape`` and ``mtbf_ci`` apply to every
    preset: with no preset, the first column is the default preset with them, as :func:`optimize` sees it.
    A what-if is a pair (input, value), a mapping of several, or the command line's
    ``"[NAME:] KEY=VALUE [KEY=VALUE ...]"``, applied to the first column.

    >>> c = compare(["llama3-405b"], what_ifs=[("restart", "2min")])
    >>> [round(s["effective"], 3) for s in c.scenarios]
    [0.925, 0.966]
    >>> c = compare(params="70B", gpus=4096, bw="400GB/s", what_ifs=["elastic: groups=8 ft-overhead=0.5%"])
    >>> [s["name"] for s in c.scenarios]
    ['params=70B gpus=4096 bw=400GB/s', 'elastic']
    """
    from ckptcalc.model.evaluation import evaluate
    from ckptcalc.output import documents

    changes = [_what_if_items(item) for item in what_ifs]  # a malformed what-if fails before any preset loads
    refs: list[PresetRef | None] = list(presets) if presets is not None else [None]
    given = {key: value for key, value in inputs.items() if value is not None}
    values = overrides({**given, "shape": shape})
    band = _band(mtbf_ci) if mtbf_ci is not None else None
    columns: list[tuple[str, Scenario]] = [
        (
            job_label(ref, given) if ref is not None or given else DEFAULT_PRESET,
            _with_law(
                merge(_load_named(ref) if ref is not None else load_preset(None), values, band=band),
                failure_dist,
                shape_given="shape" in values,
            ),
        )
        for ref in refs
    ]
    columns.extend(_what_if_columns(columns[0][1], changes))
    starts = [*refs, *[refs[0]] * len(changes)]
    rows = []
    for (name, stated), ref in zip(columns, starts, strict=True):
        one = _with_assumed(resolve(stated), ref)
        rows.append((name, one, _as_stated(one, functools.partial(evaluate, one.config))))
        _loadable(one, rows[-1][2])
    from ckptcalc.commands import compare as compare_command

    document = compare_command.document(
        [
            (name, documents.evaluation(one, result, _steps(one, result), _uncertainty(one, result),
                                        penalty_pp=_penalty_pp(result)))
            for name, one, result in rows
        ]
    )  # fmt: skip
    return Comparison(document, None, tuple(rows))


def _steps(one: Job, result: Result) -> Steps | None:
    from ckptcalc.model import decisions as decide
    from ckptcalc.model.evaluation import unneeded

    step = one.scenario.step_time_s
    # No periodic checkpoint to count in steps when every failure is recovered in place or with notice.
    return decide.interval_steps(result, step) if step is not None and not unneeded(one.config) else None


class SweepResult(Outcome):
    """:func:`sweep`'s result: columns of equal length, one entry per point (``run`` holds the arrays)."""

    run: Any = None

    def to_csv(self) -> str:
        """A header row and one row per point, SI units in the column names."""
        from ckptcalc.commands import sweep as sweep_command

        return str(sweep_command.csv(self.run))

    def plot(self) -> Any:
        """The effective time and the loss's terms against the input swept, as a matplotlib ``Figure``
        (drawn without pyplot: it shows itself in Jupyter, headless too)."""
        from ckptcalc.output import notebook

        return notebook.sweep_figure(self.document, self.label)

    def _repr_png_(self) -> bytes | str | None:
        return _image(self, "png")

    def _repr_svg_(self) -> bytes | str | None:
        return _image(self, "svg")


@checked
def sweep(
    preset: PresetRef | None = None,
    *,
    over: str = "interval",
    start: Value | None = None,
    stop: Value | None = None,
    points: int = 21,
    log: bool | None = None,
    failure_dist: str | None = None,
    mtbf_ci: Band | None = None,
    **inputs: Unpack[ModelInputs],
) -> SweepResult:
    """Vary one input over a grid (the interval by default), re-optimising the rest at every point.

    ``start``/``stop`` default to a tenth and ten times the base value; ``log``
    to log spacing unless both bounds are given. For millions of points,
    :func:`sweep_stream` writes the same document without holding it.

    >>> s = sweep(preset="llama3-405b", over="mtbf", start="1h", stop="24h", points=3)
    >>> [round(e, 3) for e in s["effective"]]
    [0.811, 0.975, 0.985]
    """
    from ckptcalc.commands import sweep as sweep_command
    from ckptcalc.inputs import grid as sweeps

    plan = sweep_stream(
        preset, over=over, start=start, stop=stop, points=points, log=log, failure_dist=failure_dist, mtbf_ci=mtbf_ci,
        **inputs,
    )  # fmt: skip
    run = _as_stated(plan.job, lambda: sweeps.run(plan.job, plan.over, plan.values, plan.log))
    return SweepResult(sweep_command.document(plan.job, run, plan.label), plan.job, run)


class SweepStream(Record):
    """A sweep planned but not evaluated: its grid, evaluated a slice at a time as it is written, so that
    10⁷ points fit in a few hundred MB (:meth:`write_json`, :meth:`write_csv`)."""

    job: Job
    over: str
    values: Any
    log: bool
    label: str | None

    #: Points evaluated at once while writing.
    CHUNK = 1 << 17

    def __repr__(self) -> str:
        return f"<SweepStream {self.label}: {self.over} over {len(self.values):,} points, not yet evaluated>"

    def runs(self) -> Iterator[Sweep]:
        """Each slice of the grid, evaluated (a :class:`ckptcalc.inputs.grid.Sweep` per slice)."""
        from ckptcalc.inputs import grid as sweeps

        for part in sweeps.slices(self.values, self.CHUNK):
            yield sweeps.run(self.job, self.over, part, self.log)

    def write_json(self, out: TextIO) -> None:
        """The ``sweep --json`` document, written to the text stream ``out`` slice by slice (at once when
        it is one slice)."""
        from ckptcalc.commands import sweep as sweep_command
        from ckptcalc.inputs import grid as sweeps
        from ckptcalc.output import documents

        if len(sweeps.slices(self.values, self.CHUNK)) == 1:
            run = sweeps.run(self.job, self.over, self.values, self.log)
            out.write(documents.dumps(sweep_command.document(self.job, run, self.label)) + "\n")
            return
        sweep_command.stream_json(self.job, self, self.label, out)

    def write_csv(self, out: TextIO) -> None:
        """The ``sweep --csv`` table, written to ``out`` slice by slice."""
        from ckptcalc.commands import sweep as sweep_command

        for index, run in enumerate(self.runs()):
            out.write(sweep_command.csv(run, header=index == 0))

    def shown(self, rows: int) -> Sweep:
        """The grid cut to at most ``rows`` evenly spread points (with the base optimum's neighbour),
        evaluated: what a terminal table shows."""
        from ckptcalc.inputs import grid as sweeps

        picks = sweeps.spread_picks(len(self.values), rows)
        return sweeps.run(self.job, self.over, self.values if picks is None else self.values[picks], self.log)


@checked
def sweep_stream(
    preset: PresetRef | None = None,
    *,
    over: str = "interval",
    start: Value | None = None,
    stop: Value | None = None,
    points: int = 21,
    log: bool | None = None,
    failure_dist: str | None = None,
    mtbf_ci: Band | None = None,
    **inputs: Unpack[ModelInputs],
) -> SweepStream:
    """The grid of :func:`sweep`, checked, without evaluating it."""
    from ckptcalc.inputs import grid as sweeps
    from ckptcalc.model.evaluation import evaluate

    the_job = job(preset, failure_dist=failure_dist, mtbf_ci=mtbf_ci, **inputs)
    if over not in sweeps.OVER and over.replace("_", "-") in sweeps.OVER:
        over = over.replace("_", "-")  # the input's public name (memory_bw) for its flag (memory-bw)
    if over not in sweeps.OVER:
        raise InputError(
            f"cannot sweep {over!r}{_did_you_mean(over, sweeps.OVER)}; choose one of {', '.join(sweeps.OVER)}",
            where="over",
        )
    spec = sweeps.spec(over)
    low = _bound(spec, start, "start", the_job.gpus)
    high = _bound(spec, stop, "stop", the_job.gpus)
    if low is None or high is None:
        base = _as_stated(the_job, functools.partial(evaluate, the_job.config.optimal()))
        default_low, default_high = sweeps.default_range(over, the_job, base)
        low = default_low if low is None else low
        high = default_high if high is None else high
    counts = registry.sweep_whole(over)  # a mechanism's input counted in whole numbers
    spacing = log if log is not None else (start is None and stop is None and not (counts is not None and counts[0]))
    values = sweeps.grid(low, high, points, spacing)
    if over == "gpus":
        values = sweeps.whole(values)
    if counts is not None:
        values = sweeps.whole(values, least=counts[1])
    elif over not in sweeps.VECTORISED and spec.kind == "count":
        counted = ("failures", *registry.window_counts())  # counts seen in a window: none is a count too
        values = sweeps.whole(values, least=0.0 if spec.name in counted else 1.0)
    sweeps.check_values(the_job, over, values)
    return SweepStream(the_job, over, values, spacing, _label(preset))


def _bound(spec: Any, value: Value | None, where: str, gpus: float | None) -> float | None:
    """A sweep bound in SI units; a per-GPU rate (``25GB/s/gpu``) times the job's GPU count."""
    if value is None:
        return None
    from ckptcalc.inputs.scenario import total

    return total(parse_value(spec, value, where), gpus, where) if isinstance(value, str) else float(value)


class Simulation(Outcome):
    """:func:`simulate`'s result: the simulated effective time with its 95 % confidence interval."""

    @property
    def effective(self) -> float:
        return float(self.document["effective"])

    @property
    def effective_ci95(self) -> tuple[float, float]:
        low, high = self.document["effective_ci95"]
        return float(low), float(high)


@checked
def simulate(
    preset: PresetRef | None = None,
    *,
    cycles: Value = 1_000_000,
    seed: int | None = None,
    search: bool = False,
    progress: Callable[[float], None] | None = None,
    events: str | os.PathLike[str] | None = None,
    force: bool = False,
    failure_dist: str | None = None,
    mtbf_ci: Band | None = None,
    stream: Any = None,
    **inputs: Unpack[ModelInputs],
) -> Simulation:
    """Run the training timeline itself (Monte Carlo) at the job's schedule; ``search`` also looks
    for the schedule that maximises simulated effective time. ``events`` also writes the timeline as an
    event log: to a file, streamed to a FIFO or a device (``/dev/null``), or with ``events="-"`` to the
    binary ``stream`` (JSON Lines unless the name says otherwise).

    >>> s = simulate(preset="llama3-405b", cycles=20_000, seed=1)
    >>> low, high = s.effective_ci95
    >>> low < 0.925 < high
    True
    """
    from ckptcalc.commands import simulate as simulate_command
    from ckptcalc.inputs.units import parse_count
    from ckptcalc.simulation import search as searching
    from ckptcalc.simulation import timeline as sim

    count = _number(parse_count, cycles, "cycles")
    _seed(seed)
    total = sim.check(count, None)
    the_job = job(preset, failure_dist=failure_dist, mtbf_ci=mtbf_ci, **inputs)
    config = the_job.config
    k = None if config.shape is None else float(config.shape)
    failures = sim.Failures(float(config.mtbf_s), k)
    if events is not None:
        event_log_form(events)
        if os.fspath(events) == "-" and (stream is None or not callable(getattr(stream, "write", None))):
            raise InputError("events '-' writes to a stream: give a binary one (sys.stdout.buffer)", where="stream")
    try:
        # Every mechanism the scenario holds is simulated, or the pair that is not is refused.
        sim.refuse(config, failures, events=events is not None, search=search)
    except InputError as error:
        raise type(error)(error.template, where=the_job.scenario.where(error.where or "")) from None
    if events is not None:
        from ckptcalc.simulation.events import check_event_cycles

        check_event_cycles(total, EVENT_CYCLES)
    if config.has_memory and k is not None:
        # No exact model to optimise two levels under Weibull failures: run the exponential optimum.
        config = config.replace(shape=None)
    chosen = sim.DEFAULT_SEED if seed is None else seed
    if config.shape is None:
        from ckptcalc.model.evaluation import evaluate

        _loadable(the_job, _as_stated(the_job, lambda: evaluate(config)))
    try:
        outcome = sim.run(config, failures, cycles=total, seed=chosen, progress=progress)
        found = searching.search_schedule(config, failures, cycles=total, seed=chosen) if search else None
    except InputError as error:
        if error.where is None or error.where not in BY_NAME:
            raise
        # The schedule the simulation refused, named as the user gave it (input or preset key).
        raise type(error)(error.template, where=the_job.scenario.where(error.where)) from None
    from ckptcalc.model.evaluation import evaluate

    if events is not None:
        _write_events(outcome.schedule, failures, total, chosen, events, force,
                      sim.groups_of(config), stream=stream)  # fmt: skip
    from ckptcalc.simulation.split import whole_of

    ran = _ran(config, outcome.schedule)
    analytic = sim.analytic(ran, failures)
    base = evaluate(config.optimal().replace(shape=None)) if found is not None else None
    result = evaluate(ran)
    document = simulate_command.document(
        the_job, outcome, failures, _label(preset), found, analytic=analytic,
        agreement={name: _agreement(value, outcome.ci95, outcome.effective)
                   for name, value in zip(("first_order", "exact"), analytic, strict=True)},
        result=result, base=base, given=evaluate(config) if config.pinned and config.shape is None else None,
        whole=whole_of(outcome, result, model=analytic[1] is not None),
    )  # fmt: skip
    return Simulation(document, the_job)


def _agreement(value: float | None, ci95: tuple[float, float], simulated: float) -> dict[str, Any] | None:
    """A model's verdict on a simulated run: whether its effective time lies in the run's 95 % interval,
    and by how many points it differs (None when there is no such model)."""
    from ckptcalc.model.statistics import points, within

    if value is None:
        return None
    return {"agrees": within(value, ci95), "difference_pp": points(value, simulated)}


def _ran(config: Config, schedule: Schedule) -> Config:
    """``config`` with the intervals of the schedule simulated."""
    intervals = schedule.intervals()
    if config.has_jit:
        # The one-step tier runs under the periodic ones (docs/model.md §13); none when none is needed.
        intervals = intervals[1:]
        if not intervals:
            return config
    *lower, top = intervals  # the top tier's interval is storage's; any below it, memory's first
    memory = lower[0] if lower else None
    middle = tuple(t.replace(interval_s=i) for t, i in zip(config.middle, lower[1:], strict=True))
    return config.replace(interval_s=top, memory_interval_s=memory, middle=middle)


#: The most cycles ``simulate --events`` writes: a cycle of Llama 3 is about 85 lines of log, written at
#: some 9 000 cycles a second (10⁵ cycles: 11 s, 350 MB of CSV), so this many take about 20 s.
EVENT_CYCLES = 200_000


#: The form of an event log streamed to stdout (``-``) or to a FIFO or device whose name says none: what
#: ``ckptcalc events`` writes to stdout.
STREAMED_EVENT_FORM = "jsonl"


def streamed(path: str | os.PathLike[str]) -> bool:
    """Whether ``simulate --events`` streams to ``path`` rather than writing a file into place: ``-``
    (stdout), or something that exists and is not a regular file (a FIFO, ``/dev/null``)."""
    import stat

    if os.fspath(path) == "-":
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def event_log_form(path: str | os.PathLike[str]) -> tuple[str, bool]:
    """The form of event log ``simulate --events`` writes to ``path``, from its extension (``.csv``,
    ``.jsonl``, ``.json``, each optionally ``.gz``), and whether it is gzip-compressed; a stream
    (:func:`streamed`) whose name says none is JSON Lines."""
    from ckptcalc.commands.events import EVENT_LOG_FORMS

    name = os.fspath(path).lower()
    packed = name.endswith(".gz")
    stem = name.removesuffix(".gz")
    form = next((form for form in EVENT_LOG_FORMS if stem.endswith("." + form)), None)
    if form is None and streamed(path):
        return STREAMED_EVENT_FORM, packed
    if form is None:
        shown = os.path.basename(os.fspath(path))
        raise InputError(
            f"cannot tell the log's format from {shown!r}: name it .csv, .jsonl or .json (optionally .gz)",
            where="events",
        )
    return form, packed


def _write_events(
    schedule: Schedule,
    failures: Failures,
    cycles: int,
    seed: int,
    path: str | os.PathLike[str],
    force: bool,
    process: Any = None,
    stream: Any = None,
) -> None:
    """The simulated timeline as an event log (the form its extension names, times in seconds), streamed
    piece by piece into a temporary file moved into place at the end, or as it comes to ``stream``
    (``path`` ``-``) or to a FIFO or device; with the parts of the job that fail and rejoin on their own
    (``process``, elastic replica groups as :func:`ckptcalc.simulation.timeline.groups_of` gives them),
    their events too, in the columns they add."""
    from pathlib import Path

    from ckptcalc.commands import events as events_command
    from ckptcalc.errors import CkptError
    from ckptcalc.files import atomic_write, check_new
    from ckptcalc.simulation.events import elastic_pieces, pieces

    form, packed = event_log_form(path)
    target = Path(path)
    if process is None:
        text = events_command.event_log(pieces(schedule, failures, cycles=cycles, seed=seed), form)
    else:
        found = elastic_pieces(schedule, process, failures, cycles=cycles, seed=seed)
        text = events_command.event_log(found, form, columns=process.log_columns)
    data = (piece.encode("utf-8") for piece in text)
    if streamed(path):
        pieces_out = _gzipped(data) if packed else data
        if os.fspath(path) == "-":
            for piece in pieces_out:
                stream.write(piece)
            stream.flush()
            return
        with open(path, "wb") as special:  # a FIFO blocks here until its reader opens it
            for piece in pieces_out:
                special.write(piece)
        return
    try:
        check_new(target, force=force, where="events")
        atomic_write(target, _gzipped(data) if packed else data, force=force, where="events")
    except CkptError as error:
        raise InputError(error.template, where=error.where) from None


def _gzipped(data: Iterable[bytes]) -> Iterator[bytes]:
    import zlib

    packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: a gzip header and trailer
    for piece in data:
        yield packer.compress(piece)
    yield packer.flush()


class FailureLog(Outcome):
    """:func:`fit`'s result: the failure process estimated from logs (``fitted`` holds the curves)."""

    fitted: Any = None
    year_from: str | None = None  # where year-less timestamps got their year: "year", "mtime" or "today"

    @property
    def mtbf_s(self) -> float | None:
        value = self.document["mtbf_s"]
        return None if value is None else float(value)

    @property
    def mtbf_ci95(self) -> tuple[float | None, float | None]:
        low, high = self.document["mtbf_ci95"]
        return low, high

    def plot(self) -> Any:
        """The log's survival curve and the fitted laws, as a matplotlib ``Figure`` (drawn without pyplot)."""
        from ckptcalc.output import display, notebook

        return notebook.survival_figure(self.fitted.survival, display.headline(self.document).subject)

    def _repr_png_(self) -> bytes | str | None:
        return _image(self, "png")

    def _repr_svg_(self) -> bytes | str | None:
        return _image(self, "svg")


def _patterns(path: str | os.PathLike[str] | None) -> tuple[Any, ...]:
    """The line patterns of the TOML file at ``path`` (none when None): ckptcalc.logs.patterns.load."""
    if path is None:
        return ()
    from ckptcalc.logs.patterns import load

    return load(path)


@checked
def fit(
    logs: Iterable[str | os.PathLike[str]] = (),
    *,
    stdin: TextIO | BinaryIO | None = None,
    format: str | None = None,
    time: str | None = None,
    time_unit: str | None = None,
    time_format: str | None = None,
    tz: str | None = None,
    where: Iterable[str] = (),
    where_any: Iterable[str] = (),
    cause: str | None = None,
    window_start: Value | None = None,
    window_end: Value | None = None,
    coalesce: Value | None = None,
    observed_gpus: Value | None = None,
    failures: Value | None = None,
    window: Value | None = None,
    skip_bad: bool = False,
    year: int | None = None,
    patterns: str | os.PathLike[str] | None = None,
    explain: Callable[[str], None] | None = None,
    nodes: Value | None = None,
    group_nodes: Value | None = None,
    preset: PresetRef | None = None,
) -> FailureLog:
    """The failure process from incident logs (CSV or tab-separated, JSON array or JSON Lines, detected unless
    ``format`` names one, compressed or not; ``"-"`` reads ``stdin``):
    the MTBF with its exact 95 % interval, a Weibull fit with the test of exponential failures,
    causes and the gap histogram (docs/fit.md). ``time_format`` reads timestamps by ``strptime`` and ``tz``
    places those without a zone (default UTC); ``patterns`` is a TOML file of line patterns
    (docs/formats/patterns.md), ``explain`` is given a line per log saying which formats were considered.
    Without logs, ``failures`` counted in ``window`` (a paper's
    "419 interruptions in 54 days") give the MTBF and its interval alone. Where the incidents have ends
    (a start and an end per node), ``repairs`` holds the repair times and, given the fleet's ``nodes``,
    the node unavailability, and the share of groups of ``group_nodes`` nodes with none out (docs/model.md §22).
    Where ``preset`` states failure classes with their ``causes``, the interruptions are split by them
    (``classes``, docs/model.md §20.6).

    >>> f = fit(["tests/data/trace-54d.json"], time_unit="d", where=["planned=false"])
    >>> round(f.mtbf_s / 3600, 2), [round(x / 3600, 2) for x in f.mtbf_ci95], round(f["weibull"]["shape"], 3)
    (3.36, [3.04, 3.73], 0.774)
    >>> round(fit(failures=419, window="54d").mtbf_s / 3600, 3)
    3.093
    """
    from ckptcalc.inputs.units import parse_count, parse_duration
    from ckptcalc.logs import fit as fitting

    paths = [os.fspath(x) for x in logs]
    conditions, any_conditions = list(where), list(where_any)
    gpus = _number(parse_count, observed_gpus, "observed_gpus") if observed_gpus is not None else None
    stated = _fleet(nodes, group_nodes)
    if failures is not None or window is not None:
        if paths:
            raise InputError("counts take no log: give LOG... or {failures} with {window}, not both", where="failures")
        if failures is None or window is None:
            missing, given = ("failures", "window") if failures is None else ("window", "failures")
            raise InputError(f"needs {{{missing}}}: interruptions counted in a window", where=given)
        for name, value in (("window_start", window_start), ("window_end", window_end), ("coalesce", coalesce)):
            if value is not None:
                raise InputError("reads a log: counts have no events to place or merge", where=name)
        count = _number(parse_count, failures, "failures")
        span = _number(parse_duration, window, "window")
        fitted = fitting.fit_counts(count, span, observed_gpus=gpus)
        return FailureLog(_fit_document(fitted, None, stated, [], source="counts"), None, fitted)
    options: dict[str, Any] = {"time": time, "time_unit": time_unit, "cause": cause, "skip_bad": skip_bad,
                               "tz": tz, "time_format": time_format, "year": _year(year),
                               "patterns": _patterns(patterns), "explain": explain}  # fmt: skip
    read = [
        fitting.read_log(log, stdin=stdin, format=format, where=conditions, where_any=any_conditions, **options)
        for log in paths
    ]
    if not read:
        raise InputError("no log to read: give LOG..., or {failures} with {window}", where="logs")
    log = fitting.combine(read)
    start = _moment(window_start, time_unit, "window_start")
    end = _moment(window_end, time_unit, "window_end")
    gap = _number(parse_duration, coalesce, "coalesce") if coalesce is not None else 0.0
    fitted = fitting.fit_log(log, coalesce_s=gap, start_s=start, end_s=end, observed_gpus=gpus)
    document = _fit_document(fitted, log, stated, paths, where=conditions, where_any=any_conditions,
                             classes=_class_split(preset, {c.cause: c.count for c in fitted.causes}, None))  # fmt: skip
    return FailureLog(document, None, fitted, year_from=log.year_from)


def _fit_document(fitted: Any, log: Any, given: dict[str, Any], paths: list[str], **options: Any) -> dict[str, Any]:
    """``fit``'s document, with the mechanisms' parts from the incident ``log`` (None for counts)."""
    from ckptcalc.commands import fit as fit_command
    from ckptcalc.mechanisms import registry

    found = fit_command.document(fitted, paths, log=log, **options)
    return registry.placed(found, registry.incident_log_parts(log, fitted, given))


@checked
def fitted_preset(outcome: FailureLog, base: PresetRef | None = None) -> Scenario:
    """``base`` (the default preset unless given) with its failure interval replaced by the fit:
    ``mtbf``, ``mtbf_ci95`` and, when the log rejects exponential failures, the Weibull ``shape``,
    with a ``source`` saying what was fitted. This is what ``fit --save-preset`` writes: only what
    ``optimize`` accepts (see :func:`saved_fit`).
    """
    return saved_fit(outcome, base)[0]


def saved_fit(outcome: FailureLog, base: PresetRef | None = None) -> tuple[Scenario, tuple[str, ...]]:
    """:func:`fitted_preset` and a warning for each fitted value it leaves out. What is saved must read
    back: a shape ``optimize`` refuses (k = 78 from two gaps) is left out, failures then taken as
    exponential, and a fit ``optimize`` cannot plan with at all (an MTBF so short the base's storage is
    always busy) is an error naming ``save_preset``, not a preset that fails where it is used."""
    whole = _fitted(outcome, base, keep_shape=True)
    refusal = _refusal(whole)
    if refusal is None:
        return whole, ()
    if refusal.where != "shape":
        raise InputError(f"the fitted preset cannot be planned with: {refusal.template}", where="save_preset")
    kept = _fitted(outcome, base, keep_shape=False)
    again = _refusal(kept)
    if again is not None:
        raise InputError(f"the fitted preset cannot be planned with: {again.template}", where="save_preset")
    shape = whole.shape
    return kept, (f"the fitted Weibull shape k = {shape:.4g} is left out of the preset ({refusal.message}): "
                  "its failures are taken as exponential",)  # fmt: skip


def _refusal(scenario: Scenario) -> InputError | None:
    """Why ``optimize`` refuses ``scenario``, or None when it plans with it."""
    try:
        optimize(preset=scenario)
    except InputError as error:
        return error
    except ArithmeticError as error:  # the model cannot evaluate it at all
        return InputError(f"the model cannot evaluate it ({error})", where="save_preset")
    return None


def _fitted(outcome: FailureLog, base: PresetRef | None, *, keep_shape: bool) -> Scenario:
    from ckptcalc.output import wording

    fitted = outcome.fitted
    mtbf = fitted.mtbf
    named = base if base is not None else DEFAULT_PRESET
    if mtbf.mtbf_s is None:
        raise InputError(
            "no interruption in the window: only a lower bound on the MTBF exists, nothing to plan with",
            where="save_preset",
        )
    low, high = mtbf.ci95
    weibull = fitted.weibull
    shape = weibull.shape if keep_shape and weibull is not None and weibull.verdict != "exponential" else None
    start = load_preset(base)
    measured = registry.incident_log_values(outcome.document)
    values = {name: value for name, (value, _) in measured.items()}
    changed = merge(start, {"mtbf_s": mtbf.mtbf_s, **values}, band=(low, high)).replace(
        shape=shape,
        source=wording.fit_source(outcome.document, shape is not None),
        description=wording.fitted_description(str(_label(named)), outcome.document),
    )
    fitted_from = wording.fitted_from(outcome.document)
    kept = tuple(item for item in changed.sources if item[0] != "shape")
    kept = tuple(item for item in kept if item[0] not in measured)
    shaped = (("shape", fitted_from),) if shape is not None else ()
    sources = (*kept, ("mtbf_s", fitted_from), *shaped, *((name, words) for name, (_, words) in measured.items()))
    return derived(_measured_classes(changed.replace(sources=sources), outcome.document), named)


def _measured_classes(scenario: Scenario, document: Mapping[str, Any]) -> Scenario:
    """``scenario`` with its classes' shares as a log's document measured them (its ``classes``; docs/model.md
    §20.6): names, causes, restarts and paths kept. Unchanged without a split or a failure."""
    split = document.get("classes")
    if split is None:
        return scenario
    from ckptcalc.logs import classes

    found: Scenario = registry.with_cause_shares(scenario, classes.measured_shares(split))
    return found


def _moment(value: Value | None, time_unit: str | None, where: str) -> float | None:
    """A window end: an ISO-8601 timestamp, or a number in the log's time unit."""
    from ckptcalc.logs import reader as eventlog

    if value is None:
        return None
    try:
        seconds, _, _ = eventlog.parse_time(value, time_unit=time_unit)
    except InputError:
        raise  # already names what is missing (the time unit)
    except ValueError as error:
        raise InputError(str(error), where=where) from None
    return seconds


class RunPlan(Outcome):
    """:func:`plan`'s result: the distribution of a whole run's wall time (``completion`` holds the runs)."""

    completion: Completion | None = None

    @property
    def completion_s(self) -> dict[str, float]:
        return dict(self.document["completion_s"])

    def plot(self) -> Any:
        """The runs' completion times as a histogram, p10, p50 and p90 marked, as a matplotlib ``Figure``."""
        from ckptcalc.output import notebook

        assert self.completion is not None
        return notebook.completion_figure(self.completion.times_s, self.document, self.label)

    def _repr_png_(self) -> bytes | str | None:
        return _image(self, "png")

    def _repr_svg_(self) -> bytes | str | None:
        return _image(self, "svg")


@checked
def plan(
    preset: PresetRef | None = None,
    *,
    work: Value | None = None,
    steps: Value | None = None,
    runs: Value = 1000,
    seed: int | None = None,
    deadline: Value | None = None,
    start_at: str | None = None,
    progress: Callable[[float], None] | None = None,
    failure_dist: str | None = None,
    mtbf_ci: Band | None = None,
    **inputs: Unpack[PlanInputs],
) -> RunPlan:
    """Simulate whole runs that need ``work`` of useful compute (or ``steps`` training steps of the job's
    ``step_time``) at the job's schedule: wall time p10/p50/p90/p95 against W / effective, failures,
    P(no failure), GPU-hours and cost, and with ``deadline`` the chance of finishing by then
    (docs/model.md §10). ``deadline`` is a duration, or an ISO date or date and time
    (``"2026-07-15"``, ``"2026-07-15T12:00Z"``; UTC without an offset) counted from ``start_at``
    (the same forms; now when None). With an MTBF interval (``mtbf_ci``, or ``failures`` in a
    ``window``) the same runs are simulated at either end of it, at the same schedule and seed.

    >>> p = plan(preset="llama3-405b", work="54d", runs=200, seed=1)
    >>> abs(p.completion_s["p50"] / p["expected_s"] - 1) < 0.01
    True
    """
    from ckptcalc.commands import plan as plan_command
    from ckptcalc.inputs.units import parse_count
    from ckptcalc.model import decisions as decide
    from ckptcalc.simulation import plan as whole
    from ckptcalc.simulation.timeline import DEFAULT_SEED, Failures, schedule_for

    _seed(seed)
    the_job = job(preset, work=work, failure_dist=failure_dist, mtbf_ci=mtbf_ci, **inputs)
    config = the_job.config
    if config.is_nested:
        raise InputError(
            "whole runs are simulated for one or two levels; with three or more tiers, `ckptcalc simulate`"
            " gives the effective time, and the expected run time is the work over it",
            where="preset",
        )
    if work is None and steps is None and the_job.scenario.work_s is not None:
        work = the_job.scenario.work_s  # the run's length from the preset ([run] work)
    work_s = _work(work, steps, the_job.scenario.step_time_s)
    from ckptcalc.mechanisms import registry

    registry.check_work(config, work_s, the_job.scenario)
    limit, span = _plan_deadline(deadline, start_at)
    shape = None if config.shape is None else float(config.shape)
    run_config = config.replace(shape=None) if config.has_memory and shape is not None else config
    exact_model = run_config.shape == config.shape
    inputs_at = whole.run_inputs(run_config, work_s, lambda found: _loadable(the_job, found))
    result, expected = inputs_at.result, inputs_at.expected_s
    # With an MTBF interval, the same schedule at either end of it (docs/model.md §9), keyed by the job
    # MTBF; an end at the point itself (the bound when no failure was seen) is the point's own runs.
    point = float(run_config.mtbf_s)
    parts = {point: (run_config, inputs_at)}
    for m in the_job.mtbf_band or ():
        if m is not None and m not in parts:
            at = _pinned(run_config, result, m)
            parts[m] = (at, whole.run_inputs(at, work_s))
    count = whole.check(_number(parse_count, runs, "runs"), inputs_at.failures_budget,
                        ends=[end.failures_budget for m, (_, end) in parts.items() if m != point])  # fmt: skip
    chosen = DEFAULT_SEED if seed is None else seed
    simulated = {
        m: whole.complete(
            schedule_for(at),
            Failures(one.mtbf_s, shape),
            work_s=one.work_s,
            runs=count,
            seed=chosen,
            expected_failures=one.expected_failures,
            progress=None if progress is None else whole.progress_part(progress, i, len(parts)),
            waits=registry.run_waits(config),
        )
        for i, (m, (at, one)) in enumerate(parts.items())
    }
    done = simulated[point]
    step_time = the_job.scenario.step_time_s
    expected_s = expected if exact_model else None
    figures = whole.figures(done, the_job.gpus, the_job.scenario.gpu_hour_cost, expected_s, limit)
    if the_job.mtbf_band is not None:
        figures["band"] = [
            None if m is None else _end_figures(simulated[m], parts[m][1].expected_s if exact_model else None, limit)
            for m in the_job.mtbf_band
        ]
    if span is not None:
        figures.update(start=span.start, deadline=span.deadline)
    document = plan_command.document(
        the_job, result, done, _label(preset), work_s=work_s,
        steps=decide.steps(work_s, step_time) if steps is not None and step_time else None,
        expected_s=expected_s, deadline_s=limit,
        figures=figures,
    )  # fmt: skip
    return RunPlan(document, the_job, done)


def _end_figures(done: Any, expected_s: float | None, deadline_s: float | None) -> dict[str, Any]:
    """:func:`ckptcalc.simulation.plan.figures` of the runs at one end of the MTBF's interval, with W /
    effective there."""
    from ckptcalc.simulation import plan as whole

    return {**whole.figures(done, None, None, expected_s, deadline_s), "expected_s": expected_s}


def _plan_deadline(deadline: Value | None, start_at: str | None) -> tuple[float | None, Any]:
    """``plan``'s deadline in seconds of wall time, and its :class:`ckptcalc.inputs.dates.Span` on the
    calendar when it is a date or a start is given (None otherwise)."""
    from ckptcalc.inputs import dates
    from ckptcalc.inputs.units import parse_duration

    if deadline is None:
        if start_at is not None:
            raise InputError("a start needs {deadline} (a date, or a duration from the start)", where="start_at")
        return None, None
    if dates.is_date(deadline):
        span = dates.deadline_span(deadline, start_at)
        assert span is not None
        return span.seconds, span
    limit = dates.deadline_seconds(_number(parse_duration, deadline, "deadline"))
    return limit, dates.deadline_span(limit, start_at, seconds=limit)


def _pinned(run_config: Config, result: Result, mtbf: float) -> Config:
    """``run_config`` at the job MTBF ``mtbf``, its intervals held at those of ``result`` (the plan's
    schedule, not the optimum at that MTBF)."""
    held: dict[str, Any] = {"mtbf_s": mtbf}
    if result.interval_s is not None:
        held["interval_s"] = float(result.interval_s)
    if result.memory_interval_s is not None:
        held["memory_interval_s"] = float(result.memory_interval_s)
    return run_config.replace(**held)


def _work(work: Value | None, steps: Value | None, step_time_s: float | None) -> float:
    """W in seconds of useful work: ``work`` itself, or ``steps`` × the job's step time
    (:func:`ckptcalc.simulation.plan.work_of`)."""
    from ckptcalc.inputs.units import parse_count, parse_duration
    from ckptcalc.simulation.plan import work_of

    if (work is None) == (steps is None):
        raise InputError("give the run's length one way: {work} or {steps} (with {step_time})", where="work")
    if steps is not None:
        return work_of(None, _number(parse_count, steps, "steps"), step_time_s)
    assert work is not None
    return work_of(_number(parse_duration, work, "work"), None, step_time_s)


class RunAnalysis(Outcome):
    """:func:`analyze`'s result: the realised split of a run, what it measured and the model at those inputs
    (``analysis`` holds the timeline, ``config`` the model configuration built from the measurements)."""

    analysis: Analysis | None = None
    config: Any = None
    year_from: str | None = None  # where year-less timestamps got their year: "year", "mtime" or "today"

    @property
    def realised(self) -> dict[str, float]:
        return dict(self.document["realised"])


@checked
def analyze(
    log: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    stdin: TextIO | BinaryIO | None = None,
    format: str | None = None,
    time: str | None = None,
    time_unit: str | None = None,
    cause: str = "cause",
    window: Value | None = None,
    slo: Value | None = None,
    gpus: Value | None = None,
    discard: Value | None = None,
    tz: str | None = None,
    skip_bad: bool = False,
    year: int | None = None,
    patterns: str | os.PathLike[str] | None = None,
    explain: Callable[[str], None] | None = None,
    preset: PresetRef | None = None,
    nodes: Value | None = None,
    group_nodes: Value | None = None,
    **log_inputs: Unpack[LogInputs],
) -> RunAnalysis:
    """The goodput a run got and what the model says it should have got (docs/model.md §11): the realised
    split of wall time from an event log, the measured write time, restart, interval and failure rate, the
    exact model at those inputs (effective time at the interval used, the optimal and robust intervals,
    the gain) and the time lost per failure cause. ``time`` names the time field (None: ``time``, or
    ``time_s`` in seconds in a log without ``time``, as ``simulate --events`` writes). ``window`` splits
    the run (e.g. ``"1d"``), ``slo`` marks the windows below it; ``tz`` places timestamps without a zone
    (default UTC). ``log_inputs`` are what the mechanisms' events cannot show, such as the run's number of
    replica groups (absent: the largest ``group`` of its ``group_down`` events + 1) and the groups' per-step cost
    of their fault tolerance (:class:`ckptcalc.inputs.keywords.LogInputs`; default 0,
    docs/model.md §11.6). ``patterns`` is a TOML file of line
    patterns (docs/formats/patterns.md); ``explain`` is given a line per log saying which formats were
    considered. Where ``preset`` states failure classes with their ``causes``, the log's failures are split
    by them (``classes``, docs/model.md §20.6); where the log holds nodes' fault starts and ends, its repairs
    (``repairs``; ``nodes``, the fleet, gives the unavailability and ``group_nodes`` the share of groups of
    that many nodes with none out, docs/model.md §22).

    >>> a = analyze("tests/data/hand-run.jsonl", time_unit="min")
    >>> round(a.realised["effective"], 6), a["measured"]["failures"]
    (0.441667, 4)
    """
    from ckptcalc.commands import analyze as analyze_command
    from ckptcalc.logs import analyze as timeline
    from ckptcalc.logs import fit as fitting

    stated = check_stated(overrides({"window": window, "gpus": gpus, "discard": discard}))
    span, count = stated.get("window_s"), stated.get("gpus")
    floor = _fraction(slo, "slo") if slo is not None else None
    thrown = stated.get("discard", 0.0)
    from ckptcalc.inputs.arguments import check_gathered
    from ckptcalc.inputs.units import parse_count

    given = dict(log_inputs)
    check_gathered(given, {row.flag.replace("-", "_") for row in registry.log_inputs()}, Value | None)
    unseen = registry.log_values(given, lambda raw, name: _number(parse_count, raw, name))
    from ckptcalc.logs.reader import parse_tz

    zone = parse_tz(tz) if tz is not None else None
    paths = [os.fspath(log)] if isinstance(log, (str, os.PathLike)) else [os.fspath(one) for one in log]
    path: str | list[str] = paths[0] if len(paths) == 1 else paths
    read = timeline.read(
        path, stdin=stdin, format=format, time_field=time, time_unit=time_unit, cause=cause,
        skip_bad=skip_bad, year=_year(year), tz=zone, patterns=_patterns(patterns), explain=explain, **unseen,
    )  # fmt: skip
    timeline.check_windows(read, span)
    analysis = timeline.analyze_timeline(read, window_s=span, **unseen)
    fitted = fitting.fit_events(read.failure_times_s, start_s=read.start_s, end_s=read.end_s)
    split = _class_split(preset, *timeline.by_cause(read))
    config, reason = timeline.measured_config(analysis, fitted)
    if config is not None:
        config = registry.measured(config, analysis)
    model = None
    mtbf_band = None
    over = None if config is None else registry.measured_failures(registry.measured_entries(analysis))
    if config is not None and over is not None:  # the job's MTBF measured over a mechanism's own failures too
        from ckptcalc.model.numeric import mtbf_interval_over

        config, reason = registry.from_measured(config, analysis)
        counts, mtbf = over
        if mtbf is not None:
            mtbf_band = mtbf_interval_over(counts, mtbf)
    if config is not None:
        model = _model_at(config, fitted, analysis, count, mtbf_band)
    document = analyze_command.document(
        analysis, fitted, model, reason, log=", ".join(paths), gpus=count, discard=thrown, slo=floor,
        goodput=_goodput(analysis.realised.effective, thrown), cause_shares=analysis.lost_shares,
        below_slo=analysis.below(floor), classes=split,
    )  # fmt: skip
    document = registry.placed(document, registry.incident_log_parts(read, fitted, _fleet(nodes, group_nodes)))
    return RunAnalysis(document, None, analysis, config, year_from=read.year_from)


def _fleet(nodes: Value | None, group_nodes: Value | None) -> dict[str, Any]:
    """The fleet's nodes and the nodes per replica group, as whole counts (``nodes``, ``group_nodes``)."""
    from ckptcalc.inputs.units import parse_whole_count

    return {key: None if raw is None else _number(parse_whole_count, str(raw), key)
            for key, raw in (("nodes", nodes), ("group_nodes", group_nodes))}  # fmt: skip


def _class_split(
    preset: PresetRef | None, counts: dict[str, int], restarts: dict[str, list[float]] | None
) -> dict[str, Any] | None:
    """A log's failures (``counts`` by cause, the ``restarts`` after each cause; None: the log shows none) split
    by the classes ``preset`` states with their causes (docs/model.md §20.6); None without one."""
    if preset is None:
        return None
    stated = registry.cause_classes(load_preset(preset))
    if not stated:
        return None
    from ckptcalc.logs import classes

    return classes.split(counts, [(c.name, c.share, c.causes, c.restart_s) for c in stated], restarts)


def _seed(seed: int | None) -> int | None:
    """A simulation's seed, checked (``seed``): simulate's and plan's."""
    from ckptcalc.simulation.timeline import check_seed

    return check_seed(seed)


def _year(year: int | None) -> int | None:
    """The year of timestamps that carry none, checked (``year``)."""
    from ckptcalc.inputs.dates import check_year

    return check_year(year)


def _model_at(
    config: Config,
    fitted: FailureFit,
    analysis: Analysis,
    gpus: float | None,
    ci95: tuple[float, float | None] | None = None,
) -> dict[str, Any]:
    """The model at the measured ``config``; ``ci95`` the interval of its MTBF (None: the fit's)."""
    from ckptcalc.model import band as robust
    from ckptcalc.model.evaluation import evaluate
    from ckptcalc.model.statistics import gpu_hours_gained, points, within

    result = evaluate(config)
    low, high = fitted.mtbf.ci95 if ci95 is None else ci95
    band = robust.band(config, result, float(low), None if high is None else float(high))
    at, best = float(result.effective), float(result.optimal_effective)
    realised = analysis.realised.effective
    return {
        "effective_at_interval": at,
        "difference_pp": points(realised, at),
        "agrees": within(at, analysis.effective_ci95),
        "optimal_interval_s": float(result.optimal_interval_s),
        "optimal_memory_interval_s": None
        if result.optimal_memory_interval_s is None
        else float(result.optimal_memory_interval_s),
        "optimal_effective": best,
        "robust_interval_s": band.robust_interval_s,
        "gain_pp": points(best, at),
        "gain_gpu_hours": gpu_hours_gained(best, at, analysis.realised.wall_s, gpus),
        "result": result,
    }


@checked
def measured_preset(outcome: RunAnalysis, base: PresetRef | None = None) -> Scenario:
    """``base`` (the default preset unless given) with what the run measured: its write time (as a
    bandwidth for the base's checkpoint size), restart, MTBF and its interval, and the interval it
    used, pinned. This is what ``analyze --save-preset`` writes.
    """
    from ckptcalc.inputs.fields import BY_NAME as fields
    from ckptcalc.inputs.scenario import resolve as resolved
    from ckptcalc.logs.analyze import measured_inputs
    from ckptcalc.output import wording

    config = outcome.config
    if config is None:
        raise InputError(f"nothing measured to save: {outcome.document['warnings'][0]}", where="save_preset")
    start = load_preset(base)
    size = float(resolved(start).config.checkpoint_bytes) if start.checkpoint_bytes is None else start.checkpoint_bytes
    values = measured_inputs(config, size)
    low, high = outcome.document["measured"]["mtbf_ci95"]
    from ckptcalc.mechanisms import registry

    owned = registry.stated_values(config)
    if owned:
        # A mechanism's keys, and M over the failures it measured it over (every group up, for replica groups).
        from ckptcalc.model.numeric import mtbf_interval_over

        values.update(owned)
        over = registry.measured_failures(outcome.document["measured"])
        if over is not None:
            low, high = mtbf_interval_over(over[0], float(config.mtbf_s))

    values.update(registry.measured_values(outcome.document["measured"]))  # each failure class's keys
    from ckptcalc.logs.classes import job_restart_s

    own = job_restart_s(outcome.document.get("classes"))  # the restarts a class of its own does not serve
    if own is not None:
        values["restart_s"] = own
    repaired = registry.incident_log_values(outcome.document)  # nodes' repairs the log shows, as fit saves them
    values.update({name: value for name, (value, _) in repaired.items()})
    # The measured levels replace every level of the base, its tiers included.
    cleared = start.replace(
        **cast("dict[str, Any]", {name: None for name in fields if fields[name].section in ("storage", "memory")}),
        middle=(),
        tier_names=(),
    )
    merged = merge(cleared, values, band=(low, high) if high is not None else None)
    label = str(_label(base if base is not None else DEFAULT_PRESET))
    measured_from = wording.measured_from(outcome.document["log"])
    saved = merged.replace(
        shape=None,
        description=wording.measured_description(label, outcome.document["log"]),
        source=wording.measured_source(outcome.document),
        sources=(
            *(item for item in merged.sources if item[0] != "shape"),
            *(
                (name, wording.derived_from_write(outcome.document["log"]) if "bandwidth" in name else measured_from)
                for name in values
                if name != "checkpoint_bytes" and name not in repaired
            ),
            *((name, words) for name, (_, words) in repaired.items()),
        ),
    )
    return derived(_measured_classes(saved, outcome.document), base if base is not None else DEFAULT_PRESET)


class EventLogWritten(Outcome):
    """:func:`events`' result: how many events were written where, and what reading the logs inferred."""

    @property
    def written(self) -> int:
        return int(self.document["events"])


@checked
def events(
    logs: Iterable[str | os.PathLike[str]],
    *,
    output: str | os.PathLike[str] | None = None,
    stream: Any = None,
    stdin: TextIO | BinaryIO | None = None,
    format: str | None = None,
    time: str | None = None,
    time_unit: str | None = None,
    tz: str | None = None,
    year: int | None = None,
    force: bool = False,
    skip_bad: bool = False,
    patterns: str | os.PathLike[str] | None = None,
    explain: Callable[[str], None] | None = None,
) -> EventLogWritten:
    """Write the canonical event log of one run read from ``logs`` (any format the reader knows: a
    framework's text log, a scheduler's accounting, an event table; several files of one run are read
    in time order) to ``output`` (``.jsonl`` or ``.csv``, written atomically, never over a file unless
    ``force``) or, without one, as JSON Lines to the binary ``stream``; a bad row met after events were
    streamed ends the stream with one ``{"event": "error", ...}`` record before the InputError is raised.
    What was inferred is counted in the result (docs/commands/events.md). ``patterns`` is a TOML file of
    line patterns (docs/formats/patterns.md); ``explain`` is given a line per log saying which formats
    were considered.

    >>> import io
    >>> out = io.BytesIO()
    >>> written = events(["tests/data/hand-run.jsonl"], stream=out, time_unit="min")
    >>> written.written, out.getvalue().decode().splitlines()[0]
    (19, '{"time_s": 0.0, "event": "run_start"}')
    """
    from pathlib import Path

    from ckptcalc.commands import events as events_command
    from ckptcalc.errors import CkptError
    from ckptcalc.files import atomic_stream, check_new
    from ckptcalc.logs import canonical, reader

    paths = [os.fspath(log) for log in logs]
    if not paths:
        raise InputError("no log to read", where="logs")
    zone = reader.parse_tz(tz) if tz is not None else None
    _year(year)
    clock = reader.Clock(time_unit, tz=zone)
    lines = _patterns(patterns)

    def write(target: Any, form: canonical.Form, *, streaming: bool = False) -> tuple[reader.Counts, int]:
        writer = canonical.Writer(target, form, time_field=time, clock=clock)
        try:
            counts = reader.scan(paths, writer, stdin=stdin, format=format, skip_bad=skip_bad, tz=zone, year=year,
                                 patterns=lines, explain=explain)  # fmt: skip
        except InputError as error:
            if streaming and writer.written:  # the events before it are out: the stream ends saying it failed
                writer.error(error)
            raise
        return counts, writer.written

    if output is None:
        if stream is None:
            raise InputError("no output: give a file or a stream", where="output")
        if isinstance(stream, io.TextIOBase) or not callable(getattr(stream, "write", None)):
            raise ArgumentError(
                f"must be a binary stream (io.BytesIO, sys.stdout.buffer), got {type(stream).__name__}", where="stream"
            )
        counts, written = write(stream, "jsonl", streaming=True)
        form = "jsonl"
    else:
        target = Path(output)
        chosen = canonical.FORMS.get(target.suffix.lower())
        if chosen is None:
            raise InputError(
                f"cannot tell the form from {target.suffix or 'no extension'!r}: name the file .jsonl or .csv",
                where="output",
            )
        form = chosen
        try:
            check_new(target, force=force, where="output")
            with atomic_stream(target, force=force, where="output") as file:
                counts, written = write(file, chosen)
        except CkptError as error:
            if isinstance(error, InputError):
                raise
            # A file that cannot be written is bad input too (an existing file without force, no directory).
            raise InputError(error.template, where=error.where) from None
    document = events_command.document(counts, paths, written, None if output is None else os.fspath(output), form)
    return EventLogWritten(document, None)


# Each function's "Inputs" section, from FIELDS (ckptcalc.inputs.keywords): help() lists every keyword input
# with its unit and preset key, and cannot drift from what the functions accept.
for _taking_inputs in (scenario, job, optimize, sweep, sweep_stream, simulate, plan):
    _taking_inputs.__doc__ = keywords.document(_taking_inputs.__doc__)
#: Points of each scenario's loss-versus-interval curve in a report, and whole runs of its plan: enough
#: for the pictures, few enough that a report takes a couple of seconds.
REPORT_POINTS = 61
REPORT_RUNS = 400


def _assumed_from(outcome: Optimization, start: PresetRef | None) -> None:
    """What a what-if's scenario assumes, as the preset it was derived from (``start``) makes it, in place
    of what it would assume as a preset named in its own right."""
    from ckptcalc.output import documents, wording

    assert outcome.job is not None
    again = _with_assumed(outcome.job, start)
    inputs = outcome.document["inputs"]
    kept = [line for line in inputs["assumed"] if line not in wording.assumed(outcome.job.assumed, outcome.job.gpus)]
    stated = {
        path: how for path, how in inputs["sources"].items() if path not in documents.assumed_sources(outcome.job)
    }
    inputs["sources"] = {**documents.assumed_sources(again), **stated}
    inputs["assumed"] = [*wording.assumed(again.assumed, again.gpus), *kept]


@checked
def report(
    presets: Iterable[PresetRef] | None = None,
    *,
    form: str = "html",
    log: str | os.PathLike[str] | None = None,
    time_unit: str | None = None,
    patterns: str | os.PathLike[str] | None = None,
    what_ifs: Iterable[WhatIf] = (),
    **inputs: Any,
) -> str:
    """A design review of one or more scenarios as one document: ``form`` ``"html"`` (self-contained, inline
    SVG charts) or ``"markdown"``. Per scenario: the inputs and where each came from, every tier's schedule,
    the split and its dominant term, the loss against the interval, the levers and mechanisms, and the
    MTBF band with the robust interval; with ``work`` (or a preset's ``[run] work``), the plan's
    completion distribution. ``log`` is an event log (as :func:`analyze` reads it: its realised split, and
    the fit of its failures with their survival) or an incident log (as :func:`fit` reads it: the fit
    alone), read with the line patterns ``patterns`` names (docs/formats/patterns.md; default: the first
    preset's ``[log] patterns``). ``inputs`` apply to every preset, as :func:`optimize` takes them (with no
    preset, the first scenario is the default preset with them); ``what_ifs`` are more scenarios, each the
    first with some inputs changed (as :func:`compare` takes them). Needs the ``report`` extra (Jinja2,
    matplotlib); the text is the same for the same inputs.

    >>> text = report(["llama3-405b"], form="markdown")
    >>> "## Scenario: llama3-405b" in text
    True
    """
    from ckptcalc.output import report as rendering

    if form not in rendering.FORMS:
        raise InputError(f"unknown form {form!r}: expected {' or '.join(rendering.FORMS)}", where="form")
    rendering.require(form)
    return rendering.render(
        _report_data(presets, log=log, time_unit=time_unit, patterns=patterns, what_ifs=what_ifs, **inputs), form
    )


def _report_data(
    presets: Iterable[PresetRef] | None = None,
    *,
    log: str | os.PathLike[str] | None = None,
    time_unit: str | None = None,
    patterns: str | os.PathLike[str] | None = None,
    what_ifs: Iterable[WhatIf] = (),
    **inputs: Any,
) -> dict[str, Any]:
    """What a report renders: each scenario's documents, and the log's (see :func:`report`)."""
    refs = list(presets) if presets is not None else []
    changes = [_what_if_items(item) for item in what_ifs]
    data: dict[str, Any] = {"scenarios": [], "fit": None, "fit_alone": None, "survival": None, "analyze": None}
    if log is not None and patterns is None and refs:
        patterns = preset_patterns(refs[0])
    if log is not None and os.fspath(log) == "-":
        raise InputError("reads the log twice (the split, then the fit): give a file, not stdin", where="log")
    run: RunAnalysis | None = None
    if log is not None:  # first: a log that cannot be read fails before the scenarios are worked out
        try:
            run = analyze(log, time_unit=time_unit, patterns=patterns, preset=refs[0] if refs else None)
        except InputError as not_events:
            # Not a run's event log: an incident log (a trace, sacct, a CSV of failures) is fitted alone,
            # and a log that neither reads reports why it is no event log.
            try:
                fitted = fit([log], time_unit=time_unit, patterns=patterns, preset=refs[0] if refs else None)
            except InputError:
                raise not_events from None
        else:
            data["analyze"] = run.to_dict()
            # The same run's failures, counted as analyze counts them: over the run, from its start to its
            # end (one count throughout the report). fit's own window, from the first failure to the last,
            # is said beside it where it counts otherwise.
            assert run.analysis is not None
            timeline = run.analysis.timeline
            fitted = _run_fit(log, time_unit, timeline.start_s, timeline.end_s, patterns)
            alone = fit([log], time_unit=time_unit, where=["event=failure"], patterns=patterns).to_dict()
            if (alone["interruptions"], alone["window_s"]) != (fitted["interruptions"], fitted["window_s"]):
                data["fit_alone"] = alone
        data["fit"] = fitted.to_dict()
        curve = fitted.fitted.survival
        data["survival"] = {
            "times_s": list(curve.times_s),
            "empirical": list(curve.empirical),
            "exponential": None if curve.exponential is None else list(curve.exponential),
            "weibull": None if curve.weibull is None else list(curve.weibull),
        }
    first: list[PresetRef | None] = [*refs] or [None]
    if run is not None and run.config is not None:
        # The scenario re-run at what the run measured (as analyze --save-preset writes it over the
        # preset), each measured input with the preset's value beside it.
        data["scenarios"] = [
            _measured_scenario(ref if ref is not None else DEFAULT_PRESET, run, inputs) for ref in first
        ]
    else:
        # An incident log's measured inputs (the repairs, docs/model.md §22) over each preset, as fit
        # --save-preset writes them; none for an event log or a log without them.
        measured = registry.incident_log_values(data["fit"]) if data["fit"] is not None and run is None else {}
        shares = {"classes": data["fit"]["classes"]} if data["fit"] is not None and run is None else {}
        data["scenarios"] = [_report_scenario(_with_log_values(ref, measured, shares), inputs) for ref in first]
    if changes:
        base = scenario(first[0], **inputs)
        data["scenarios"] += [
            _report_scenario(changed.replace(name=name), {}, derived=True, start=first[0])
            for name, changed in _what_if_columns(base, changes)
        ]
    return data


def _with_log_values(
    ref: PresetRef | None, measured: Mapping[str, tuple[float, str]], document: Mapping[str, Any] | None = None
) -> PresetRef | None:
    """``ref`` (None: the default preset) with the inputs a log ``measured`` (field: value, where it comes from),
    and its classes' shares as the log's ``document`` split its failures (docs/model.md §20.6)."""
    if not measured and (document is None or document.get("classes") is None):
        return ref
    named = ref if ref is not None else DEFAULT_PRESET
    start = _measured_classes(load_preset(named), document or {})
    origin = {name: words for name, (_, words) in measured.items()}
    changed = merge(start, {name: value for name, (value, _) in measured.items()}, origin)
    sources = (*(item for item in changed.sources if item[0] not in measured),
               *((name, words) for name, (_, words) in measured.items()))  # fmt: skip
    return derived(changed.replace(sources=sources), named)


def _run_fit(
    log: str | os.PathLike[str],
    time_unit: str | None,
    start_s: float,
    end_s: float,
    patterns: str | os.PathLike[str] | None = None,
) -> FailureLog:
    """:func:`fit` of an event log's failures over the run's own window, ``start_s`` to ``end_s`` (the log's
    times): the failures and MTBF analyze measures."""
    from ckptcalc.logs import fit as fitting

    conditions = ["event=failure"]
    read = fitting.read_log(log, where=conditions, time_unit=time_unit, patterns=_patterns(patterns))
    fitted = fitting.fit_log(read, start_s=start_s, end_s=end_s)
    document = _fit_document(fitted, read, {}, [os.fspath(log)], where=conditions, where_any=[])
    return FailureLog(document, None, fitted, year_from=read.year_from)


def _measured_scenario(ref: PresetRef, run: RunAnalysis, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """A report's scenario at the inputs ``run`` measured over the preset ``ref``: the preset's value of
    each input beside the measured one (None where the preset leaves it to its default)."""
    try:
        found = _report_scenario(measured_preset(run, ref), inputs)
    except InputError as refused:
        # A preset the measurements cannot be written over: its own scenario, and why.
        found = _report_scenario(ref, inputs)
        found["measured_refused"] = str(refused)
        return found
    base_job = job(ref, **inputs)
    base = base_job.scenario
    # What the preset states, and the checkpoint size it derives (from its parameters) when it states none.
    preset = {"checkpoint_bytes": float(base_job.config.checkpoint_bytes), **base.values()}
    for row in found["stated"]:
        value = preset.get(row["name"])
        row["preset_value"] = None if value is None else float(value)
        row["preset_source"] = base.where(row["name"]) if row["name"] in base.values() else None
    found.update(name=str(_label(ref)), about=base.source, measured=True)
    return found


def _report_scenario(
    ref: PresetRef | None, inputs: Mapping[str, Any], *, derived: bool = False, start: PresetRef | None = None
) -> dict[str, Any]:
    """One scenario of a report: its optimize, sweep and (with work) plan documents, and its stated inputs.
    A what-if's scenario (``ref``) is ``derived`` from ``start``, a preset or None for the default."""
    from ckptcalc.inputs.fields import FIELDS

    outcome = optimize(ref, **inputs)
    assert outcome.job is not None
    if derived:
        _assumed_from(outcome, start)
    s = outcome.job.scenario
    stated = s.values()
    rows = [
        {"name": spec.name, "value": float(stated[spec.name]), "per_gpu": spec.name in s.per_gpu,
         "source": s.where(spec.name)}
        for spec in FIELDS if spec.name in stated
    ]  # fmt: skip
    named = {key: value for key, value in inputs.items() if key not in ("failure_dist", "mtbf_ci")}
    found: dict[str, Any] = {
        "name": job_label(ref, named) if isinstance(ref, (str, os.PathLike)) or ref is None else str(_label(ref)),
        "about": s.source,
        "stated": rows,
        "optimize": outcome.to_dict(),
        "sweep": sweep(ref, over="interval", points=REPORT_POINTS, **inputs).to_dict(),
        "plan": None,
        "completion_s": None,
    }
    if s.work_s is not None and outcome.job.config.is_nested:
        from ckptcalc.output import wording

        found["plan_note"] = wording.REPORT["no_plan"]
    elif s.work_s is not None:
        ran = plan(ref, runs=REPORT_RUNS, **inputs)
        assert ran.completion is not None
        found["plan"] = ran.to_dict()
        found["completion_s"] = [float(t) for t in ran.completion.times_s]
    return found
