"""Odd places for output: terminals that cannot encode the tables, absurd widths, full disks, closed
streams and readers that leave early. Each runs the real command in a subprocess (no root needed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CKPTCALC = [sys.executable, "-c", "from ckptcalc.cli import main; main()"]


def _run(args: list[str], env: dict[str, str] | None = None, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    environment = dict(os.environ, **(env or {}))
    return subprocess.run([*CKPTCALC, *args], env=environment, capture_output=True, timeout=60, **kwargs)  # type: ignore[call-overload, no-any-return]


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("args", [["optimize"], ["sweep", "--points", "5"], ["compare"], ["optimize", "--help"]])
def test_a_terminal_that_cannot_encode_the_symbols_gets_ascii(encoding: str, args: list[str]) -> None:
    result = _run(args, env={"PYTHONIOENCODING": encoding, "COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    assert b"Traceback" not in result.stderr
    result.stdout.decode(encoding)  # everything printed is in the terminal's encoding
    if args == ["optimize"]:
        assert b"write time delta" in result.stdout


@pytest.mark.parametrize("columns", ["1", "0", "-5", "99999999999", "wide"])
def test_absurd_widths_are_clamped(columns: str) -> None:
    result = _run(["optimize"], env={"COLUMNS": columns})
    assert result.returncode == 0, result.stderr
    assert b"Traceback" not in result.stderr
    assert b"verdict:" in result.stdout


@pytest.mark.parametrize("args", [["optimize"], ["optimize", "--json"], ["sweep", "--csv", "--points", "50"]])
def test_a_full_disk_is_exit_74_with_one_line(args: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        result = subprocess.run([*CKPTCALC, *args], stdout=full, stderr=subprocess.PIPE, timeout=60)
    assert result.returncode == 74
    assert result.stderr.decode().strip() == "error: cannot write output: No space left on device"


def test_a_closed_stdout_is_exit_74() -> None:
    result = subprocess.run(
        ["bash", "-c", 'exec "$@" >&-', "bash", *CKPTCALC, "optimize"], capture_output=True, timeout=60
    )
    assert result.returncode == 74
    assert result.stderr.decode().strip() == "error: cannot write output: Bad file descriptor"


def test_a_closed_stderr_keeps_the_exit_code() -> None:
    result = subprocess.run(
        ["bash", "-c", 'exec "$@" 2>&-', "bash", *CKPTCALC, "optimize", "--bw", "0"], capture_output=True, timeout=60
    )
    assert result.returncode == 2


@pytest.mark.parametrize(
    "args",
    [
        ["optimize"],
        ["optimize", "--json"],
        ["sweep", "--points", "2000"],
        ["sweep", "--csv", "--points", "20000"],  # 1.2 MB: far more than a pipe holds
        ["compare"],
        ["presets", "list"],
        ["schema"],
        ["optimize", "--help"],  # Typer's own Rich console prints the help
        ["--help"],
        [],
    ],
)
def test_a_reader_that_leaves_early_is_success(args: list[str]) -> None:
    command = " ".join(f"'{a}'" for a in [*CKPTCALC, *args])
    result = subprocess.run(
        ["bash", "-c", f"{command} | head -c 20 > /dev/null; echo ${{PIPESTATUS[0]}}"],
        capture_output=True,
        timeout=120,
        cwd=Path(__file__).parent.parent,
    )
    assert result.stdout.decode().strip() == "0"
    assert b"Traceback" not in result.stderr
    assert result.stderr == b""


def test_special_files_as_presets_are_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    for preset, what in (("/dev/zero", "is a device"), (str(fifo), "is a FIFO"), (str(tmp_path), "is a directory")):
        result = _run(["optimize", "--preset", preset, "--json"])
        assert result.returncode == 2
        assert result.stdout == b""
        line = result.stderr.decode().strip()
        assert line.startswith(f"error: {preset}: {what}"), line


def test_a_fifo_in_the_preset_search_is_skipped(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "stuck.toml")
    (tmp_path / "mine.toml").write_text('[storage]\nbandwidth = "1TB/s"\n')
    env = {"CKPTCALC_PRESET_PATH": str(tmp_path)}
    listed = _run(["presets", "list", "--json"], env=env)
    assert listed.returncode == 0, listed.stderr
    assert b"stuck" not in listed.stdout
    unknown = _run(["optimize", "--preset", "nope"], env=env)
    assert unknown.returncode == 2
    assert b"unknown preset 'nope'" in unknown.stderr


# ---------------------------------------------------------------- messages that cannot be written

#: A run's event log whose analysis warns (no checkpoint completed: no model at the measured inputs).
WARNING_LOG = "time,event\n0,run_start\n60,progress\n120,run_end\n"


def _to_full_stderr(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    with open("/dev/full", "wb") as full:
        return subprocess.run([*CKPTCALC, *args], stdout=subprocess.PIPE, stderr=full, timeout=60, **kwargs)  # type: ignore[call-overload, no-any-return]


@pytest.mark.parametrize(
    "args",
    [
        ["optimize", "--bw", "0"],
        ["sweep", "--points", "0", "--json"],
        ["fit", "no-such-log.csv"],
        ["analyze", "-", "--time-unit", "parsecs"],
    ],
)
def test_an_error_that_cannot_be_written_keeps_exit_2(args: list[str]) -> None:
    result = _to_full_stderr(args, input=b"")
    assert result.returncode == 2
    assert result.stdout == b""


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["sweep", "-p", "llama3-405b-async", "--mtbf", "1min", "--points", "5", "--json"], b""),
        (["optimize", "-p", "llama3-405b-async", "--mtbf", "1min", "--json"], b""),
        (["analyze", "-", "--time-unit", "s", "--json"], WARNING_LOG.encode()),
    ],
)
def test_a_warning_that_cannot_be_written_changes_nothing(args: list[str], stdin: bytes) -> None:
    # The rule of docs/exit-codes.md: stderr is best effort; only stdout, which holds the result, fails with 74.
    warned = subprocess.run([*CKPTCALC, *args], input=stdin, capture_output=True, timeout=60)
    assert warned.returncode == 0
    assert warned.stderr.startswith(b"warning: ")  # the case does warn
    result = _to_full_stderr(args, input=stdin)
    assert result.returncode == 0
    assert result.stdout == warned.stdout
    assert json.loads(result.stdout)["warnings"]  # and the document still carries the warning


def test_a_warning_that_cannot_be_written_on_a_closed_stderr_changes_nothing() -> None:
    args = ["optimize", "-p", "llama3-405b-async", "--mtbf", "1min"]
    result = subprocess.run(["bash", "-c", 'exec "$@" 2>&-', "bash", *CKPTCALC, *args], capture_output=True, timeout=60)
    assert result.returncode == 0
    assert b"verdict:" in result.stdout


# ---------------------------------------------------------------- input without line ends


@pytest.mark.parametrize("command", ["analyze", "fit"])
def test_endless_input_without_line_ends_is_one_line_under_a_memory_limit(command: str) -> None:
    # 1.5 GB of address space: the interpreter, numpy and a 16 MiB line fit; /dev/zero read whole would not.
    script = f'ulimit -v 1500000; exec "$@" {command} - < /dev/zero'
    result = subprocess.run(["bash", "-c", script, "bash", *CKPTCALC], capture_output=True, timeout=60)
    assert result.returncode == 2
    assert result.stdout == b""
    assert result.stderr.decode() == "error: stdin:1: a line longer than 16 MiB: not a log of one record a line\n"


def test_a_regular_file_with_an_endless_line_names_its_line(tmp_path: Path) -> None:
    log = tmp_path / "run.csv"
    with log.open("wb") as out:
        out.write(b"time,event\n0,run_start\n")
        out.write(b"7" * (16 * 2**20 + 1))
    result = _run(["analyze", str(log), "--time-unit", "s"])
    assert result.returncode == 2
    assert result.stderr.decode() == f"error: {log}:3: a line longer than 16 MiB: not a log of one record a line\n"


# ---------------------------------------------------------------- the reader's working state


class _Counting:
    """A consumer that keeps nothing but a count: what is left of the memory is the reader's."""

    def __init__(self) -> None:
        self.count = 0

    def fields(self, names: object, line: int) -> None:
        pass

    def record(self, record: dict[str, object], line: int) -> bool:
        self.count += 1
        return True


def _peak_reading(path: Path, where: tuple[str, ...] = ()) -> tuple[int, int]:
    """(records counted, tracemalloc's peak in bytes) of one scan of ``path``."""
    import tracemalloc

    from ckptcalc.logs import reader

    consumer = _Counting()
    tracemalloc.start()
    try:
        reader.scan(path, consumer, where=where)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return consumer.count, peak


def _event_log(path: Path, lines: int, form: str) -> Path:
    with path.open("w") as out:
        if form == "csv":
            out.write("time,event,step\n")
            out.writelines(f"{i}.5,progress,{i}\n" for i in range(lines))
        else:
            out.writelines(f'{{"time": {i}.5, "event": "progress", "step": {i}}}\n' for i in range(lines))
    return path


@pytest.mark.parametrize(("form", "where"), [("csv", ()), ("jsonl", ()), ("csv", ("event=progress",))])
def test_the_readers_working_state_does_not_grow_with_the_log(
    tmp_path: Path, form: str, where: tuple[str, ...]
) -> None:
    small_log = _event_log(tmp_path / f"small.{form}", 10**4, form)
    _peak_reading(small_log, where)  # once first: imports and caches filled on first use are not the reader's state
    small = _peak_reading(small_log, where)
    large = _peak_reading(_event_log(tmp_path / f"large.{form}", 4 * 10**4, form), where)
    assert (small[0], large[0]) == (10**4, 4 * 10**4)
    # Four times the lines: a state growing by even 8 bytes a line would add 240 kB. The buffers (a
    # BufferedReader's 128 KiB, csv's) are the same at both sizes.
    assert large[1] < small[1] + 64 * 1024, (small, large)


# ---------------------------------------------------------------- decoding a block at a time


def test_lines_across_blocks_and_a_bad_byte_far_in_are_placed_exactly(tmp_path: Path) -> None:
    from ckptcalc.errors import InputError
    from ckptcalc.logs import reader

    # 5000 lines of 20 bytes (100 000 bytes: past the first 64 KiB block), then a line of 200 000
    # bytes spanning several blocks, then a bad byte 3 bytes into line 5002.
    lines = [f"{i:>9},progress,\n".encode() for i in range(5000)]
    assert {len(line) for line in lines} == {20}
    long_line = b"x" * 199_999 + b"\n"
    path = tmp_path / "run.csv"
    path.write_bytes(b"".join(lines) + long_line + b"abc\xff\n")
    seen: list[str] = []
    with pytest.raises(InputError) as excinfo, reader.open_lines(path) as (_, decoded):
        seen.extend(decoded)
    # byte 5000 * 20 + 200 000 + 3 = 300 003; every line before it was handed over first
    assert (excinfo.value.where, excinfo.value.message) == (f"{path}:5002", "not UTF-8 text (byte 300003)")
    assert len(seen) == 5001
    assert seen[4999] == "     4999,progress,\n"
    assert seen[5000] == long_line.decode()


def test_a_directory_as_standard_input_stops_python_itself(tmp_path: Path) -> None:
    """docs/exit-codes.md: Python refuses a directory as stdin while it starts, before ckptcalc is loaded,
    so this is the one exit 1 that is no bug of ckptcalc's; the page says so, and this keeps it true."""
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        done = subprocess.run([sys.executable, "-m", "ckptcalc", "fit", "-"], stdin=fd, capture_output=True, timeout=60)
    finally:
        os.close(fd)
    assert done.returncode == 1 and done.stdout == b""
    assert b"init_sys_streams: <stdin> is a directory" in done.stderr
    assert b"ckptcalc" not in done.stderr  # stopped before any of it ran
    page = (Path(__file__).parent.parent / "docs" / "exit-codes.md").read_text(encoding="utf-8")
    assert "`ckptcalc fit - < DIR`" in page and "is a directory, cannot\ncontinue" in page
