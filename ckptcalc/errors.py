"""Errors that ckptcalc reports to its users.

Every mistake a user can make surfaces as an :class:`InputError`, a
:class:`ValueError`; the hierarchy is::

    ValueError
     └── CkptError        base of every error ckptcalc raises
          └── InputError  bad user input: out of range, contradictory, or one of
               ├── UnitError    a value that cannot be parsed, or has the wrong unit
               └── PresetError  a preset that is unknown, unreadable or malformed

so ``except ckptcalc.InputError`` catches each of them. The library names
inputs by their field names (``bw``, ``restart``, ``memory_interval``), the
names the Python API takes; the
command line renders the same error with its flags (``--bw``), one line on
stderr and exit code 2. A message refers to other inputs as ``{name}``
placeholders so that each side words them its own way.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")


def _plain(name: str) -> str:
    return name


class CkptError(ValueError):
    """Base of every error ckptcalc raises for bad input.

    ``where`` names the culprit: an input field (``bw``), or a preset file
    and key (``cluster.toml: storage.bandwidth``). ``str()`` gives the
    one-line message with field names; :meth:`render` with other names.
    """

    def __init__(self, message: str, *, where: str | None = None) -> None:
        super().__init__(message)
        self.template = message
        self.where = where

    @property
    def message(self) -> str:
        """The message with inputs named by their field names."""
        return self.render_message(_plain)

    def render_message(self, name: Callable[[str], str]) -> str:
        return _PLACEHOLDER.sub(lambda match: name(match.group(1)), self.template)

    def render(self, name: Callable[[str], str] = _plain) -> str:
        """``where: message``, every input named by ``name`` (the command line passes its flags)."""
        text = self.render_message(name)
        return f"{name(self.where)}: {text}" if self.where else text

    def __str__(self) -> str:
        return self.render()


class InputError(CkptError):
    """Bad user input of any kind: the class to catch for every mistake in what was given.

    Raised itself for a value that parsed but is out of range, or inputs that contradict each other;
    :class:`UnitError` and :class:`PresetError` are its kinds for values and presets that cannot be read.
    """


class UnitError(InputError):
    """A value could not be parsed, or has the wrong unit."""


class PresetError(InputError):
    """A preset is unknown, unreadable, or malformed."""


#: Characters that can steer a terminal (C0 and C1 controls, bidirectional overrides) when printed raw.
_STEERING = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str, *, newlines: bool = True) -> str:
    r"""``text`` with every character that could steer a terminal written as an escape, so that a
    preset's description, a log's cause or a path prints as data, never as a command: ESC becomes the
    four characters ``\x1b``. Tabs are kept, and newlines unless ``newlines`` is false.

    >>> printable("evil\x1b[2J name") == "evil" + "\\" + "x1b[2J name"
    True
    """
    cleaned = _STEERING.sub(lambda m: _escape(m.group()), text)
    return cleaned if newlines else cleaned.replace("\n", "\\n").replace("\r", "\\r")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
