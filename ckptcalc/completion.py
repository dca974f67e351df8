"""Shell completion of what the options take: preset names, ``--over`` inputs, ``--value`` keys and
schema names.

Typer calls these while the shell asks for candidates (``_CKPTCALC_COMPLETE=complete_bash``), so they
stay light: no numpy, no Rich, no evaluation. ``--value`` keys come from the command's JSON Schema,
a static list that holds for every configuration (array items as their first index, ``levels.0.name``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def presets(incomplete: str) -> list[str]:
    """The preset names found (``CKPTCALC_PRESET_PATH``, then the shipped ones) that start with ``incomplete``."""
    from ckptcalc.errors import CkptError
    from ckptcalc.inputs import presets as found

    try:
        names = [row.name for row in found.available()]
    except (CkptError, OSError):
        return []
    return sorted({name for name in names if name.startswith(incomplete)})


def over(incomplete: str) -> list[str]:
    """The inputs ``sweep --over`` varies, by flag name."""
    from ckptcalc.inputs.fields import OVER_FIELDS

    return [f.flag for f in OVER_FIELDS if f.flag.startswith(incomplete)]


def schema_names(incomplete: str) -> list[str]:
    """The commands ``ckptcalc schema`` has a schema for."""
    from ckptcalc.commands import catalogue as schema

    return [name for name in schema.SCHEMAS if name.startswith(incomplete)]


def schema_paths(node: Any, prefix: str = "") -> list[str]:
    """Every dotted path to a single value that a document of JSON Schema ``node`` can hold: object
    properties by name, array items by the index 0 (each position of a fixed-length array)."""
    if not isinstance(node, dict):
        return []
    found: list[str] = []
    for branch in node.get("oneOf", []) + node.get("anyOf", []):
        found += [p for p in schema_paths(branch, prefix) if p not in found]
    kinds = node.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}
    if "properties" in node:
        for key, child in node["properties"].items():
            found += [p for p in schema_paths(child, f"{prefix}{key}.") if p not in found]
    elif "prefixItems" in node:
        for index, child in enumerate(node["prefixItems"]):
            found += [p for p in schema_paths(child, f"{prefix}{index}.") if p not in found]
    elif isinstance(node.get("items"), dict):
        found += [p for p in schema_paths(node["items"], f"{prefix}0.") if p not in found]
    elif prefix and not found and kinds != {"boolean"} and ("object" not in kinds and "array" not in kinds):
        found.append(prefix.removesuffix("."))
    return found


def value_keys(command: str) -> Callable[[str], list[str]]:
    """The completion of ``COMMAND --value``: the scalar paths of the command's JSON document."""

    def complete(incomplete: str) -> list[str]:
        from ckptcalc.commands import catalogue as schema

        return [p for p in schema_paths(schema.for_command(command)) if p.startswith(incomplete)]

    return complete
