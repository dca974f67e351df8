"""Parse and format sizes, rates, durations, counts and fractions.

The unit tables below drive both directions. Everything inside ckptcalc is SI
(bytes, bytes per second, seconds); units exist only here, at the edges.

Decimal prefixes are the default (``TB`` is 1e12 bytes); binary ones apply
only when written (``TiB``). ``B`` is a byte and ``b`` a bit.

>>> parse_rate("100Gbps")
12500000000.0
>>> format_duration(268.9)
'4.48 min'
"""

from __future__ import annotations

import math
import re

from .errors import UnitError

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


def _split(raw: object, expected: str) -> tuple[float, str]:
    if not isinstance(raw, str):
        raise UnitError(f"expected a string such as {expected}, got {type(raw).__name__}")
    match = _VALUE_RE.fullmatch(raw)
    if match is None:
        raise UnitError(f"cannot read {raw!r}: expected {expected}")
    return _number(match.group(1), raw, expected), match.group(2)


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


def parse_rate(raw: str) -> float:
    """Parse a rate to bytes per second: ``2TB/s``, ``2 TB/s``, ``100Gb/s``, ``100Gbps``, ``1.5TiB/s``."""
    expected = "a rate such as 2TB/s, 100Gbps or 1.5TiB/s"
    value, unit = _split(raw, expected)
    for tail in ("/s", "ps"):
        if unit.endswith(tail) and unit[: -len(tail)] in SIZE_UNITS and unit[: -len(tail)]:
            return _finite(value * SIZE_UNITS[unit[: -len(tail)]], raw)
    if unit == "":
        raise UnitError(f"{raw!r} has no unit: a rate needs one, e.g. {raw.strip()}GB/s")
    if unit in SIZE_UNITS:
        raise UnitError(f"{raw!r} is a size, expected a rate such as {raw.strip()}/s")
    if unit in DURATION_UNITS:
        raise UnitError(f"{raw!r} is a duration, expected a rate such as 2TB/s")
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


def parse_fraction(raw: str) -> float:
    """Parse a fraction: ``0.95`` or ``95%``."""
    expected = "a fraction such as 0.95 or 95%"
    value, unit = _split(raw, expected)
    if unit == "%":
        return value / 100.0
    if unit:
        raise UnitError(f"unknown unit {unit!r} in {raw!r}: expected {expected}")
    return value


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
    """Format bytes per second: ``format_rate(2e12) == '2.00 TB/s'``."""
    return format_size(value, digits) + "/s"


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
