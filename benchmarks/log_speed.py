"""Speed and peak memory of reading a large log: ``ckptcalc analyze LOG --json`` and ``fit LOG --json``.

Writes two CSV logs of the requested length into a temporary directory:

* a run's event log: progress lines (one per training step) with a checkpoint every 500 steps and a
  failure (and its restart) about every 20 000 steps, read by ``analyze`` and by
  ``fit --where event=failure`` (a cluster's log of which few lines are incidents);
* an incident log: one incident a line (a time in hours, a kind, a cause, a node), read by ``fit``,
  which keeps every incident (10 bytes each: they are the result) and fits them (each likelihood
  evaluation a pass over every gap); ``--incidents`` lines, as many as ``--lines`` by default;
* a checkpoint-dense log: what ``simulate --events`` writes for Llama 3 (a checkpoint every 4.45 min,
  an MTBF of 3 h: about 79 lines a failure cycle, nearly all of them checkpoint starts and ends, no
  progress lines), about as many lines as ``--lines``, read by ``analyze`` with no flags (its
  quantiles past 10^5 values come from a KLL sketch), and another of a tenth as many lines: past
  10^5 checkpoints analyze folds the oldest into summaries of bounded size, so the two peak alike;
* a failure-dense log: nothing but failures and their restarts' ends (a failure every 130 s or so),
  as many lines as ``--lines``, read by ``analyze``: the worst case of what it keeps a failure (the
  failure fit needs every failure's time).

Each command runs as a whole process (``python -m ckptcalc ...``), and so does the floor: a plain
``csv.reader`` pass over the same file, counting its rows, in a process of its own (interpreter
start-up included on both sides). Prints each process's wall and CPU time (user + system, its own
rusage from ``os.wait4``, as its peak resident set ``ru_maxrss``) and the ratio of CPU times to the
floor's: on a shared machine the wall time mostly measures the other users. The target: at most 3x
the floor, and at most 200 MB on 10^7 lines.

Usage: python benchmarks/log_speed.py [--lines N] [--rounds R] [--shares] [--profile]

``--lines`` defaults to 1e6 (a quick run; ``--lines 1e7`` for the full one); ``--rounds`` runs each
command R times, interleaved, and keeps the fastest; ``--shares`` also times, in this process, the
reader with a consumer that only counts against the reader with analyze's and fit's consumers (their
own share of the time); ``--profile`` prints the functions analyze's reading spends its time in.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ckptcalc.logs.adapter import Columns

TARGET_RATIO = 3.0
BUDGET_MB = 200.0

FLOOR = "import csv, sys\nwith open(sys.argv[1], newline='') as f:\n    print(sum(1 for _ in csv.reader(f)))\n"


def write_event_log(path: str, lines: int, seed: int = 1) -> None:
    """A run's event log: progress lines, a checkpoint every 500 steps, a failure every ~20 000 steps."""
    rng = random.Random(seed)
    step_s, write_s, restart_s = 1.0, 30.0, 600.0
    with open(path, "w", encoding="utf-8") as out:
        out.write("time,event,step,level,resumed_from\n")
        t, step, written, last_ckpt = 0.0, 0, 1, 0.0
        out.write("0.0,run_start,,,\n")
        buffer: list[str] = []
        while written < lines - 1:
            step += 1
            t += step_s
            buffer.append(f"{t:.3f},progress,{step},,\n")
            written += 1
            if step % 500 == 0:
                buffer.append(f"{t:.3f},checkpoint_start,{step},storage,\n")
                t += write_s
                buffer.append(f"{t:.3f},checkpoint_end,{step},storage,\n")
                written += 2
                last_ckpt = t
            if rng.random() < 1 / 20_000:
                t += rng.random()
                buffer.append(f"{t:.3f},failure,,,\n")
                t += restart_s
                buffer.append(f"{t:.3f},restart_end,,,{last_ckpt:.3f}\n")
                written += 2
            if len(buffer) >= 10_000:
                out.write("".join(buffer))
                buffer.clear()
        out.write("".join(buffer))
        out.write(f"{t + step_s:.3f},run_end,,,\n")


def write_incident_log(path: str, lines: int, seed: int = 2) -> None:
    """An incident log: a time in hours, a kind (half hardware), a cause and a node."""
    rng = random.Random(seed)
    causes = ("gpu", "nvlink", "host", "network", "storage")
    with open(path, "w", encoding="utf-8") as out:
        out.write("time,kind,cause,node\n")
        t = 0.0
        buffer: list[str] = []
        for _ in range(lines - 1):
            t += rng.expovariate(1.0)
            kind = "hardware" if rng.random() < 0.5 else "software"
            buffer.append(f"{t:.4f},{kind},{rng.choice(causes)},node{rng.randrange(4096):04d}\n")
            if len(buffer) >= 10_000:
                out.write("".join(buffer))
                buffer.clear()
        out.write("".join(buffer))


#: Lines of ``simulate --events`` output per failure cycle of the default preset (Llama 3): 10^7 lines
#: are about 127 000 cycles.
DENSE_LINES_PER_CYCLE = 79


def write_dense_log(path: str, lines: int) -> None:
    """A checkpoint-dense log of about ``lines`` lines: ``simulate --events`` of the default preset."""
    cycles = min(200_000, max(200, round(lines / DENSE_LINES_PER_CYCLE)))
    command = [sys.executable, "-m", "ckptcalc", "simulate", "--cycles", str(cycles), "--seed", "1",
               "--events", path, "--json"]  # fmt: skip
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def write_failure_log(path: str, lines: int) -> None:
    """A failure-dense log of ``lines`` lines: each failure followed 30 s later by its restart's end."""
    causes = ("gpu", "network", "host")
    times = [0.0]

    def rows() -> Iterator[str]:
        yield "time,event,cause\n0,run_start,\n"
        for i in range((lines - 2) // 2):
            times[0] += 100.0 + (i * 7919 % 1000) / 10.0
            yield f"{times[0]:.1f},failure,{causes[i % 3]}\n{times[0] + 30.0:.1f},restart_end,\n"
            times[0] += 30.0

    with open(path, "w", encoding="utf-8") as out:
        out.writelines(rows())
        out.write(f"{times[0] + 1.0:.1f},run_end,\n")


def measure(args: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of one process, its output discarded."""
    with tempfile.TemporaryFile() as err, open(os.devnull, "wb") as sink:
        started = time.perf_counter()
        process = subprocess.Popen(args, stdout=sink, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)  # this child's own rusage
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            err.seek(0)
            sys.exit(f"{' '.join(args[2:])} failed ({process.returncode}): {err.read().decode()[-400:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0  # KiB on Linux


class _Counting:
    """A consumer that only counts: what a reading costs without anyone's use of the records."""

    def __init__(self) -> None:
        self.count = 0

    def fields(self, names: object, line: int) -> None:
        pass

    def record(self, record: dict[str, object], line: int) -> bool:
        self.count += 1
        return True

    def bulk(self, block: Columns, each: object) -> int:
        self.count += block.count
        return block.count


def shares(events: str, incidents: str, rounds: int) -> None:
    """Where a reading's time goes, in this process (warm, fastest of ``rounds``): the floor, the
    reader with a consumer that only counts, and the reader with analyze's and fit's consumers. The
    difference between the last two is the consumer's own share."""
    import csv

    from ckptcalc.logs import analyze, fit, reader

    def floor(path: str) -> None:
        with open(path, newline="") as f:
            for _ in csv.reader(f):
                pass

    steps = {
        "floor (csv.reader), event log": lambda: floor(events),
        "reader, counting consumer": lambda: reader.scan(events, _Counting()),
        "reader + analyze's consumer": lambda: analyze.read(events, time_unit="s"),
        "reader --where event=failure": lambda: reader.scan(events, _Counting(), where=["event=failure"]),
        "floor (csv.reader), incidents": lambda: floor(incidents),
        "reader, counting, incidents": lambda: reader.scan(incidents, _Counting()),
        "reader + fit's consumer": lambda: fit.read_log(incidents, time_unit="h"),
    }
    best: dict[str, float] = {}
    for _ in range(rounds):
        for label, step in steps.items():
            started = time.process_time()
            step()
            best[label] = min(best.get(label, math.inf), time.process_time() - started)
    print(f"in this process (CPU time, warm, fastest of {rounds}):")
    for label, seconds in best.items():
        on_incidents = "incidents" in label or "fit" in label
        base = best["floor (csv.reader), incidents" if on_incidents else "floor (csv.reader), event log"]
        print(f"  {label:32} {seconds:7.2f} s  {seconds / base:5.2f}x floor")
    for name, whole, alone in (
        ("analyze's consumer (_Run)", "reader + analyze's consumer", "reader, counting consumer"),
        ("fit's consumer (_Incidents)", "reader + fit's consumer", "reader, counting, incidents"),
    ):
        own = best[whole] - best[alone]
        print(f"  {name:32} {own:7.2f} s  {own / best[whole]:5.0%} of that reading")


def profile(path: str) -> None:
    """The functions where analyze's reading spends its own time (cProfile)."""
    import cProfile
    import pstats

    from ckptcalc.logs import analyze

    profiler = cProfile.Profile()
    profiler.runcall(analyze.read, path, time_unit="s")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=float, default=1e6, help="lines per log (default 1e6)")
    parser.add_argument(
        "--incidents", type=float, default=None, help="lines of the incident log (default: as many as --lines)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="runs of each command, fastest kept")
    parser.add_argument("--shares", action="store_true", help="also time the reader and each consumer in this process")
    parser.add_argument("--profile", action="store_true", help="also profile analyze's reading (cProfile)")
    options = parser.parse_args()
    lines = int(options.lines)
    if options.incidents is None:
        options.incidents = options.lines
    python = sys.executable
    with tempfile.TemporaryDirectory() as folder:
        events, incidents = os.path.join(folder, "run.csv"), os.path.join(folder, "incidents.csv")
        dense, tenth = os.path.join(folder, "dense.csv"), os.path.join(folder, "tenth.csv")
        failures = os.path.join(folder, "failures.csv")
        write_event_log(events, lines)
        write_incident_log(incidents, int(options.incidents))
        write_dense_log(dense, lines)
        write_dense_log(tenth, lines // 10)
        write_failure_log(failures, lines)
        size = {path: os.path.getsize(path) / 1e6 for path in (events, incidents, dense, tenth, failures)}

        def count(path: str) -> int:
            with open(path, "rb") as counted:
                return sum(block.count(b"\n") for block in iter(lambda: counted.read(1 << 20), b""))

        dense_lines, tenth_lines = count(dense), count(tenth)
        runs = {
            "floor (csv.reader), event log": [python, "-c", FLOOR, events],
            "analyze --json": [python, "-m", "ckptcalc", "analyze", events, "--time-unit", "s", "--json"],
            "fit --where event=failure": [
                python, "-m", "ckptcalc", "fit", events, "--time-unit", "s", "--where", "event=failure", "--json"
            ],
            "floor (csv.reader), incidents": [python, "-c", FLOOR, incidents],
            "fit --json, incident log": [python, "-m", "ckptcalc", "fit", incidents, "--time-unit", "h", "--json"],
            "floor (csv.reader), dense log": [python, "-c", FLOOR, dense],
            "analyze --json, dense log": [python, "-m", "ckptcalc", "analyze", dense, "--json"],
            "floor (csv.reader), dense tenth": [python, "-c", FLOOR, tenth],
            "analyze --json, dense tenth": [python, "-m", "ckptcalc", "analyze", tenth, "--json"],
            "floor (csv.reader), failure log": [python, "-c", FLOOR, failures],
            "analyze --json, failure log": [
                python, "-m", "ckptcalc", "analyze", failures, "--time-unit", "s", "--json"
            ],
        }  # fmt: skip
        best: dict[str, tuple[float, float, float]] = {}
        for _ in range(options.rounds):
            for label, args in runs.items():
                wall, cpu, mb = measure(args)
                old = best.get(label)
                best[label] = (min(wall, old[0]), min(cpu, old[1]), max(mb, old[2])) if old else (wall, cpu, mb)
        print(
            f"lines: {lines:,} of events ({size[events]:.0f} MB), {int(options.incidents):,} of incidents"
            f" ({size[incidents]:.0f} MB), {dense_lines:,} checkpoint-dense ({size[dense]:.0f} MB),"
            f" {tenth_lines:,} of them in the tenth ({size[tenth]:.0f} MB), {lines:,} failure-dense"
            f" ({size[failures]:.0f} MB);"
            f" fastest of {options.rounds};"
            f" targets: <= {TARGET_RATIO:g}x the floor, <= {BUDGET_MB:g} MB"
        )
        print(f"  {'':32} {'wall':>9} {'CPU':>9} {'peak RSS':>9}  CPU / floor's")
        for label, (wall, cpu, mb) in best.items():
            kinds = (
                ("incident", "incidents"),
                ("dense log", "dense log"),
                ("tenth", "dense tenth"),
                ("failure log",) * 2,
            )
            kind = next((name for key, name in kinds if key in label), "event log")
            floor = best[f"floor (csv.reader), {kind}"]
            ratio = verdict = ""
            if not label.startswith("floor"):
                ratio = f"  {cpu / floor[1]:5.2f}x  (wall {wall / floor[0]:.2f}x)"
                verdict = "  ok" if cpu / floor[1] <= TARGET_RATIO and mb <= BUDGET_MB else "  missed"
            print(f"  {label:32} {wall:7.2f} s {cpu:7.2f} s {mb:6.0f} MB{ratio}{verdict}")
        grown = best["analyze --json, dense log"][2] - best["analyze --json, dense tenth"][2]
        print(
            f"  peak RSS of analyze on the checkpoint-dense logs: {best['analyze --json, dense tenth'][2]:.0f} MB"
            f" at {tenth_lines:,} lines, {best['analyze --json, dense log'][2]:.0f} MB at {dense_lines:,}"
            f" ({grown:+.0f} MB for {dense_lines - tenth_lines:,} more lines)"
        )
        if options.shares:
            shares(events, incidents, max(options.rounds, 1))
        if options.profile:
            profile(events)


if __name__ == "__main__":
    main()
