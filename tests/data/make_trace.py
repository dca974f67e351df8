"""Write trace-54d.json beside this script: a synthetic 54-day interruption log (docs/fit.md §11).

    python tests/data/make_trace.py

The same seed writes the same file. Only ``random.random()`` is drawn (its
sequence for a seed is stable across Python versions); Weibull gaps come
from inverting the distribution function by hand.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

SEED = 20240723
SHAPE = 0.75  # k < 1: failures cluster, as GPU cluster logs show
WINDOW_DAYS = 54.0
MEAN_GAP_DAYS = WINDOW_DAYS / 400  # about 400 interruptions in the window
WARM_UP_DAYS = 10.0  # the process runs before the snapshot starts, so day 0 falls mid-gap
PLANNED = 12  # maintenance events, to be filtered out with planned=false
COMPANIONS = 10  # a second node failing at the same instant as another, to be coalesced
NODES = 2048
JOB = "pretrain-54d"

# Shares loosely after Llama 3's table of unexpected interruptions (arXiv:2407.21783, table 5).
CAUSES = [
    ("gpu", 0.30),
    ("gpu_hbm", 0.17),
    ("software", 0.13),
    ("network", 0.09),
    ("host_maintenance", 0.08),
    ("gpu_sram", 0.05),
    ("nic", 0.04),
    ("dependency", 0.04),
    ("cpu", 0.02),
    ("other", 0.08),
]

OUTPUT = Path(__file__).with_name("trace-54d.json")


def _cause(rng: random.Random) -> str:
    draw = rng.random()
    for name, share in CAUSES:
        draw -= share
        if draw < 0:
            return name
    return CAUSES[-1][0]


Row = tuple[float, str, int, bool]  # day, cause, node, planned


def _record(row: Row) -> dict[str, object]:
    day, cause, node, planned = row
    return {
        "time": day,
        "node": f"node{node:04d}",
        "cause": {"component": cause},
        "planned": planned,
        "job": {"id": JOB},
    }


def build() -> str:
    """The file's text."""
    rng = random.Random(SEED)
    scale = MEAN_GAP_DAYS / math.gamma(1.0 + 1.0 / SHAPE)
    unexpected: list[Row] = []
    clock = -WARM_UP_DAYS
    while True:
        clock += scale * (-math.log(1.0 - rng.random())) ** (1.0 / SHAPE)
        if clock > WINDOW_DAYS:
            break
        if clock >= 0:
            unexpected.append((round(clock, 7), _cause(rng), int(rng.random() * NODES), False))
    days = [row[0] for row in unexpected]
    assert len(set(days)) == len(days) and min(days) > 0, "rounding merged two interruptions; change the seed"
    rows = list(unexpected)
    for index in sorted({int(rng.random() * len(unexpected)) for _ in range(COMPANIONS * 3)})[:COMPANIONS]:
        rows.append((unexpected[index][0], "network", int(rng.random() * NODES), False))
    for _ in range(PLANNED):
        rows.append((round(rng.random() * WINDOW_DAYS, 7), "maintenance", 0, True))
    rows.sort(key=lambda row: row[0])  # stable: a companion stays after the interruption it joins
    lines = ",\n".join(" " + json.dumps(_record(row)) for row in rows)
    return f"[\n{lines}\n]\n"


if __name__ == "__main__":
    OUTPUT.write_text(build(), encoding="utf-8")
    print(f"wrote {OUTPUT}")
