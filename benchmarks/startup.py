"""Start-up time of ckptcalc commands against the floor of any Typer CLI.

Runs, interleaved in one process tree, a minimal one-command Typer app (the
floor: what any Typer CLI pays in this environment) and several ckptcalc
commands, each as a fresh process, ROUNDS times, then prints for each the
median wall time and its ratio to the floor's median (the targets are judged
on these), the fastest run and its ratio, and for information the median CPU time (user + system; numpy's
threads make it exceed wall time for commands that import numpy).

    python benchmarks/startup.py [ROUNDS]
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: The default job with its failures in three classes of their own restart (docs/model.md §20), and the
#: placeholder the path of that preset, written in a temporary folder, takes in :data:`CASES`.
THREE_CLASSES = """schema_version = 1
base = "llama3-405b"

[[failures.classes]]
name = "process"
share = 0.15
restart = "1min"

[[failures.classes]]
name = "node"
share = 0.4
restart = "20min"

[[failures.classes]]
name = "network"
share = 0.1
restart = "5min"
"""
_CLASSES = "{three classes}"

#: The job of docs/model.md §19.3, at 32 768 GPUs.
_SIZED = ["--gpus", "32768", "--gpu-mtbf", "50790.4h", "--restart", "10min"]

#: (label, ckptcalc arguments, target ratio to the floor or None)
CASES: list[tuple[str, list[str], float | None]] = [
    ("ckptcalc optimize --json", ["optimize", "--json"], 1.15),
    ("ckptcalc optimize", ["optimize"], 1.35),
    ("ckptcalc sweep --json", ["sweep", "--json"], 1.6),
    ("ckptcalc --help", ["--help"], None),
    ("optimize --json, two levels", ["optimize", "--json", "--preset", "gemini-inmemory"], None),
    ("optimize --json, three tiers", ["optimize", "--json", "--preset", "llama3-405b-tiered"], None),
    ("two levels + just-in-time", ["optimize", "--json", "--preset", "gemini-inmemory", "--jit-share", "0.9",
                                   "--step-time", "10s"], None),
    ("two levels + elastic groups", ["optimize", "--json", "--preset", "gemini-inmemory", "--groups", "8"], None),
    ("two levels + spares", ["optimize", "--json", "--preset", "gemini-inmemory", "--spares", "4", "--repair",
                             "4h"], None),
    ("32768 GPUs", ["optimize", "--json", *_SIZED], None),
    ("32768 GPUs + restart growth", ["optimize", "--json", *_SIZED, "--restart-growth", "1", "--restart-scaled", "0.5",
                                     "--restart-at-gpus", "16384"], None),
    ("three failure classes", ["optimize", "--json", "--preset", _CLASSES], None),
    ("sweep --over gpus, 10^4 points", ["sweep", "--json", "--over", "gpus", "--from", "1024", "--to", "262144",
                                        "--points", "10000", "--restart-growth", "2", "--restart-scaled", "0.5",
                                        "--gpu-mtbf", "50790h"], None),
]  # fmt: skip

#: Exactness must not cost speed: the two-level optimum is a numerical search, the single level a
#: closed form. Whole process against whole process, at most this ratio.
TWO_LEVEL = ("optimize --json, two levels", "ckptcalc optimize --json", 1.5)
#: The same bound holds with each recovery mechanism (docs/model.md §13–§15) on the two levels.
MECHANISMS = ("two levels + just-in-time", "two levels + elastic groups", "two levels + spares")
#: A restart that grows with the job (docs/model.md §19), its best job size searched, against the same job
#: without it: whole process against whole process, at most this ratio; and a 10^4-point sweep over GPUs with
#: it, whole process, under this many seconds.
GROWTH = ("32768 GPUs + restart growth", "32768 GPUs", 1.3)
GPU_SWEEP = ("sweep --over gpus, 10^4 points", 3.0)
#: Three failure classes (docs/model.md §20) against the same job without them: whole process against whole
#: process, at most this ratio.
CLASSES = ("three failure classes", "ckptcalc optimize --json", 1.3)


def ckptcalc_command() -> list[str]:
    script = shutil.which("ckptcalc", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "ckptcalc"]


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 25
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
    # Measure an installed tool as users run it: with byte-code caches (pip writes them at install).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    floor = [sys.executable, str(HERE / "floor_app.py"), "--json"]
    base = ckptcalc_command()
    folder = tempfile.TemporaryDirectory()
    classes = Path(folder.name) / "three-classes.toml"
    classes.write_text(THREE_CLASSES, encoding="utf-8")
    cases = {label: [str(classes) if a == _CLASSES else a for a in args] for label, args, _ in CASES}
    commands = {"floor (one-command Typer app)": floor} | {label: base + args for label, args in cases.items()}
    for command in commands.values():  # warm the file cache and byte-code
        timed(command, env)
    walls: dict[str, list[float]] = {label: [] for label in commands}
    cpus: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(rounds):
        for label, command in commands.items():
            wall, cpu = timed(command, env)
            walls[label].append(wall)
            cpus[label].append(cpu)
    wall = {label: statistics.median(values) for label, values in walls.items()}
    fastest = {label: min(values) for label, values in walls.items()}
    cpu = {label: statistics.median(values) for label, values in cpus.items()}
    floor_label = next(iter(commands))
    targets = {label: target for label, _, target in CASES}
    print(f"{rounds} interleaved rounds; medians per process")
    print(f"{'command':<32} {'wall':>9} {'ratio':>6} {'min':>9} {'ratio':>6} {'cpu':>9} {'ratio':>6}  target")
    for label in commands:
        wall_ratio = wall[label] / wall[floor_label]
        cpu_ratio = cpu[label] / cpu[floor_label]
        target = targets.get(label)
        verdict = ""
        if target is not None:
            verdict = f"≤ {target:.2f}  {'ok' if wall_ratio <= target else 'MISSED'}"
        min_ratio = fastest[label] / fastest[floor_label]
        print(
            f"{label:<32} {wall[label] * 1e3:6.1f} ms {wall_ratio:5.2f}x"
            f" {fastest[label] * 1e3:6.1f} ms {min_ratio:5.2f}x"
            f" {cpu[label] * 1e3:6.1f} ms {cpu_ratio:5.2f}x  {verdict}"
        )
    # The two start-up targets, each whole process against the floor's whole process of this run.
    for label in ("ckptcalc optimize --json", "ckptcalc optimize"):
        ratio, target = wall[label] / wall[floor_label], targets[label]
        assert target is not None
        print(
            f"{label} / floor: {ratio:.2f}x median, {fastest[label] / fastest[floor_label]:.2f}x fastest"
            f"  target ≤ {target:.2f}  {'ok' if ratio <= target else 'MISSED'}"
        )
    two, one, limit = TWO_LEVEL
    ratio = wall[two] / wall[one]
    verdict = "ok" if ratio <= limit else "MISSED"
    print(f"two levels / one level (optimize --json): {ratio:.2f}x  target ≤ {limit:.2f}  {verdict}")
    for label in MECHANISMS:
        ratio = wall[label] / wall[one]
        print(f"{label} / one level: {ratio:.2f}x  target ≤ {limit:.2f}  {'ok' if ratio <= limit else 'MISSED'}")
    grown, same, limit = GROWTH
    ratio = wall[grown] / wall[same]
    verdict = "ok" if ratio <= limit else "MISSED"
    print(f"restart growth / without (optimize --json): {ratio:.2f}x  target ≤ {limit:.2f}  {verdict}")
    label, seconds = GPU_SWEEP
    verdict = "ok" if wall[label] < seconds else "MISSED"
    print(f"{label}, with restart growth: {wall[label]:.2f} s  target < {seconds:g} s  {verdict}")
    many, plain, limit = CLASSES
    ratio = wall[many] / wall[plain]
    verdict = "ok" if ratio <= limit else "MISSED"
    print(f"three failure classes / without (optimize --json): {ratio:.2f}x  target ≤ {limit:.2f}  {verdict}")
    folder.cleanup()


if __name__ == "__main__":
    main()
