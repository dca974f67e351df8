"""Parse and format sizes, rates, durations, counts and fractions.

The unit tables below drive both directions. Everything inside ckptcalc is SI
(bytes, bytes per second, seconds); units exist only here, at the edges.

Decimal prefixes are the default (``TB`` is 1e12 bytes); binary ones apply
only when written (``TiB``). ``B`` is a byte and ``b`` a bit. A rate ending in
``/gpu`` (or `` per GPU``) is per GPU: a :class:`PerGpu`, which the inputs
multiply by the job's GPU count.

>>> parse_rate("100Gbps")
12500000000.0
>>> format_duration(268.9)
'4.48 min'
"""

from __future__ import annotations

import math
import re

from ckptcalc.errors import UnitError

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER_RE = re.compile(_NUMBER)
_VALUE_RE = re.compile(rf"\s*({_NUMBER})\s*([A-Za-z/%µ]*)\s*")

_DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60}


def _size_table() -> dict[str, float]:
    table: dict[str, float] = {}
    for prefix, factor in {**_DECIMAL, **_BINARY}.items():
        table[prefix + "B"] = factor
        table[prefix + "b"] = factor / 8.0
    return table


#: Size units, in bytes. A bare number is bytes.
SIZE_UNITS: dict[str, float] = _size_table()

#: Duration units, in seconds.
DURATION_UNITS: dict[str, float] = {
    "ms": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hrs": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
    "days": 86400.0,
    "w": 604800.0,
    "week": 604800.0,
    "weeks": 604800.0,
}

#: Count suffixes. For counts of parameters ``B``/``b`` mean billions.
COUNT_UNITS: dict[str, float] = {
    "": 1.0,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "m": 1e6,
    "B": 1e9,
    "b": 1e9,
    "G": 1e9,
    "T": 1e12,
    "t": 1e12,
    # Binary multiples, for GPU counts that are powers of two: 16Ki = 16,384 (16k is 16,000).
    "Ki": 2.0**10,
    "Mi": 2.0**20,
}

# Units chosen when printing, largest first.
_SIZE_OUT = [("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3), ("B", 1.0)]
_DURATION_OUT = [("d", 86400.0), ("h", 3600.0), ("min", 60.0), ("s", 1.0), ("ms", 1e-3)]
_COUNT_OUT = [("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0)]


def _number(text: str, raw: str, expected: str) -> float:
    try:
        value = float(text)
    except ValueError:  # pragma: no cover - the regex only lets numbers through
        raise UnitError(f"cannot read {raw!r}: expected {expected}") from None
    if not math.isfinite(value):
        raise UnitError(f"{raw!r} is not a finite number")
    return value


def _split(raw: object, expected: str, shown: str | None = None) -> tuple[float, str]:
    """The number and unit of ``raw``; errors quote ``shown`` (``raw`` by default)."""
    if not isinstance(raw, str):
        raise UnitError(f"expected a string such as {expected}, got {type(raw).__name__}")
    quoted = raw if shown is None else shown
    match = _VALUE_RE.fullmatch(raw)
    if match is None:
        raise UnitError(f"cannot read {quoted!r}: expected {expected}")
    return _number(match.group(1), quoted, expected), match.group(2)


def parse_size(raw: str) -> float:
    """Parse a size to bytes: ``6.5TB``, ``500GiB``, ``800Gb`` (bits), ``6.48e12`` (bytes)."""
    expected = "a size such as 6.5TB, 500GiB or 6.48e12 (bytes)"
    value, unit = _split(raw, expected)
    if unit == "":
        return value
    if unit not in SIZE_UNITS:
        if unit.endswith(("/s", "ps")):
            raise UnitError(f"{raw!r} is a rate, expected a size such as 6.5TB")
        if unit in DURATION_UNITS:
            raise UnitError(f"{raw!r} is a duration, expected a size such as 6.5TB")
        raise UnitError(f"unknown size unit {unit!r} in {raw!r}: expected {expected}")
    return _finite(value * SIZE_UNITS[unit], raw)


def _finite(value: float, raw: str) -> float:
    if not math.isfinite(value):
        raise UnitError(f"{raw!r} is too large to be a finite number")
    return value


class PerGpu(float):
    """A rate per GPU, in bytes per second: a float that remembers it is per GPU (``25GB/s/gpu``).

    Arithmetic on it gives a plain float, so the mark never outlives the value as written; the
    inputs keep it beside the per-GPU value and multiply by the GPU count when they build the model.

    >>> rate = parse_rate("25GB/s/gpu")
    >>> rate, format_rate(rate), rate * 16384
    (PerGpu(25000000000.0), '25.0 GB/s per GPU', 409600000000000.0)
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"PerGpu({float(self)!r})"


#: The per-GPU ending of a rate: ``/gpu`` or `` per GPU``, in any case.
_PER_GPU_RE = re.compile(r"(.*?)(?:\s*/\s*|\s+per\s+)gpu\s*", re.IGNORECASE | re.DOTALL)


def parse_rate(raw: str) -> float:
    """Parse a rate to bytes per second: ``2TB/s``, ``2 TB/s``, ``100Gb/s``, ``100Gbps``, ``1.5TiB/s``;
    ``25GB/s/gpu`` or ``25 GB/s per GPU`` is a rate per GPU (a :class:`PerGpu`)."""
    per_gpu = _PER_GPU_RE.fullmatch(raw) if isinstance(raw, str) else None
    if per_gpu is None:
        return _rate(raw, raw, "")
    text = per_gpu.group(1)
    if not text.strip() or _PER_GPU_RE.fullmatch(text):
        raise UnitError(f"cannot read {raw!r}: expected a rate per GPU such as 25GB/s/gpu")
    return PerGpu(_rate(text, raw, "/gpu"))


def _rate(text: str, raw: str, tail: str) -> float:
    """The rate ``text`` in bytes per second; errors quote ``raw`` and end their examples with ``tail``."""
    expected = f"a rate such as 2TB/s{tail}, 100Gbps{tail} or 1.5TiB/s{tail}"
    value, unit = _split(text, expected, raw)
    for end in ("/s", "ps"):
        if unit.endswith(end) and unit[: -len(end)] in SIZE_UNITS and unit[: -len(end)]:
            return _finite(value * SIZE_UNITS[unit[: -len(end)]], raw)
    if unit == "":
        raise UnitError(f"{raw!r} has no unit: a rate needs one, e.g. {text.strip()}GB/s{tail}")
    if unit in SIZE_UNITS:
        raise UnitError(f"{raw!r} is a size, expected a rate such as {text.strip()}/s{tail}")
    if unit in DURATION_UNITS:
        raise UnitError(f"{raw!r} is a duration, expected a rate such as 2TB/s{tail}")
    raise UnitError(f"unknown rate unit {unit!r} in {raw!r}: expected {expected}")


_DURATION_PART = re.compile(rf"\s*({_NUMBER})\s*([A-Za-z]+)")


def parse_duration(raw: str) -> float:
    """Parse a duration to seconds: ``600s``, ``10min``, ``10m``, ``3.1h``, ``2d``, ``1h30m``."""
    expected = "a duration such as 600s, 10min, 3.1h, 2d or 1h30m"
    if not isinstance(raw, str):
        raise UnitError(f"expected a string such as {expected}, got {type(raw).__name__}")
    text = raw.strip()
    if _NUMBER_RE.fullmatch(text):
        raise UnitError(f"{raw!r} has no unit: a duration needs one, e.g. {text}s or {text}min")
    total = 0.0
    position = 0
    parts = 0
    while position < len(text):
        match = _DURATION_PART.match(text, position)
        if match is None:
            raise UnitError(f"cannot read {raw!r}: expected {expected}")
        value = _number(match.group(1), raw, expected)
        unit = match.group(2)
        if unit not in DURATION_UNITS:
            if unit in SIZE_UNITS or unit.endswith(("/s", "ps")):
                raise UnitError(f"{raw!r} is not a duration: expected {expected}")
            raise UnitError(f"unknown duration unit {unit!r} in {raw!r}: expected {expected}")
        if parts and value < 0:
            raise UnitError(f"cannot read {raw!r}: only the first part may carry a sign")
        total += value * DURATION_UNITS[unit]
        position = match.end()
        parts += 1
    if parts == 0:
        raise UnitError(f"cannot read {raw!r}: expected {expected}")
    if not math.isfinite(total):
        raise UnitError(f"{raw!r} is not a finite duration")
    return total


def parse_count(raw: str) -> float:
    """Parse a count: ``405e9``, ``405B``, ``70b``, ``1.5T``, ``8k`` (8,000), ``16Ki`` (16,384), ``16384``."""
    expected = "a count such as 405e9, 405B, 1.5T, 8k or 16Ki"
    value, unit = _split(raw, expected)
    if unit not in COUNT_UNITS:
        raise UnitError(f"unknown count suffix {unit!r} in {raw!r}: expected {expected}")
    result = value * COUNT_UNITS[unit]
    if not math.isfinite(result):
        raise UnitError(f"{raw!r} is not a finite number")
    return result


def parse_whole_count(raw: str) -> float:
    """Parse a count that must be a whole number from 1 (nodes, say): ``16``, ``2k``."""
    value = parse_count(raw)
    if not value.is_integer() or value < 1:
        raise UnitError(f"must be a whole number of nodes from 1, got {value:g}")
    return value


def parse_fraction(raw: str) -> float:
    """Parse a fraction: ``0.95`` or ``95%``."""
    expected = "a fraction such as 0.95 or 95%"
    value, unit = _split(raw, expected)
    if unit == "%":
        return value / 100.0
    if unit:
        raise UnitError(f"unknown unit {unit!r} in {raw!r}: expected {expected}")
    return value


def parse_open_fraction(raw: str | float) -> float:
    """A fraction strictly between 0 and 1 (a target, a floor, a limit on a risk): ``0.95``, ``"95%"``.

    >>> parse_open_fraction("95%"), parse_open_fraction(0.5)
    (0.95, 0.5)
    """
    number = parse_fraction(raw) if isinstance(raw, str) else float(raw)
    if not (math.isfinite(number) and 0 < number < 1):
        raise UnitError(f"must lie strictly between 0 and 1, got {number:g}")
    return number


def parse_number(raw: str) -> float:
    """Parse a plain number without a unit (a cost, a factor)."""
    value, unit = _split(raw, "a plain number such as 2.5")
    if unit:
        raise UnitError(f"unexpected unit {unit!r} in {raw!r}: expected a plain number such as 2.5")
    return value


def sig(value: float, digits: int = 3) -> str:
    """Format ``value`` with ``digits`` significant figures, keeping trailing zeros.

    >>> sig(1.2049), sig(92.21), sig(0.0)
    ('1.20', '92.2', '0')
    """
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude >= 9 or magnitude < -4:
        return f"{value:.{digits - 1}e}"
    decimals = max(digits - 1 - magnitude, 0)
    if magnitude >= digits:
        # Whole numbers wider than ``digits``: round away the extra digits (2116 -> 2120).
        return f"{round(value, digits - 1 - magnitude):.0f}"
    text = f"{value:.{decimals}f}"
    # Rounding can carry into a new digit (999.6 -> 1000): recount once.
    if decimals > 0 and len(text.lstrip("-").replace(".", "").lstrip("0")) > digits:
        text = f"{value:.{decimals - 1}f}"
    return text


def format_amount(value: float) -> str:
    """3 significant figures with thousands separators: ``format_amount(929880.4) == '930,000'``."""
    if abs(value) < 1000:
        return sig(value)
    digits = len(str(int(abs(value))))
    return f"{round(value, 3 - digits):,.0f}"


def short_percent(fraction: float) -> str:
    """A fraction as a percentage to 3 significant figures, no trailing zeros: ``short_percent(0.5) == '50 %'``."""
    return f"{100.0 * fraction:.3g} %"


def signed_percent(fraction: float) -> str:
    """A relative difference as a signed percentage, 3 decimals: ``signed_percent(-0.0012) == '-0.120 %'``."""
    return f"{fraction * 100:+.3f} %"


def sig_percent(fraction: float, digits: int = 3) -> str:
    """A fraction as a percentage number (no sign), ``digits`` significant figures: ``sig_percent(0.1234) ==
    '12.3'``."""
    return sig(fraction * 100.0, digits)


def _pick(value: float, table: list[tuple[str, float]]) -> tuple[str, float]:
    """The largest unit of ``table`` that keeps ``value`` at least 1 (once rounded)."""
    for unit, factor in table:
        if abs(value) >= factor * 0.9995:
            return unit, factor
    return table[-1]


def _scaled(value: float, table: list[tuple[str, float]], digits: int, space: str) -> str:
    unit, factor = _pick(value, table)
    return f"{sig(value / factor, digits)}{space}{unit}".rstrip()


def display_unit(value: float, kind: str) -> tuple[str, float]:
    """The unit the formatters would print ``value`` in, and its size in SI (``('min', 60.0)``).

    Sizes, rates and durations get units; any other kind is printed as it is: ``('', 1.0)``.
    """
    if kind == "duration":
        return _pick(value, _DURATION_OUT)
    if kind in ("size", "rate"):
        unit, factor = _pick(value, _SIZE_OUT)
        return unit + ("/s" if kind == "rate" else ""), factor
    return "", 1.0


def format_size(value: float, digits: int = 3) -> str:
    """Format bytes: ``format_size(6.48e12) == '6.48 TB'``."""
    return _scaled(value, _SIZE_OUT, digits, " ")


def format_rate(value: float, digits: int = 3) -> str:
    """Format bytes per second: ``format_rate(2e12) == '2.00 TB/s'``; a :class:`PerGpu` rate reads
    ``'25.0 GB/s per GPU'``."""
    return format_size(value, digits) + ("/s per GPU" if isinstance(value, PerGpu) else "/s")


def format_per_gpu(value: float, gpus: float, digits: int = 3) -> str:
    """A per-GPU rate times the GPU count: ``format_per_gpu(25e9, 16384) == '25.0 GB/s per GPU × 16384 GPUs'``."""
    return f"{format_rate(PerGpu(value), digits)} × {format_count(gpus)} GPU{'' if gpus == 1 else 's'}"


def format_aggregate_per_gpu(value: float, gpus: float, digits: int = 3) -> str:
    """An aggregate rate shared by ``gpus``, as each GPU's: ``format_aggregate_per_gpu(4.096e14, 16384) ==
    '25.0 GB/s per GPU'``."""
    return format_rate(PerGpu(value / gpus), digits)


def written_rate(value: float) -> str:
    """A rate as a user would type it, up to 4 significant figures: ``written_rate(25e9) == '25GB/s'``."""
    unit, factor = _pick(value, _SIZE_OUT)
    return f"{value / factor:.4g}{unit}/s"


def format_duration(value: float, digits: int = 3) -> str:
    """Format seconds in the largest unit that keeps the number at least 1 (up to days)."""
    return _scaled(value, _DURATION_OUT, digits, " ")


def format_count(value: float, digits: int = 3) -> str:
    """Format a count: ``format_count(405e9) == '405B'`` (B = billions)."""
    if abs(value) < 1e7 and float(value).is_integer():
        return str(int(value))
    return _scaled(value, _COUNT_OUT, digits, "")


def format_percent(fraction: float, digits: int = 3) -> str:
    """Format a fraction as a percentage: ``format_percent(0.0779) == '7.79 %'``."""
    return f"{sig(fraction * 100.0, digits)} %"


def exact(value: float, table: dict[str, float], units: list[str]) -> str:
    """Shortest unit string from ``units`` that parses back to exactly ``value``.

    Used when saving presets: the file stays readable (``3.1h``, ``2TB/s``) and
    loads back to the same float. Falls back to the last (base) unit.
    """
    for unit in units:
        if abs(value) < table[unit]:
            continue
        text = f"{value / table[unit]!r}"
        if table[unit] * float(text) == value and "e" not in text and len(text) <= 12:
            return text.removesuffix(".0") + unit
    return f"{value / table[units[-1]]!r}{units[-1]}"
