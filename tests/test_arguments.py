"""The Python API's own arguments: a value of the wrong type is an InputError naming the argument.

Every public function is checked from its annotations (ckptcalc.inputs.arguments), before it runs, so
that a notebook user gets one line naming what was wrong instead of a TypeError from deep inside.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import pytest

import ckptcalc
from ckptcalc.inputs.arguments import ArgumentError, checked, describe

DATA = Path(__file__).parent / "data"
HAND_RUN = str(DATA / "hand-run.jsonl")

# (the call, the argument it must name): the wrong-type calls found by hand against the API.
WRONG: list[tuple[str, Callable[[], Any], str]] = [
    ("optimize(preset=42)", lambda: ckptcalc.optimize(preset=42), "preset"),  # type: ignore[arg-type]
    ("compare(what_ifs=[('bw',)])", lambda: ckptcalc.compare(what_ifs=[("bw",)]), "what_ifs"),  # type: ignore[list-item]
    ("compare(what_ifs=[42])", lambda: ckptcalc.compare(what_ifs=[42]), "what_ifs"),  # type: ignore[list-item]
    ("compare(presets=[3])", lambda: ckptcalc.compare([3]), "presets"),  # type: ignore[list-item]
    ("sweep(points='21')", lambda: ckptcalc.sweep(over="bw", points="21"), "points"),  # type: ignore[arg-type]
    ("sweep(log='yes')", lambda: ckptcalc.sweep(over="bw", log="yes"), "log"),  # type: ignore[arg-type]
    ("simulate(seed='x')", lambda: ckptcalc.simulate(seed="x"), "seed"),  # type: ignore[arg-type]
    ("simulate(search=1)", lambda: ckptcalc.simulate(search=1), "search"),  # type: ignore[arg-type]
    ("plan(start_at=5)", lambda: ckptcalc.plan(start_at=5), "start_at"),  # type: ignore[arg-type]
    ("plan(progress=5)", lambda: ckptcalc.plan(progress=5), "progress"),  # type: ignore[arg-type]
    ("plan(seed=1.5)", lambda: ckptcalc.plan(seed=1.5), "seed"),  # type: ignore[arg-type]
    ("fit(tz=5)", lambda: ckptcalc.fit([HAND_RUN], tz=5), "tz"),  # type: ignore[arg-type]
    ("fit([5])", lambda: ckptcalc.fit([5]), "logs"),  # type: ignore[list-item]
    ("fit(where=[5])", lambda: ckptcalc.fit([HAND_RUN], where=[5]), "where"),  # type: ignore[list-item]
    ("fit(year='2024')", lambda: ckptcalc.fit([HAND_RUN], year="2024"), "year"),  # type: ignore[arg-type]
    ("fit(skip_bad='no')", lambda: ckptcalc.fit([HAND_RUN], skip_bad="no"), "skip_bad"),  # type: ignore[arg-type]
    ("analyze(5)", lambda: ckptcalc.analyze(5), "log"),  # type: ignore[arg-type]
    ("analyze(cause=None)", lambda: ckptcalc.analyze(HAND_RUN, cause=None), "cause"),  # type: ignore[arg-type]
    ("events(stream=StringIO)", lambda: ckptcalc.events([HAND_RUN], stream=io.StringIO()), "stream"),
    ("events([b'x'])", lambda: ckptcalc.events([b"x"]), "logs"),  # type: ignore[list-item]
    ("check(presets=7)", lambda: ckptcalc.check(7), "presets"),  # type: ignore[arg-type]
    ("load_preset(1.0)", lambda: ckptcalc.load_preset(1.0), "preset"),  # type: ignore[arg-type]
    ("report(form=3)", lambda: ckptcalc.report(form=3), "form"),  # type: ignore[arg-type]
    ("fit(stdin=5)", lambda: ckptcalc.fit(["-"], stdin=5), "stdin"),  # type: ignore[arg-type]
    ("fit(stdin='text')", lambda: ckptcalc.fit(["-"], stdin="text"), "stdin"),  # type: ignore[arg-type]
    ("analyze(stdin=5)", lambda: ckptcalc.analyze("-", stdin=5), "stdin"),  # type: ignore[arg-type]
    ("events(stdin=5)", lambda: ckptcalc.events(["-"], stdin=5, stream=io.BytesIO()), "stdin"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("call", "wrong", "argument"), WRONG, ids=[w[0] for w in WRONG])
def test_a_wrong_type_names_its_argument(call: str, wrong: Callable[[], Any], argument: str) -> None:
    with pytest.raises(ckptcalc.InputError) as caught:
        wrong()
    assert isinstance(caught.value, ArgumentError), f"{call}: {caught.value!r}"
    assert caught.value.where == argument
    assert str(caught.value).startswith(f"{argument}: must be ")


def test_too_many_positional_arguments_is_an_input_error() -> None:
    with pytest.raises(ArgumentError, match="too many positional arguments"):
        ckptcalc.optimize("llama3-405b", "gemini-inmemory")  # type: ignore[call-arg]


def test_a_what_if_in_the_command_line_form_equals_the_pair() -> None:
    as_text = ckptcalc.compare(what_ifs=["restart=2min", "--read-bw = 50GB/s"]).to_dict()
    as_pairs = ckptcalc.compare(what_ifs=[("restart", "2min"), ("read_bw", "50GB/s")]).to_dict()
    assert [s["effective"] for s in as_text["scenarios"]] == [s["effective"] for s in as_pairs["scenarios"]]
    assert [s["name"] for s in as_text["scenarios"]] == ["llama3-405b", "restart=2min", "read_bw=50GB/s"]


def test_a_what_if_without_a_value_says_how_to_write_it() -> None:
    with pytest.raises(ckptcalc.InputError, match="expected KEY=VALUE"):
        ckptcalc.compare(what_ifs=["restart"])


def test_a_lone_path_where_a_list_is_taken_is_a_list_of_one() -> None:
    one = ckptcalc.fit(HAND_RUN, time_unit="min").to_dict()
    listed = ckptcalc.fit([HAND_RUN], time_unit="min").to_dict()
    assert one == listed
    filtered = ckptcalc.fit([HAND_RUN], time_unit="min", where="event=failure").to_dict()
    assert filtered == ckptcalc.fit([HAND_RUN], time_unit="min", where=["event=failure"]).to_dict()


def test_standard_input_may_be_a_text_or_a_binary_stream() -> None:
    data = Path(HAND_RUN).read_bytes()
    from_file = ckptcalc.fit([HAND_RUN], time_unit="min").to_dict()
    for stream in (io.StringIO(data.decode()), io.BytesIO(data)):
        read = ckptcalc.fit(["-"], stdin=stream, time_unit="min").to_dict()
        assert read == {**from_file, "logs": ["-"]}


def test_right_types_pass_through_unchanged() -> None:
    seen: list[Any] = []

    @checked
    def f(
        name: str | os.PathLike[str],
        items: Iterable[str] = (),
        *,
        count: int = 1,
        share: float = 0.5,
        flag: bool = False,
        pair: tuple[str, float] | None = None,
        rows: Sequence[int] = (),
        mode: Literal["a", "b"] = "a",
        call: Callable[[float], None] | None = None,
        **rest: Any,
    ) -> None:
        seen.append((name, items, count, share, flag, pair, rows, mode, call, rest))

    f(Path("x"), ["a"], count=2, share=1, flag=True, pair=("k", 2), rows=[1, 2], mode="b", call=print, extra=object())
    assert seen[0][:8] == (Path("x"), ["a"], 2, 1, True, ("k", 2), [1, 2], "b")
    f("x", "a")
    assert seen[1][1] == ("a",)
    for bad in ({"count": True}, {"share": "1"}, {"flag": 1}, {"pair": ("k",)}, {"rows": (1, "2")}, {"mode": "c"}):
        with pytest.raises(ArgumentError) as caught:
            f("x", **bad)
        assert caught.value.where == next(iter(bad))


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        (str | None, "a string or None"),
        (int | None, "a whole number or None"),
        (float | int | str, "a number or a string"),
        (Iterable[str | os.PathLike[str]], "a list of strings or paths"),
        (Literal["html", "md"], "one of 'html', 'md'"),
    ],
)
def test_described_in_words(spec: Any, words: str) -> None:
    assert describe(spec) == words


@pytest.mark.parametrize(
    ("key", "bad"),
    [
        ("window", "-1d"),
        ("gpus", "2.5"),
        ("gpus", 0),
        ("discard", 1),
        ("discard", "-5%"),
        ("groups", 1),
        ("groups", 2.5),
        ("ft_overhead", 1),
        ("ft_overhead", -0.1),
    ],
)
def test_a_log_commands_option_is_checked_as_the_model_input_it_is(key: str, bad: object) -> None:
    """analyze's window, GPUs, discard, groups and overhead are FIELDS inputs: one path checks them (no hand copy)."""
    said = []
    for call in (
        lambda: ckptcalc.analyze(str(DATA / "group-run.jsonl"), time_unit="min", **{key: bad}),  # type: ignore[arg-type]
        lambda: ckptcalc.optimize(**{key: bad}),  # type: ignore[arg-type]
    ):
        with pytest.raises(ckptcalc.InputError) as caught:
            call()
        said.append((caught.value.where, str(caught.value)))
    assert said[0] == said[1] and said[0][0] == key
