"""Where presets are found: the search directories, a name looked up in them, a path told from a name.

Directories named in ``CKPTCALC_PRESET_PATH`` come first, then the shipped
presets. What the search has to skip (an unreadable directory, an entry that is
not a regular file) is remembered as a sentence, never an error, so that one bad
entry does not fail every run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ckptcalc.errors import PresetError

#: Directories searched for presets by name before the shipped ones (os.pathsep separated).
PATH_VARIABLE = "CKPTCALC_PRESET_PATH"


def shipped_dir() -> Path:
    """Where the shipped presets live: inside the package when installed,
    beside it in a source checkout."""
    package = Path(__file__).resolve().parent.parent
    packaged = package / "presets"
    return packaged if packaged.is_dir() else package.parent / "presets"


def search_dirs() -> list[Path]:
    extra = os.environ.get(PATH_VARIABLE, "")
    return [Path(p) for p in extra.split(os.pathsep) if p] + [shipped_dir()]


def is_path(ref: str) -> bool:
    return ref.endswith(".toml") or os.sep in ref or "/" in ref


#: Longest preset name looked up (a file name is at most 255 bytes, ".toml" included).
MAX_NAME = 200

#: What the search of the preset directories had to skip, as sentences: read by :func:`search_warnings`.
_SKIPPED: dict[str, None] = {}


def search_warnings() -> list[str]:
    """Directories and files the preset search skipped (unreadable, not regular), once each."""
    return list(_SKIPPED)


def skip(message: str) -> None:
    _SKIPPED.setdefault(message, None)


def presets_in(directory: Path) -> list[Path]:
    """The ``*.toml`` regular files of a search directory; a directory that cannot be read, and entries that
    are not regular files, are skipped with a warning instead of failing every run."""
    import stat

    try:
        with os.scandir(directory) as entries:
            found = []
            for entry in entries:
                if not entry.name.endswith(".toml"):
                    continue
                try:
                    regular = stat.S_ISREG(entry.stat().st_mode)
                except OSError:
                    regular = False
                if regular:
                    found.append(Path(entry.path))
                else:
                    skip(f"{PATH_VARIABLE}: skipped {entry.path!r}: not a regular file")
            return sorted(found)
    except FileNotFoundError:
        return []
    except OSError as error:
        skip(f"{PATH_VARIABLE}: skipped {str(directory)!r}: {error.strerror}")
        return []


def by_name(
    ref: str, where: str, directories: Sequence[Path], skip: frozenset[str | None] = frozenset()
) -> Path | None:
    """The first ``ref.toml`` among ``directories`` that is not one of the files ``skip`` (real paths), or
    None. A preset that names its own name as its base so finds the one it shadows."""
    if not ref.strip():
        raise PresetError("empty preset name", where=where)
    if len(ref) > MAX_NAME:
        raise PresetError(f"a preset name is at most {MAX_NAME} characters, got {len(ref)}", where=where)
    for directory in directories:
        for path in presets_in(directory):
            if path.stem == ref and (not skip or identity(path) not in skip):
                return path
    return None


def unknown(ref: str, names: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(ref, names, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown preset {ref!r}{hint} (known: {', '.join(names) or 'none'})"


def identity(path: Path) -> str | None:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None
