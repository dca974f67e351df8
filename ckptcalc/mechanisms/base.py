"""What a mechanism declares once, in its home, for the core to iterate over (docs/architecture.md).

A mechanism is one of the three kinds of effect on the one model (docs/architecture.md): failure
classes, a running share, or a tier cost. Its home subclasses :class:`Mechanism` and overrides the
hooks its effect needs; every hook's default is "no effect", so that the core can call each hook of
every registered mechanism (:mod:`ckptcalc.mechanisms.registry`) and name none of them.

A home imports only the foundations (``errors``, ``records``): its model part is arithmetic on the
numbers it is handed (floats or numpy arrays alike), so importing it costs nothing at start-up, and
its checks raise :class:`ckptcalc.errors.InputError` naming its own fields. The objects it is handed
(the model's ``Config`` and ``Tier``, a ``Scenario``) come from the layers above, and are typed
``Any`` here.
"""

from __future__ import annotations

from typing import Any

from ckptcalc.records import Record

Num = Any  # a float, or a numpy array of them

#: Every input must lie in this range (SI units): wide enough for any real cluster, narrow enough that
#: no product or exponential overflows.
SMALLEST, LARGEST = 1e-9, 1e21

#: The three kinds of effect on the model (docs/architecture.md, "Mechanisms").
KINDS = ("failure_class", "running_share", "tier_cost")


class Input(Record):
    """One row of ``inputs.fields.FIELDS`` a mechanism brings: the attribute name (SI), unit kind, flag,
    preset table and key, help text, ``after``, the field it follows in FIELDS (so that flags,
    ``--help`` and the preset keys keep their order as mechanisms move into their homes), and
    ``column``, its sweep column where the name lacks the unit."""

    name: str
    kind: str
    flag: str
    section: str
    key: str
    help: str
    after: str
    column: str = ""  # a sweep's column where the name lacks the unit ("" for the name)
    before: str = ""  # the field it precedes instead, where the one it follows may move ("" for none)
    axis: str = ""  # where a sweep varies it in one numpy pass, its axis label ("" : resolved point by point)
    metavar: str = ""  # its option's metavar where its unit kind's does not say it ("": the kind's)


class TierKey(Record):
    """A key a preset's ``[[levels]]`` tier may state for a mechanism: the key (also the field it sets
    on the last tier, and the attribute of a middle tier that carries it), its unit kind, where it may
    go (``last``: the last tier only; ``not_first``: any but the in-memory first of two or more), the
    message refusing it elsewhere, and whether a middle tier carries it (``middle``)."""

    key: str
    kind: str
    place: str
    refusal: str
    middle: bool = False


class Cell(Record):
    """A figure of a mechanism's part of a result that the terminal table shows: the row's ``label``,
    the figure's place in the JSON document (``path``, keys from the top), and its form (``pct``)."""

    label: str
    path: tuple[str, ...]
    form: str = "pct"


#: Where a failure class lands (docs/architecture.md, "Mechanisms"; MODEL.md §18): a periodic tier's index
#: (0 the fastest: it rolls back to that tier's newest checkpoint), or one of these two. ``IN_PLACE``: a tier
#: of one step and no stall under the periodic tiers, so only the step in flight is lost (just-in-time
#: recovery); ``NOWHERE``: nothing is lost, the class only restarts (a checkpoint written on notice).
IN_PLACE, NOWHERE = "in_place", "nowhere"

#: The class every other takes its share from unless it names one: the job's own failures, which roll back
#: through the periodic tiers (each tier serving its part of what the other classes leave).
PERIODIC = "periodic"


class FailureClass(Record):
    """A class of failures a mechanism brings: its ``name``, its ``share`` of all failures, its restart
    ``restart_s``, where it lands (``landing``: :data:`IN_PLACE`, :data:`NOWHERE`, or a periodic tier's
    index), the class it takes its share from (``taken_from``, :data:`PERIODIC` by default), and its
    row in the levels table (``label``). Shares and restarts may be numpy arrays."""

    name: str
    share: Num
    restart_s: Num
    landing: int | str
    taken_from: str = PERIODIC
    label: str = ""


class CauseClass(Record):
    """A stated failure class as a log's failures are split by their causes (docs/model.md §20.6): its
    ``name``, its stated ``share`` of all failures, the ``causes`` it stands for (as a preset's
    ``[[failures.classes]]`` lists them) and its stated restart ``restart_s`` (None: the job's)."""

    name: str
    share: float
    causes: tuple[str, ...] = ()
    restart_s: float | None = None


class Mechanism:
    """A mechanism's declaration: its name, kind, inputs, preset tier keys and lever keys, and its hooks.

    ``example`` states the mechanism at work as a user would (field name, value with its unit),
    including what it needs (an asynchronous persist for the slowdown); ``limit`` its own inputs at
    the values where it has no effect (the baseline); ``cells`` the figures of its part of a result a
    table shows. The contract battery (``tests/test_mechanisms.py``) runs every registered mechanism
    from these. Every hook below is a no-op, so that a home overrides only what its mechanism does."""

    name: str = ""
    kind: str = "tier_cost"
    inputs: tuple[Input, ...] = ()
    tier_keys: tuple[TierKey, ...] = ()
    levers: tuple[str, ...] = ()
    example: tuple[tuple[str, str], ...] = ()
    limit: tuple[tuple[str, str], ...] = ()
    cells: tuple[Cell, ...] = ()
    alternative: tuple[tuple[str, str], ...] = ()  # the example stated another way (inputs that exclude others)
    #: Its failure classes by name, each with the input that turns it on (what the simulation tells apart).
    class_inputs: tuple[tuple[str, str], ...] = ()
    #: Fields it carries on the scenario and the model's configuration beyond its inputs, None unless set:
    #: what no flag states (every class of a preset's array of tables, docs/model.md §20).
    carried_fields: tuple[str, ...] = ()
    #: Arrays of tables a preset may state for it, each (section, key): ``[[failures.classes]]``.
    preset_arrays: tuple[tuple[str, str], ...] = ()
    #: The ``kind`` of a ``recovery`` event in a log for each of its classes, and where that class lands
    #: (what ``analyze`` reads).
    log_kinds: tuple[tuple[str, str], ...] = ()
    #: A change of its inputs as ``--what-if`` takes it (``KEY=VALUE ...``), for the help's example; "" for none.
    what_if_example: str = ""

    def read_preset_array(
        self, section: str, key: str, rows: Any, at: Any, value_of: Any
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """One of its :attr:`preset_arrays` as a preset states it (``rows``): (values by field, where each
        came from); ``at(key)`` names a preset key for a message, ``value_of(kind, raw, where)`` reads a value."""
        return {}, {}

    def write_preset_array(self, scenario: Any, document: dict[str, Any], written: Any) -> dict[str, Any]:
        """``document`` (a preset being written, its values by their fields' sections) with its arrays of
        tables in place of the fields they hold; ``written(kind, value)`` writes one value exactly."""
        return document

    # ------------------------------------------------------------- the model (tier costs)

    def moved(self, holder: Any, size_bytes: Num, bandwidth: Num, time_s: Num) -> Num:
        """The time to move one checkpoint of ``size_bytes`` over ``bandwidth`` to or from the tier that
        ``holder`` states (the model's ``Config`` for storage, a ``Tier`` for a middle one), given the
        time ``time_s`` the mechanisms before it give (size / bandwidth for none)."""
        return time_s

    def stored(self, holder: Any, size_bytes: Num) -> Num:
        """The bytes one checkpoint takes on ``holder``'s tier, given those before it."""
        return size_bytes

    def top_level(self, config: Any, stall_s: Num, lag_s: Num, slowdown_s: Num) -> tuple[Num, Num, Num]:
        """The top tier's (stall, lag, the part of the stall that is slowed training) for ``config``."""
        return stall_s, lag_s, slowdown_s

    def top_bound(self, config: Any, size_bytes: Num) -> tuple[Num, str, Num] | None:
        """A bound on ``config``'s top interval, one storage checkpoint taking ``size_bytes``: (the shortest
        top interval allowed, the kind of the caveat saying it binds, the caveat's value); None for none."""
        return None

    def check_schedule(self, config: Any, size_bytes: Num, interval_s: Num, arrays: Any) -> None:
        """Refuse (:class:`ckptcalc.errors.InputError`) a given top interval ``interval_s`` the mechanism
        does not allow; ``arrays`` is :mod:`ckptcalc.model.arrays` (floats and arrays alike)."""

    def kept(self, config: Any, size_bytes: Num, keep: Any, arrays: Any) -> Any:
        """The newest storage checkpoints kept (None: all), given the ``keep`` of those before it."""
        return keep

    def without(self, config: Any) -> Any:
        """``config`` at the mechanism's baseline (its inputs at their limits: no effect)."""
        return config

    def lever(self, config: Any, gpus: float | None) -> list[tuple[str, Any]]:
        """The levers the mechanism offers ``config``: (lever key, the changed configuration)."""
        return []

    def lever_name(self, key: str, changed: Any, rate: Any) -> str | None:
        """What the lever ``key`` of this mechanism changes, in words (``rate`` formats a bandwidth, per
        GPU where it scales with them); None for a key it does not own."""
        return None

    def break_even(self, key: str, config: Any, gpus: float | None) -> tuple[str, float, str] | None:
        """Where this mechanism's lever ``key`` on ``config`` starts to pay: (the input it turns on, that
        input's value at which the lever's gain is zero, in SI units, its unit kind); None where the lever
        has no cost or the key is not this mechanism's."""
        return None

    #: How a lever's break-even names each input it is on: (input, words before "pays", words after the value).
    break_even_words: tuple[tuple[str, str, str], ...] = ()

    def slowed_share(self, result: Any) -> float:
        """The share of elapsed time an evaluated result (one job) loses to training slowed by this
        mechanism (part of its write share); 0 for none."""
        return 0.0

    # ------------------------------------------------------------- inputs

    def check(self, where: Any, name: str, value: float) -> bool:
        """Check one stated input's range, raising :class:`ckptcalc.errors.InputError` at ``where(name)``;
        True when ``name`` is this mechanism's (so the core's own checks skip it)."""
        return False

    def resolve(self, scenario: Any, config: Any) -> Any:
        """``config`` with the mechanism's inputs from ``scenario``, checked against each other and the
        inputs they need."""
        return config

    def check_tier(self, values: dict[str, Any], where: str) -> None:
        """Check a middle tier's keys of this mechanism (``values`` by key, ``where`` naming the tier)."""

    # ------------------------------------------------------------- results

    def echo(self, config: Any) -> dict[str, float | None]:
        """The mechanism's inputs as echoed in every JSON document's ``inputs``."""
        return {}

    def tier_echo(self, holder: Any) -> dict[str, float | None]:
        """Its keys of one tier of ``inputs.tiers`` (``holder`` None for the in-memory tier)."""
        return {}

    def load_parts(
        self, config: Any, result: Any, evaluate: Any, keep: float | None
    ) -> tuple[tuple[str, dict[str, Any]], ...]:
        """Its parts of the storage record of ``result`` (one job's), each placed after the key it names;
        ``evaluate`` (None: not given) evaluates a configuration, ``keep`` is the newest kept (None: all)."""
        return ()

    def load_schema(self) -> tuple[tuple[str, dict[str, Any]], ...]:
        """The JSON Schema of :meth:`load_parts`' keys, placed the same way."""
        return ()

    def load_lines(self, found: dict[str, Any], size: Any) -> tuple[tuple[str, str], ...]:
        """Lines of words on a document's storage record ``found`` (``size`` formats bytes), each after the
        core's line it names (``load``, ``retained``)."""
        return ()

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of :meth:`echo`'s keys."""
        return {}

    def tier_schema(self) -> dict[str, Any]:
        """The JSON Schema of :meth:`tier_echo`'s keys."""
        return {}

    # ------------------------------------------------------------- failure classes (MODEL.md §17)

    #: Inputs counted in a failure log's window (``window_s``) beside the failures: one of them stated,
    #: the window is theirs too and does not alone ask for a failure count.
    window_counts: tuple[str, ...] = ()

    def resolve_class(self, scenario: Any, config: Any, duration: Any) -> tuple[Any, Any]:
        """(``config`` with the class's inputs from ``scenario``, checked against each other and those they
        need, what it found beside them, such as its rate's 95 % band; None for nothing), after the tier
        costs; ``duration`` formats seconds for a message."""
        return config, None

    def present(self, config: Any) -> bool:
        """Whether ``config`` has this failure class."""
        return False

    def averaged_in_plan(self, config: Any) -> bool:
        """Whether ``plan``'s whole runs leave this class of ``config`` out, the work they must do
        stretched by its average cost instead."""
        return False

    def first_order_class(self, config: Any) -> tuple[Num, Num, Num] | None:
        """The class on the top tier, first order: (its rate per second of work, the work each loses
        beyond half the top interval, its restart); None without it."""
        return None

    def with_class(self, config: Any, schedule: Any, kept: Any) -> Any:
        """``schedule`` (the model's ``Tiers``) with the class in the recursion; ``kept`` the newest top-tier
        checkpoints kept (None: all)."""
        return schedule

    def best(self, config: Any, base: Any, mtbf: Num, search: Any, effective: Any) -> Any:
        """The class's own search for the joint optimum of ``base`` (None: the core's), ``search`` the
        model's search module and ``effective`` the recursion's split."""
        return None

    def summarized(self, config: Any, result: Any, kept: Any, caveat: Any) -> Any:
        """An evaluated ``result`` with the class's figures at the schedule run (``caveat`` builds a
        ``Caveat``); ``kept`` the newest top-tier checkpoints kept."""
        return result

    def kept_for_good_s(self, config: Any) -> Num | None:
        """The work between the top tier's checkpoints kept for good (None: none)."""
        return None

    def echo_parts(self, config: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
        """Its keys of every JSON document's ``inputs``, each part placed before the key it names."""
        return ()

    def echo_schema_parts(self) -> tuple[tuple[str, dict[str, Any]], ...]:
        """The JSON Schema of :meth:`echo_parts`' keys, placed the same way."""
        return ()

    def class_part(self, job: Any, result: Any) -> dict[str, Any]:
        """Its part of ``optimize``'s and ``plan``'s documents (its key: its record or None)."""
        return {}

    def class_schema(self) -> dict[str, Any]:
        """The JSON Schema of :meth:`class_part`."""
        return {}

    def part_rows(self, key: str, found: dict[str, Any], words: Any) -> list[tuple[str, str, str]] | None:
        """The (figure, value, note) rows of its part ``key`` of a document (``words``:
        :mod:`ckptcalc.output.wording`); None for a key not its own."""
        return None

    def part_title(self, key: str, caption: bool = False) -> str | None:
        """The title of the table of its part ``key`` (``caption``: the report's shorter one); None for a
        key not its own."""
        return None

    #: The input that turns the class on in ``simulate``'s table of what it steps: (field, public name);
    #: () for a class the engine does not step on its own.
    engine_switch: tuple[str, str] | tuple[()] = ()
    #: The engine's mechanisms ``simulate`` does not run together with this class.
    engine_refuses: tuple[str, ...] = ()
    #: The mechanisms (by their names in ``simulation.timeline.MECHANISMS``) its own stepper does not run
    #: beside it and the one event engine (``simulation.engine``) does: ``simulate`` takes a scenario with
    #: such a pair through the engine instead of refusing it.
    one_engine_with: tuple[str, ...] = ()

    def engine(self, config: Any, schedule: Any, mtbf_s: float, kept: Any, cycles: int, seed: int) -> Any:
        """Step ``schedule`` (the simulation's) of ``config`` with the class, event by event, over
        ``cycles`` fail-stop cycles at ``mtbf_s``, ``kept`` newest top-tier checkpoints retained (None:
        all): what the home's stepper found (its effective time, split, interval, batches). A home without a
        stepper of its own leaves it unset: ``simulate`` runs the class in the one event engine."""
        raise NotImplementedError(self.name)

    def stepped_split_alike(self, found: Any) -> bool:
        """Whether its stepper's run ``found`` (what :meth:`engine` returned) counts the class's losses in
        write, rework and restart as the model's result does, so that ``simulate``'s whole split sets the
        model's shares beside the simulated ones; the model's are left out otherwise."""
        return False

    def engine_late_class(self, config: Any, schedule: Any, kept: Any) -> Any:
        """The class noticed late that the one event engine steps (``ckptcalc.simulation.engine``): an
        object with mean_work (work between onsets), latency (mean work to notice one), skipped (work skipped
        after each), newest (top-tier checkpoints retained, None: all; ``kept`` as the model has it) and
        kept_every (one kept for good every that many, None: none) at ``schedule`` (the simulation's); None
        where ``config`` has none."""
        return None

    def engine_slow_periods(self, config: Any, schedule: Any) -> Any:
        """Periods that slow every step, which the one event engine (``ckptcalc.simulation.engine``) steps beside
        the job's failures at ``schedule`` (the simulation's): an object whose ``process(rng)`` gives one run's
        periods, drawn from ``rng``: ``pace`` (the job's pace now, 1 at full speed), ``next_at`` (the elapsed
        time of its next event) and ``event()`` (step that event; True when it ends in a restart from the top
        tier's newest durable checkpoint), ``begun`` and ``detected`` (periods, and restarts); None where
        ``config`` has none. A home that declares them and no stepper of its own (:meth:`engine`) is simulated
        in the one engine, alone and with every mechanism the engine runs."""
        return None

    def engine_group_process(self, config: Any) -> Any:
        """Parts of the job that fail and rejoin on their own between whole-job failures (replica groups), as
        the simulations step them; None where ``config`` has none. The object gives ``count`` (the parts),
        ``pause_s``, ``overhead``, ``ends`` (whole-job failures come at all), ``log_columns`` (the CSV columns
        its events add to an event log), ``rates(mtbf_s)`` and ``stretch(...)`` for the simulations' own
        steppers, ``check_plan(shape)`` and ``process(rng, mtbf_s, pool)`` for the one event engine
        (``ckptcalc.simulation.engine``): an object with ``whole_mean`` (the mean time between whole-job
        failures), ``throughput(elapsed)`` (per unit of work: useful, down, paused, overhead), ``upcoming(elapsed)``
        (its next events' times), ``event(which, elapsed, emit)`` (step one; True: a whole-job failure),
        ``restarted(elapsed, emit)``, ``down_all``, ``failures`` and ``all_down`` (counts)."""
        return None

    def event_log_schema(self, time: dict[str, Any]) -> dict[str, Any]:
        """The schema of the fields its events add to a log's line (``time``: the schema of a time field)."""
        return {}

    def class_simulated_part(self, found: Any, result: Any) -> dict[str, Any]:
        """Its part of ``simulate``'s document: what the engine ``found`` beside the model's ``result``."""
        return {}

    def class_simulated_schema(self) -> dict[str, Any]:
        return {}

    def class_simulated_lines(self, document: dict[str, Any], words: Any) -> list[str]:
        """Lines of words on its part of a ``simulate`` document."""
        return []

    def measured_part(self, analysis: Any) -> dict[str, Any]:
        """Its part of ``analyze``'s ``measured``: what an analysed log measured of the class."""
        return {}

    def measured_schema(self) -> dict[str, Any]:
        return {}

    def measured_rows(self, measured: dict[str, Any], words: Any) -> list[tuple[str, str, str]]:
        """(what, value, note) rows of its part of ``analyze``'s ``measured``."""
        return []

    def checked(self, result: Any, limit: float | None) -> dict[str, Any]:
        """Its part of a ``check`` row: ``result`` (a preset's) against ``limit``, the most risk over the
        run ``check`` allows (None: not given), as a record, None, or text saying what is missing."""
        return {}

    def checked_schema(self) -> dict[str, Any]:
        return {}

    def checked_words(self, row: dict[str, Any], words: Any) -> str:
        """Words on its part of a ``check`` row (appended to the row's line); "" for none."""
        return ""

    def notes(self, result: Any) -> list[str]:
        """What a ``plan`` document notes about how its whole runs count the class of ``result``."""
        return []

    def measured(self, config: Any, analysis: Any) -> Any:
        """``config`` (a log's measured configuration) with what ``analysis`` (an analysed log) measured of
        the class, as ``--save-preset`` writes it."""
        return config

    def measured_values(self, measured: dict[str, Any]) -> dict[str, float]:
        """The preset values, by field name, of the class in an ``analyze`` document's ``measured``."""
        return {}

    def caveat_words(self, kind: str, value: float | None, below: str | None, words: Any) -> str | None:
        """The words of a caveat of ``kind`` the class gave; None for a kind not its own."""
        return None

    # ------------------------------------------------------------- running share hooks (MODEL.md §17)
    # A running share is a factor on useful time (the spare pool's 1 − B(S + 1, a)); these hooks carry its
    # figures through the model, the levers, the sweeps, the documents and the simulations.

    #: Inputs of the job itself it brings to FIELDS (before ``inputs``), as no other home reads them yet; unlike
    #: ``inputs``, their keys may be plain words named elsewhere in other senses (``nodes``).
    job_inputs: tuple[Input, ...] = ()
    #: Levers offered where the job has the mechanism (``levers``: where it has none).
    levers_with: tuple[str, ...] = ()
    #: The ``--help`` panels of its inputs' preset sections: (section, panel title).
    panels: tuple[tuple[str, str], ...] = ()
    #: Inputs a sweep varies in one numpy pass, (flag, column, axis label), listed after ``sweeps_after``.
    sweeps: tuple[tuple[str, str, str], ...] = ()
    sweeps_after: str = ""
    #: The simulations' name for it, the mechanism it follows in their list (after those earlier in the registry
    #: that follow the same one), the input that turns it on (its field, and the public name an error shows),
    #: and the names of the mechanisms no simulation runs with it.
    simulated_name: str = ""
    simulated_after: str = ""
    simulated_input: tuple[str, str] = ("", "")
    not_simulated_with: tuple[str, ...] = ()

    def unit_parsers(self, count: Any) -> dict[str, Any]:
        """Parsers of the unit kinds its inputs alone have, by kind (``count`` parses a plain count)."""
        return {}

    def unit_shown(self, kind: str) -> str | None:
        """The core unit kind a value of its own unit kind ``kind`` is shown as; None for a kind not its own."""
        return None

    def written(self, kind: str, value: float) -> str | None:
        """How a preset writes ``value`` of its own unit kind where a number cannot say it; None otherwise."""
        return None

    def running(self, config: Any, mtbf_s: Num) -> Any:
        """Its running share of ``config`` at the job MTBF ``mtbf_s``: a record with ``running`` (the share of
        time the job runs), ``wait_s`` (per failure), ``with_effective(periodic)``; None without it."""
        return None

    def approximate(self, config: Any) -> bool:
        """Whether its part of ``config``'s headline is an approximation (docs/model.md §18.2)."""
        return False

    def assumed(self, scenario: Any) -> dict[str, Any]:
        """What its levers assume of a job that lacks it, from the stated ``scenario``."""
        return {}

    def running_levers(
        self, config: Any, gpus: float | None, base: float, evaluate: Any, assumed: dict[str, Any] | None
    ) -> list[tuple[str, float, Any, float | None, float]]:
        """Its levers over the periodic optimum ``base`` (``assumed``: every mechanism's :meth:`assumed`, None
        when the caller assumes nothing): (key, effective, changed configuration, value, cluster gain in pp)."""
        return []

    def lever_words(self, key: str, changed: Any, value: float | None, show: dict[str, Any]) -> str | None:
        """A running share's lever ``key`` in words (``show`` formats by unit kind); None for a key not its own."""
        return None

    def sweep_range(self, over: str, result: Any) -> tuple[float, float] | None:
        """The default range of a sweep over its input ``over`` around ``result``; None: the core's."""
        return None

    def check_sweep(self, over: str, config: Any, low: float, high: float, where: str) -> bool:
        """Refuse a sweep of its input ``over`` the model cannot run; True when it has checked the range."""
        return False

    def sweep_whole(self, over: str) -> tuple[bool, float] | None:
        """For an input ``over`` swept as whole counts: (spaced evenly by default, the least count)."""
        return None

    def sweep_columns(self, result: Any) -> dict[str, Any]:
        """Its columns of a sweep's document (absent without it)."""
        return {}

    def sweep_schema(self, fractions: Any) -> dict[str, Any]:
        """The schema of :meth:`sweep_columns` (``fractions``: the core's column of fractions)."""
        return {}

    def result_parts(self, job: Any, result: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
        """Its parts of every evaluation document, each placed after the key it names."""
        return ()

    def result_schema(self, parts: dict[str, Any]) -> tuple[tuple[str, dict[str, Any]], ...]:
        """The schema of :meth:`result_parts` (``parts``: the core's ``fraction``, ``seconds``, ``object``)."""
        return ()

    def input_rows(self, job: Any, show: dict[str, Any]) -> list[tuple[str, str, str]]:
        """Its rows (name, value, note) of the inputs table."""
        return []

    def figure_tables(self, document: dict[str, Any], show: dict[str, Any]) -> list[tuple[str, str, list[Any]]]:
        """Its tables of figures from a document: (title, the report's caption, rows of figure, value, note)."""
        return []

    def simulated_held(self, config: Any) -> bool:
        """Whether ``config`` holds it, as the simulations tell mechanisms apart."""
        return False

    def simulated_pool(self, config: Any) -> Any:
        """What the timeline carries for it from one window to the next (None without it)."""
        return None

    def run_waits(self, config: Any) -> Any:
        """What ``plan``'s whole runs carry for it, made for a number of runs (None without it)."""
        return None

    def simulated_parts(self, outcome: Any, result: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
        """Its parts of ``simulate``'s document, each placed after the key it names."""
        return ()

    def simulated_schema(self, parts: dict[str, Any]) -> tuple[tuple[str, dict[str, Any]], ...]:
        """The schema of :meth:`simulated_parts`."""
        return ()

    def simulated_lines(self, document: dict[str, Any], show: dict[str, Any]) -> list[str]:
        """Its lines of words under ``simulate``'s table."""
        return []

    # ------------------------------------------------------------- running shares (MODEL.md §17)

    def takes_over(self, config: Any) -> bool:
        """Whether the mechanism evaluates ``config`` itself (:meth:`evaluated`): the core's closed forms,
        tier subsets and one-level comparisons do not apply to it."""
        return False

    def evaluated(self, config: Any, core: Any) -> Any:
        """The result of ``config`` where the mechanism's running share takes the evaluation over (None where
        it is not at work). ``core`` is :mod:`ckptcalc.model.evaluation`, handed down so that the home runs
        the periodic model (at the rate it leaves) without importing upward."""
        return None

    def effective_at(self, config: Any, schedule: Any, mtbf_s: float, core: Any) -> float | None:
        """Effective time of ``config`` running the periodic ``schedule`` when the job MTBF is ``mtbf_s``
        (None where the mechanism does not take ``config`` over)."""
        return None

    def unneeded(self, config: Any, core: Any) -> bool | None:
        """Where every failure is recovered without a periodic checkpoint otherwise: whether none is needed
        with the mechanism at work (None: it does not change that)."""
        return None

    def model_label(self, config: Any) -> str | None:
        """Which model answers ``config``, in words, where the mechanism's form does (None otherwise)."""
        return None

    def assumed_levers(self, config: Any, assume: Any) -> list[tuple[str, Any]]:
        """Its levers built from what the ``[levers]`` table assumes (``assume``, None without one), and the
        job without it where it has it: (lever key, the changed configuration)."""
        return []

    def refuse_sweep(self, over: str, low: float, high: float, config: Any, shown: Any) -> None:
        """Refuse a sweep over the flag ``over`` from ``low`` to ``high`` that the base ``config`` cannot vary in
        one numpy pass (``shown(name, value)`` words a value of an input in its unit)."""

    def own_part(self, result: Any) -> dict[str, Any] | None:
        """Its part of a result's JSON document (under its ``name``), None where it is not at work."""
        return None

    def own_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of :meth:`own_part`, null included (None: no part)."""
        return None

    #: What its part of ``analyze``'s ``model`` is (:meth:`own_part` of the job its events measured), as that
    #: schema describes it.
    measured_model_words: str = ""

    def log_inputs(self) -> tuple[Input, ...]:
        """The options ``analyze`` takes for what its events in a log cannot show (``after`` names the
        command's option they follow; the preset table and key are unused)."""
        return ()

    def log_values(self, given: dict[str, Any], number: Any) -> dict[str, float]:
        """:meth:`log_inputs` as stated (``given`` by public name, ``number(raw, name)`` parses one), checked,
        as the log's analysis takes them (by its keyword)."""
        return {}

    def log_reading(self, stated: dict[str, Any], reader: Any) -> Any:
        """A new reader of its events in a run's event log, or None where it reads none. ``stated`` is what every
        mechanism's :meth:`log_values` gave (by keyword); ``reader`` is :mod:`ckptcalc.logs.reader`, handed down so
        that the home reads with its helpers without importing upward. The reader has ``events`` (the event names
        it takes), ``take(event, t, value, time, line)`` (one of them at ``t`` on ``line``: ``value(key)`` is a
        field, the reader's ``MISSING`` where absent, null or empty, and ``time(key)`` a time field in seconds,
        None where absent), ``pinned(last)`` (the spans, (starts, ends), whose stalls its losses need exactly,
        or None) and ``columns()`` (what it kept; None where the log has none of its events)."""
        return None

    def log_losses(
        self, kept: Any, *, start_s: float, end_s: float, blocked: Any, restarts: Any, failures_s: Any, stated: Any
    ) -> Any:
        """What the events it kept (its reader's ``columns()``) cost a log's run from ``start_s`` to ``end_s``: an
        object whose ``within(a, b)`` gives the seconds of each of its parts of the realised split
        (:meth:`log_split_parts`, by key) between two moments, and ``measured()`` what its events measured (the
        analysis' ``measured_by`` under its name). ``blocked`` is the time that is not kept work and ``restarts``
        the restarts, each as sorted, disjoint spans; ``failures_s`` every failure, in order; ``stated`` as in
        :meth:`log_reading`."""
        return None

    #: Its parts of ``analyze``'s realised split (the kept work its events lost, beside useful), each (key, what
    #: the schema says of it): in every ``analyze`` document and window, 0 where the log has none of its events.
    log_split_keys: tuple[tuple[str, str], ...] = ()

    def log_split_parts(self, measured: dict[str, Any]) -> tuple[tuple[str, str], ...]:
        """(key, name) of its parts of ``analyze``'s realised split, in the order the tables show them, where the
        document's ``measured`` says the log has its events; () otherwise."""
        return ()

    def measured_failures(self, measured: dict[str, Any]) -> tuple[tuple[int, ...], float | None] | None:
        """Where a log's events measured the job's MTBF over failures of its own kinds (from its part of
        ``analyze``'s ``measured``): (the failures counted in parts, the MTBF over them, None for none); None
        otherwise."""
        return None

    def check_work(self, config: Any, work_s: float, scenario: Any) -> None:
        """Refuse a run of ``work_s`` of work too short for the mechanism (``scenario`` names and words its
        inputs: ``where``, ``shown``)."""

    def config_rows(self, config: Any) -> list[tuple[str, str, Any, str]]:
        """Its rows of the inputs table: (label, unit kind of the value, the value, a note)."""
        return []

    def split_rows(self, result: Any) -> list[tuple[str, Any, str]]:
        """Its rows of the split table: (label, share of elapsed time, a note), beside write, rework, restart."""
        return []

    def result_lines(self, result: Any, form: Any) -> list[str]:
        """Sentences on its part of ``result`` for the terminal (``form(kind, value)`` words a figure)."""
        return []

    def stated_values(self, config: Any) -> dict[str, float]:
        """Its inputs of a measured ``config`` as a saved preset states them (none where it is not at work)."""
        return {}

    def measured_entry(self, analysis: Any) -> tuple[str, dict[str, Any] | None] | None:
        """Its part of what a log's events measured (``analyze``'s ``measured``): (key, the part or None
        where the log has none of its events); None for no part."""
        return None

    def measured_entry_schema(self) -> tuple[str, dict[str, Any]] | None:
        """The JSON Schema of :meth:`measured_entry`, null included: (key, schema)."""
        return None

    def measured_entry_rows(self, measured: dict[str, Any], form: Any) -> list[tuple[str, str, str]]:
        """(what, value, note) rows of its part of ``measured`` (``form(kind, value)`` words a figure)."""
        return []

    def from_measured(self, config: Any, analysis: Any) -> tuple[Any, str | None] | None:
        """The measured periodic ``config`` as a job with what ``analysis`` (a log's) measured of the
        mechanism, or (None, the reason it cannot be built); None where the log has none of its events."""
        return None

    def report_lines(self, document: dict[str, Any], form: Any) -> list[str]:
        """What it does in a scenario, from its part of ``document`` (the report's list of mechanisms)."""
        return []

    def incident_log_part(self, log: Any, fitted: Any, given: dict[str, Any]) -> tuple[tuple[str, dict[str, Any]], ...]:
        """Its parts of ``fit``'s document, each placed after the key it names, from the incident ``log`` read
        (an ``EventLog``; None for counts), the failures ``fitted`` to it and the options ``given`` by name."""
        return ()

    def incident_log_schema(self) -> dict[str, Any]:
        """The JSON Schema of :meth:`incident_log_part`'s keys (always present)."""
        return {}

    def incident_log_values(self, document: dict[str, Any]) -> dict[str, tuple[float, str]]:
        """The preset values a ``fit`` document measured of the mechanism: by field name, (the value in SI units,
        the words saying where it comes from)."""
        return {}

    # ------------------------------------------------------------- failure classes

    def classes(self, config: Any) -> tuple[FailureClass, ...]:
        """The failure classes the mechanism gives ``config`` (a model ``Config``), none when it has none
        stated. The core builds the one recursion from them: an in-place class is a one-step tier under
        the periodic ones, a class that goes back nowhere a class of its own, and the periodic tiers
        serve what the classes leave of their ``taken_from`` class."""
        return ()

    def scaled_classes(self, config: Any, factor: Num) -> Any:
        """``config`` with the share of each of its classes scaled by ``factor`` (the part of the failures
        they serve, such as those that do not take every elastic group down at once)."""
        return config

    def first_order(self, config: Any, mtbf_s: Num) -> tuple[Num, Num] | None:
        """The (rework, restart) shares first order charges this mechanism's classes of ``config`` at the
        MTBF ``mtbf_s``; None where it has none."""
        return None

    def class_rows(self, config: Any, rate: Any, duration: Any, pct: Any) -> tuple[tuple[str, str, str], ...]:
        """The Inputs table's rows (name, value, note) on its classes of ``config``, after the restart
        (``rate``, ``duration`` and ``pct`` format a bandwidth, a time and a share)."""
        return ()

    def record(self, config: Any, needed: bool) -> dict[str, Any] | None:
        """Its part of a result (a JSON record of its classes: ``needed`` says whether a periodic
        checkpoint is needed at all); None where the mechanism is not configured."""
        return None

    def record_schema(self) -> tuple[str, dict[str, Any]] | None:
        """The record's key in a document and its JSON Schema (properties and description)."""
        return None

    def input_report_lines(self, inputs: dict[str, Any], rate: Any) -> tuple[str, ...]:
        """Lines on what does the recovering in a report, from a document's echoed ``inputs``."""
        return ()

    def assumed_lever_name(self, key: str, changed: Any, assume: Any, words: Any) -> str | None:
        """The words of its lever ``key`` (``words`` formats: ``rate``, ``duration``, ``pct``); None for a
        key it does not own."""
        return None

    def lever_presets(self) -> tuple[tuple[str, str, str], ...]:
        """The keys of a preset's ``[levers]`` that set what its levers assume: (key, unit kind,
        the scenario's attribute that holds it)."""
        return ()

    def what_if(self, name: str, scenario: Any, base: Any) -> Any:
        """``scenario``, the scenario ``base`` after a what-if changed its input ``name``, with what that
        change needs."""
        return scenario

    def sweep_start(self, name: str, config: Any) -> float | None:
        """The value a sweep over ``name`` (one of its inputs) starts from where ``config`` states none."""
        return None

    def varied(self, name: str, config: Any, values: Any, scenario: Any) -> Any:
        """``config`` with its input ``name`` set to ``values`` for a sweep (None: the core's plain way)."""
        return None

    def sweep_stated(self, name: str, config: Any) -> float | None:
        """The value of the swept input ``name`` as the job states it, where the mechanism changed it in
        ``config`` (a restart grown to the job's size: the restart as measured); None: ``config``'s own."""
        return None

    def cause_classes(self, scenario: Any) -> tuple[CauseClass, ...]:
        """The classes ``scenario`` states with the causes of a log's failures each stands for, in order
        (``analyze`` and ``fit`` split a log's failures by them, docs/model.md §20.6); () for none."""
        return ()

    def with_cause_shares(self, scenario: Any, shares: dict[str, float]) -> Any:
        """``scenario`` with the share of each of its :meth:`cause_classes` named in ``shares`` replaced by
        the share a log measured (names, causes, restarts and paths kept): what ``--save-preset`` writes."""
        return scenario

    # ------------------------------------------------------------- what a job assumes

    def defaults_taken(self, scenario: Any, config: Any) -> tuple[tuple[str, float], ...]:
        """The mechanism's inputs ``scenario`` left out that its model took from its own defaults in
        ``config``: (field, value), so that a job says what it assumed (docs/guide/assumed.md)."""
        return ()

    # ------------------------------------------------------------- scale hooks (MODEL.md §19)
    # Inputs whose effect depends on the job's size (a restart that grows with the GPU count): what changes
    # when a sweep or a search runs the job at other sizes, and the figures that only such a job has.

    def at_gpus(self, job: Any, config: Any, gpus: Num) -> dict[str, Any]:
        """Fields of ``config`` (the job's, at ``job.gpus``) that change when it runs on ``gpus`` GPUs."""
        return {}

    def scale_parts(self, job: Any, result: Any, at_gpus: Any) -> dict[str, Any]:
        """Its keys of ``optimize``'s document, present only when stated (``at_gpus`` evaluates the job,
        re-optimised, at an array of GPU counts)."""
        return {}

    def scale_schema(self) -> dict[str, Any]:
        """The schema of :meth:`scale_parts` (optional keys)."""
        return {}

    def sweep_parts(self, over: str, values: Any, result: Any) -> dict[str, Any]:
        """Its columns of a sweep over ``over`` at ``values`` (``result`` the evaluated grid), present only when
        stated: in the document, the CSV and the streamed document."""
        return {}

    def sweep_peak(
        self, values: Any, columns: dict[str, Any], at: tuple[int, int], found: dict[str, Any]
    ) -> dict[str, Any]:
        """Fold one slice of a sweep into the keys summing up the whole sweep (``at``: the slice's number and
        the size of every slice before the last; ``found``: the keys of the slices before)."""
        return found

    def sweep_part_schema(self) -> dict[str, Any]:
        """The schema of :meth:`sweep_parts` and :meth:`sweep_peak` (optional keys)."""
        return {}

    def sweep_cells(self, over: str, values: Any, result: Any, show: dict[str, Any]) -> list[tuple[str, list[str]]]:
        """Its columns of a sweep's table: (header, a cell per point)."""
        return []

    def baseline_notes(self, levers: Any, show: dict[str, Any]) -> list[str]:
        """What the job as evaluated assumes of this mechanism where it lacks it, in words, from the levers
        offered (``show`` formats by unit kind): a line for the inputs' list of assumed values."""
        return []
