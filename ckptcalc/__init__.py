"""ckptcalc: how often a training job should checkpoint, and what failures cost it.

The public API is the pure model (:mod:`ckptcalc.model`), the unit parsers
(:mod:`ckptcalc.units`) and the preset loader (:mod:`ckptcalc.presets`).
"""

__version__ = "0.1.0"
