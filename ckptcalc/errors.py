"""Errors that ckptcalc reports to its users.

Every mistake a user can make surfaces as a :class:`CkptError`. The command
line turns it into one line on stderr and exit code 2; a library caller can
catch it and read :attr:`CkptError.where` to learn which input was wrong.
"""

from __future__ import annotations


class CkptError(Exception):
    """Base of every error ckptcalc raises for bad input.

    ``where`` names the culprit: a command-line option (``--bw``), or a preset
    file and key (``cluster.toml: storage.bandwidth``). ``str()`` gives the
    one-line message shown to the user.
    """

    def __init__(self, message: str, *, where: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class UnitError(CkptError):
    """A value could not be parsed, or has the wrong unit."""


class InputError(CkptError):
    """A value parsed but is out of range, or inputs contradict each other."""


class PresetError(CkptError):
    """A preset is unknown, unreadable, or malformed."""
