"""Regenerate every command's output shown in README.md and docs/ (or, with --check, fail when one differs).

    python docs/generate.py            rewrite the generated blocks in place
    python docs/generate.py --check    exit 5 and show the difference when a page is out of date

The pages' cog blocks call docs/cogging.py. The files processed are those
that hold a cog block: README.md first (docs/index.md is made from it), then
the pages under docs/, two at a time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MARKER = "[[" + "[cog"


def pages() -> list[str]:
    """README.md, then every page under docs/ with a cog block, in a fixed order."""
    found = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    return [str(p.relative_to(ROOT)) for p in found if MARKER in p.read_text(encoding="utf-8")]


def cog(page: str, check: bool) -> subprocess.CompletedProcess[str]:
    """cog over one page, as its own process (the pages' blocks run their commands one after another)."""
    args = [sys.executable, "-m", "cogapp", "-I", str(DOCS), "-p", "from cogging import *", "--verbosity", "1"]
    if check:
        args += ["--check", "--diff", "--check-fail-msg", "run python docs/generate.py to regenerate them"]
    else:
        args += ["-r"]
    return subprocess.run([*args, page], cwd=ROOT, capture_output=True, text=True, check=False)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    first, *rest = pages()
    done = [cog(first, check)]
    with ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) as pool:
        done += list(pool.map(lambda page: cog(page, check), rest))
    for result in done:
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
    return max(result.returncode for result in done)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
