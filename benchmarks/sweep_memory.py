"""Peak memory of a streamed 10⁷-point sweep: ``ckptcalc sweep --points 1e7 --json`` and ``--csv``.

The sweep is evaluated a slice at a time and each column spooled to a temporary file, so the peak
resident set stays far below what the document would take in memory (about 2.6 GB of text). Prints
each run's peak RSS (the child's ru_maxrss) and wall time against the 1 GB budget.

Usage: python benchmarks/sweep_memory.py [POINTS]
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

BUDGET_MB = 1024.0


def peak(args: list[str]) -> tuple[float, float]:
    """(peak RSS in MB, wall seconds) of one ckptcalc process writing to /dev/null."""
    code = "from ckptcalc.cli import main; main()"
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    with open(os.devnull, "w") as sink:
        subprocess.run([sys.executable, "-c", code, *args], stdout=sink, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(after, before) / 1024.0, wall


def main() -> None:
    points = sys.argv[1] if len(sys.argv) > 1 else "1e7"
    print(f"sweep of {points} points; budget {BUDGET_MB:.0f} MB peak RSS")
    for output in ("--json", "--csv"):
        mb, wall = peak(["sweep", "--points", str(int(float(points))), output])
        verdict = "ok" if mb <= BUDGET_MB else "OVER"
        print(f"  sweep {output:6}  peak {mb:7.0f} MB  ({mb / BUDGET_MB:.2f}x budget)  {wall:6.1f} s  {verdict}")


if __name__ == "__main__":
    main()
