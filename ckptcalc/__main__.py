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
        if _INTERRUPTS and done.code != EXIT_INTERRUPTED:
            _stop()  # the interrupt was raised where Python drops exceptions (a finaliser): still honoured
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


def _stop() -> None:
    import contextlib
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.write(2, b"interrupted\n")
    sys.exit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    main()
