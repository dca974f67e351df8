"""``python -m ckptcalc`` and the ``ckptcalc`` script.

This module is the entry point, not :mod:`ckptcalc.cli`, so that Ctrl-C is handled from the first
moment: while Typer and the command's modules load, a KeyboardInterrupt would otherwise print a
traceback and end the process by the signal.
"""

import sys

EXIT_INTERRUPTED = 130  # as ckptcalc.cli.EXIT_INTERRUPTED, before that module can be loaded

#: Each SIGINT received, in order (see :func:`_on_interrupt`).
_INTERRUPTS: list[int] = []


def main() -> None:
    """Run the command line. Ctrl-C, from the first moment, ends it with one line and exit 130; once
    the command has ended, SIGINT is ignored so that it cannot interrupt the interpreter's shutdown."""
    import signal

    ours = signal.getsignal(signal.SIGINT) is signal.default_int_handler  # not when started ignored
    if ours:
        signal.signal(signal.SIGINT, _on_interrupt)
    try:
        from ckptcalc.cli import main as run

        run()
    except KeyboardInterrupt:
        _stop()
    except SystemExit as done:
        if _INTERRUPTS:
            # Said already at 130; otherwise raised where Python drops exceptions (a finaliser): still honoured.
            _stop(say=done.code != EXIT_INTERRUPTED)
        raise
    except BaseException:
        if _INTERRUPTS:
            _stop()  # an interrupt a library turned into another error (a class body makes it a RuntimeError)
        raise
    finally:
        if ours:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _INTERRUPTS:
        _stop()


def _on_interrupt(signum: int, frame: object) -> None:
    """Python's own handler (a KeyboardInterrupt), remembering that the user asked to stop."""
    _INTERRUPTS.append(signum)
    raise KeyboardInterrupt


def _stop(*, say: bool = True) -> None:
    """End with exit 130 at once. Not by SystemExit: once a KeyboardInterrupt has crossed a C library's
    own call into Python, the interpreter ends the process by SIGINT after the code's exit (seen in 4 of
    30 interrupts of ``fit --plot``), which a shell reads as 130 but a program as a signal."""
    import contextlib
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if say:
        with contextlib.suppress(OSError):
            os.write(2, b"interrupted\n")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    main()
