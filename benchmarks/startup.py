"""Start-up time of ckptcalc commands against the floor of any Typer CLI.

Runs, interleaved in one process tree, a minimal one-command Typer app (the
floor: what any Typer CLI pays in this environment) and several ckptcalc
commands, each as a fresh process, ROUNDS times, then prints the median wall
time of each and its ratio to the floor's median.

    python benchmarks/startup.py [ROUNDS]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: (label, ckptcalc arguments, target ratio to the floor or None)
CASES: list[tuple[str, list[str], float | None]] = [
    ("ckptcalc optimize --json", ["optimize", "--json"], 1.15),
    ("ckptcalc optimize", ["optimize"], 1.35),
    ("ckptcalc sweep --json", ["sweep", "--json"], 1.6),
    ("ckptcalc --help", ["--help"], None),
]


def ckptcalc_command() -> list[str]:
    script = shutil.which("ckptcalc", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "ckptcalc"]


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 25
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
    # Measure an installed tool as users run it: with byte-code caches (pip writes them at install).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    floor = [sys.executable, str(HERE / "floor_app.py"), "--json"]
    base = ckptcalc_command()
    commands = {"floor (one-command Typer app)": floor} | {label: base + args for label, args, _ in CASES}
    for command in commands.values():  # warm the file cache and byte-code
        timed(command, env)
    samples: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(rounds):
        for label, command in commands.items():
            samples[label].append(timed(command, env))
    medians = {label: statistics.median(values) for label, values in samples.items()}
    floor_median = medians["floor (one-command Typer app)"]
    targets = {label: target for label, _, target in CASES}
    print(f"{rounds} interleaved rounds, median wall time per process")
    print(f"{'command':<32} {'median':>9} {'ratio':>7}  target")
    for label, median in medians.items():
        ratio = median / floor_median
        target = targets.get(label)
        verdict = "" if target is None else f"≤ {target:.2f}  {'ok' if ratio <= target else 'MISSED'}"
        print(f"{label:<32} {median * 1e3:7.1f} ms {ratio:6.2f}x  {verdict}")


if __name__ == "__main__":
    main()
