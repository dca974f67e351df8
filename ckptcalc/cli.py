"""The command line: parse the flags, call the API, hand the result to the output modules.

Heavy modules (Rich, numpy, tomli_w, matplotlib) are imported inside the
commands that need them, so ``ckptcalc optimize --json`` starts almost as
fast as an empty Typer app. The commands are lazy too: their options are
annotations that are only evaluated, and turned into click parameters, for
the command a process runs (see :class:`_Commands`); ``--help`` and shell
completion of the command names build every one, as before.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import sys
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from typer.core import TyperGroup

from ckptcalc import __version__
from ckptcalc.errors import CkptError, InputError
from ckptcalc.inputs.fields import BY_NAME, FIELDS, SWEEPABLE, Field
from ckptcalc.mechanisms import registry
from ckptcalc.records import Record

if TYPE_CHECKING:  # the API and the model load inside the commands
    from ckptcalc.api import SweepStream
    from ckptcalc.inputs.scenario import Scenario

DEFAULT_PRESET = "llama3-405b"

EXIT_USAGE = 2
EXIT_CHECK = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command Ctrl-C stopped


class _ReaderLeft(Exception):
    """The reader of stdout went away while a command was writing (click would turn it into exit 1)."""


class _Group(TyperGroup):
    """Turns every user mistake, ours or Typer's, into one plain line and exit 2."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise _ReaderLeft from None

    def _main_shell_completion(self, ctx_args: Any, prog_name: str, complete_var: str | None = None) -> None:
        """A completion instruction the shell scripts never send (``complete_nosuch``) is a usage error,
        one line and exit 2, where Typer would print its own line and exit 1."""
        import os

        variable = complete_var or f"_{prog_name}_COMPLETE".replace("-", "_").upper()
        instruction = os.environ.get(variable)
        if instruction:
            from typer import completion  # noqa: F401 - registers the shells
            from typer._click.shell_completion import _available_shells, get_completion_class

            action, _, shell = instruction.partition("_")
            if action not in ("source", "complete") or get_completion_class(shell) is None:
                shells = ", ".join(sorted(_available_shells))
                _fail(f"{variable}: {instruction!r} is not a completion instruction; "
                      f"use complete_SHELL or source_SHELL, SHELL one of {shells}")  # fmt: skip
        super()._main_shell_completion(ctx_args, prog_name, complete_var)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        from typer._click import exceptions as click_exceptions

        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
            if code == EXIT_INTERRUPTED:  # Typer's answer to Ctrl-C during a command, without a word
                _interrupted()
        except SystemExit as done:
            # click answers a broken pipe (while printing help, say) by wrapping the streams and
            # exiting 1; a reader that left is success here.
            if done.code == 1 and (type(sys.stdout).__name__ == "PacifyFlushWrapper" or _stdout_silenced()):
                _reader_left()
            raise
        except CkptError as error:
            _fail(error.render(flag))
        except click_exceptions.NoArgsIsHelpError as error:
            # Building the error formatted the help: Typer's rich help has printed itself then, and
            # plain help is the error's message.
            text = error.format_message()
            if text.strip():
                typer.echo(text)
            sys.exit(0)
        except click_exceptions.UsageError as error:
            command = error.ctx.command_path if error.ctx is not None else "ckptcalc"
            message = error.format_message()
            argv = kwargs.get("args") or (args[0] if args else sys.argv[1:])
            _fail(f"{message}{_extra_hint(message, list(argv))} (see '{command} --help')")
        except typer.Abort:
            typer.echo("aborted", err=True)
            sys.exit(1)
        except (BrokenPipeError, _ReaderLeft):
            _reader_left()
        except OSError as error:
            if not _is_output_error(error):
                raise
            _cannot_write(error)
        sys.exit(code if isinstance(code, int) else 0)


class _Commands(MutableMapping[str, Any]):
    """A group's commands by name, in the order they were declared, each built the first time it is
    looked up: its annotations evaluated, its options made, its click command converted. A process
    that runs one command builds that one; listing the names (help, completion, a misspelt command's
    suggestion) builds none, and help that describes each command builds them all."""

    def __init__(self, pending: dict[str, Any], built: dict[str, Any]) -> None:
        self._pending = dict(pending)
        self._built = dict(built)
        self._order = [*self._pending, *(name for name in self._built if name not in self._pending)]

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            info = self._pending[name]  # KeyError for a name that is not a command, as a dict's
            self._built[name] = _build_command(info)
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        if name not in self._order:
            self._order.append(name)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self._order:
            raise KeyError(name)
        self._order.remove(name)
        self._pending.pop(name, None)
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, name: object) -> bool:
        return name in self._order


#: A sweep's points when --points is not given (the API's default too).
POINTS = 21

#: The top-level commands, declared with ``@app.command`` and built by :class:`_Commands` on demand.
_PENDING: dict[str, Any] = {}


def _build_command(info: Any) -> Any:
    """The click command of one declared command (what Typer does for each at start-up)."""
    from typer.main import get_command_from_info

    prepare = getattr(info.callback, "prepare_options", None)
    if prepare is not None:
        prepare()
    return get_command_from_info(
        command_info=info,
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode,
    )


class _LazyGroup(_Group):
    """The top-level group: its commands are :data:`_PENDING`'s, built when looked up."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = _Commands(_PENDING, dict(self.commands))


class _LazyTyper(typer.Typer):
    """A Typer app whose commands are declared, not converted: Typer would convert every registered
    command's parameters whenever the app is called."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:  # type: ignore[override]
        register = super().command(*args, **kwargs)

        def declare(func: Callable[..., Any]) -> Callable[..., Any]:
            from typer.main import get_command_name

            result = register(func)
            info = self.registered_commands.pop()
            _PENDING[info.name or get_command_name(func.__name__)] = info
            return result

        return declare


def _light_coercion() -> None:
    """Typer coerces every parameter through a pydantic adapter, built when the parameter is first
    processed, also for an option that was not given; the first one costs the import of pydantic's
    schema machinery, more than the rest of ``optimize --json``. A value not given and a plain string
    for a text option come out of that adapter unchanged, so they are passed as they are here; any
    other value builds Typer's own adapter, as before."""
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
        from typer.core import _TyperParameter
    except ImportError:  # another Typer: its own coercion, unchanged
        return
    if not hasattr(_TyperParameter, "get_runtime_param"):
        return

    class _Unbuilt(RuntimeParam):
        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if self.annotation is str and self.parameter_info.parser is None and type(value) is str:
                return value
            built = build_runtime_param(param.type_descriptor)
            param._runtime_param = built
            return built._coerce_value(value, param=param, ctx=ctx)

    def runtime_param(self: Any) -> Any:
        if self._runtime_param is None:
            descriptor = self.type_descriptor
            if descriptor.file_annotation is not None:
                self._runtime_param = build_runtime_param(descriptor)
            else:
                self._runtime_param = _Unbuilt(
                    annotation=descriptor.annotation, parameter_info=descriptor.parameter_info
                )
        return self._runtime_param

    _TyperParameter.get_runtime_param = runtime_param  # type: ignore[method-assign]


_light_coercion()


def _extra_hint(message: str, argv: list[str]) -> str:
    """What an unexpected extra argument probably meant: a value with a space that needs quoting, or a
    preset given without ``--preset``."""
    import re

    found = re.search(r"unexpected extra argument(?:\(s\)|s)? \((.*)\)", message)
    if not found or not found.group(1).split():
        return ""
    extra = found.group(1).split()[0]
    where = argv.index(extra) if extra in argv else -1
    if where >= 2 and argv[where - 2].startswith("--") and not argv[where - 1].startswith("-"):
        option, value = argv[where - 2], argv[where - 1]
        return f"; a value with a space needs quotes: {option} '{value} {extra}'"
    looks_like_preset = extra.endswith(".toml")
    if not looks_like_preset:
        from ckptcalc import api
        from ckptcalc.errors import CkptError

        try:
            looks_like_preset = extra in {row["name"] for row in api.presets_list()["presets"]}
        except CkptError:
            looks_like_preset = False
    return f"; did you mean --preset {extra}?" if looks_like_preset else ""


#: Inputs the command line names differently from the Python API.
_RENAMED = {
    "start": "--from",
    "stop": "--to",
    "presets": "PRESET",
    "name": "NAME",
    "search": "--optimize",
    "logs": "LOG...",
    "start_at": "--start",
    "preset_name": "--name",
    "preset_description": "--description",
}

#: The API's other argument names that are flags here too.
_OPTIONS = frozenset(
    {"preset", "save_preset", "force", "plot", "over", "points", "cycles", "shape", "seed", "target",
     "min_effective", "max_silent_risk", "what_if", "failure_dist", "value", "time", "time_unit", "where", "cause",
     "window_start", "window_end", "coalesce", "observed_gpus", "format", "tz", "time_format", "where_any",
     "failures", "window", "mtbf_ci", "at", "work", "steps",
     "runs", "deadline", "events", "slo", "discard", "keep_base", "year", "output", "patterns", "verbose",
     "group_nodes"}
)  # fmt: skip
#: The report's options, by the names its errors use.
_OPTIONS |= {"html", "markdown", "check", "log"}


def flag(name: str) -> str:
    """The flag for an API field name (``memory_bw`` → ``--memory-bw``); anything else as it is."""
    from ckptcalc.inputs.fields import BY_PUBLIC

    if name in _RENAMED:
        return _RENAMED[name]
    if name.startswith("what_if "):
        return "--what-if " + name.removeprefix("what_if ")
    if name.startswith("patterns "):  # a pattern file's problem: the flag and the file
        return "--patterns " + name.removeprefix("patterns ")
    if name in BY_PUBLIC or name in _OPTIONS:
        return "--" + name.replace("_", "-")
    return name


MarkdownOpt = Annotated[bool, typer.Option("--markdown", help="Print GitHub-flavoured Markdown tables instead.")]


def _print_markdown(document: dict[str, Any]) -> None:
    from ckptcalc.commands import catalogue

    for message in document.get("warnings", []):
        sys.stderr.write(f"warning: {_plain(message)}\n")
    sys.stdout.write(_printable(catalogue.markdown(document)))


def _printable(text: str) -> str:
    from ckptcalc.errors import printable

    return printable(text)


def _plain(message: str) -> str:
    """A message for stderr: one line, nothing in it that could steer the terminal."""
    from ckptcalc.errors import printable

    return printable(message, newlines=False)


def _fail(message: str) -> None:
    from ckptcalc.errors import printable

    first = printable(" ".join(message.split()), newlines=False)
    sys.stderr.write(f"error: {first}\n")
    sys.exit(EXIT_USAGE)


def _flag_type(original: Callable[..., Any]) -> Callable[..., Any]:
    """Help shows what an option takes; an on/off flag takes nothing, so it shows no type (not ``<bool>``)."""

    def display(self: Any, ctx: Any) -> Any:
        if self.metavar is None and getattr(self, "is_flag", False):
            return None
        return original(self, ctx)

    return display


from typer.core import TyperArgument, TyperOption  # noqa: E402 - beside the adjustments they need

TyperOption.display_type_rich = _flag_type(TyperOption.display_type_rich)  # type: ignore[method-assign]
# An argument's metavar (PRESET..., LOG) already says what it takes; Python's type would only confuse.
TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign]


#: A ``--what-if`` as the help's examples show it: a registered mechanism's change, named by the mechanism.
_WHAT_IF = registry.what_if_example()


def _examples(*commands: str) -> str:
    """An epilog of examples, one command a line (Rich's help keeps blank-line-separated paragraphs)."""
    return "Examples:\n\n" + "\n\n".join(commands)


app = _LazyTyper(
    cls=_LazyGroup,
    name="ckptcalc",
    help="How often should a training job checkpoint, and where does its time go?",
    epilog=_examples(
        "ckptcalc optimize --params 405e9 --bw 2TB/s",
        "ckptcalc presets list",
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
presets_app = typer.Typer(cls=_Group, help="List and show the presets.", no_args_is_help=True)
app.add_typer(presets_app, name="presets")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ckptcalc {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """How often should a training job checkpoint, and where does its time go?

    Sizes, rates and durations take units: 6.5TB, 500GiB, 2TB/s, 100Gbps, 10min, 3.1h, 1h30m.
    """


# ------------------------------------------------------------ model options


class ModelArgs(Record):
    """What a command was told about the job: a preset, raw flag values, the failure law and MTBF band."""

    preset: str | None
    raw: dict[str, str]
    failure_dist: str | None = None
    mtbf_ci: str | None = None

    @property
    def inputs(self) -> dict[str, str]:
        """The flags given, by the API's input names (``memory_bw``), with ``failure_dist`` and ``mtbf_ci``."""
        found = {BY_NAME[name].public: text for name, text in self.raw.items()}
        if self.failure_dist is not None:
            found["failure_dist"] = self.failure_dist
        if self.mtbf_ci is not None:
            found["mtbf_ci"] = self.mtbf_ci
        return found

    def _given(self) -> list[tuple[Field, str]]:
        return [(BY_NAME[name], text) for name, text in self.raw.items()]


_PANELS = {
    "checkpoint": "Checkpoint",
    "storage": "Storage",
    "failures": "Failures",
    "cluster": "Cluster",
    "memory": "In-memory replica",
    "training": "Training",
    "cost": "Cost",
    "recovery": "Recovery",
    **dict(registry.panels()),
    "elastic": "Elastic replica groups",
    "silent": "Silent events",
    "retention": "Retention",
    "run": "Run",
}


def _text_option(name: str, option: str, help_text: str, metavar: str) -> inspect.Parameter:
    """A keyword-only text option of the Failures panel, for the model options."""
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[
            Optional[str],
            typer.Option(
                option, help=help_text, metavar=metavar, show_default=False, rich_help_panel=_PANELS["failures"]
            ),
        ],
    )


def _literal(help_text: str) -> str:
    """``help_text`` with its brackets kept as written: the help's markup would take ``[run]`` or
    ``[[failures.classes]]`` for a style and drop it."""
    return help_text.replace("[", "\\[")


def _preset_defaults() -> dict[str, str]:
    """`` (llama3-405b: 2.00 TB/s)`` for each input the default preset sets, for the help. A default
    preset that does not load (a broken copy on CKPTCALC_PRESET_PATH) leaves the help without them;
    the command itself will say what is wrong."""
    from ckptcalc import api
    from ckptcalc.errors import CkptError
    from ckptcalc.inputs import units

    try:
        stated = api.load_preset(DEFAULT_PRESET).values()
    except CkptError:
        return {}
    formats = {
        "size": units.format_size,
        "rate": units.format_rate,
        "duration": units.format_duration,
        "count": units.format_count,
    }
    shown = {}
    for name, value in stated.items():
        kind = BY_NAME[name].kind
        text = formats[kind](value) if kind in formats else f"{value:g}"
        shown[name] = f" ({DEFAULT_PRESET}: {text})"
    return shown


def _complete_presets(incomplete: str) -> list[str]:
    from ckptcalc import completion

    return completion.presets(incomplete)


def _complete_over(incomplete: str) -> list[str]:
    from ckptcalc import completion

    return completion.over(incomplete)


def _complete_schema(incomplete: str) -> list[str]:
    from ckptcalc import completion

    return completion.schema_names(incomplete)


@functools.cache
def _model_parameters() -> tuple[inspect.Parameter, ...]:
    """``--preset`` and one option per input of :data:`FIELDS`, built once for every command."""
    preset = inspect.Parameter(
        "preset",
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[
            Optional[str],
            typer.Option(
                "--preset",
                "-p",
                help=f"Preset name or TOML path to start from (default: {DEFAULT_PRESET}).",
                metavar="PRESET",
                show_default=False,
                rich_help_panel="Job",
                autocompletion=_complete_presets,
            ),
        ],
    )
    # The default preset's values only matter to a reader of the help: others do not pay for loading it.
    defaults = _preset_defaults() if {"--help", "-h"} & set(sys.argv[1:]) else {}
    fields = (
        inspect.Parameter(
            spec.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=Annotated[
                Optional[str],
                typer.Option(
                    f"--{spec.flag}",
                    help=_literal(spec.help + defaults.get(spec.name, "")),
                    show_default=False,
                    rich_help_panel=_PANELS[spec.section],
                    metavar=spec.kind.upper(),
                ),
            ],
        )
        for spec in FIELDS
    )
    failure_dist = _text_option(
        "failure_dist",
        "--failure-dist",
        "exponential or weibull (with --shape); default: weibull when the preset has a shape.",
        "LAW",
    )
    band = _text_option(
        "mtbf_ci",
        "--mtbf-ci",
        "95 % interval of the job MTBF, e.g. 3h:3.8h: shows the band and the robust interval.",
        "LOW:HIGH",
    )
    return (preset, *fields, failure_dist, band)


def model_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--preset`` and one option per input of :data:`FIELDS` to a command.

    The command receives them gathered in a ``model: ModelArgs`` argument. The options join the
    command's signature when the command is built (``prepare_options``), not when it is declared.
    """

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        names = {p.name for p in _model_parameters()}
        special = {name: kwargs.pop(name) for name in ("preset", "failure_dist", "mtbf_ci")}
        raw = {name: kwargs.pop(name) for name in list(kwargs) if name in names}
        model = ModelArgs(special["preset"], {k: v for k, v in raw.items() if v is not None}, special["failure_dist"],
                          special["mtbf_ci"])  # fmt: skip
        return func(model=model, **kwargs)

    def prepare_options() -> None:
        signature = inspect.signature(func, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "model"]
        extra = _model_parameters()
        wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*extra, *(p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own)]
        )
        wrapper.__annotations__ = {p.name: p.annotation for p in [*own, *extra]}

    wrapper.prepare_options = prepare_options  # type: ignore[attr-defined]
    return wrapper


def log_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add one option per registered mechanism's ``log_inputs`` to ``analyze``, each after the option it
    names; the command receives them gathered in a ``log_inputs: dict`` argument (by public name)."""

    @functools.cache
    def parameters() -> tuple[tuple[str, inspect.Parameter], ...]:
        from ckptcalc.mechanisms import registry

        return tuple(
            (
                row.after,
                inspect.Parameter(
                    row.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=None,
                    annotation=Annotated[
                        Optional[str],
                        typer.Option(
                            f"--{row.flag}", help=_literal(row.help), metavar=row.metavar or _LOG_METAVARS[row.kind]
                        ),
                    ],
                ),
            )
            for row in registry.log_inputs()
        )

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        names = {p.name for _, p in parameters()}
        given = {name: kwargs.pop(name) for name in list(kwargs) if name in names}
        return func(log_inputs={k: v for k, v in given.items() if v is not None}, **kwargs)

    def prepare_options() -> None:
        signature = inspect.signature(func, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "log_inputs"]
        found: list[inspect.Parameter] = []

        def place(p: inspect.Parameter, kind: Any) -> None:  # then the options that follow it, and theirs
            found.append(p)
            for after, extra in parameters():
                if after == p.name:
                    place(extra.replace(kind=kind), kind)

        for p in own:
            place(p, p.kind)
        wrapper.__signature__ = signature.replace(parameters=found)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in found}

    wrapper.prepare_options = prepare_options  # type: ignore[attr-defined]
    return wrapper


#: The metavar of a log option by its unit kind.
_LOG_METAVARS = {"fraction": "F", "duration": "DURATION", "count": "COUNT"}


#: ``--preset`` of the commands that only write a preset (fit, analyze): the one they start from.
BaseOpt = Annotated[
    Optional[str],
    typer.Option(
        "--preset",
        "-p",
        help=f"The preset --save-preset starts from (default: {DEFAULT_PRESET}); its \\[\\[failures.classes]] causes"
        " split the log's failures by class.",
        metavar="PRESET",
        show_default=False,
        autocompletion=_complete_presets,
    ),
]

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document (SI units) instead of a table.")]
NameOpt = Annotated[
    Optional[str],
    typer.Option("--name", help="With --save-preset: the saved preset's name (default: the file's).", metavar="TEXT"),
]
DescriptionOpt = Annotated[
    Optional[str],
    typer.Option("--description", help="With --save-preset: one line saying what the preset is.", metavar="TEXT"),
]
YearOpt = Annotated[
    Optional[int],
    typer.Option("--year", help="Year of timestamps that carry none (absl; default: the file's).", metavar="YEAR"),
]
TimeUnitOpt = Annotated[
    Optional[str], typer.Option("--time-unit", help="Unit of numeric times: s, min, h or d.", metavar="UNIT")
]
TzOpt = Annotated[
    Optional[str],
    typer.Option("--tz", help="Zone of timestamps without one: UTC (default), +02:00, Europe/Paris.", metavar="ZONE"),
]
SkipBadOpt = Annotated[bool, typer.Option("--skip-bad", help="Count and skip malformed lines.")]
#: The formats the log reader knows (ckptcalc.logs.reader.FORMATS; a test keeps the two equal).
LOG_FORMATS = ("absl", "csv", "fta", "json", "jsonl", "megatron", "patterns", "sacct", "torchelastic", "torchtitan")
_FORMATS_HELP = f"Log format: auto (default: from the first lines) or one of {', '.join(LOG_FORMATS)}."
FormatOpt = Annotated[
    Optional[str],
    typer.Option("--format", help=_FORMATS_HELP, metavar="FORMAT"),
]
PatternsOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--patterns",
        help=_literal(
            "TOML file of [[pattern]] tables: lines of your log and their events (docs/formats/patterns.md)."
        ),
        metavar="FILE",
    ),
]
VerboseOpt = Annotated[
    bool, typer.Option("--verbose", help="Say on stderr which formats --format auto considered, per log.")
]


def _path(text: str | None) -> Path | None:
    return None if text is None else Path(text)


def _explain(verbose: bool) -> Callable[[str], None] | None:
    """With --verbose, what writes the reader's account of format detection to stderr."""
    if not verbose:
        return None
    return lambda line: _stderr_line(line)


def _stderr_line(line: str) -> None:
    sys.stderr.write(_plain(line) + "\n")


def _print_json(document: dict[str, Any]) -> None:
    from ckptcalc.errors import printable
    from ckptcalc.output import documents

    text = documents.dumps(document)
    for message in document.get("warnings", []):
        sys.stderr.write(f"warning: {printable(message, newlines=False)}\n")
    sys.stdout.write(text + "\n")


StrictOpt = Annotated[bool, typer.Option("--strict", help="Make every warning an error (exit 2), for CI.")]


def _complete_value(ctx: typer.Context, incomplete: str) -> list[str]:
    """The keys of the JSON document of the command being completed."""
    from ckptcalc import completion

    return completion.value_keys(ctx.command.name or "")(incomplete)


ValueOpt = Annotated[
    Optional[str],
    typer.Option(
        "--value",
        help="Print one bare value from the JSON, by dotted path (its keys: ckptcalc schema COMMAND).",
        metavar="KEY",
        autocompletion=_complete_value,
    ),
]


# ------------------------------------------------------------------ commands


@app.command(
    epilog=_examples(
        "ckptcalc optimize --params 405e9 --bw 2TB/s",
        "ckptcalc optimize --preset llama3-405b --restart 2min --json",
        "ckptcalc optimize --size 6.5TB --bw 20GB/s --mtbf 3.1h --restart 10min --interval 30min",
        "ckptcalc optimize --gpus 100000",
        "ckptcalc optimize --target 0.95",
        "ckptcalc optimize --value optimal_interval_s",
    )
)
@model_options
def optimize(
    model: ModelArgs,
    target: Annotated[
        Optional[str],
        typer.Option(
            "--target",
            help="Solve what each input must reach for this effective time, e.g. 0.95.",
            metavar="FRACTION",
            rich_help_panel="Decisions",
        ),
    ] = None,
    value: Annotated[
        Optional[str],
        typer.Option(
            "--value",
            help="Print one bare value from the JSON, by dotted path (e.g. loss.restart).",
            metavar="KEY",
            rich_help_panel="Output",
            autocompletion=_complete_value,
        ),
    ] = None,
    json_output: Annotated[
        bool,
        typer.Option("--json", help="Print one JSON document (SI units) instead of a table.", rich_help_panel="Output"),
    ] = False,
    save_preset: Annotated[
        Optional[Path],
        typer.Option(
            "--save-preset",
            help="Write the effective configuration to this TOML file.",
            metavar="FILE",
            rich_help_panel="Output",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Let --save-preset overwrite an existing file.", rich_help_panel="Output")
    ] = False,
    keep_base: Annotated[
        bool,
        typer.Option(
            "--keep-base",
            help="With --save-preset: inherit from the base of --preset and write only the keys that differ.",
            rich_help_panel="Output",
        ),
    ] = False,
    markdown: Annotated[
        bool,
        typer.Option("--markdown", help="Print GitHub-flavoured Markdown tables instead.", rich_help_panel="Output"),
    ] = False,
    strict: Annotated[
        bool,
        typer.Option("--strict", help="Make every warning an error (exit 2), for CI.", rich_help_panel="Output"),
    ] = False,
    preset_name: Annotated[
        Optional[str],
        typer.Option(
            "--name",
            help="With --save-preset: the saved preset's name (default: the file's).",
            metavar="TEXT",
            rich_help_panel="Output",
        ),
    ] = None,
    preset_description: Annotated[
        Optional[str],
        typer.Option(
            "--description",
            help="With --save-preset: one line saying what the preset is.",
            metavar="TEXT",
            rich_help_panel="Output",
        ),
    ] = None,
) -> None:
    """Find the optimal checkpoint interval and show where the time goes.

    Starts from the llama3-405b preset unless --preset says otherwise; every flag overrides it.
    """
    from ckptcalc import api

    if keep_base and save_preset is None:
        raise InputError("only goes with {save_preset}", where="keep_base")
    labels = _labels(save_preset, preset_name, preset_description)
    outcome = api.optimize(model.preset, target=target, **model.inputs)
    document = outcome.to_dict()
    if value is not None:
        _pick(document, value)
    _strict(document, strict)
    if save_preset is not None:
        assert outcome.job is not None
        _save(outcome.job.scenario, str(outcome.preset), model, save_preset, force, keep_base, labels)
    if value is not None:
        _print_value(document, value)
        return
    if json_output:
        _print_json(document)
        return
    if markdown:
        _print_markdown(document)
        return
    from ckptcalc.commands import optimize as optimize_command

    assert outcome.job is not None and outcome.result is not None
    optimize_command.table(outcome.job, outcome.result, outcome.preset, outcome.default_preset, document)


def _parse(parser: Callable[[str], float], text: str, where: str) -> float:
    """Parse an option's text with ``parser``; a unit error names ``where``."""

    try:
        return parser(text)
    except CkptError as error:
        raise InputError(error.template, where=where) from None


def _share(text: str, where: str) -> float:
    """A fraction strictly between 0 and 1 (``0.95`` or ``95%``)."""
    from ckptcalc.inputs.units import parse_fraction

    value = _parse(parse_fraction, text, where)
    if not 0 < value < 1:
        raise InputError(f"must lie strictly between 0 and 1, got {value:g}", where=where)
    return value


def _pick(document: dict[str, Any], key: str) -> str:
    """One value of ``document`` as bare text, for ``$(...)``."""
    from ckptcalc.output import documents

    try:
        picked = documents.value_at(document, key)
    except KeyError:
        from ckptcalc.output import wording

        raise InputError(wording.unknown_value(key, _nearest(key, documents.scalar_paths(document))),
                         where="--value") from None  # fmt: skip
    if isinstance(picked, (dict, list)):
        # The example is a real path inside (``levels.0.name``), not ``levels.0.0`` for an object.
        inside = documents.scalar_paths(picked, f"{key}.")
        if not inside:
            raise InputError(f"{key!r} is empty for this configuration: it holds no value", where="--value")
        raise InputError(f"{key!r} is not a single value; pick one inside it, e.g. {inside[0]}", where="--value")
    if picked is None:
        raise InputError(f"{key!r} has no value for this configuration (null)", where="--value")
    if isinstance(picked, bool):
        return "true" if picked else "false"  # as the JSON writes it, not Python's True
    if isinstance(picked, float) and picked.is_integer() and abs(picked) < 2**53:
        return str(int(picked))
    return repr(picked) if isinstance(picked, float) else str(picked)


def _nearest(key: str, paths: list[str]) -> list[str]:
    """The three paths closest to ``key``: by spelling first, then those that hold it as a part."""
    import difflib

    close = difflib.get_close_matches(key, paths, n=3, cutoff=0.5)
    if len(close) < 3:
        close += [p for p in paths if key.lower() in p.lower() and p not in close][: 3 - len(close)]
    if len(close) < 3:
        close += [p for p in difflib.get_close_matches(key, paths, n=3, cutoff=0.0) if p not in close][: 3 - len(close)]
    return close


def _all_warnings(document: dict[str, Any]) -> list[str]:
    """Every warning a document carries: its own, and each compared scenario's under its name."""
    found = list(document.get("warnings") or [])
    for one in document.get("scenarios") or []:
        found += [f"{one['name']}: {message}" for message in one.get("warnings") or []]
    search = sys.modules.get("ckptcalc.inputs.preset_search")
    if search is not None:
        found += search.search_warnings()
    return found


def _strict(document: dict[str, Any], strict: bool) -> None:
    """With ``--strict``, the first warning as an error (before anything is printed or written)."""
    if not strict:
        return
    found = _all_warnings(document)
    if found:
        from ckptcalc.output import wording

        raise InputError(wording.strict(found[0], len(found) - 1))


def _strict_inputs(model: ModelArgs, strict: bool) -> None:
    """With ``--strict``, refuse doubtful inputs before a long run (or a file it writes) starts."""
    if not strict:
        return
    from ckptcalc import api
    from ckptcalc.output import documents

    _strict({"warnings": documents.input_warnings(api.job(model.preset, **model.inputs))}, strict)


def _print_value(document: dict[str, Any], key: str) -> None:
    """``--value KEY``: the warnings on stderr, one bare value on stdout."""
    picked = _pick(document, key)
    for message in document.get("warnings") or []:
        sys.stderr.write(f"warning: {_plain(message)}\n")
    sys.stdout.write(f"{_plain(picked)}\n")


@app.command(
    epilog=_examples(
        "ckptcalc check presets/*.toml --min-effective 0.9",
        "ckptcalc check palm-spikes --max-silent-risk 1%",
    )
)
def check(
    files: Annotated[
        list[str],
        typer.Argument(metavar="PRESET...", help="Preset names or TOML paths.", autocompletion=_complete_presets),
    ],
    min_effective: Annotated[
        Optional[str],
        typer.Option("--min-effective", help="Lowest acceptable effective time, e.g. 0.9 or 90%.", metavar="FRACTION"),
    ] = None,
    at: Annotated[
        str,
        typer.Option(
            "--at",
            help="point: the MTBF as stated; low: the low end of its 95 % interval, where a preset has one.",
            metavar="WHERE",
        ),
    ] = "point",
    max_silent_risk: Annotated[
        Optional[str],
        typer.Option(
            "--max-silent-risk",
            help=_literal(
                "Most risk over the run ([run] work) of a silent event with no retained clean checkpoint, e.g. 1%."
            ),
            metavar="FRACTION",
        ),
    ] = None,
    json_output: JsonOpt = False,
    markdown: MarkdownOpt = False,
    value: ValueOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Check presets against a floor, at the interval each pins or its optimum: exit 3 when any falls below."""
    from ckptcalc import api

    outcome = api.check(files, min_effective=min_effective, at=at, max_silent_risk=max_silent_risk)
    rows = [row for row in outcome.results if row["error"] is None]
    failed = [row for row in rows if not row["passed"]]
    document = outcome.to_dict()
    if value is not None:
        _pick(document, value)
    _strict(document, strict)
    for message in outcome.errors:
        sys.stderr.write(f"error: {_plain(message)}\n")
    if value is not None:
        _print_value(document, value)
    elif json_output or markdown:
        if rows:  # nothing checked, nothing to report: the errors say it all
            (_print_json if json_output else _print_markdown)(outcome.to_dict())
    else:
        from ckptcalc.output import wording

        for message in document["warnings"]:
            sys.stderr.write(f"warning: {_plain(message)}\n")
        names = {"min_effective": flag("min_effective"), "max_silent_risk": flag("max_silent_risk")}
        for row in rows:
            bounds = wording.check_bounds(row, outcome.document["min_effective"], names)
            typer.echo(_plain(wording.check_row(row) + bounds))
        if rows:
            typer.echo(wording.check_summary(len(failed), len(rows), outcome.document["min_effective"]))
    if outcome.errors:
        raise typer.Exit(EXIT_USAGE)  # a preset that cannot be read outranks one that falls short
    if failed:
        raise typer.Exit(EXIT_CHECK)


def _labels(path: Path | None, name: str | None, description: str | None) -> tuple[str | None, str | None]:
    """``--name`` and ``--description``, checked before any work; they only go with ``--save-preset``."""
    from ckptcalc import api

    for text, where in ((name, "preset_name"), (description, "preset_description")):
        if text is not None and path is None:
            raise InputError("only goes with {save_preset}", where=where)
        api.check_label(text, where)
    return name, description


def _save(
    scenario: Scenario,
    label: str,
    model: ModelArgs,
    path: Path,
    force: bool,
    keep_base: bool = False,
    labels: tuple[str | None, str | None] = (None, None),
) -> None:
    """Write the configuration run as a preset: what it came from, which keys differ from it, the values
    as typed, and no ``source`` sentence that describes the original rather than this one; with
    ``keep_base``, as differences from the base of the preset it came from."""
    from ckptcalc import api
    from ckptcalc.output import wording

    given = model._given()
    changes = " ".join(f"--{f.flag} {text}" for f, text in given)
    name, description = labels
    saved = api.derived(scenario, label)
    changed = saved.changed or ()
    if changed:
        saved = saved.replace(source=None)
    api.save_preset(
        saved,
        path,
        force=force,
        name=name,
        description=description or f"{label}" + (f" with {changes}" if changes else ""),
        keep_base_of=label if keep_base else None,
        texts={f.name: text for f, text in given},
    )
    sys.stderr.write(_plain(wording.saved_preset(str(path), label, changed)) + "\n")


@app.command(
    epilog=_examples(
        "ckptcalc sweep",
        "ckptcalc sweep --over bw --from 100GB/s --to 10TB/s --points 30 --log",
        "ckptcalc sweep --over mtbf --from 30min --to 2d --json",
        "ckptcalc sweep --plot loss.png",
    )
)
@model_options
def sweep(
    model: ModelArgs,
    over: Annotated[
        str,
        typer.Option(
            "--over",
            help=f"Input to vary: {', '.join(f.flag for f in SWEEPABLE[:-1])} or {SWEEPABLE[-1].flag};"
            " any other input too, by its flag name (e.g. detect, shape), resolved point by point.",
            metavar="INPUT",
            autocompletion=_complete_over,
        ),
    ] = "interval",
    start: Annotated[
        Optional[str],
        typer.Option("--from", help="First value, with the unit of --over (default: base / 10).", metavar="VALUE"),
    ] = None,
    stop: Annotated[
        Optional[str],
        typer.Option("--to", help="Last value, with the unit of --over (default: base × 10).", metavar="VALUE"),
    ] = None,
    # None, shown as 21: a default that Typer would coerce loads pydantic (75 ms) on every sweep.
    points: Annotated[
        Optional[int],
        typer.Option("--points", help=f"Number of points (2 to 10^7; default {POINTS}).", metavar="COUNT"),
    ] = None,
    log: Annotated[
        Optional[bool],
        typer.Option("--log/--linear", help="Spacing (default: log, or linear when --from/--to are given)."),
    ] = None,
    json_output: JsonOpt = False,
    csv_output: Annotated[bool, typer.Option("--csv", help="Print CSV: a header row, then one row per point.")] = False,
    plot: Annotated[
        Optional[Path],
        typer.Option(
            "--plot",
            help="Draw the loss split to a PNG or SVG file (needs the plot extra: ckptcalc\\[plot]).",
            metavar="FILE",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Let --plot overwrite an existing file.")] = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print a GitHub-flavoured Markdown table (at most 60 rows).")
    ] = False,
    value: ValueOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Show the loss curve around the optimum, or how the optimum moves with one input."""
    from ckptcalc import api
    from ckptcalc.commands import sweep as sweep_command

    if json_output + csv_output + markdown > 1:
        raise InputError("choose one of --json, --csv and --markdown", where="--csv" if csv_output else "--markdown")
    if plot is not None:
        from ckptcalc.output import plot as plots

        plots.check_target(plot, force)
    points = POINTS if points is None else points
    plan = api.sweep_stream(model.preset, over=over, start=start, stop=stop, points=points, log=log, **model.inputs)
    if value is not None:
        from ckptcalc.output import documents

        # The whole grid, as --json holds it, so that values.3 is the fourth point.
        document = sweep_command.document(plan.job, plan.shown(len(plan.values)), plan.label)
        _pick(document, value)
        _strict(document, strict)
        _print_value(document, value)
        return
    if strict:
        _strict({"warnings": _sweep_warnings(plan)}, strict)
    if plot is not None:
        plots.draw(plan.shown(PLOT_POINTS), plot, force=force)
    if json_output:
        plan.write_json(sys.stdout)
        for message in _sweep_warnings(plan):
            sys.stderr.write(f"warning: {_plain(message)}\n")
    elif csv_output:
        plan.write_csv(sys.stdout)
        from ckptcalc.output import documents

        for message in documents.input_warnings(plan.job):
            sys.stderr.write(f"warning: {_plain(message)}\n")
    elif markdown:
        from ckptcalc.output import documents

        _print_markdown(sweep_command.document(plan.job, plan.shown(60), plan.label))
    else:
        from ckptcalc.output import tables

        sweep_command.table(plan.job, plan.shown(tables.MAX_ROWS), plan.label, points=len(plan.values))


@app.command(
    epilog=_examples(
        "ckptcalc compare llama3-405b bloom-176b ./infra/cluster.toml",
        "ckptcalc compare llama3-405b --what-if restart=2min --what-if bw=20GB/s --what-if mtbf=24h",
        f"ckptcalc compare --params 70B --gpus 4096 --bw 400GB/s --what-if {_WHAT_IF}",
    )
)
@model_options
def compare(
    model: ModelArgs,
    presets_: Annotated[
        Optional[list[str]],
        typer.Argument(
            metavar="PRESET...",
            help="Preset names or TOML paths (default: llama3-405b); the job flags apply to each.",
            show_default=False,
            autocompletion=_complete_presets,
        ),
    ] = None,
    what_if: Annotated[
        Optional[list[str]],
        typer.Option(
            "--what-if",
            help="[NAME:] KEY=VALUE ...: a column from the first scenario with these inputs changed"
            f" (repeatable), e.g. {_WHAT_IF}.",
            metavar="CHANGES",
            rich_help_panel="Output",
        ),
    ] = None,
    json_output: Annotated[
        bool,
        typer.Option("--json", help="Print one JSON document (SI units) instead of a table.", rich_help_panel="Output"),
    ] = False,
    markdown: Annotated[
        bool,
        typer.Option("--markdown", help="Print GitHub-flavoured Markdown tables instead.", rich_help_panel="Output"),
    ] = False,
    value: Annotated[
        Optional[str],
        typer.Option(
            "--value",
            help="Print one bare value from the JSON, by dotted path (its keys: ckptcalc schema COMMAND).",
            metavar="KEY",
            rich_help_panel="Output",
            autocompletion=_complete_value,
        ),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option("--strict", help="Make every warning an error (exit 2), for CI.", rich_help_panel="Output"),
    ] = False,
) -> None:
    """Compare presets side by side, and what-if variations of the first.

    The job flags make the first scenario as optimize reads them (and apply to every preset named).
    """
    from ckptcalc import api

    presets = [*([model.preset] if model.preset is not None else []), *(presets_ or [])]
    outcome = api.compare(presets or None, what_ifs=list(what_if or []), **model.inputs)
    document = outcome.to_dict()
    if value is not None:
        _pick(document, value)
    _strict(document, strict)
    if value is not None:
        _print_value(document, value)
        return
    if json_output:
        _print_json(document)
        return
    if markdown:
        _print_markdown(outcome.to_dict())
        return
    from ckptcalc.commands import compare as compare_command

    compare_command.table(list(outcome.rows), outcome.scenarios)


#: Points a sweep's plot draws at most (evenly spread over the grid): more would not change the picture.
PLOT_POINTS = 2000


def _sweep_warnings(plan: SweepStream) -> list[str]:
    """The caveats of a streamed sweep, for stderr (the document carries them too)."""
    from ckptcalc.output import documents

    return [*documents.input_warnings(plan.job), *documents.warnings(plan.shown(PLOT_POINTS).result)]


@app.command(
    epilog=_examples(
        "ckptcalc simulate",
        "ckptcalc simulate --preset gemini-inmemory --cycles 2e6 --seed 7 --json",
        "ckptcalc simulate --failure-dist weibull --shape 0.7 --optimize",
        "ckptcalc simulate --size 6.5TB --bw 20GB/s --mtbf 15min --interval 5min",
    )
)
@model_options
def simulate(
    model: ModelArgs,
    cycles: Annotated[
        str,
        typer.Option(
            "--cycles",
            help="Failure cycles to simulate, e.g. 1e6 (at most 1e9).",
            metavar="COUNT",
            rich_help_panel="Simulation",
        ),
    ] = "1e6",
    seed: Annotated[
        Optional[int],
        typer.Option(
            "--seed",
            help="Random seed; the same seed gives the same result bit for bit.",
            metavar="N",
            rich_help_panel="Simulation",
            show_default=False,
        ),
    ] = None,
    search: Annotated[
        bool,
        typer.Option(
            "--optimize",
            help="Search the interval that maximises simulated effective time.",
            rich_help_panel="Simulation",
        ),
    ] = False,
    events: Annotated[
        Optional[Path],
        typer.Option(
            "--events",
            help="Also write the simulated timeline as an event log for analyze: .csv, .jsonl or .json"
            " (optionally .gz), or - for stdout (JSON Lines); one level, at most 2e5 cycles.",
            metavar="FILE",
            rich_help_panel="Simulation",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Let --events overwrite a file.", rich_help_panel="Simulation")
    ] = False,
    json_output: JsonOpt = False,
    value: ValueOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Run the training timeline itself (Monte Carlo) to check the formulas, or where none exists."""
    from ckptcalc import api
    from ckptcalc.commands import simulate as simulate_command

    _strict_inputs(model, strict)
    show_progress = not json_output and value is None and sys.stderr.isatty()
    arguments: dict[str, Any] = {"cycles": cycles, "seed": seed, "search": search, **model.inputs}
    to_stdout = events is not None and str(events) == "-"
    if to_stdout:
        # The log is the output, as with events without --output: no summary beside it.
        for given, flag in ((json_output, "--json"), (value is not None, "--value")):
            if given:
                raise InputError(f"--events - writes the log to stdout; {flag} would share it: name a file",
                                 where=flag)  # fmt: skip
        arguments.update(events="-", stream=sys.stdout.buffer)
    elif events is not None:
        if not api.streamed(events):  # a FIFO or a device is streamed to as it is
            _check_new(events, force, "events")
        arguments.update(events=events, force=force)
    with _interruptible(None if events is None or to_stdout else str(events)):
        try:
            if show_progress:
                from ckptcalc.output import tables

                with tables.progress("simulating") as update:
                    outcome = api.simulate(model.preset, progress=update, **arguments)
            else:
                outcome = api.simulate(model.preset, **arguments)
        except BrokenPipeError as error:
            if to_stdout:
                raise  # the reader of stdout left: success, as for every command
            _cannot_write(error)  # a FIFO's reader left before the log was whole
    if to_stdout:
        return
    document = outcome.to_dict()
    if value is not None:
        _pick(document, value)
    _strict(document, strict)
    if value is not None:
        _print_value(document, value)
        return
    if json_output:
        _print_json(document)
        return
    from ckptcalc.output import tables

    simulate_command.table(document)


@app.command(
    epilog=_examples(
        "ckptcalc plan --work 54d",
        "ckptcalc plan --steps 1.2e6 --step-time 4s --deadline 60d --gpu-hour-cost 2",
        "ckptcalc plan --preset cluster.toml --work 30d --runs 10000 --seed 7 --json",
        "ckptcalc plan --work 30d --deadline 2026-07-15 --start 2026-06-10T08:00Z",
    )
)
@model_options
def plan(
    model: ModelArgs,
    steps: Annotated[
        Optional[str],
        typer.Option(
            "--steps",
            help="Or: training steps the run needs (with --step-time).",
            metavar="COUNT",
            rich_help_panel="Run",
        ),
    ] = None,
    deadline: Annotated[
        Optional[str],
        typer.Option(
            "--deadline",
            help="Wall time to finish by (a duration), or a date (2026-07-15, 2026-07-15T12:00Z; UTC without an"
            " offset): gives the probability of making it.",
            metavar="DURATION|DATE",
            rich_help_panel="Run",
        ),
    ] = None,
    start_at: Annotated[
        Optional[str],
        typer.Option(
            "--start",
            help="When the run starts, as an ISO date or date and time, for a --deadline date (default: now).",
            metavar="DATE",
            rich_help_panel="Run",
            show_default=False,
        ),
    ] = None,
    runs: Annotated[
        str,
        typer.Option(
            "--runs",
            help="Runs to simulate (at most 1e6, and 2e8 failures in all: about 20 s).",
            metavar="COUNT",
            rich_help_panel="Run",
        ),
    ] = "1000",
    seed: Annotated[
        Optional[int],
        typer.Option(
            "--seed",
            help="Random seed; the same seed gives the same result bit for bit.",
            metavar="N",
            rich_help_panel="Run",
            show_default=False,
        ),
    ] = None,
    json_output: JsonOpt = False,
    value: ValueOpt = None,
    strict: StrictOpt = False,
) -> None:
    """How long a whole run takes, failures and all: wall time p10/p50/p90, failures, GPU-hours, cost."""
    from ckptcalc import api
    from ckptcalc.commands import plan as plan_command

    # --work is a model option (the run's length also sets the silent events' risk over the run).
    arguments: dict[str, Any] = {"steps": steps, "deadline": deadline, "runs": runs, "seed": seed}
    arguments["start_at"] = start_at
    arguments.update(model.inputs)
    _strict_inputs(model, strict)
    if not json_output and value is None and sys.stderr.isatty():
        from ckptcalc.output import tables

        with tables.progress("planning") as update:
            outcome = api.plan(model.preset, progress=update, **arguments)
    else:
        outcome = api.plan(model.preset, **arguments)
    document = outcome.to_dict()
    if value is not None:
        _pick(document, value)
    _strict(document, strict)
    if value is not None:
        _print_value(document, value)
        return
    if json_output:
        _print_json(document)
        return
    from ckptcalc.output import tables

    assert outcome.job is not None
    plan_command.table(outcome.job, outcome.to_dict())


@app.command(
    epilog=_examples(
        "ckptcalc fit incidents.csv --time-unit h",
        "ckptcalc fit trace.json --time-unit d --where planned=false --cause cause.component",
        "ckptcalc fit failures.csv.gz --time-format '%m/%d/%Y %H:%M' --tz America/Denver --where 'type in GPU,NIC'",
        "ckptcalc fit --failures 419 --window 54d --observed-gpus 16384",
        "ckptcalc fit node-faults.csv --nodes 512 --group-nodes 16",
        "ckptcalc fit - --json < events.jsonl",
    )
)
def fit(
    logs: Annotated[
        Optional[list[str]],
        typer.Argument(
            metavar="LOG...", help="CSV or tab-separated, JSON or JSON Lines files, compressed or not; - for stdin."
        ),
    ] = None,
    log_format: FormatOpt = None,
    time: Annotated[
        Optional[str],
        typer.Option(
            "--time",
            help="Time field (default: time, timestamp, event_time or start, any case; else time_s in s).",
            metavar="FIELD",
        ),
    ] = None,
    time_unit: TimeUnitOpt = None,
    time_format: Annotated[
        Optional[str],
        typer.Option("--time-format", help="strptime format of the times, e.g. '%m/%d/%Y %H:%M'.", metavar="FORMAT"),
    ] = None,
    tz: TzOpt = None,
    where: Annotated[
        Optional[list[str]],
        typer.Option(
            "--where",
            help="Keep events meeting FIELD=VALUE, FIELD!=VALUE, FIELD~REGEX or 'FIELD in A,B' (all; repeatable).",
            metavar="COND",
        ),
    ] = None,
    where_any: Annotated[
        Optional[list[str]],
        typer.Option(
            "--where-any", help="Keep events meeting at least one of these conditions (repeatable).", metavar="COND"
        ),
    ] = None,
    cause: Annotated[
        Optional[str],
        typer.Option(
            "--cause", help="Field that names the cause (default: cause, category, kind or type).", metavar="FIELD"
        ),
    ] = None,
    window_start: Annotated[
        Optional[str],
        typer.Option("--window-start", help="Start of the window (default: the first event).", metavar="TIME"),
    ] = None,
    window_end: Annotated[
        Optional[str], typer.Option("--window-end", help="End of the window (default: the last event).", metavar="TIME")
    ] = None,
    coalesce: Annotated[
        Optional[str],
        typer.Option("--coalesce", help="Merge interruptions closer than this, e.g. 5min.", metavar="DURATION"),
    ] = None,
    observed_gpus: Annotated[
        Optional[str],
        typer.Option("--observed-gpus", help="GPUs the log covers: gives the per-GPU MTBF.", metavar="COUNT"),
    ] = None,
    nodes: Annotated[
        Optional[str],
        typer.Option(
            "--nodes", help="Nodes of the fleet the log covers: gives the node unavailability.", metavar="COUNT"
        ),
    ] = None,
    group_nodes: Annotated[
        Optional[str],
        typer.Option(
            "--group-nodes",
            help="With --nodes: nodes per replica group, for the share of groups with no node out.",
            metavar="D",
        ),
    ] = None,
    failures: Annotated[
        Optional[str],
        typer.Option("--failures", help="With no log: interruptions counted in --window (e.g. 419).", metavar="N"),
    ] = None,
    window: Annotated[
        Optional[str],
        typer.Option("--window", help="With --failures: the time they were counted in (e.g. 54d).", metavar="DURATION"),
    ] = None,
    skip_bad: SkipBadOpt = False,
    year: YearOpt = None,
    patterns: PatternsOpt = None,
    verbose: VerboseOpt = False,
    plot: Annotated[
        Optional[Path],
        typer.Option(
            "--plot",
            help="Draw the survival of the gaps against the fits to a PNG or SVG file (ckptcalc\\[plot]).",
            metavar="FILE",
        ),
    ] = None,
    save_preset: Annotated[
        Optional[Path],
        typer.Option(
            "--save-preset",
            help="Write --preset with its failures replaced by the fit (mtbf, mtbf_ci95, shape; repair where the"
            " incidents have ends) to this TOML file.",
            metavar="FILE",
        ),
    ] = None,
    preset: BaseOpt = None,
    preset_name: NameOpt = None,
    preset_description: DescriptionOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Let --plot and --save-preset overwrite a file.")] = False,
    json_output: JsonOpt = False,
    value: ValueOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Estimate the failure process from incident logs: MTBF with its 95 % interval, Weibull shape, causes."""
    from ckptcalc import api
    from ckptcalc.commands import fit as fit_command

    if plot is not None:
        from ckptcalc.output import plot as plots

        plots.check_target(plot, force)
    name, description = _labels(save_preset, preset_name, preset_description)
    if save_preset is not None:
        _check_new(save_preset, force, "save_preset")
    if patterns is None and preset is not None:
        patterns = _path(api.preset_patterns(preset))
    outcome = api.fit(
        logs or [],
        stdin=sys.stdin,
        format=log_format,
        time=time,
        time_unit=time_unit,
        time_format=time_format,
        tz=tz,
        where=where or [],
        where_any=where_any or [],
        cause=cause,
        window_start=window_start,
        window_end=window_end,
        coalesce=coalesce,
        observed_gpus=observed_gpus,
        failures=failures,
        window=window,
        skip_bad=skip_bad,
        year=year,
        patterns=patterns,
        explain=_explain(verbose),
        nodes=nodes,
        group_nodes=group_nodes,
        preset=preset,
    )
    document = outcome.to_dict()
    if value is not None:
        _pick(document, value)
    _strict(document, strict)
    if save_preset is not None:
        from ckptcalc.output import wording

        fitted, left_out = api.saved_fit(outcome, preset)
        api.save_preset(fitted, save_preset, force=force, name=name, description=description)
        for warning in left_out:
            sys.stderr.write(f"warning: {_plain(warning)}\n")
        sys.stderr.write(_plain(wording.saved(str(save_preset), preset or DEFAULT_PRESET)) + "\n")
    if plot is not None:
        if outcome.fitted.weibull_reason == "counts_only":
            raise InputError("counts have no gaps to draw", where="plot")
        with _interruptible(str(plot)):
            plots.draw_survival(outcome.fitted.survival, plot, force=force)
    if value is not None:
        _print_value(document, value)
        return
    if json_output:
        _print_json(document)
        return

    fit_command.table(outcome.to_dict())


@app.command(
    "events",
    epilog=_examples(
        "ckptcalc events train.log > run.jsonl",
        "ckptcalc events attempt-*.log --output run.csv",
        "ckptcalc events train.log | ckptcalc analyze -",
    ),
)
def events_command(
    logs: Annotated[
        list[str],
        typer.Argument(metavar="LOG...", help="Logs of one run (several: read in time order); - for stdin."),
    ],
    log_format: FormatOpt = None,
    output: Annotated[
        Optional[Path],
        typer.Option("--output", "-o", help="Write to FILE (.jsonl or .csv) instead of stdout.", metavar="FILE"),
    ] = None,
    time: Annotated[
        Optional[str],
        typer.Option("--time", help="Time field of an event table (default time, or time_s in s).", metavar="FIELD"),
    ] = None,
    time_unit: TimeUnitOpt = None,
    tz: TzOpt = None,
    year: YearOpt = None,
    skip_bad: SkipBadOpt = False,
    patterns: PatternsOpt = None,
    verbose: VerboseOpt = False,
    force: Annotated[bool, typer.Option("--force", help="Let --output overwrite a file.")] = False,
    json_output: Annotated[
        bool, typer.Option("--json", help="With --output: print the summary as one JSON document.")
    ] = False,
    value: ValueOpt = None,
) -> None:
    """Write the run a log describes as ckptcalc's event log, with what was inferred counted."""
    from ckptcalc import api

    if output is None and json_output:
        raise InputError("--json prints the summary of --output FILE; without it the events are the output",
                         where="--json")  # fmt: skip
    if output is None and value is not None:
        raise InputError("--value picks from the summary of --output FILE; without it the events are the output",
                         where="--value")  # fmt: skip
    stream = None if output is not None else sys.stdout.buffer
    outcome = api.events(
        logs, output=output, stream=stream, stdin=sys.stdin, format=log_format, time=time, time_unit=time_unit,
        tz=tz, year=year, force=force, skip_bad=skip_bad, patterns=patterns, explain=_explain(verbose),
    )  # fmt: skip
    if output is None:
        return
    if value is not None:
        _print_value(outcome.to_dict(), value)
        return
    if json_output:
        _print_json(outcome.to_dict())
        return
    from ckptcalc.commands import events as events_command

    events_command.table(outcome.to_dict())


def _check_new(path: Path, force: bool, where: str) -> None:
    """Fail before any work if ``path`` cannot take a new file (see :func:`ckptcalc.files.check_new`)."""
    from ckptcalc.files import check_new

    check_new(path, force=force, where=where)


@app.command(
    epilog=_examples(
        "ckptcalc analyze run-events.jsonl",
        "ckptcalc analyze docs/example-run.csv --window 6h --slo 0.5 --gpus 16384",
        "ckptcalc simulate --cycles 5e4 --events sim.jsonl && ckptcalc analyze sim.jsonl --json",
    )
)
@log_options
def analyze(
    logs: Annotated[
        list[str],
        typer.Argument(
            metavar="LOG...", help="Event log, or a framework's logs of one run (read in time order); - for stdin."
        ),
    ],
    log_format: FormatOpt = None,
    time: Annotated[
        Optional[str],
        typer.Option("--time", help="Time field (default: time, or time_s in seconds).", metavar="FIELD"),
    ] = None,
    time_unit: TimeUnitOpt = None,
    cause: Annotated[
        str, typer.Option("--cause", help="Field that names a failure's cause (dotted path).", metavar="FIELD")
    ] = "cause",
    window: Annotated[
        Optional[str],
        typer.Option("--window", help="Also split the run per window, e.g. 1d, as a chart.", metavar="DURATION"),
    ] = None,
    slo: Annotated[
        Optional[str], typer.Option("--slo", help="Mark windows below this effective time, e.g. 0.9.", metavar="F")
    ] = None,
    gpus: Annotated[
        Optional[str], typer.Option("--gpus", help="GPUs of the run: the gain in GPU-hours.", metavar="COUNT")
    ] = None,
    discard: Annotated[
        Optional[str], typer.Option("--discard", help="Share of steps later thrown away (goodput).", metavar="F")
    ] = None,
    nodes: Annotated[
        Optional[str],
        typer.Option(
            "--nodes",
            help="Nodes of the fleet, where the log holds nodes' faults: their unavailability.",
            metavar="COUNT",
        ),
    ] = None,
    group_nodes: Annotated[
        Optional[str],
        typer.Option(
            "--group-nodes", help="With --nodes: nodes per replica group, for the share with none out.", metavar="D"
        ),
    ] = None,
    tz: TzOpt = None,
    skip_bad: SkipBadOpt = False,
    year: YearOpt = None,
    patterns: PatternsOpt = None,
    verbose: VerboseOpt = False,
    save_preset: Annotated[
        Optional[Path],
        typer.Option("--save-preset", help="Write the measured inputs into --preset, as a TOML file.", metavar="FILE"),
    ] = None,
    preset: BaseOpt = None,
    preset_name: NameOpt = None,
    preset_description: DescriptionOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Let --save-preset overwrite a file.")] = False,
    json_output: JsonOpt = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print a Markdown report instead of a table.")] = False,
    value: ValueOpt = None,
    strict: StrictOpt = False,
    log_inputs: dict[str, Any] | None = None,
) -> None:
    """The goodput a run actually got, where its time went, and what the model says it should have got."""
    log_inputs = log_inputs or {}
    from ckptcalc import api
    from ckptcalc.commands import analyze as analyze_command

    if json_output and markdown:
        raise InputError("choose one of --json and --markdown", where="--markdown")
    name, description = _labels(save_preset, preset_name, preset_description)
    if save_preset is not None:
        _check_new(save_preset, force, "save_preset")
    if patterns is None and preset is not None:
        patterns = _path(api.preset_patterns(preset))
    with _interruptible(None):
        outcome = api.analyze(
            logs if len(logs) > 1 else logs[0], stdin=sys.stdin, format=log_format, time=time, time_unit=time_unit,
            cause=cause, window=window, slo=slo, gpus=gpus, discard=discard, tz=tz, skip_bad=skip_bad, year=year,
            patterns=patterns, explain=_explain(verbose), preset=preset, nodes=nodes,
            group_nodes=group_nodes, **log_inputs,
        )  # fmt: skip
    document = outcome.to_dict()
    if value is not None:
        _pick(document, value)
    _strict(document, strict)
    if save_preset is not None:
        from ckptcalc.output import wording

        api.save_preset(
            api.measured_preset(outcome, preset), save_preset, force=force, name=name, description=description
        )
        sys.stderr.write(_plain(wording.saved_measured(str(save_preset), preset or DEFAULT_PRESET)) + "\n")
    if value is not None:
        _print_value(document, value)
        return
    if json_output:
        _print_json(document)
        return
    if markdown:
        sys.stdout.write(_printable(analyze_command.markdown(document)))
        return

    analyze_command.table(document)


@app.command(
    epilog=_examples(
        "ckptcalc report llama3-405b gemini-inmemory --html review.html",
        "ckptcalc report ./infra/cluster.toml --work 30d --log run-events.jsonl --markdown review.md",
        "ckptcalc report llama3-405b gemini-inmemory --check review.html",
        f"ckptcalc report --params 70B --gpus 4096 --bw 400GB/s --what-if {_WHAT_IF} --markdown review.md",
    )
)
@model_options
def report(
    model: ModelArgs,
    presets_: Annotated[
        Optional[list[str]],
        typer.Argument(
            metavar="PRESET...", help=f"Preset names or TOML paths (default: {DEFAULT_PRESET}).", show_default=False
        ),
    ] = None,
    what_if: Annotated[
        Optional[list[str]],
        typer.Option(
            "--what-if",
            help="[NAME:] KEY=VALUE ...: one more scenario, the first with these inputs changed (repeatable),"
            f" e.g. {_WHAT_IF}.",
            metavar="CHANGES",
            rich_help_panel="Job",
        ),
    ] = None,
    html: Annotated[
        Optional[Path],
        typer.Option(
            "--html",
            help="Write one self-contained HTML page (inline SVG charts).",
            metavar="FILE",
            rich_help_panel="Output",
        ),
    ] = None,
    markdown: Annotated[
        Optional[Path],
        typer.Option(
            "--markdown", help="Write GitHub-flavoured Markdown (no charts).", metavar="FILE", rich_help_panel="Output"
        ),
    ] = None,
    check_file: Annotated[
        Optional[Path],
        typer.Option(
            "--check",
            help="Render again (form from the extension: .html or .md) and compare: exit 3 if the file is stale.",
            metavar="FILE",
            rich_help_panel="Output",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Let --html or --markdown overwrite a file.", rich_help_panel="Output")
    ] = False,
    log: Annotated[
        Optional[Path],
        typer.Option(
            "--log",
            help="An event log of the run (as analyze reads): its split and its failures' fit; or an incident"
            " log (as fit reads): the fit alone.",
            metavar="FILE",
            rich_help_panel="Log",
        ),
    ] = None,
    time_unit: Annotated[
        Optional[str],
        typer.Option(
            "--time-unit",
            help="Unit of the log's numeric times: s, min, h or d.",
            metavar="UNIT",
            rich_help_panel="Log",
        ),
    ] = None,
    patterns: Annotated[
        Optional[Path],
        typer.Option(
            "--patterns",
            help=_literal("TOML file of [[pattern]] tables for the log's lines (default: the first preset's [log])."),
            metavar="FILE",
            rich_help_panel="Log",
        ),
    ] = None,
) -> None:
    """Write a design review of one or more scenarios: inputs, schedule, split, loss curve, levers, MTBF band.

    With --work, the whole run's completion; with --log, the run's split and its failures' fit.
    """
    from ckptcalc import api
    from ckptcalc.files import atomic_write, read_regular
    from ckptcalc.output import wording

    chosen = [(where, path) for where, path in (("html", html), ("markdown", markdown), ("check", check_file))
              if path is not None]  # fmt: skip
    if len(chosen) != 1:
        where = chosen[1][0] if chosen else "html"
        raise InputError("give one of {html} FILE, {markdown} FILE or {check} FILE", where=where)
    where, path = chosen[0]
    if time_unit is not None and log is None:
        raise InputError("only goes with {log}: it is the unit of the log's numeric times", where="time_unit")
    committed = None
    if where == "check":
        from ckptcalc.output.report import BY_EXTENSION, MAX_BYTES

        if path.suffix.lower() not in BY_EXTENSION:
            raise InputError(f"{str(path)!r}: the extension must be .html or .md", where="check")
        form = BY_EXTENSION[path.suffix.lower()]
        committed = read_regular(path, label="check", limit=MAX_BYTES, noun="report")
    else:
        from ckptcalc.output.report import BY_EXTENSION

        form = where
        if str(path) == "-":
            raise InputError(
                "'-' is not a file name here: the report is written to a file, e.g. review.md", where=where
            )
        named = BY_EXTENSION.get(path.suffix.lower())
        if named is not None and named != form:
            # --check reads a file by its extension: a Markdown report in review.html could never pass it.
            raise InputError(
                f"{str(path)!r}: {{{where}}} writes {form}, so the name cannot end in {path.suffix}", where=where
            )
        _check_new(path, force, where)
    presets = [*([model.preset] if model.preset is not None else []), *(presets_ or [])]
    if patterns is not None and log is None:
        raise InputError("only goes with {log}: the patterns read the log's lines", where="patterns")
    text = api.report(
        presets or None,
        form=form,
        log=log,
        time_unit=time_unit,
        patterns=patterns,
        what_ifs=list(what_if or []),
        **model.inputs,
    )
    data = text.encode("utf-8")
    if committed is None:
        atomic_write(path, data, force=force, where=where)
        sys.stderr.write(_plain(wording.report_written(str(path))) + "\n")
    elif committed != data:
        sys.stderr.write(_plain(wording.report_stale(str(path))) + "\n")
        raise typer.Exit(EXIT_CHECK)
    else:
        sys.stderr.write(_plain(wording.report_checked(str(path))) + "\n")


@app.command(
    epilog=_examples(
        "ckptcalc schema optimize",
        "ckptcalc schema > ckptcalc.schema.json",
    )
)
def schema(
    command: Annotated[
        Optional[str],
        typer.Argument(
            help="optimize, sweep, compare, simulate, plan, check, presets-list, fit, analyze, events, or event"
            " (one line of an event log; default: all, under $defs).",
            show_default=False,
            autocompletion=_complete_schema,
        ),
    ] = None,
) -> None:
    """Print the JSON Schema (draft 2020-12) of a command's --json output."""
    import json

    from ckptcalc.commands import catalogue as schemas

    if command is None:
        document = schemas.everything()
    elif command.replace(" ", "-") in schemas.SCHEMAS:
        document = schemas.for_command(command)
    else:
        raise InputError(f"unknown command {command!r}; choose one of {', '.join(schemas.SCHEMAS)}", where="schema")
    sys.stdout.write(json.dumps(document, indent=2) + "\n")


@presets_app.command("list")
def presets_list(json_output: JsonOpt = False) -> None:
    """List the presets found by name (CKPTCALC_PRESET_PATH, then the shipped ones)."""
    from ckptcalc import api

    outcome = api.presets_list()
    if json_output:
        _print_json(outcome.to_dict())
        return
    from ckptcalc.commands import presets as presets_command

    presets_command.table(outcome["presets"])


@presets_app.command("show")
def presets_show(
    name: Annotated[
        str, typer.Argument(help="Preset name or TOML path.", show_default=False, autocompletion=_complete_presets)
    ],
    resolved: Annotated[
        bool, typer.Option("--resolved", help="Print the preset with its base merged in (no base line).")
    ] = False,
) -> None:
    """Print a preset's TOML."""
    from ckptcalc import api
    from ckptcalc.errors import printable

    text = printable(api.preset_text(name, resolved=resolved))
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


#: The exit code when output cannot be written (full disk, closed stdout): sysexits' EX_IOERR.
EXIT_IOERR = 74

#: ASCII for the symbols the tables use, on terminals and pipes that cannot encode them.
ASCII = {
    "δ": "delta", "τ": "tau", "×": "x", "÷": "/", "–": "-", "—": "-", "─": "-", "━": "-", "│": "|",
    "◀": "<", "█": "#", "▒": "=", "░": ".", "≤": "<=", "≥": ">=", "√": "sqrt", "₁": "1", "₂": "2",
    "·": ".", "…": "...", "χ": "chi", "²": "2", "∞": "inf", "±": "+/-", "≈": "~", "→": "->", "µ": "u",
    "λ": "lambda", "Γ": "Gamma", "ρ": "rho", "π": "pi", "≳": ">~", "⌊": "floor(", "⌋": ")",
}  # fmt: skip


def _ascii(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = "".join(ASCII.get(ch, "?") for ch in error.object[error.start : error.end])
    return text, error.end


class _Closed:
    """Stands in for a closed standard stream: every write fails as the closed descriptor would, in
    text and in bytes (``buffer``, which the commands that stream bytes write to)."""

    encoding = "utf-8"
    errors = "strict"

    def write(self, text: Any) -> int:
        import errno

        raise OSError(errno.EBADF, "Bad file descriptor")

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    @property
    def buffer(self) -> _Closed:
        return self


def _prepare_streams() -> None:
    """Odd places are input too: a terminal that cannot encode the tables' symbols gets ASCII, a
    closed stderr swallows messages, a closed stdout fails like a full disk, absurd widths are clamped."""
    import codecs
    import os

    codecs.register_error("ckptcalc-ascii", _ascii)
    _STARTED_ON_NULL[:] = [_on_null()]
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="ckptcalc-ascii")
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    else:
        _forgive_stderr()
    if sys.stdout is None:
        sys.stdout = _Closed()
    columns = os.environ.get("COLUMNS", "")
    if columns:
        try:
            width = int(columns)
        except ValueError:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = str(min(max(width, 20), 1000))


class _Messages(io.RawIOBase):
    """Standard error's descriptor, where a write that fails (a full disk, a closed pipe) is dropped:
    messages are best effort, so a warning that cannot be written changes nothing and an error keeps
    its own exit code (docs/exit-codes.md). Only stdout, which holds the result, fails with 74."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        import os

        return os.isatty(self.fd)

    def write(self, data: Any) -> int:
        import os

        try:
            return os.write(self.fd, data)
        except OSError:
            return len(data)


def _forgive_stderr() -> None:
    """Route ``sys.stderr`` through :class:`_Messages`, with the same encoding and error handler."""
    stream = sys.stderr
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return  # not a descriptor (an embedding program's stream): left as it is
    stream.flush()
    sys.stderr = io.TextIOWrapper(
        io.BufferedWriter(_Messages(fd)),
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=True,  # as Python's own: each message is out as soon as its line ends
    )


def _is_output_error(error: OSError) -> bool:
    import errno

    return error.errno in (errno.ENOSPC, errno.EBADF, errno.EIO, errno.EFBIG, errno.EDQUOT, errno.EPIPE)


#: Whether stdout was /dev/null when the process started (see :func:`_stdout_silenced`).
_STARTED_ON_NULL: list[bool] = []


def _on_null() -> bool:
    import os

    try:
        here, null = os.fstat(1), os.stat(os.devnull)
    except (OSError, ValueError):
        return False
    return (here.st_dev, here.st_ino) == (null.st_dev, null.st_ino)


def _stdout_silenced() -> bool:
    """Whether stdout was pointed at /dev/null during the run: what Rich does (before exiting 1) when
    the reader of its output, Typer's help for one, has left the pipe."""
    return bool(_STARTED_ON_NULL) and not _STARTED_ON_NULL[0] and _on_null()


def _search_warnings() -> None:
    """What the preset search skipped (an unreadable directory, a FIFO), once each, on stderr."""
    search = sys.modules.get("ckptcalc.inputs.preset_search")
    if search is None:
        return
    with contextlib.suppress(OSError, ValueError):
        for message in search.search_warnings():
            sys.stderr.write(f"warning: {_plain(message)}\n")


def _reader_left() -> None:
    """The reader of a pipe went away (``| head -1``): that is success, silently."""
    _silence_stdout()
    sys.exit(0)


@contextlib.contextmanager
def _interruptible(unwritten: str | None) -> Iterator[None]:
    """Ctrl-C during a long command: one line, and exit 130. A file being written (``unwritten``) is not
    left behind: writes go to a temporary file that the interrupt removes."""
    try:
        yield
    except KeyboardInterrupt:
        _interrupted(unwritten)


def _interrupted(unwritten: str | None = None) -> None:
    """End the process after Ctrl-C: one line on stderr and exit 130, whatever was running."""
    from ckptcalc.output import wording

    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(wording.interrupted(unwritten) + "\n")
        sys.stderr.flush()
    sys.exit(EXIT_INTERRUPTED)


def _cannot_write(error: OSError) -> None:
    with contextlib.suppress(OSError):
        sys.stderr.write(f"error: cannot write output: {error.strerror}\n")
    _silence_stdout()
    sys.exit(EXIT_IOERR)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush cannot fail again."""
    import os

    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def main() -> None:
    """Run the command line (the ``ckptcalc`` script starts in :func:`ckptcalc.__main__.main`)."""
    try:
        _run()
    except KeyboardInterrupt:
        _interrupted()


def _run() -> None:
    _prepare_streams()
    import warnings

    # Overflow and invalid values in a numpy pass are handled where they arise (extreme inputs give
    # 0 or the bound, not NaN); numpy's own warning lines would only alarm.
    warnings.simplefilter("ignore", RuntimeWarning)
    try:
        app(prog_name="ckptcalc")
    except SystemExit as done:
        _search_warnings()
        # What is still buffered must reach the reader now, where a failure can be reported.
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _reader_left()
        except OSError as error:
            if not _is_output_error(error):
                raise
            _cannot_write(error)
        raise done
