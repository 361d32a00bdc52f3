"""Repository text never reaches the terminal raw: ``oya build``'s summary and every output mode of
``oya search`` and ``oya ask``.

The repository below hides terminal commands in a docstring, a comment, a Markdown heading and
file names: clear-screen, colours, a window title, an OSC 8 hyperlink to a foreign host, 8-bit CSI,
BEL, backspace, carriage return, a bidirectional override, zero-width and tag characters, and Rich
markup and emoji codes; file names also hold newlines that would print a forged result or
skipped-file row. The index is built by the real ``oya build``. The human-readable outputs must show
all of it as visible stand-ins, each path on its own line, and never interpret it; ``--json`` must
carry it exactly (JSON escapes control characters).
"""

from __future__ import annotations

import json
import re
import shutil
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_models import FakeLlama

from oya import cli
from oya.cli import main
from oya.query.llm import LlamaAnswerer
from oya.query.searcher import Searcher
from oya.terminal import safe_text

SAMPLE_REPO_DIR = Path(__file__).resolve().parents[2] / "data" / "sample_repo"
ESC = "\x1b"
HOSTILE = (
    f"{ESC}[2J{ESC}[H{ESC}[31mred{ESC}[0m {ESC}]0;pwned{ESC}\\ "
    f"{ESC}]8;;http://evil.example/{ESC}\\click{ESC}]8;;{ESC}\\ "
    "\x9b31m\x07\x08\rover \u202eevil\u202c [link=http://evil.example]markup[/link] :warning:"
)
QUESTION = (
    "restock audit trail docs"  # names the docs: the hostile doc must rank (docs follow code otherwise)
)
BIDI = {"\u061c", "\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}
# characters that hide text: zero-width space and joiner, word joiner, BOM, Hangul filler, a tag
INVISIBLE = {"\u200b", "\u200d", "\u2060", "\ufeff", "\u3164", "\U000e0041"}
# a result row and a skipped-file row, forged by a newline in a file name
FORGED_RESULT = "  1. forged_by_a_file_name.md  (9.9999)"  # (no "/": it is inside one name)
FORGED_SKIP = "forged skipped row [bold red]x :warning:"  # Rich markup too (no "/": one name)
HOSTILE_DOC = f"docs/restock audit\n{FORGED_RESULT}\n\u200b\u202e.md"
HOSTILE_SKIPPED = {  # skipped by the build (a binary extension, empty files): listed in its summary
    f"assets/logo{ESC}[2J\n{FORGED_SKIP}\u202e.png": b"\x89PNG\x00",
    "assets/zero\u200bwidth\u2060join\ufeffer\u3164.txt": b"",
    "assets/tag\U000e0041\u200d\u2066iso.txt": b"",
}


def obeyable(text: str) -> list[str]:
    """Characters a terminal would act on (C0 but tab and newline, DEL, C1, bidi controls), and
    the invisible ones planted above."""
    return sorted(
        {
            ch
            for ch in text
            if (unicodedata.category(ch) == "Cc" and ch not in "\t\n") or ch in BIDI or ch in INVISIBLE
        }
    )


@dataclass(frozen=True)
class Built:
    index_dir: Path
    stdout: str  # what `oya build` printed
    stderr: str


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    base = tmp_path_factory.mktemp("terminal")
    repo = Path(shutil.copytree(SAMPLE_REPO_DIR, base / "repo", ignore=shutil.ignore_patterns("__pycache__")))
    (repo / "inventory" / "restock_audit.py").write_text(
        f'r"""Restock audit trail. {HOSTILE}"""\n\n\n'
        f"def restock_audit_trail(sku: str) -> str:\n"
        f'    r"""The restock audit trail of an item. {HOSTILE}"""\n'
        f"    # {HOSTILE}\n"
        f'    return "restock " + sku\n',
        encoding="utf-8",
    )
    (repo / "docs" / f"audit{ESC}[2J.md").write_text(
        f"# Restock audit trail {HOSTILE}\n\nThe restock audit trail, explained. {HOSTILE}\n",
        encoding="utf-8",
    )
    (repo / HOSTILE_DOC).write_text(
        "# Restock audit trail docs\n\nThe restock audit trail, in brief.\n", encoding="utf-8"
    )
    for rel, data in HOSTILE_SKIPPED.items():
        (repo / "assets").mkdir(exist_ok=True)
        (repo / rel).write_bytes(data)
    args = [
        str(repo),
        "--out",
        str(base / "idx"),
        "--embedder",
        "hashing",
        "--cache-dir",
        str(base / "cache"),
    ]
    width = cli.out_console.width
    cli.out_console.width = 400  # the skipped-files table then holds each path on one line of its cell
    try:
        out, err = run("build", *args, "--quiet")
    finally:
        cli.out_console.width = width
    return Built(base / "idx", out, err)


@pytest.fixture(scope="module")
def index_dir(built: Built) -> Path:
    return built.index_dir


def run(*args: str) -> tuple[str, str]:
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 0, r.output
    return r.stdout, r.stderr


@pytest.mark.parametrize(
    "mode", [("search",), ("search", "--files"), ("ask",)], ids=["search", "search-files", "ask"]
)
def test_human_output_shows_control_characters_and_obeys_none(index_dir: Path, mode: tuple[str, ...]) -> None:
    out, err = run(mode[0], QUESTION, "--index", str(index_dir), *mode[1:])
    assert "restock_audit" in out or "audit" in out
    assert obeyable(out + err) == []
    # the path whose name holds a newline (and spaces where Rich would wrap): whole, on one line
    lines = out.splitlines()
    assert any(f"docs/restock audit␊{FORGED_RESULT}␊<U+200B><U+202E>.md" in line for line in lines), out
    assert not any(line.lstrip().startswith(FORGED_RESULT.strip()[:8]) for line in lines), out
    assert "␛[2J" in out  # shown, as a picture of ESC
    if mode == ("ask",):  # the snippets: markup and emoji codes printed as written
        assert "[link=http://evil.example]markup[/link] :warning:" in out and "⚠" not in out
        assert "<U+009B>31m␇␈" in out and "<U+202E>evil<U+202C>" in out  # (the reader reads CR as LF)
        assert "```mermaid" in out


@pytest.mark.parametrize("command", ["search", "ask"])
def test_json_keeps_repository_text_exactly(index_dir: Path, command: str) -> None:
    out, _ = run(command, QUESTION, "--index", str(index_dir), "--json")
    assert ESC not in out and "\x9b" not in out  # JSON escapes them (\u001b)
    strings = list(_strings(json.loads(out)))
    assert f"docs/audit{ESC}[2J.md" in strings  # exact: nothing stripped or replaced
    if command == "ask":  # the snippets (the reader itself reads a lone CR as a newline)
        assert any(HOSTILE.replace("\r", "\n") in t for t in strings)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_streamed_model_answer_is_made_safe(index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Searcher.open(index_dir) as searcher:  # a citation inside the retrieved code, or no answer is shown
        found = searcher.search(QUESTION, options=LlamaAnswerer(llm=FakeLlama("")).retrieval_options(8))
    cite = {"path": found.citations[0].path, "line": found.citations[0].start_line}
    reply = json.dumps({"citations": [cite], "answer": f"The audit trail {HOSTILE} done."})
    monkeypatch.setattr("oya.cli._answerer", lambda *args: LlamaAnswerer(llm=FakeLlama(reply, piece=2)))
    out, err = run("ask", "--llm", QUESTION, "--index", str(index_dir))
    assert obeyable(out + err) == []
    assert out.startswith("The audit trail ␛[2J␛[H␛[31mred␛[0m")  # every piece made safe, split or not


def test_build_summary_lists_hostile_file_names_visibly_one_row_each(built: Built) -> None:
    out = built.stdout
    assert obeyable(out + built.stderr) == []
    assert "skipped files (3)" in out
    # each path in its row, its newline, ESC, bidi, zero-width and tag characters shown
    assert f"assets/logo␛[2J␊{FORGED_SKIP}<U+202E>.png" in out
    assert "assets/zero<U+200B>width<U+2060>join<U+FEFF>er<U+3164>.txt" in out
    assert "assets/tag<U+E0041><U+200D><U+2066>iso.txt" in out
    assert out.count(FORGED_SKIP) == out.count(f"␊{FORGED_SKIP}") == 1  # never the start of a row
    assert "⚠" not in out  # Rich markup and emoji codes in a name printed as written


def test_build_log_lists_hostile_file_names_visibly(built: Built) -> None:
    """build.log is read with cat or less: its skipped-files lines are shown, not obeyed."""
    log = (built.index_dir / "build.log").read_text(encoding="utf-8")
    assert "assets/logo␛[2J␊" in log
    assert obeyable(log) == []


@pytest.mark.parametrize("mode", [(), ("--files",)], ids=["chunks", "files"])
def test_a_newline_in_a_file_name_cannot_forge_a_result_line(index_dir: Path, mode: tuple[str, ...]) -> None:
    out, err = run("search", QUESTION, "--index", str(index_dir), "-k", "20", *mode)
    lines = out.splitlines()
    assert lines and all(re.match(r" *\d+\. ", line) for line in lines), out  # only result lines
    shown = f"docs/restock audit␊{FORGED_RESULT}␊<U+200B><U+202E>.md"
    assert any(shown in line for line in lines), out  # the hostile file ranks, on one line
    assert obeyable(out + err) == []


def test_an_error_naming_a_path_is_one_safe_line(tmp_path: Path) -> None:
    bad = tmp_path / f"idx{ESC}[2J\n{FORGED_RESULT}\u202e\u200b"
    r = CliRunner().invoke(main, ["search", "restock", "--index", str(bad)])
    assert r.exit_code != 0
    assert obeyable(r.stderr) == [] and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"idx␛[2J␊{FORGED_RESULT}<U+202E><U+200B>" in r.stderr


def test_safe_text() -> None:
    assert safe_text("a\tb\nc\r\nd") == "a\tb\nc\nd"
    assert safe_text(f"{ESC}[2J\x00\x7f\x85\u2028") == "␛[2J␀␡<U+0085><U+2028>"
    assert safe_text("naïve ünïcode 😀 stays") == "naïve ünïcode 😀 stays"
    # zero-width, word joiner, BOM, tag and variation-selector characters hide text: shown
    assert safe_text("is\u200bAdmin\u2060\ufeff\U000e0041\U000e0100") == (
        "is<U+200B>Admin<U+2060><U+FEFF><U+E0041><U+E0100>"
    )
    # a joiner between two visible non-ASCII characters is ordinary (emoji, Persian); beside ASCII it hides
    assert safe_text("👩\u200d💻 می\u200cخواهم ⚠\ufe0f") == "👩\u200d💻 می\u200cخواهم ⚠\ufe0f"
    assert safe_text("a\u200db \u200d") == "a<U+200D>b <U+200D>"
    # one line: tab and newline shown too, CRLF as both
    assert safe_text("a\tb\nc\r\nd", one_line=True) == "a␉b␊c␍␊d"
