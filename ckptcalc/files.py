"""Writing files without losing anything: atomic, and no overwrite unless asked."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import CkptError


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def atomic_write(path: Path, data: bytes, *, force: bool, where: str) -> None:
    """Write via a temporary file in the same directory, then link or rename it
    into place, so a reader never sees half a file and nothing is clobbered
    unless ``force``. Failures raise :class:`CkptError` attributed to ``where``."""

    import tempfile

    directory = path.parent if str(path.parent) else Path(".")
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as error:
        raise CkptError(f"cannot write {str(path)!r}: {error.strerror}", where=where) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, 0o666 & ~_umask())
        if force:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)
    except FileExistsError:
        raise CkptError(f"{str(path)!r} exists; add {{force}} to overwrite it", where=where) from None
    except OSError as error:
        raise CkptError(f"cannot write {str(path)!r}: {error.strerror}", where=where) from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
