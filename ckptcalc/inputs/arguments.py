"""The Python API's own arguments checked against their annotations.

Keyword inputs of the model (``bw``, ``restart``) are read through FIELDS; the other arguments of a
public function (``preset``, ``seed``, ``where``, ``progress``) are checked here, from the function's
own annotations, so that a call with a value of the wrong type raises :class:`ArgumentError`, an
:class:`~ckptcalc.errors.InputError` that names the argument, before the function runs. One path for
every function: no function repeats a type check by hand.

>>> @checked
... def f(name: str, *, seed: int | None = None) -> str:
...     return name
>>> f("a", seed=3)
'a'
>>> f("a", seed="x")
Traceback (most recent call last):
...
ckptcalc.inputs.arguments.ArgumentError: seed: must be a whole number or None, got str 'x'
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import os
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

from ckptcalc.errors import InputError

_F = TypeVar("_F", bound=Callable[..., Any])

#: Annotations that are not checked: anything goes, or the function reads it itself.
_UNCHECKED = object()


#: Stream annotations, checked by what a stream does (``read``), not by class.
_STREAMS = (typing.IO, typing.TextIO, typing.BinaryIO)


class ArgumentError(InputError):
    """An argument of the Python API has the wrong type (``where`` names it)."""


def checked(function: _F) -> _F:
    """``function`` with each argument checked against its annotation when it is called.

    Annotations are read the first time the function is called (they may name types imported only
    for type checkers: such an annotation is left unchecked), and the model's ``**inputs`` are left to
    FIELDS. A lone string or path where a list of them is expected is taken as a list of one.
    """
    signature = inspect.signature(function)
    specs: dict[str, Any] | None = None

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal specs
        if specs is None:
            specs = {name: _resolve(parameter.annotation, function) for name, parameter in signature.parameters.items()}
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise ArgumentError(str(error)) from None
        for name, value in list(bound.arguments.items()):
            kind = signature.parameters[name].kind
            spec = specs[name]
            if kind in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL) or spec is _UNCHECKED:
                continue
            if _many(spec) and isinstance(value, str | os.PathLike):
                value = (value,)
                bound.arguments[name] = value
            if not _matches(value, spec):
                shown = repr(value)
                shown = shown if len(shown) <= 40 else shown[:37] + "..."
                raise ArgumentError(f"must be {describe(spec)}, got {type(value).__name__} {shown}", where=name)
        return function(*bound.args, **bound.kwargs)

    return typing.cast(_F, wrapper)


def check_gathered(given: dict[str, Any], known: set[str], spec: Any) -> None:
    """Keyword arguments a function gathers with ``**`` (``given``): each one of ``known``, and of ``spec``."""
    for name, value in given.items():
        if name not in known:
            raise ArgumentError(f"got an unexpected keyword argument {name!r}")
        if not _matches(value, spec):
            shown = repr(value)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            raise ArgumentError(f"must be {describe(spec)}, got {type(value).__name__} {shown}", where=name)


def _resolve(annotation: Any, function: Callable[..., Any]) -> Any:
    if annotation is inspect.Parameter.empty:
        return _UNCHECKED
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, function.__globals__)  # the module's own annotation text
    except Exception:  # a name imported only for type checkers
        return _UNCHECKED


def _parts(spec: Any) -> tuple[Any, ...]:
    origin = typing.get_origin(spec)
    if origin is typing.Union or origin is types.UnionType:
        return typing.get_args(spec)
    return (spec,)


def _many(spec: Any) -> bool:
    """Whether ``spec`` takes a list of strings or paths (and so a lone one as a list of one)."""
    for part in _parts(spec):
        origin = typing.get_origin(part)
        if origin in (collections.abc.Iterable, collections.abc.Sequence):
            (item,) = typing.get_args(part) or (Any,)
            if any(p is str or typing.get_origin(p) is os.PathLike or p is os.PathLike for p in _parts(item)):
                return not any(p is str for p in _parts(spec))
    return False


def _matches(value: Any, spec: Any) -> bool:
    if spec is Any or spec is _UNCHECKED:
        return True
    if spec is None or spec is type(None):
        return value is None
    parts = _parts(spec)
    if len(parts) > 1:
        return any(_matches(value, part) for part in parts)
    origin = typing.get_origin(spec)
    args = typing.get_args(spec)
    if spec is bool:
        return isinstance(value, bool)
    if spec is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if spec is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if origin is typing.Literal:
        return value in args
    if spec is os.PathLike or origin is os.PathLike:
        return isinstance(value, os.PathLike)
    if origin is collections.abc.Callable or spec is collections.abc.Callable:
        return callable(value)
    if spec in _STREAMS or origin is typing.IO:
        return callable(getattr(value, "read", None))  # a stream is what reads: no class test holds for all
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_matches(item, args[0]) for item in value)
        return len(value) == len(args) and all(_matches(item, arg) for item, arg in zip(value, args, strict=True))
    if origin in (collections.abc.Mapping, dict):
        key, item = args or (Any, Any)
        return isinstance(value, collections.abc.Mapping) and all(
            _matches(k, key) and _matches(v, item) for k, v in value.items()
        )
    if origin in (collections.abc.Iterable, collections.abc.Sequence, list):
        if isinstance(value, str | bytes) or not isinstance(value, collections.abc.Iterable):
            return False
        if origin is collections.abc.Sequence and not isinstance(value, collections.abc.Sequence):
            return False
        (item,) = args or (Any,)
        # Only containers are looked into: a generator would be used up by looking.
        return not isinstance(value, list | tuple | set | frozenset) or all(_matches(one, item) for one in value)
    if isinstance(spec, type):
        return isinstance(value, spec)
    return True


def describe(spec: Any) -> str:
    """What an annotation asks for, in words (``a whole number or None``).

    >>> describe(str | os.PathLike[str] | None)
    'a string, a path or None'
    """
    parts = _parts(spec)
    words = [_word(part) for part in parts if part is not type(None) and part is not None]
    words = list(dict.fromkeys(words))
    if "a number" in words and "a whole number" in words:  # an int is a number
        words.remove("a whole number")
    if any(part is None or part is type(None) for part in parts):
        words.append("None")
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _word(spec: Any) -> str:
    origin = typing.get_origin(spec)
    args = typing.get_args(spec)
    if spec is str:
        return "a string"
    if spec is bool:
        return "True or False"
    if spec is int:
        return "a whole number"
    if spec is float:
        return "a number"
    if spec is os.PathLike or origin is os.PathLike:
        return "a path"
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin is collections.abc.Callable or spec is collections.abc.Callable:
        return "a function"
    if spec in _STREAMS or origin is typing.IO:
        return "a readable stream"
    if origin is tuple:
        return "a pair (" + "; ".join(describe(a) for a in args if a is not Ellipsis) + ")"
    if origin in (collections.abc.Mapping, dict):
        return "a mapping"
    if origin in (collections.abc.Iterable, collections.abc.Sequence, list):
        if not args:
            return "a list"
        items = list(dict.fromkeys(_plural(_word(part)) for part in _parts(args[0])))
        return "a list of " + (items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1])
    if isinstance(spec, type):
        return f"a {spec.__name__}"
    return str(spec)


def _plural(words: str) -> str:
    for one, many in (("a pair", "pairs"), ("a string", "strings"), ("a path", "paths"), ("a number", "numbers")):
        if words.startswith(one):
            return many + words[len(one) :]
    return words
