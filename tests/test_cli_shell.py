"""The command line's shell: what a process does at its edges, whatever command it runs.

A completion instruction the shell scripts never send, a closed stdout, stderr on a full disk, and
Ctrl-C from the first moment to the last: one line, the documented exit code (docs/exit-codes.md),
never a traceback, never a half-written file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
LOG = DATA / "logs" / "sacct" / "requeued-job.txt"
RUN = DATA / "hand-run.jsonl"


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", **extra}


# ------------------------------------------------------------------ completion


@pytest.mark.parametrize("instruction", ["complete_nosuch", "nosuch", "source_nosuch", "list_bash"])
def test_an_unknown_completion_instruction_is_a_usage_error(instruction: str) -> None:
    result = subprocess.run([sys.executable, "-m", "ckptcalc"], capture_output=True, text=True,
                            env=_env(_CKPTCALC_COMPLETE=instruction))  # fmt: skip
    assert result.returncode == 2
    assert result.stdout == ""
    line = result.stderr.strip()
    assert "\n" not in line and "Traceback" not in result.stderr
    assert line.startswith(f"error: _CKPTCALC_COMPLETE: {instruction!r} is not a completion instruction")
    assert "bash" in line and "zsh" in line


def test_a_known_completion_instruction_still_completes() -> None:
    env = _env(_CKPTCALC_COMPLETE="complete_bash", COMP_WORDS="ckptcalc opt", COMP_CWORD="1")
    result = subprocess.run([sys.executable, "-m", "ckptcalc"], capture_output=True, text=True, env=env)
    assert (result.returncode, result.stdout.split(), result.stderr) == (0, ["optimize"], "")


# ------------------------------------------------------------------ closed and full streams

#: One invocation of every command that prints a result on stdout.
COMMANDS = [
    ["optimize"],
    ["optimize", "--json"],
    ["check", "llama3-405b", "--min-effective", "0.5"],
    ["sweep", "--csv"],
    ["compare", "--json"],
    ["simulate", "--cycles", "1e3", "--json"],
    ["plan", "--runs", "20", "--work", "30d", "--json"],
    ["fit", str(LOG)],
    ["events", str(LOG)],
    ["analyze", str(RUN), "--time-unit", "s", "--markdown"],
    ["schema", "optimize"],
    ["presets", "show", "llama3-405b"],
    ["events", "--help"],
]


def _run_closed(args: list[str], stderr_path: str | None) -> subprocess.CompletedProcess[bytes]:
    """``ckptcalc ARGS >&-``, with stderr captured or on ``stderr_path``."""
    stderr = open(stderr_path, "wb") if stderr_path else subprocess.PIPE  # noqa: SIM115 - closed below
    try:
        return subprocess.run([sys.executable, "-m", "ckptcalc", *args], stdin=subprocess.DEVNULL, stderr=stderr,
                              env=_env(), preexec_fn=lambda: os.close(1), check=False)  # fmt: skip
    finally:
        if stderr_path:
            stderr.close()  # type: ignore[union-attr]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_closed_stdout_is_exit_74_with_one_line(args: list[str]) -> None:
    result = _run_closed(args, None)
    assert result.returncode == 74, result.stderr
    assert result.stderr.decode().splitlines()[-1] == "error: cannot write output: Bad file descriptor"
    assert b"Traceback" not in result.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["events", str(LOG)], ["fit", str(LOG), "--json"], ["optimize"], ["--help"]],
                         ids=" ".join)  # fmt: skip
def test_a_closed_stdout_with_stderr_on_a_full_disk_is_still_74(args: list[str]) -> None:
    assert _run_closed(args, "/dev/full").returncode == 74


# ------------------------------------------------------------------ Ctrl-C

#: Runs the ckptcalc script's entry point with an interrupt sent to itself at a chosen moment.
INTERRUPTED = """
import os, signal, sys, time
import importlib.abc

def interrupt():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)  # the handler raises here; without one the test fails on the time taken

moment = sys.argv[1]
if moment == "import":
    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "typer.main":
                interrupt()
    sys.meta_path.insert(0, Finder())
if moment == "writing":
    import ckptcalc.files as files
    stream = files.atomic_stream
    from contextlib import contextmanager
    @contextmanager
    def half(path, **kwargs):
        with stream(path, **kwargs) as out:
            out.write(b"<svg")
            out.flush()
            interrupt()
            yield out
    files.atomic_stream = half
if moment == "finaliser":
    import gc
    class Dropped:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)  # raised inside __del__: Python prints and drops it
    import ckptcalc.output.plot as plot
    draw = plot.draw_survival
    def draw_then_drop(*args, **kwargs):
        Dropped()
        gc.collect()
        return draw(*args, **kwargs)
    plot.draw_survival = draw_then_drop
if moment == "wrapped":
    import ckptcalc.output.plot as plot
    def import_wrapping_the_interrupt():
        # As an interrupt inside matplotlib's import can land: in a class body, where Python 3.11 turns
        # the KeyboardInterrupt of a descriptor's __set_name__ into a RuntimeError.
        class Named:
            def __set_name__(self, owner, name):
                interrupt()
        class Axis:
            converter = Named()
    plot._matplotlib = import_wrapping_the_interrupt
if moment == "shutdown":
    import atexit
    atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))
sys.argv = ["ckptcalc", *sys.argv[2:]]
from ckptcalc.__main__ import main
main()
"""


def _interrupted(tmp_path: Path, moment: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    pytest.importorskip("matplotlib")
    figure = tmp_path / "fp.svg"
    args = ["fit", str(LOG), "--plot", str(figure)]
    result = subprocess.run([sys.executable, "-c", INTERRUPTED, moment, *args], capture_output=True, text=True,
                            cwd=tmp_path, env=_env(), timeout=120,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    return result, figure


@pytest.mark.parametrize(
    ("moment", "line"),
    [("import", "interrupted"), ("writing", "interrupted: {figure} was not written")],
)
def test_ctrl_c_ends_with_130_one_line_and_no_file(tmp_path: Path, moment: str, line: str) -> None:
    result, figure = _interrupted(tmp_path, moment)
    assert result.returncode == 130, result.stderr
    assert result.stderr.splitlines()[-1:] == [line.format(figure=figure)]
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) <= 2  # a warning may come first
    assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []  # neither the figure nor its temporary file


def test_ctrl_c_that_a_library_turns_into_another_error_still_ends_with_130(tmp_path: Path) -> None:
    """An interrupt that reaches the command as another exception (a RuntimeError from a class body) is
    still the user's Ctrl-C: one line and 130, no traceback."""
    result, _ = _interrupted(tmp_path, "wrapped")
    assert result.returncode == 130, result.stderr
    assert result.stderr.splitlines()[-1:] == ["interrupted"]
    assert "Traceback" not in result.stderr and "RuntimeError" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_that_python_drops_still_ends_with_130(tmp_path: Path) -> None:
    """An interrupt raised inside a finaliser is printed and dropped by Python, and the command goes on
    to the end; the user asked it to stop, so it exits 130 all the same."""
    result, _ = _interrupted(tmp_path, "finaliser")
    assert result.returncode == 130, result.stderr
    assert result.stderr.endswith("\ninterrupted\n")


def test_ctrl_c_after_the_command_cannot_interrupt_the_shutdown(tmp_path: Path) -> None:
    result, figure = _interrupted(tmp_path, "shutdown")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "Fatal" not in result.stderr
    assert figure.read_bytes().startswith(b"<?xml")
