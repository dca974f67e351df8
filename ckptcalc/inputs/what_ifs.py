"""What-ifs as a user writes them, and the input a mistyped keyword most likely meant.

A what-if changes one input or several at once, and may carry its own name:
``"restart=2min"``, ``"restart=2min bw=4TB/s"``, ``"faster: restart=2min bw=4TB/s"``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from ckptcalc.errors import InputError
from ckptcalc.inputs.fields import BY_FLAG, BY_NAME, BY_PUBLIC

#: One ``KEY=VALUE`` of a what-if; spaces may stand around the ``=`` (``read-bw = 5GB/s``).
_PAIR = re.compile(r"\s*([^\s=]+)\s*=\s*([^\s=]+)\s*")

#: A what-if's own name in front of its changes: ``elastic:`` (a name holds no ``=``).
_NAME = re.compile(r"^\s*([^=:]+?)\s*:")


def _key(text: str) -> str:
    return text.strip().removeprefix("--").replace("-", "_")


def parse(text: str) -> tuple[str | None, list[tuple[str, str]]]:
    """``[NAME:] KEY=VALUE [KEY=VALUE ...]`` as (name or None, [(input, value), ...]).

    >>> parse("faster: restart=2min read-bw=5GB/s")
    ('faster', [('restart', '2min'), ('read_bw', '5GB/s')])
    >>> parse("--read-bw = 5GB/s")
    (None, [('read_bw', '5GB/s')])
    """
    where = f"what_if {text}"
    name = None
    rest = text
    named = _NAME.match(text)
    if named is not None:
        name, rest = named.group(1), text[named.end() :]
        if not rest.strip():
            raise InputError(f"{name!r} names no change: write --what-if '{name}: restart=2min'", where=where)
    pairs: list[tuple[str, str]] = []
    at = 0
    while at < len(rest):
        found = _PAIR.match(rest, at)
        if found is None:
            left = rest[at:].strip()
            example = f"{left.removeprefix('--')}=VALUE" if left and "=" not in left else "restart=2min"
            raise InputError(f"expected KEY=VALUE: write --what-if {example}, e.g. restart=2min", where=where)
        pairs.append((_key(found.group(1)), found.group(2)))
        at = found.end()
    if not pairs:
        raise InputError("expected KEY=VALUE: write --what-if restart=2min", where=where)
    keys = [key for key, _ in pairs]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise InputError(f"changes {twice[0]!r} twice", where=where)
    return name, pairs


def label(pairs: Iterable[tuple[str, object]]) -> str:
    """The name a what-if goes by when it has none: its changes as written (``restart=2min bw=4TB/s``)."""
    return " ".join(f"{key}={value}" for key, value in pairs)


def nearest(word: str) -> str | None:
    """The input a mistyped keyword most likely meant, by its public name: the field's own attribute name
    (``bandwidth`` → ``bw``), its flag, a unit suffix too many (``restart_s``), or a close spelling.

    >>> nearest("bandwidth"), nearest("restart_s"), nearest("rstart"), nearest("colour")
    ('bw', 'restart', 'restart', None)
    """
    key = _key(word).lower()
    for suffix in ("", "_s", "_bytes_per_s", "_bytes"):
        base = key.removesuffix(suffix) if suffix else key
        for table in (BY_PUBLIC, BY_NAME):
            if base in table:
                return table[base].public
        if base.replace("_", "-") in BY_FLAG:
            return BY_FLAG[base.replace("_", "-")].public
    names = {**{name: spec.public for name, spec in BY_NAME.items()}, **{p: p for p in BY_PUBLIC}}
    close = difflib.get_close_matches(key, list(names), n=1, cutoff=0.6)
    return names[close[0]] if close else None


def unknown(word: str, what: str = "input") -> str:
    """The message for an unknown input: the nearest one suggested, or every one listed when none is near."""
    guess = nearest(word)
    if guess is not None:
        return f"unknown {what} {word!r}; did you mean {guess!r}?"
    return f"unknown {what} {word!r}; known: {', '.join(sorted(BY_PUBLIC))}"
