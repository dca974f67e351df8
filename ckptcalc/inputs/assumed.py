"""What a job runs with that nobody stated: the default preset's values when the user named no preset,
a per-GPU failure rate held at a new GPU count, and the model's own defaults (docs/guide/assumed.md).

Words come from :func:`ckptcalc.output.wording.assumed`; this module only finds the values.
"""

from __future__ import annotations

from ckptcalc.inputs.fields import BY_NAME, FIELDS
from ckptcalc.inputs.scenario import SCALED, Assumed, Job
from ckptcalc.mechanisms import registry


def given(job: Job, name: str) -> bool:
    """Whether the value of ``name`` was given by the caller: a flag, an API keyword or a what-if."""
    origin = job.scenario.origin.get(name)
    return origin is None or origin == BY_NAME[name].public or origin.startswith("what_if ")


def of(job: Job, preset: str | None, *, default: bool, base_gpus: float | None) -> tuple[Assumed, ...]:
    """The values ``job`` assumes, in the order of :data:`FIELDS`. ``preset`` is the preset the job starts
    from, ``default`` whether the user left it unnamed (its values are then assumed too), ``base_gpus``
    that preset's GPU count (for a failure rate held from it).

    >>> from ckptcalc import api
    >>> [(a.name, a.how) for a in api.job(params="70B", gpus=4096, bw="400GB/s").assumed]
    [('bytes_per_param', 'preset'), ('gpu_mtbf_s', 'held'), ('restart_s', 'preset')]
    """
    s, c = job.scenario, job.config
    found: dict[str, Assumed] = {}
    for name, value in s.values().items():
        if name == "gpu_mtbf_s" and s.origin.get(name) == SCALED:
            found[name] = Assumed(name, float(value), "held", preset, base_gpus)
        elif default and not given(job, name):
            found[name] = Assumed(name, float(value), "preset", preset)
    if s.params is not None and s.checkpoint_bytes is None and s.bytes_per_param is None:
        found["bytes_per_param"] = Assumed("bytes_per_param", c.checkpoint_bytes / s.params, "default")
    for name, value in registry.defaults_taken(s, c):  # a mechanism's own defaults
        found[name] = Assumed(name, value, "default")
    order = {spec.name: n for n, spec in enumerate(FIELDS)}
    return tuple(sorted(found.values(), key=lambda item: order[item.name]))
