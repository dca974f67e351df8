"""Units: parsing, formatting, errors, round trips and a fuzz of every parser."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from ckptcalc.errors import CkptError, UnitError
from ckptcalc.inputs import units

PARSERS: dict[str, Callable[[str], float]] = {
    "size": units.parse_size,
    "rate": units.parse_rate,
    "duration": units.parse_duration,
    "count": units.parse_count,
    "fraction": units.parse_fraction,
    "number": units.parse_number,
}

# ---------------------------------------------------------------- reference table

REFERENCE = [
    # sizes, bytes
    ("size", "6.5TB", 6.5e12),
    ("size", "500GiB", 500 * 2**30),
    ("size", "6.48e12", 6.48e12),
    ("size", "800Gb", 800e9 / 8),
    ("size", "1.5TiB", 1.5 * 2**40),
    # rates, bytes per second
    ("rate", "2TB/s", 2e12),
    ("rate", "2 TB/s", 2e12),
    ("rate", "100Gb/s", 100e9 / 8),
    ("rate", "100Gbps", 100e9 / 8),
    ("rate", "1.5TiB/s", 1.5 * 2**40),
    # durations, seconds
    ("duration", "600s", 600.0),
    ("duration", "10min", 10 * 60.0),
    ("duration", "10m", 10 * 60.0),
    ("duration", "3.1h", 3.1 * 3600),
    ("duration", "2d", 2 * 86400.0),
    ("duration", "1h30m", 3600.0 + 30 * 60),
    ("duration", "90min", 90 * 60.0),
    # counts
    ("count", "405e9", 405e9),
    ("count", "405B", 405 * 10**9),
    ("count", "70b", 70 * 10**9),
    ("count", "1.5T", 1.5 * 10**12),
    ("count", "8k", 8000.0),
    ("count", "16384", 16384.0),
    # fractions
    ("fraction", "0.95", 0.95),
    ("fraction", "95%", 95 / 100),
]


@pytest.mark.parametrize(("kind", "raw", "expected"), REFERENCE, ids=[f"{k}:{r}" for k, r, _ in REFERENCE])
def test_parse_reference(kind: str, raw: str, expected: float) -> None:
    value = PARSERS[kind](raw)
    assert isinstance(value, float)
    assert value == pytest.approx(expected, rel=1e-12)


def test_reference_values_by_hand() -> None:
    # The spec's numbers, spelled out once more independently of the table above.
    assert units.parse_size("800Gb") == pytest.approx(1e11)
    assert units.parse_rate("100Gbps") == pytest.approx(12.5e9)
    assert units.parse_duration("3.1h") == pytest.approx(11160.0)
    assert units.parse_duration("1h30m") == pytest.approx(5400.0)
    assert units.parse_count("70b") == pytest.approx(70e9)


# ---------------------------------------------------------------- formatting


@pytest.mark.parametrize(
    ("formatter", "value", "expected"),
    [
        (units.format_size, 6.48e12, "6.48 TB"),
        (units.format_rate, 2e12, "2.00 TB/s"),
        (units.format_duration, 268.9178, "4.48 min"),
        (units.format_duration, 3.24, "3.24 s"),
        (units.format_percent, 0.07786, "7.79 %"),
        (units.format_percent, 0.012048, "1.20 %"),
        (units.format_count, 405e9, "405B"),
    ],
)
def test_format_reference(formatter: Callable[[float], str], value: float, expected: str) -> None:
    assert formatter(value) == expected


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (2.0, 3, "2.00"),
        (1.5, 4, "1.500"),
        (0.5, 3, "0.500"),
        (1.2049, 3, "1.20"),
        (92.21, 3, "92.2"),
        (100.0, 3, "100"),
        (0.0, 3, "0"),
    ],
)
def test_sig_keeps_trailing_zeros(value: float, digits: int, expected: str) -> None:
    assert units.sig(value, digits) == expected


def _significant_digits(text: str) -> int:
    return len(text.lstrip("-").replace(".", "").lstrip("0"))


@pytest.mark.parametrize(
    ("value", "digits", "reads"),
    [(999.96, 3, 1000.0), (999.96, 4, 1000.0), (9.9996, 3, 10.0), (0.99996, 3, 1.0), (99.996, 3, 100.0)],
)
def test_sig_rounding_carries(value: float, digits: int, reads: float) -> None:
    text = units.sig(value, digits)
    assert float(text) == reads
    # A carry adds at most one digit, and never leaves more than one digit too many.
    assert _significant_digits(text) <= digits + 1
    if "." in text:
        assert _significant_digits(text) == digits


def test_sig_999_96_reads_1000() -> None:
    text = units.sig(999.96)
    assert float(text) == 1000.0
    assert _significant_digits(text) <= 4


# ---------------------------------------------------------------- errors


def _unit_error(parser: Callable[..., float], raw: object) -> UnitError:
    with pytest.raises(UnitError) as info:
        parser(raw)
    assert isinstance(info.value, CkptError)
    return info.value


ERRORS = [
    # (parser, raw input, words the message must contain besides the quoted input)
    ("rate", "2", ["no unit", "rate needs"]),
    ("rate", " 2 ", ["no unit", "rate needs"]),
    ("duration", "600", ["no unit", "duration needs"]),
    ("rate", "2TB", ["is a size", "expected a rate"]),
    ("size", "2TB/s", ["is a rate", "expected a size"]),
    ("size", "100Gbps", ["is a rate", "expected a size"]),
    ("size", "5parsecs", ["unknown", "parsecs", "expected a size"]),
    ("rate", "5parsecs", ["unknown", "parsecs", "expected a rate"]),
    ("duration", "5parsecs", ["unknown", "parsecs", "expected a duration"]),
    ("count", "5parsecs", ["unknown", "parsecs", "expected a count"]),
    ("fraction", "5parsecs", ["unknown", "parsecs", "expected a fraction"]),
    ("number", "5parsecs", ["parsecs", "expected a plain number"]),
    ("size", "nan", ["expected a size"]),
    ("rate", "nan", ["expected a rate"]),
    ("duration", "nan", ["expected a duration"]),
    ("count", "nan", ["expected a count"]),
    ("fraction", "nan", ["expected a fraction"]),
    ("number", "nan", ["expected a plain number"]),
    ("size", "inf", ["expected a size"]),
    ("rate", "inf", ["expected a rate"]),
    ("duration", "inf", ["expected a duration"]),
    ("count", "inf", ["expected a count"]),
    ("number", "inf", ["expected a plain number"]),
    ("size", "", ["expected a size"]),
    ("rate", "", ["expected a rate"]),
    ("duration", "", ["expected a duration"]),
    ("count", "", ["expected a count"]),
    ("fraction", "", ["expected a fraction"]),
    ("number", "", ["expected a plain number"]),
    ("size", "1e999", ["finite"]),
    ("rate", "1e999TB/s", ["finite"]),
    ("duration", "1e999s", ["finite"]),
    ("count", "1e999", ["finite"]),
    ("fraction", "1e999", ["finite"]),
    ("number", "1e999", ["finite"]),
]


@pytest.mark.parametrize(("kind", "raw", "words"), ERRORS, ids=[f"{k}:{r!r}" for k, r, _ in ERRORS])
def test_parse_errors(kind: str, raw: str, words: list[str]) -> None:
    error = _unit_error(PARSERS[kind], raw)
    message = str(error)
    assert repr(raw) in message
    for word in words:
        assert word in message


@pytest.mark.parametrize("kind", sorted(PARSERS))
@pytest.mark.parametrize("raw", [5, None, 2.5, b"2TB", ["2TB"]], ids=repr)
def test_non_string_input_is_a_unit_error(kind: str, raw: object) -> None:
    error = _unit_error(PARSERS[kind], raw)
    assert "expected" in str(error)
    assert type(raw).__name__ in str(error)


@pytest.mark.parametrize(
    ("kind", "raw"),
    [
        ("size", "1e308kB"),
        ("size", "1e300EB"),
        ("size", "1e308PiB"),
        ("rate", "1e308kB/s"),
        ("rate", "1e300EBps"),
        ("count", "1e308T"),
        ("duration", "1e308w"),
    ],
)
def test_overflow_after_unit_scaling_is_an_error(kind: str, raw: str) -> None:
    # The number itself is finite but times its unit it is not: that must be refused, not returned as inf.
    error = _unit_error(PARSERS[kind], raw)
    assert repr(raw) in str(error)
    assert "finite" in str(error)


# ---------------------------------------------------------------- round trips

FORMATS: dict[str, tuple[Callable[..., str], Callable[[str], float]]] = {
    "size": (units.format_size, units.parse_size),
    "rate": (units.format_rate, units.parse_rate),
    "duration": (units.format_duration, units.parse_duration),
    "count": (units.format_count, units.parse_count),
}

WIDE = st.floats(min_value=1e-3, max_value=1e18, allow_nan=False, allow_infinity=False)


@pytest.mark.parametrize("kind", sorted(FORMATS))
@settings(max_examples=200, deadline=None)
@given(x=WIDE)
def test_format_parse_round_trip_15_digits(kind: str, x: float) -> None:
    formatter, parser = FORMATS[kind]
    text = formatter(x, digits=15)
    event("reached the assertions")
    assert parser(text) == pytest.approx(x, rel=1e-12), text


@pytest.mark.parametrize("kind", sorted(FORMATS))
@settings(max_examples=200, deadline=None)
@given(x=WIDE)
@example(x=999.5)
@example(x=999.96)
@example(x=0.9995e6)
@example(x=86400 * 0.99951)
def test_format_parse_round_trip_default_digits(kind: str, x: float) -> None:
    formatter, parser = FORMATS[kind]
    text = formatter(x)
    event("reached the assertions")
    assert parser(text) == pytest.approx(x, rel=5e-3), text


@settings(max_examples=200, deadline=None)
@given(x=st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False))
def test_fraction_format_percent_round_trip(x: float) -> None:
    text = units.format_percent(x).replace(" ", "")
    event("reached the assertions")
    assert units.parse_fraction(text) == pytest.approx(x, rel=5e-3), text


POSITIVE = st.floats(min_value=0.0, exclude_min=True, allow_nan=False, allow_infinity=False)
NONNEGATIVE = st.floats(min_value=0.0, allow_nan=False, allow_infinity=False)
DURATION_CHOICES = ["d", "h", "min", "s"]
SIZE_CHOICES = ["PB", "TB", "GB", "MB", "kB", "B"]


@settings(max_examples=300, deadline=None)
@given(v=NONNEGATIVE | st.integers(0, 10**6).map(lambda n: n * 0.1) | st.sampled_from([11160.0, 600.0, 5400.0]))
def test_exact_duration_round_trip(v: float) -> None:
    text = units.exact(v, units.DURATION_UNITS, DURATION_CHOICES)
    event("reached the assertions")
    assert units.parse_duration(text) == v, text


@settings(max_examples=300, deadline=None)
@given(v=NONNEGATIVE | st.integers(0, 10**6).map(lambda n: n * 1e9) | st.sampled_from([6.48e12, 2.3e12]))
def test_exact_size_round_trip(v: float) -> None:
    text = units.exact(v, units.SIZE_UNITS, SIZE_CHOICES)
    event("reached the assertions")
    assert units.parse_size(text) == v, text


@settings(max_examples=300, deadline=None)
@given(v=POSITIVE)
def test_exact_rate_round_trip(v: float) -> None:
    text = units.exact(v, units.SIZE_UNITS, SIZE_CHOICES) + "/s"
    event("reached the assertions")
    assert units.parse_rate(text) == v, text


@pytest.mark.parametrize(
    ("value", "table", "choices", "expected"),
    [
        (11160.0, units.DURATION_UNITS, DURATION_CHOICES, "3.1h"),
        (600.0, units.DURATION_UNITS, DURATION_CHOICES, "10min"),
        (2e12, units.SIZE_UNITS, SIZE_CHOICES, "2TB"),
    ],
)
def test_exact_prefers_readable_units(value: float, table: dict[str, float], choices: list[str], expected: str) -> None:
    assert units.exact(value, table, choices) == expected


# ---------------------------------------------------------------- fuzz

UNITISH = st.text(
    alphabet="0123456789.eE+-/% kKMGTPEiBbsmhdwinpcµ\t",
    max_size=24,
)
TOKENS = st.lists(
    st.sampled_from(
        [
            "1",
            "9",
            "0",
            ".",
            "e",
            "E",
            "+",
            "-",
            "308",
            "999",
            "/",
            "%",
            " ",
            "k",
            "Ki",
            "M",
            "G",
            "T",
            "P",
            "E",
            "B",
            "b",
            "s",
            "ps",
            "/s",
            "min",
            "m",
            "h",
            "d",
            "w",
            "ms",
            "nan",
            "inf",
            "µ",
            "1e308",
            "e-400",
        ]
    ),
    max_size=10,
).map("".join)


def _only_finite_or_ckpterror(raw: str) -> str:
    """How the text fared: taken by some parser (always a finite float), or refused by every one."""
    parsed = 0
    for name, parser in PARSERS.items():
        try:
            value = parser(raw)
        except CkptError:
            continue
        parsed += 1
        assert isinstance(value, float), (name, raw, value)
        assert math.isfinite(value), (name, raw, value)
    return "some parser took it" if parsed else "every parser refused it"


@settings(max_examples=300, deadline=None)
@given(raw=st.text())
def test_fuzz_any_text(raw: str) -> None:
    event(_only_finite_or_ckpterror(raw))


@settings(max_examples=300, deadline=None)
@given(raw=UNITISH | TOKENS)
@example(raw="1e308kB")
@example(raw="1e308kB/s")
@example(raw="1h30m")
@example(raw="-1e308w1e308w")
def test_fuzz_unitish_text(raw: str) -> None:
    event(_only_finite_or_ckpterror(raw))


@pytest.mark.parametrize(
    ("formatter", "value", "expected"),
    [
        # the largest double: 1.7977e308 s / 86 400 s = 2.0807e303 d; / 1e15 B = 1.7977e293 PB
        (units.format_duration, 1.7976931348623157e308, "2.08e+303 d"),
        (units.format_size, 1.7976931348623157e308, "1.80e+293 PB"),
        # -1e308 s / 86 400 s = -1.1574e303 d (a window start far before the epoch)
        (units.format_duration, -1e308, "-1.16e+303 d"),
        # beyond a double: the largest unit, and the value as Python writes it
        (units.format_duration, math.inf, "inf d"),
        (units.format_duration, -math.inf, "-inf d"),
    ],
)
def test_formatting_at_the_ends_of_a_double(formatter: Callable[[float], str], value: float, expected: str) -> None:
    assert formatter(value) == expected
