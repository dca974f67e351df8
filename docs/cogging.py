"""Run the commands the pages show, and write what they print into the pages.

The pages call these functions from cog blocks (``python docs/generate.py``
regenerates them, ``python docs/generate.py --check`` fails when one is out of
date). Every command runs in a subprocess with a fixed environment, so the
output does not depend on the terminal, the locale or the presets of whoever
regenerates it, and in a fresh temporary directory that links the
repository's ``docs``, ``presets`` and ``tests`` folders: a command that
writes a file writes it there, and the repository stays clean.

A command that exits with another code than the one the page expects stops
the generation, so every command shown runs as written.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The folders a documented command may read, linked into its working directory.
LINKED = ("docs", "presets", "tests")

_scratch = Path(tempfile.mkdtemp(prefix="ckptcalc-docs-"))
atexit.register(shutil.rmtree, _scratch, ignore_errors=True)
_EMPTY_PRESETS = _scratch / "presets"
_EMPTY_PRESETS.mkdir()


def environment() -> dict[str, str]:
    """The environment every documented command runs in: 100 columns, no colour, UTF-8, no user presets."""
    bin_dir = str(Path(sys.executable).parent)
    return {
        "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "/usr/bin:/bin")]),
        "HOME": str(_scratch),
        "COLUMNS": "100",
        "LINES": "50",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "CKPTCALC_PRESET_PATH": str(_EMPTY_PRESETS),
        # A working tree's code, where it is put ahead of an installed copy.
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
    }


def workdir() -> Path:
    """A fresh directory holding links to the folders the commands read."""
    where = Path(tempfile.mkdtemp(dir=_scratch, prefix="run-"))
    for name in LINKED:
        (where / name).symlink_to(ROOT / name, target_is_directory=True)
    return where


def execute(command: str, cwd: Path, returncode: int = 0) -> str:
    """What ``command`` prints (stdout, then stderr), each line stripped of trailing blanks.

    Raises when it exits with another code than ``returncode``.
    """
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command}"],
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    if done.returncode != returncode:
        raise RuntimeError(
            f"{command!r} exited {done.returncode}, the page expects {returncode}\n"
            f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
        )
    text = done.stdout + done.stderr
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def excerpt(text: str, keep: Sequence[str] | None = None, head: int | None = None) -> str:
    """The lines of ``text`` that match one of the patterns ``keep`` (or its first ``head`` lines),
    with ``...`` standing for each run of lines left out."""
    lines = text.splitlines()
    if head is not None:
        chosen = set(range(min(head, len(lines))))
    elif keep is not None:
        patterns = [re.compile(p) for p in keep]
        chosen = {i for i, line in enumerate(lines) if any(p.search(line) for p in patterns)}
        missing = [p.pattern for p in patterns if not any(p.search(line) for line in lines)]
        if missing:
            raise RuntimeError(f"no line matches {missing} in:\n{text}")
    else:
        return text
    out: list[str] = []
    for i, line in enumerate(lines):
        if i in chosen:
            out.append(line)
        elif not out or out[-1] != "...":
            out.append("...")
    return "\n".join(out)


def _block(language: str, body: str) -> None:
    import cog

    cog.outl(f"```{language}")
    cog.outl(body)
    cog.outl("```")


def run(
    *commands: str,
    returncode: int = 0,
    keep: Sequence[str] | None = None,
    head: int | None = None,
) -> None:
    """A console block: each command after ``$``, then what it printed.

    The commands share one working directory, so a later one can read what an
    earlier one wrote. ``keep`` (patterns) or ``head`` shows an excerpt of the
    last command's output; ``returncode`` is the exit code the last one must give.
    """
    where = workdir()
    parts = []
    for n, command in enumerate(commands):
        last = n == len(commands) - 1
        text = execute(command, where, returncode if last else 0)
        if last:
            text = excerpt(text, keep, head)
        parts.append(f"$ {command}" + (f"\n{text}" if text else ""))
    _block("console", "\n".join(parts))


def help(command: str, keep: Sequence[str] | None = None) -> None:
    """The ``--help`` of ``ckptcalc COMMAND``, or the lines of it that match ``keep``."""
    run(" ".join(part for part in ("ckptcalc", command, "--help") if part), keep=keep)


def commands(*lines: str | tuple[str, int]) -> None:
    """A shell block of commands shown without their output; each is run to check that it works
    (a pair gives the exit code expected)."""
    where = workdir()
    shown = []
    for line in lines:
        command, code = (line, 0) if isinstance(line, str) else line
        execute(command, where, code)
        shown.append(command)
    _block("sh", "\n".join(shown))


def python(code: str) -> None:
    """A Python block, and below it what the code prints when run."""
    source = code.strip("\n")
    where = workdir()
    script = where / "example.py"
    script.write_text(source + "\n", encoding="utf-8")
    text = execute("python example.py", where)
    _block("python", source)
    if text:
        import cog

        cog.outl("")
        cog.outl("prints")
        cog.outl("")
        _block("text", text)


def signatures() -> None:
    """A Python block with the signature and first docstring paragraph of each function in ``ckptcalc.__all__``."""
    import inspect

    import ckptcalc

    def unquoted(text: str) -> str:
        return re.sub(r"'([^']*)'", r"\1", text) if ": '" in text or "-> '" in text else text

    out = []
    for name in ckptcalc.__all__:
        thing = getattr(ckptcalc, name)
        if not inspect.isfunction(thing):
            continue
        signature = inspect.signature(thing)
        params = []
        for param in signature.parameters.values():
            if param.kind is param.KEYWORD_ONLY and not any(p == "*" or p.startswith("*") for p in params):
                params.append("*")
            text = param.name if param.annotation is param.empty else f"{param.name}: {param.annotation}"
            if param.kind is param.VAR_KEYWORD:
                text = "**" + text
            if param.default is not param.empty:
                default = param.default
                text += f' = "{default}"' if isinstance(default, str) else f" = {default!r}"
            params.append(text)
        returns = signature.return_annotation
        doc = (inspect.getdoc(thing) or "").split("\n\n")[0]
        lines = [f"def {name}("] + [f"    {p}," for p in params] + [f") -> {returns}:"]
        lines += [f'    """{line}' if i == 0 else f"    {line}" for i, line in enumerate(doc.splitlines())]
        lines[-1] += '"""'
        out.append("\n".join(lines))
    _block("python", "\n\n\n".join(out))


def site_home() -> None:
    """README.md for the site's home page: its generated blocks as they stand, without cog's markers,
    and its links into docs/ made relative to docs/."""
    import cog

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = []
    skipping = False
    for line in text.splitlines():
        if "[[[cog" in line:
            skipping = "]]]" not in line
            continue
        if skipping:
            skipping = "]]]" not in line
            continue
        if "[[[end]]]" in line:
            continue
        lines.append(line)
    body = "\n".join(lines)
    body = re.sub(r"\]\(docs/", "](", body)
    cog.outl(body)


def inputs_table() -> None:
    """A Markdown table of every input: its preset key, flag, Python API keyword, unit kind and help."""
    import cog

    from ckptcalc.inputs.scenario import FIELDS

    cog.outl("| preset key | flag | API keyword | kind | meaning |")
    cog.outl("|---|---|---|---|---|")
    for field in FIELDS:
        meaning = field.help.replace("|", "\\|")
        cog.outl(f"| `{field.path}` | `--{field.flag}` | `{field.public}` | {field.kind} | {meaning} |")


def documented(command: str) -> None:
    """Fail unless the page names, in backticks, every key of the document ``command`` prints (the top
    level, ``inputs`` and ``levels[]``); writes nothing."""
    import json

    import cog

    document = json.loads(execute(command, workdir()))
    page = Path(cog.inFile).read_text(encoding="utf-8")
    keys = [*document, *document.get("inputs", {}), *(document.get("levels") or [{}])[0]]
    missing = [key for key in keys if f"`{key}`" not in page]
    if missing:
        raise RuntimeError(f"{cog.inFile} does not describe the keys {missing} of {command!r}")
