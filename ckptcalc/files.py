"""Files in and out without surprises: only regular files of bounded size are read (a FIFO would
hang, /dev/zero would never end), and writes are atomic, with no overwrite unless asked."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from ckptcalc.errors import CkptError


def _check(mode: int, size: int, *, label: str, noun: str, hint: str, limit: int | None) -> None:
    """Refuse directories, FIFOs, devices and (with a ``limit``) files too large, naming ``label``."""
    import stat

    if stat.S_ISDIR(mode):
        raise CkptError(f"is a directory, not a {noun}", where=label)
    if not stat.S_ISREG(mode):
        fifo, device = stat.S_ISFIFO(mode), stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        what = "is a FIFO" if fifo else "is a device" if device else "is not a regular file"
        raise CkptError(f"{what}; only regular files are read{hint}", where=label)
    if limit is not None and size > limit:
        raise CkptError(f"larger than the {_size(limit)} a {noun} may be", where=label)


def _open(path: str | os.PathLike[str], *, label: str, noun: str, hint: str, limit: int | None) -> BinaryIO:
    """A binary stream on a checked regular file: checked before opening (a FIFO would block the open)
    and again on the open descriptor, in case the path was swapped in between."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise CkptError("no such file", where=label) from None
    except OSError as error:
        raise CkptError(f"cannot read: {error.strerror}", where=label) from None
    _check(info.st_mode, info.st_size, label=label, noun=noun, hint=hint, limit=limit)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        handle = os.open(path, flags)
    except OSError as error:
        raise CkptError(f"cannot read: {error.strerror}", where=label) from None
    stream = os.fdopen(handle, "rb")
    opened = os.fstat(stream.fileno())
    try:
        _check(opened.st_mode, opened.st_size, label=label, noun=noun, hint=hint, limit=limit)
    except CkptError:
        stream.close()
        raise
    return stream


def read_regular(path: str | os.PathLike[str], *, label: str, limit: int, noun: str, hint: str = "") -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else is a :class:`CkptError`
    naming ``label``. FIFOs, devices and directories are refused before they are opened, and the
    open is non-blocking in case the path is swapped for a FIFO after the check."""
    with _open(path, label=label, noun=noun, hint=hint, limit=limit) as stream:
        try:
            data = stream.read(limit + 1)
        except OSError as error:
            raise CkptError(f"cannot read: {error.strerror}", where=label) from None
    if len(data) > limit:
        raise CkptError(f"larger than the {_size(limit)} a {noun} may be", where=label)
    return bytes(data)


def open_regular(path: str | os.PathLike[str], *, label: str, noun: str, hint: str = "") -> BinaryIO:
    """A binary stream on a regular file, for reading line by line: the checks of :func:`read_regular`
    without a size cap."""
    return _open(path, label=label, noun=noun, hint=hint, limit=None)


def _size(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit // 1024} KiB"


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def atomic_write(path: Path, data: bytes | Iterable[bytes], *, force: bool, where: str) -> None:
    """Write ``data`` (or its pieces, as they come) via a temporary file in the same directory, then
    link or rename it into place, so a reader never sees half a file and nothing is clobbered unless
    ``force``; the temporary file is removed whatever stops the writing (an interrupt too). Failures
    raise :class:`CkptError` attributed to ``where``."""
    with atomic_stream(path, force=force, where=where) as stream:
        for piece in [data] if isinstance(data, bytes) else data:
            stream.write(piece)


@contextmanager
def atomic_stream(path: Path, *, force: bool, where: str) -> Iterator[BinaryIO]:
    """A binary stream whose bytes appear at ``path`` only when the block ends without an exception:
    written to a temporary file in the same directory, then linked (or with ``force`` renamed) into
    place. An exception (an interrupt too) removes the temporary file and leaves ``path`` as it was.
    Failures raise :class:`CkptError` attributed to ``where``."""
    import stat
    import tempfile

    directory = path.parent if str(path.parent) else Path(".")
    try:
        special = path.exists() and not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        special = False
    if special:
        raise CkptError(f"{str(path)!r} is not a regular file; ckptcalc only writes files", where=where)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as error:
        raise CkptError(f"cannot write {str(path)!r}: {error.strerror}", where=where) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
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


def check_new(path: Path, *, force: bool, where: str) -> None:
    """Fail before any work if ``path`` cannot take a new file: a directory, an existing file without
    ``force``, a missing directory, or a name the system refuses (too long, say)."""
    import stat

    try:
        if path.is_dir():
            raise CkptError(f"{str(path)!r} is a directory", where=where)
        exists = path.exists()
        special = exists and not stat.S_ISREG(os.stat(path).st_mode)
        parent = path.parent if str(path.parent) else Path(".")
        has_parent = parent.is_dir()
    except OSError as error:
        raise CkptError(f"cannot use {str(path)!r}: {error.strerror}", where=where) from None
    if special:
        # Replacing /dev/null or a FIFO with a file would break whatever else uses it, --force or not.
        raise CkptError(f"{str(path)!r} is not a regular file; ckptcalc only writes files", where=where)
    if exists and not force:
        raise CkptError(f"{str(path)!r} exists; add {{force}} to overwrite it", where=where)
    if not has_parent:
        raise CkptError(f"no directory {str(path.parent)!r}", where=where)
