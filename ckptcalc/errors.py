"""Errors that ckptcalc reports to its users.

Every mistake a user can make surfaces as a :class:`CkptError`, a
:class:`ValueError`. The library names inputs by their field names (``bw``,
``restart``, ``memory_interval``), the names the Python API takes; the
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


class UnitError(CkptError):
    """A value could not be parsed, or has the wrong unit."""


class InputError(CkptError):
    """A value parsed but is out of range, or inputs contradict each other."""


class PresetError(CkptError):
    """A preset is unknown, unreadable, or malformed."""
