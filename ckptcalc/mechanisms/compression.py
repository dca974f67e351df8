"""Compression: a tier's checkpoints pass a codec and move size / c bytes (docs/model.md §17.3).

A tier cost. With a ratio c through a codec of throughput B_c, a write over a link of bandwidth B
takes size/B_c + size/(c·B) (size/(c·B) through a free codec, without a codec bandwidth), a reload
over the read bandwidth the same way, and the tier keeps size/c a checkpoint. It applies to storage
(``--compression``, ``--codec-bw``, or the keys on the last ``[[levels]]`` tier) and to any middle
tier stating its own keys; the first tier, the replica in a peer's memory, is never compressed. As a
lever ("compress 4× at 50 GB/s per GPU", where the job compresses none) it answers "compress, or buy
bandwidth?".

>>> round(coded_time(6.48e12, 2e12, 4.0, 8.192e14), 7)
0.8179102
"""

from __future__ import annotations

import math
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.mechanisms import limits
from ckptcalc.mechanisms.base import LARGEST, Input, Mechanism, Num, TierKey

RATIO = "compression"
CODEC = "codec_bandwidth"

#: What the lever assumes: a 4× ratio through a codec of 50 GB/s per GPU (docs/model.md §17.3).
LEVER_RATIO = 4.0
LEVER_CODEC_PER_GPU = 50e9

_FIRST_TIER = "the first tier is the in-memory replica, which is not compressed; compression goes on a later tier"


def coded_time(size_bytes: Num, bandwidth: Num, ratio: Num, codec_bandwidth: Num | None) -> Num:
    """Time to move a checkpoint compressed ``ratio``× through a codec of ``codec_bandwidth`` over a link of
    ``bandwidth``: size/B_c + size/(c·B); without a codec bandwidth the codec is free (size/(c·B))."""
    moved = size_bytes / (ratio * bandwidth)
    if codec_bandwidth is None:
        return moved
    return size_bytes / codec_bandwidth + moved


def _ratio(where: str, value: float) -> None:
    if not (math.isfinite(value) and 1.0 <= value <= LARGEST):
        raise InputError(f"must be a compression ratio from 1 to {LARGEST:g}, got {value:g}", where=where)


def _f(value: Any) -> float | None:
    return None if value is None else float(value)


class Compression(Mechanism):
    name = "compression"
    kind = "tier_cost"
    inputs = (
        Input(
            RATIO,
            "number",
            "compression",
            "storage",
            "compression",
            "Compression ratio of storage checkpoints (1 or more, e.g. 4): writes and reloads move size / this.",
            after=limits.WRITTEN,
        ),
        Input(
            CODEC,
            "rate",
            "codec-bw",
            "storage",
            "codec_bandwidth",
            "Aggregate throughput of the compression codec (per GPU: 50GB/s/gpu); needs --compression.",
            after=RATIO,
        ),
    )
    tier_keys = (
        TierKey(RATIO, "number", "not_first", _FIRST_TIER, middle=True),
        TierKey(CODEC, "rate", "not_first", _FIRST_TIER, middle=True),
    )
    levers = ("compression",)
    break_even_words = ((CODEC, "", "codec bandwidth"),)
    example = ((RATIO, "4"), (CODEC, "50GB/s/gpu"))
    limit = ((RATIO, "1"), (CODEC, ""))  # a ratio of 1 through a free codec

    def moved(self, holder: Any, size_bytes: Num, bandwidth: Num, time_s: Num) -> Num:
        ratio = None if holder is None else getattr(holder, RATIO)
        if ratio is None:
            return time_s
        return coded_time(size_bytes, bandwidth, ratio, getattr(holder, CODEC))

    def stored(self, holder: Any, size_bytes: Num) -> Num:
        ratio = None if holder is None else getattr(holder, RATIO)
        return size_bytes if ratio is None else size_bytes / ratio

    def without(self, config: Any) -> Any:
        return config.replace(**{RATIO: None, CODEC: None})

    def lever(self, config: Any, gpus: float | None) -> list[tuple[str, Any]]:
        if getattr(config, RATIO) is not None or gpus is None:
            return []
        return [("compression", config.replace(**{RATIO: LEVER_RATIO, CODEC: LEVER_CODEC_PER_GPU * gpus}))]

    def lever_name(self, key: str, changed: Any, rate: Any) -> str | None:
        if key != "compression":
            return None
        return f"compress {float(getattr(changed, RATIO)):g}× at {rate(float(getattr(changed, CODEC)))}"

    def break_even(self, key: str, config: Any, gpus: float | None) -> tuple[str, float, str] | None:
        """The codec bandwidth above which the ``compression`` lever (``config`` the job with it) pays
        (docs/model.md §17.3): a checkpoint then moves in size/B_c + size/(c·B), no longer than size/B
        uncompressed, at B_c* = c·B/(c − 1); None for a ratio of 1 or a free codec."""
        if key != "compression":
            return None
        ratio, codec = getattr(config, RATIO), getattr(config, CODEC)
        if ratio is None or codec is None or not float(ratio) > 1.0:
            return None
        return (CODEC, float(ratio) * float(config.bandwidth) / (float(ratio) - 1.0), "rate")

    def check(self, where: Any, name: str, value: float) -> bool:
        return name == RATIO  # checked with what it changes (resolve)

    def resolve(self, scenario: Any, config: Any) -> Any:
        ratio, codec = getattr(scenario, RATIO), getattr(scenario, CODEC)
        if codec is not None and ratio is None:
            raise InputError("a codec needs its ratio ({compression})", where=scenario.where(CODEC))
        if ratio is None:
            return config
        _ratio(scenario.where(RATIO), ratio)
        return config.replace(**{RATIO: ratio, CODEC: codec})

    def check_tier(self, values: dict[str, Any], where: str) -> None:
        if values.get(CODEC) is not None and values.get(RATIO) is None:
            raise InputError("a codec needs its ratio (compression)", where=f"{where}.{CODEC}")
        if values.get(RATIO) is not None:
            _ratio(f"{where}.{RATIO}", values[RATIO])

    def echo(self, config: Any) -> dict[str, float | None]:
        return {RATIO: _f(getattr(config, RATIO)), "codec_bandwidth_bytes_per_s": _f(getattr(config, CODEC))}

    def tier_echo(self, holder: Any) -> dict[str, float | None]:
        if holder is None:
            return {RATIO: None, "codec_bandwidth_bytes_per_s": None}
        return self.echo(holder)

    def input_schema(self) -> dict[str, Any]:
        return {
            RATIO: {"type": ["number", "null"], "minimum": 1, "description": "storage compression ratio"},
            "codec_bandwidth_bytes_per_s": {
                "type": ["number", "null"],
                "description": "the codec's throughput, bytes per second",
            },
        }

    def tier_schema(self) -> dict[str, Any]:
        return {
            RATIO: {"type": ["number", "null"], "minimum": 1, "description": "the tier's compression ratio"},
            "codec_bandwidth_bytes_per_s": {
                "type": ["number", "null"],
                "description": "its codec's throughput, bytes per second",
            },
        }


MECHANISM = Compression()
