"""``--markdown`` survives anything (ckptcalc.output.markdown): every document is parsed by a Markdown
library (markdown-it-py, CommonMark with GitHub's tables), fed preset names, paths, descriptions,
scenario names, check errors, log names and failure causes holding ``|``, a newline, backticks and
``<script>``. Each table keeps its columns, each cell reads back as written, no HTML passes, and
documents appended to one file stay apart."""

from __future__ import annotations

import doctest
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token
from typer.testing import CliRunner

from ckptcalc.cli import app
from ckptcalc.output import wording
from ckptcalc.output.markdown import cell, inline, table

PARSER = MarkdownIt("commonmark").enable("table")

#: What a hostile name or cause holds: a pipe, a newline, backticks and a script.
HOSTILE = "a|b\n`c` <script>alert(1)</script>"
#: The same in a path: the directory's name ends in ``<`` and the file's begins with ``script>``.
HOSTILE_DIR = "a|b\n`c` <script>alert(1)<"
HAND = Path(__file__).parent / "data" / "hand-run.jsonl"

#: What a cell shows for a line break.
_BREAK = re.compile(r"\r\n|[\r\n\v\f\x85\u2028\u2029]")


def flat(text: str) -> str:
    """``text`` as a cell or a line reads: line breaks and tabs as spaces, control characters as their
    code (``\\x1b``), no spaces at either end."""
    spaced = _BREAK.sub(" ", text).replace("\t", " ")
    return "".join(
        f"\\x{ord(char):02x}" if ord(char) < 32 or 0x7F <= ord(char) <= 0x9F else char for char in spaced
    ).strip()


@dataclass
class Parsed:
    """What a Markdown document renders to, block by block."""

    tables: list[tuple[list[str], list[list[str]]]] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    quotes: list[str] = field(default_factory=list)
    paragraphs: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)


def _text(token: Token, allowed: frozenset[str] = frozenset({"text"})) -> str:
    """An inline token's rendered text; any markup in it beyond ``allowed`` fails the test."""
    children = token.children or []
    kinds = {child.type for child in children}
    assert kinds <= allowed, (token.content, kinds)
    return "".join(child.content for child in children if child.type == "text")


def _cells(line: str) -> int:
    """The cells of one table line, split where GitHub splits them: at each pipe with no backslash."""
    return len(re.findall(r"(?<!\\)\|", line)) - 1


def parse(text: str) -> Parsed:
    """Parse ``text`` and check the parts that hold no markup: every table line has the header's
    number of cells and belongs to a table, no raw HTML anywhere."""
    tokens = PARSER.parse(text)
    html = PARSER.render(text)
    assert "<script" not in html
    lines = text.split("\n")
    in_table: set[int] = set()
    out = Parsed(types=[t.type for t in tokens])
    row: list[str] = []
    rows: list[list[str]] = []
    stack: list[str] = []
    for token in tokens:
        assert token.type not in ("html_block", "html_inline"), token
        assert all(child.type != "html_inline" for child in token.children or []), token.content
        if token.nesting == 1:
            stack.append(token.type)
        elif token.nesting == -1:
            stack.pop()
        if token.type == "table_open":
            assert token.map is not None
            start, end = token.map
            widths = {_cells(line) for line in lines[start:end]}
            assert len(widths) == 1, lines[start:end]
            in_table.update(range(start, end))
            rows = []
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close":
            rows.append(row)
        elif token.type == "table_close":
            out.tables.append((rows[0], rows[1:]))
            assert all(len(r) == len(rows[0]) for r in rows)
        elif token.type == "inline":
            if stack[-1] in ("th_open", "td_open"):
                row.append(_text(token))
            elif stack[-1] == "heading_open":
                out.headings.append(_text(token))
            elif "blockquote_open" in stack:
                out.quotes.append(_text(token))
            else:
                out.paragraphs.append(_text(token, frozenset({"text", "strong_open", "strong_close"})))
    stray = [n for n, line in enumerate(lines) if line.startswith("|") and n not in in_table]
    assert stray == [], [lines[n] for n in stray]
    return out


def every_cell(parsed: Parsed) -> set[str]:
    return {c for header, rows in parsed.tables for c in [*header, *(c for r in rows for c in r)]}


# ------------------------------------------------------------------ the escaping itself

PIECES = ["|", "\n", "\r\n", "`", "``", "<script>", "</script>", "&amp;", "&", "\\", "*", "_", "[x](y)",
          "![i](j)", "#", "~~", "$", "<", ">", "- ", "1. ", "---", "==", "  ", "\t", "<!--", "http://x.y"]  # fmt: skip
TEXT = st.lists(
    st.one_of(st.sampled_from(PIECES), st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\0"))),
    max_size=6,
).map("".join)


def _kind(text: str) -> str:
    return "with markup characters" if any(p in text for p in "|`<>&\\*_[]#~$\n") else "plain"


@settings(max_examples=60)
@given(TEXT, TEXT)
def test_a_cell_reads_back_as_written(first: str, second: str) -> None:
    # NUL is left out: CommonMark itself reads it as U+FFFD; the command line writes it as \x00.
    event(_kind(first + second))
    parsed = parse("\n".join(table([first, "h"], [[second, first], ["x", second]])))
    event("reached the assertion")
    assert parsed.tables == [([flat(first), "h"], [[flat(second), flat(first)], ["x", flat(second)]])]


@settings(max_examples=60)
@given(TEXT)
def test_a_heading_and_a_quote_read_back_as_written(text: str) -> None:
    event(_kind(text))
    parsed = parse(f"## {inline(text)}\n\n> warning: {inline(text)}\n\n> {inline(text)}\n\nend {inline(text)}\n")
    event("reached the assertion")
    expected = flat(text)
    assert parsed.headings == [expected]
    # A quote holding nothing is an empty quote: no paragraph in it.
    assert parsed.quotes == [f"warning: {expected}".strip(), *([expected] if expected else [])]
    assert parsed.paragraphs == [f"end {expected}".strip()]


@pytest.mark.parametrize(
    "text",
    ["4.5 min", "+4.40 pp", "-0.74 pp", "llama3-405b", "restart=2min", "92.5 %", "memory+local nvme+storage",
     "6.48 TB", "42.3 s × 35", "2.80 h to 3.40 h", "1.00 % of failures (99.0 % in memory)", "(exact model);"],
)  # fmt: skip
def test_ordinary_values_are_written_as_they_are(text: str) -> None:
    assert cell(text) == inline(text) == text


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("a|b", "a\\|b"),
        ("x\ny\r\nz", "x y z"),
        ("`code`", "\\`code\\`"),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("&amp;", "&amp;amp;"),
        ("$5 and $6", "\\$5 and \\$6"),
        ("   ", " "),
    ],
)
def test_what_a_cell_escapes(text: str, written: str) -> None:
    assert cell(text) == written


@pytest.mark.parametrize(
    ("text", "written", "block"),
    [("- x", "\\- x", "bullet_list_open"), ("1. x", "1\\. x", "ordered_list_open"),
     ("2) x", "2\\) x", "ordered_list_open"), ("---", "\\---", "hr"), ("+ x", "\\+ x", "bullet_list_open"),
     ("# x", "\\# x", "heading_open")],
)  # fmt: skip
def test_a_quoted_line_opening_like_a_block_stays_a_line(text: str, written: str, block: str) -> None:
    assert inline(text) == written
    assert block in parse(f"> {text}\n").types  # unescaped, it opens that block
    parsed = parse(f"> {written}\n")
    assert block not in parsed.types and parsed.quotes == [text]


def test_the_examples_in_the_docstrings() -> None:
    from ckptcalc.output import markdown

    failures, tried = doctest.testmod(markdown)
    assert (failures, tried) == (0, 5)


def test_a_row_of_the_wrong_width_is_refused() -> None:
    with pytest.raises(ValueError, match="a row of 1 cells under a header of 2"):
        table(["a", "b"], [["x"]])


# ------------------------------------------------------------------ every command, fed hostile names

_BAND = '[failures]\nmtbf_ci95 = ["2.8h", "3.4h"]\n'
_DESCRIPTION = json.dumps(HOSTILE)


@dataclass
class Outputs:
    """Each command's Markdown and JSON, run once for the module."""

    markdown: dict[str, str]
    json: dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outputs]:
    root = tmp_path_factory.mktemp("hostile")
    users = root / "user-presets"
    users.mkdir()
    folder = root / HOSTILE_DIR
    folder.mkdir()
    replica = folder / "script>.toml"  # the path reads ".../a|b\n`c` <script>alert(1)</script>.toml"
    replica.write_text(
        f'schema_version = 1\nbase = "gemini-inmemory"\ndescription = {_DESCRIPTION}\n', encoding="utf-8"
    )
    # A preset found by a name with a pipe, a backtick and angle brackets (a file name holds no newline
    # that a preset name may), with an MTBF interval.
    (users / "u|v`w<x>.toml").write_text(
        f'schema_version = 1\nbase = "llama3-405b"\ndescription = {_DESCRIPTION}\n{_BAND}', encoding="utf-8"
    )
    broken = folder / "bad.toml"
    broken.write_text(f'schema_version = 1\nbase = "llama3-405b"\n[failures]\n{json.dumps(HOSTILE)} = 1\n')
    log = folder / "script>.jsonl"
    causes = iter([HOSTILE, "gpu | nic\n`x`", HOSTILE, "<b>**bold**</b>"])
    with HAND.open(encoding="utf-8") as source:
        lines = [json.loads(line) for line in source]
    for line in lines:
        if line["event"] == "failure":
            line["cause"] = next(causes)
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    commands = {
        "optimize": ["optimize", "--preset", str(replica)],
        "compare": ["compare", "u|v`w<x>", str(replica), "--what-if", "restart=2min", "--what-if", "shape=0.7"],
        "check": ["check", "u|v`w<x>", str(replica), str(broken), "--min-effective", "0.95"],
        "sweep": ["sweep", "--preset", "u|v`w<x>", "--points", "3"],
        "analyze": ["analyze", str(log), "--time-unit", "min"],
    }
    runner = CliRunner()
    found = Outputs({}, {})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CKPTCALC_PRESET_PATH", str(users))
        patch.setenv("NO_COLOR", "1")
        for name, args in commands.items():
            # check's broken preset is exit 2, after the verdict on every preset.
            code = 2 if name == "check" else 0
            done = runner.invoke(app, [*args, "--markdown"])
            assert done.exit_code == code, done.stderr
            found.markdown[name] = done.stdout
            done = runner.invoke(app, [*args, "--json"])
            assert done.exit_code == code, done.stderr
            found.json[name] = json.loads(done.stdout)
    yield found


COMMANDS = ["optimize", "compare", "check", "sweep", "analyze"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_document_is_one_heading_then_blocks_then_one_blank_line(outputs: Outputs, command: str) -> None:
    text = outputs.markdown[command]
    assert text.startswith("#") and text.endswith("\n\n") and not text.endswith("\n\n\n")
    assert "\n\n\n" not in text
    parsed = parse(text)
    assert parsed.types[0] == "heading_open" and parsed.tables


def test_optimize_names_the_hostile_path(outputs: Outputs) -> None:
    doc, parsed = outputs.json["optimize"], parse(outputs.markdown["optimize"])
    assert HOSTILE in doc["preset"]
    assert parsed.headings == [flat(f"ckptcalc optimize: {doc['preset']}")]
    # The replica's schedule, and the levers by name, each cell as the JSON document words it.
    # (a lever with a cost says where it starts to pay after its name)
    assert {v["name"] + wording.break_even(v["break_even"]) for v in doc["levers"]} <= every_cell(parsed)
    assert {"memory", "storage"} <= every_cell(parsed)


def test_compare_keeps_every_scenario_in_every_table(outputs: Outputs) -> None:
    doc, parsed = outputs.json["compare"], parse(outputs.markdown["compare"])
    names = [flat(s["name"]) for s in doc["scenarios"]]
    assert names == ["u|v`w<x>", flat(doc["scenarios"][1]["name"]), "restart=2min", "shape=0.7"]
    assert HOSTILE.replace("\n", " ") in names[1]
    inputs, results, levels = parsed.tables
    assert [r[0] for r in inputs[1]] == [r[0] for r in results[1]] == names
    # Every level of every scenario: the replica's memory level as well as its storage.
    assert [(r[0], r[1]) for r in levels[1]] == [
        (names[0], "storage"), (names[1], "memory"), (names[1], "storage"), (names[2], "storage"),
        (names[3], "storage"),
    ]  # fmt: skip


@pytest.mark.parametrize("command", ["check", "sweep", "analyze"])
def test_the_other_commands_name_the_hostile_inputs(outputs: Outputs, command: str) -> None:
    doc, parsed = outputs.json[command], parse(outputs.markdown[command])
    cells = every_cell(parsed)
    if command == "check":
        assert {flat(r["preset"]) for r in doc["results"]} <= cells
        errors = [r["error"] for r in doc["results"] if r["error"]]
        assert len(errors) == 1 and HOSTILE.split("\n")[0] in errors[0]
        assert flat("error: " + errors[0]) in cells
    elif command == "sweep":
        assert parsed.headings == [flat(f"ckptcalc sweep over {doc['over']}: u|v`w<x>")]
    else:
        assert parsed.headings == [flat(f"Run analysis: {doc['log']}")] and HOSTILE in doc["log"]
        causes = [flat(c["cause"]) for c in doc["causes"]]
        assert flat(HOSTILE) in causes and "<b>**bold**</b>" in causes
        assert set(causes) <= cells


def test_appended_documents_stay_apart(outputs: Outputs) -> None:
    # optimize --markdown >> f; compare --markdown >> f; ...: the blocks of each, one after the other.
    alone = [parse(outputs.markdown[c]) for c in COMMANDS]
    together = parse("".join(outputs.markdown[c] for c in COMMANDS))
    assert together.types == [t for p in alone for t in p.types]
    assert together.tables == [t for p in alone for t in p.tables]
    assert together.headings == [h for p in alone for h in p.headings] and len(together.headings) == 5
    lines = "".join(outputs.markdown[c] for c in COMMANDS).split("\n")
    assert [n for n, line in enumerate(lines) if line.startswith("#") and n and lines[n - 1]] == []


def test_warnings_are_quoted_as_written(outputs: Outputs) -> None:
    from ckptcalc.commands import analyze as analyze_command
    from ckptcalc.commands import catalogue

    said = [HOSTILE, "- not a list", "1. not a list either"]
    optimize = parse(catalogue.markdown({**outputs.json["optimize"], "warnings": said}))
    assert optimize.quotes == [flat("warning: " + w) for w in said]
    analyze = parse(analyze_command.markdown({**outputs.json["analyze"], "warnings": said}))
    assert analyze.quotes == [flat(w) for w in said]
    compare = outputs.json["compare"]
    scenarios = [{**compare["scenarios"][1], "warnings": said}, *compare["scenarios"][2:]]
    quoted = parse(catalogue.markdown({**compare, "scenarios": scenarios})).quotes
    assert quoted == [flat(f"warning: {scenarios[0]['name']}: {w}") for w in said]


# ------------------------------------------------------------------ compare's inputs and levels


@pytest.fixture(scope="module")
def compared() -> tuple[Parsed, dict[str, Any]]:
    runner = CliRunner()
    args = ["compare", "gemini-inmemory", "llama3-405b-async"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NO_COLOR", "1")
        text = runner.invoke(app, [*args, "--markdown"]).stdout
        doc = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    return parse(text), doc


def test_compare_shows_the_inputs(compared: tuple[Parsed, dict[str, Any]]) -> None:
    parsed, _ = compared
    inputs = parsed.tables[0]
    # gemini-inmemory: 6.48 TB at 72 GB/s is 90 s; 16,384 GPUs of 235,929,600 s each fail every 14,400 s.
    # llama3-405b-async: 6.48 TB persisted at 2 TB/s is 3.24 s; its MTBF is stated, 3.1 h.
    assert inputs == (
        ["scenario", "checkpoint size", "write time δ", "MTBF", "restart", "levels"],
        [["gemini-inmemory", "6.48 TB", "1.50 min", "4.00 h", "10.0 min", "memory+storage"],
         ["llama3-405b-async", "6.48 TB", "3.24 s", "3.10 h", "10.0 min", "storage (async)"]],
    )  # fmt: skip


def test_compare_shows_every_levels_interval(compared: tuple[Parsed, dict[str, Any]]) -> None:
    from ckptcalc.inputs.units import format_duration as dur

    parsed, doc = compared
    gemini, persisted = doc["scenarios"]
    # Stalls: 6.48 TB at 2.16 TB/s into memory is 3 s; the snapshot at 25 GB/s × 16,384 GPUs is 15.8 ms.
    assert parsed.tables[2] == (
        ["scenario", "level", "interval", "stall", "serves", "restart"],
        [["gemini-inmemory", "memory", dur(gemini["memory_interval_s"]), "3.00 s", "99.0 %", "1.00 min"],
         ["gemini-inmemory", "storage", dur(gemini["optimal_interval_s"]), "1.50 min", "1.00 %", "10.0 min"],
         ["llama3-405b-async", "storage", dur(persisted["optimal_interval_s"]), "15.8 ms", "100 %", "10.0 min"]],
    )  # fmt: skip
    # The memory interval is the storage interval over its whole multiple.
    assert gemini["optimal_interval_s"] == pytest.approx(gemini["memory_interval_s"] * gemini["storage_every"])
    assert dur(gemini["memory_interval_s"]) == "4.88 min" and dur(gemini["optimal_interval_s"]) == "4.39 h"


def test_compare_shows_the_band_and_the_failure_law(outputs: Outputs) -> None:
    inputs, results, _ = parse(outputs.markdown["compare"]).tables
    assert inputs[0][4:6] == ["MTBF 95 %", "failures"]
    assert [r[4:6] for r in inputs[1]] == [
        ["2.80 h to 3.40 h", "exponential"], ["-", "exponential"], ["2.80 h to 3.40 h", "exponential"],
        ["2.80 h to 3.40 h", "Weibull 0.700"],
    ]  # fmt: skip
    assert results[0][-2:] == ["effective, 95 %", "robust interval"]
    assert results[1][1][-2:] == ["-", "-"] and " to " in results[1][0][-2]


@pytest.mark.parametrize(("raw", "shown"), [("\x1b[31m", r"\\x1b\[31m"), ("a\x00b", r"a\\x00b"), ("\x9b", r"\\x9b"),
                                           ("\x7f", r"\\x7f"), ("a\tb", "a b"), ("a\x85b", "a b")])  # fmt: skip
def test_control_characters_are_written_as_their_code(raw: str, shown: str) -> None:
    assert cell(raw) == shown and inline(raw) == shown
