"""Regenerate every command's output shown in README.md and docs/ (or, with --check, fail when one differs).

    python docs/generate.py            rewrite the generated blocks in place
    python docs/generate.py --check    exit 5 and show the difference when a page is out of date

The pages' cog blocks call docs/cogging.py; the files processed are those
that hold a cog block, README.md first (docs/index.md is made from it).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MARKER = "[[" + "[cog"


def pages() -> list[str]:
    """README.md, then every page under docs/ with a cog block, in a fixed order."""
    found = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    return [str(p.relative_to(ROOT)) for p in found if MARKER in p.read_text(encoding="utf-8")]


def main(argv: list[str]) -> int:
    from cogapp import Cog

    check = "--check" in argv
    args = ["cog", "-I", str(DOCS), "-p", "from cogging import *", "--verbosity", "1"]
    if check:
        args += ["--check", "--diff", "--check-fail-msg", "run python docs/generate.py to regenerate them"]
    else:
        args += ["-r"]
    import os

    os.chdir(ROOT)
    return Cog().main(args + pages())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
