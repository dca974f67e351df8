"""An event-by-event simulation of silent events on nested synchronous tiers (docs/model.md §16.5).

Written from the semantics of docs/model.md §12 and §16 alone, sharing no code with the model:

* tier-1 checkpoints every τ₁ of progress, tier i at every m_i-th one of tier i − 1; a tier-e
  boundary stalls s₁ + … + s_e, and its checkpoints exist once that stall is over;
* fail-stop failures come at 1/M in elapsed time (work, stalls and restarts alike); one of class c
  (chance q_c) goes back to the newest checkpoint on a tier ≥ c, the tiers below start over there,
  and it restarts in r_c; a failure during a restart draws a class afresh, restarts in its r, and
  goes back at least as far;
* silent onsets come at λ_s per unit of clean work (re-done work counts); each is noticed after
  D ~ Exp(d) of further work. A fail-stop that goes back to a checkpoint at or before the onset
  erases it; otherwise its detection clock runs on. On detection the job goes back to the newest
  retained storage checkpoint at or before the onset (the newest ``keep`` storage checkpoints are
  retained, and one kept for good per K_p of work), deletes the newer ones, and restarts in
  r + s_k. With none retained and none kept for good it goes back to the onset's own storage
  checkpoint, and the event counts as unrecoverable.

Positions are counted in whole tier-1 segments, so stretches without an event are jumped in one
step. Effective time is progress over elapsed time, in batches whose ratios give the 95 % interval.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from ckptcalc.model.statistics import BATCHES, T975_19


@dataclass(frozen=True)
class Job:
    """A schedule, its failures and its silent events, in seconds (``keep`` None: all retained)."""

    tau1_s: float
    every: tuple[int, ...]
    stalls: tuple[float, ...]
    shares: tuple[float, ...]
    restarts: tuple[float, ...]
    mtbf_s: float
    silent_mtbf_s: float
    latency_s: float
    silent_restart_s: float
    keep: int | None
    keep_every_s: float | None


@dataclass(frozen=True)
class Outcome:
    effective: float
    half_width: float
    onsets: int
    erased: int
    detected: int
    unrecoverable: int

    @property
    def low(self) -> float:
        return self.effective - self.half_width

    @property
    def high(self) -> float:
        return self.effective + self.half_width


class _Run:
    def __init__(self, job: Job, seed: int) -> None:
        self.job = job
        self.rng = random.Random(seed)
        # Segments between checkpoints of each tier: M_1 = 1, M_i = m_2·…·m_i.
        sizes = [1]
        for m in job.every:
            sizes.append(sizes[-1] * m)
        self.sizes = sizes
        self.tiers = len(sizes)
        self.top = sizes[-1]
        self.cumulative = [sum(job.shares[: c + 1]) for c in range(self.tiers)]
        self.n = 0  # the last boundary passed (its stall over), in tier-1 segments
        self.offset = 0.0  # work done into the segment after it
        self.last = [0] * self.tiers  # newest checkpoint of each tier, a boundary index
        self.retained: list[int] = [0]  # storage checkpoints retained, oldest first
        self.onset: float | None = None  # progress at the pending onset
        self.clock = 0.0  # elapsed time
        self.to_failure = self.rng.expovariate(1.0 / job.mtbf_s)
        self.to_onset = self.rng.expovariate(1.0 / job.silent_mtbf_s)
        self.to_detection = math.inf
        self.onsets = self.erased = self.detected = self.unrecoverable = 0

    # ------------------------------------------------------------ geometry

    def level(self, n: int) -> int:
        """The highest tier whose boundary is at segment index ``n`` (1-based tiers, n > 0)."""
        e = 1
        while e < self.tiers and n % self.sizes[e] == 0:
            e += 1
        return e

    def elapsed(self, n0: int, n: int) -> float:
        """Elapsed time from boundary ``n0`` (its stall over) to boundary ``n`` (its stall over)."""
        total = (n - n0) * self.job.tau1_s
        for size, stall in zip(self.sizes, self.job.stalls, strict=True):
            total += stall * (n // size - n0 // size)
        return total

    def passed(self, n0: int, n: int) -> None:
        """Every checkpoint of the boundaries n0 + 1 … n is written."""
        for c, size in enumerate(self.sizes):
            newest = n // size * size
            if newest > n0:
                self.last[c] = newest
        first = n0 // self.top * self.top + self.top
        if first <= n and self.job.keep is not None:
            limit = self.job.keep
            start = first if limit is None else max(first, n // self.top * self.top - (limit - 1) * self.top)
            self.retained.extend(range(start, n + 1, self.top))
            if limit is not None and len(self.retained) > limit:
                del self.retained[: len(self.retained) - limit]

    # ------------------------------------------------------------ events

    def draw_class(self) -> int:
        u = self.rng.random()
        for c, edge in enumerate(self.cumulative):
            if u < edge:
                return c
        return self.tiers - 1

    def restart(self, duration: float, landing: int) -> int:
        """Restart for ``duration``; a failure during it draws a class afresh. Returns the tier whose
        newest checkpoint the job resumes from (the highest drawn)."""
        while self.to_failure < duration:
            self.clock += self.to_failure
            c = self.draw_class()
            landing = max(landing, c)
            duration = self.job.restarts[c]
            self.to_failure = self.rng.expovariate(1.0 / self.job.mtbf_s)
        self.clock += duration
        self.to_failure -= duration
        return landing

    def fail(self) -> None:
        self.clock += self.to_failure
        self.to_failure = self.rng.expovariate(1.0 / self.job.mtbf_s)
        c = self.draw_class()
        k = self.restart(self.job.restarts[c], c)
        back = self.last[k]
        for b in range(k):
            self.last[b] = back
        self.n, self.offset = back, 0.0
        if self.onset is not None and back * self.job.tau1_s <= self.onset:
            self.onset, self.to_detection = None, math.inf
            self.erased += 1
            self.to_onset = self.rng.expovariate(1.0 / self.job.silent_mtbf_s)

    def start_onset(self) -> None:
        self.onset = self.n * self.job.tau1_s + self.offset
        self.onsets += 1
        self.to_onset = math.inf
        self.to_detection = self.rng.expovariate(1.0 / self.job.latency_s) if self.job.latency_s > 0 else 0.0

    def detect(self) -> None:
        assert self.onset is not None
        self.detected += 1
        tau1, top = self.job.tau1_s, self.top
        own = int(self.onset / (top * tau1)) * top  # the onset's own storage checkpoint
        # With every checkpoint retained, the onset's own is the newest clean one.
        clean = [own] if self.job.keep is None else [p for p in self.retained if p * tau1 <= self.onset]
        if clean:
            back = clean[-1]
        else:
            self.unrecoverable += 1
            back = own if self.job.keep_every_s is None else self.kept_for_good(own)
        if self.job.keep is not None:
            self.retained = [p for p in self.retained if p <= back]
            if not self.retained or self.retained[-1] != back:
                self.retained.append(back)
        self.onset, self.to_detection = None, math.inf
        self.to_onset = self.rng.expovariate(1.0 / self.job.silent_mtbf_s)
        self.restart(self.job.silent_restart_s, self.tiers - 1)
        self.last = [back] * self.tiers
        self.n, self.offset = back, 0.0

    def kept_for_good(self, before: int) -> int:
        """The newest storage checkpoint kept for good at or before boundary ``before``: the first
        storage checkpoint at or after each multiple of K_p (and the start)."""
        assert self.job.keep_every_s is not None
        tau_top = self.top * self.job.tau1_s
        j = math.floor(before * self.job.tau1_s / self.job.keep_every_s)
        while j > 0:
            at = math.ceil(j * self.job.keep_every_s / tau_top - 1e-9) * self.top
            if at <= before:
                return at
            j -= 1
        return 0

    # ------------------------------------------------------------ stepping

    def work_left(self) -> float:
        return self.to_detection if self.onset is not None else self.to_onset

    def spend_work(self, amount: float) -> None:
        if self.onset is not None:
            self.to_detection -= amount
        else:
            self.to_onset -= amount

    def jump(self) -> None:
        """From a boundary, pass every whole segment that ends before the next event."""
        job = self.job
        per = job.tau1_s + sum(s / size for s, size in zip(job.stalls, self.sizes, strict=True))
        by_work = math.floor(self.work_left() / job.tau1_s) if math.isfinite(self.work_left()) else 1 << 60
        k = min(by_work, int(self.to_failure / per) + 1)
        n0 = self.n
        while k > 0 and self.elapsed(n0, n0 + k) > self.to_failure:
            k -= 1
        while k < by_work and self.elapsed(n0, n0 + k + 1) <= self.to_failure:
            k += 1
        if k <= 0:
            return
        spent = self.elapsed(n0, n0 + k)
        self.clock += spent
        self.to_failure -= spent
        self.spend_work(k * job.tau1_s)
        self.passed(n0, n0 + k)
        self.n = n0 + k

    def step(self) -> None:
        """Advance to the next event: a boundary, an onset, a detection or a failure."""
        if self.offset == 0.0:
            self.jump()
        job = self.job
        work = job.tau1_s - self.offset
        first = min(work, self.to_failure, self.work_left())
        if first == self.to_failure:
            self.offset += first
            self.spend_work(first)
            self.fail()
            return
        if first < work:
            self.clock += first
            self.to_failure -= first
            self.offset += first
            self.spend_work(first)
            if self.onset is None:
                self.start_onset()
            else:
                self.detect()
            return
        self.clock += work
        self.to_failure -= work
        self.spend_work(work)
        stall = sum(job.stalls[: self.level(self.n + 1)])
        if self.to_failure < stall:
            self.offset = job.tau1_s
            self.fail()
            return
        self.clock += stall
        self.to_failure -= stall
        self.passed(self.n, self.n + 1)
        self.n += 1
        self.offset = 0.0

    @property
    def progress(self) -> float:
        return self.n * self.job.tau1_s + self.offset


def simulate(job: Job, *, elapsed_s: float, seed: int) -> Outcome:
    """Run ``job`` for about ``elapsed_s`` of elapsed time, after a warm-up of a twentieth of it."""
    run = _Run(job, seed)
    warm = elapsed_s / BATCHES
    while run.clock < warm:
        run.step()
    ratios: list[float] = []
    useful = spent = 0.0
    for b in range(BATCHES):
        start_clock, start_progress = run.clock, run.progress
        end = warm + (b + 1) * elapsed_s / BATCHES
        while run.clock < end:
            run.step()
        ratios.append((run.progress - start_progress) / (run.clock - start_clock))
        useful += run.progress - start_progress
        spent += run.clock - start_clock
    mean = sum(ratios) / BATCHES
    sd = math.sqrt(sum((x - mean) ** 2 for x in ratios) / (BATCHES - 1))
    half = T975_19 * sd / math.sqrt(BATCHES)
    return Outcome(useful / spent, half, run.onsets, run.erased, run.detected, run.unrecoverable)
