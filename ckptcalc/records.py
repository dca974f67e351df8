"""Frozen records: fields declared once, as annotations, in order.

A subclass lists its fields as class annotations; :class:`Record` builds the
constructor (positional in declaration order, or by keyword), equality, repr
and :meth:`Record.replace` from them, and refuses assignment afterwards.
Cheaper to define than dataclasses, which matters for a command line that
starts in a fraction of a second. Marked with :func:`typing.dataclass_transform`,
so that a type checker sees the same constructor (and :func:`replace`) as a frozen
dataclass's and rejects a misspelt field or a value of the wrong type; with
:func:`mypy_plugin`, mypy checks :meth:`Record.replace` the same way.

>>> class Point(Record):
...     x: float
...     y: float = 0.0
>>> p = Point(1.0)
>>> p, p.replace(y=2.0) == Point(1.0, 2.0)
(Point(x=1.0, y=0.0), True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, dataclass_transform

if TYPE_CHECKING:
    from mypy.plugin import Plugin

_MISSING = object()


@dataclass_transform(eq_default=True, frozen_default=True)
class Record:
    """Base of the small frozen records every module builds on."""

    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, extra: tuple[str, ...] = (), **kwargs: Any) -> None:
        """``extra`` names fields declared elsewhere (a registered mechanism's inputs, each None unless
        given), after the class's own: a type checker does not see them, so only code that reads them by
        name (``getattr``) uses them."""
        super().__init_subclass__(**kwargs)
        # Only this class's own annotations, in the order written (base fields come first).
        annotations = cls.__annotations__ if "__annotations__" in vars(cls) else {}
        own = [name for name, kind in annotations.items() if "ClassVar" not in str(kind)]
        own += [name for name in extra if name not in own]
        cls._fields = (*cls._fields, *own)
        defaults = dict(cls._defaults)
        for name in own:
            value = vars(cls).get(name, None if name in extra else _MISSING)
            if value is not _MISSING:
                defaults[name] = value
        cls._defaults = defaults
        if "__init__" not in vars(cls):
            post = "__post_init__" in vars(cls)
            cls.__init__ = _constructor(cls._fields, defaults, post)  # type: ignore[method-assign]

    if not TYPE_CHECKING:  # hidden so that a checker reports an assignment as it does for frozen dataclasses

        def __setattr__(self, name: str, value: Any) -> None:
            raise AttributeError(f"{type(self).__name__} is frozen; use replace()")

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(getattr(self, n) == getattr(other, n) for n in self._fields)

    __hash__ = None  # type: ignore[assignment]

    def replace(self: _R, **changes: Any) -> _R:
        """A copy with some fields changed, like :func:`dataclasses.replace`."""
        unknown = set(changes) - set(self._fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        copy = object.__new__(type(self))
        set_field = object.__setattr__
        for name in self._fields:
            set_field(copy, name, changes[name] if name in changes else getattr(self, name))
        return copy


_R = TypeVar("_R", bound=Record)


def _constructor(fields: tuple[str, ...], defaults: dict[str, Any], post: bool) -> Any:
    """An ``__init__`` taking ``fields`` in order (by position or keyword), written out as code
    once per class, as dataclasses do: a record is built as fast as a hand-written one. It ends
    with the class's ``__post_init__`` when it has one."""
    params = ", ".join(f"{name}=_defaults[{name!r}]" if name in defaults else name for name in fields)
    body = "".join(f"    _set(self, {name!r}, {name})\n" for name in fields)
    body += "    self.__post_init__()\n" if post else ("" if fields else "    pass\n")
    namespace: dict[str, Any] = {"_defaults": defaults, "_set": object.__setattr__}
    exec(f"def __init__(self, {params}):\n{body}", namespace)
    return namespace["__init__"]


if TYPE_CHECKING:
    # Type checkers check the changes against the record's fields for dataclasses.replace, which
    # they apply to dataclass_transform classes too; at run time the record's own method does it.
    from dataclasses import replace as replace
else:

    def replace(record: _R, **changes: Any) -> _R:
        """A copy of ``record`` with some fields changed."""
        return record.replace(**changes)


def mypy_plugin(version: str) -> type[Plugin]:
    """mypy's plugin for records (``plugins = ["ckptcalc.records:mypy_plugin"]``): it checks
    ``record.replace(...)`` against the record's fields as mypy checks :func:`dataclasses.replace`.
    The constructors and :func:`replace` need none."""
    from collections.abc import Callable

    from mypy.plugin import MethodSigContext, Plugin
    from mypy.plugins.dataclasses import _INTERNAL_REPLACE_SYM_NAME
    from mypy.types import CallableType, FunctionLike, Instance, get_proper_type

    def signature(ctx: MethodSigContext) -> FunctionLike:
        record = get_proper_type(ctx.type)
        if not isinstance(record, Instance):  # a type variable, say: unchecked, as before
            return ctx.default_signature
        method = record.type.get_method("replace")
        fields = record.type.get_method(_INTERNAL_REPLACE_SYM_NAME)
        if method is None or method.info.fullname != f"{__name__}.Record" or fields is None:
            return ctx.default_signature
        changes = get_proper_type(fields.type)
        assert isinstance(changes, CallableType)
        return ctx.default_signature.copy_modified(
            arg_types=changes.arg_types,
            arg_kinds=changes.arg_kinds,
            arg_names=changes.arg_names,
            name=f"replace of {record.type.name}",
        )

    class RecordPlugin(Plugin):
        def get_method_signature_hook(self, fullname: str) -> Callable[[MethodSigContext], FunctionLike] | None:
            # Named for the class of the object it is called on: Record.replace is tested in the hook.
            return signature if fullname.endswith(".replace") else None

    return RecordPlugin
