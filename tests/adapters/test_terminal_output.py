"""Repository text never reaches the terminal raw: every output mode of ``oya search`` and ``oya ask``.

The repository below hides terminal commands in a docstring, a comment, a Markdown heading and a
file name: clear-screen, colours, a window title, an OSC 8 hyperlink to a foreign host, 8-bit CSI,
BEL, backspace, carriage return, a bidirectional override, and Rich markup and emoji codes. The
human-readable outputs must show them as visible stand-ins and never interpret them; ``--json``
must carry them exactly (JSON escapes them).
"""

from __future__ import annotations

import json
import shutil
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_models import FakeLlama

from oya.cli import main
from oya.llm import LlamaAnswerer
from oya.terminal import safe_text
from pipelines.build import run_build

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


def obeyable(text: str) -> list[str]:
    """Characters a terminal would act on (C0 but tab and newline, DEL, C1, bidi controls)."""
    return sorted(
        {ch for ch in text if (unicodedata.category(ch) == "Cc" and ch not in "\t\n") or ch in BIDI}
    )


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
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
    run_build(repo, base / "idx", embedder="hashing", cache_dir=base / "cache")
    return base / "idx"


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
    reply = json.dumps({"answer": f"The audit trail {HOSTILE} done.", "citations": []})
    monkeypatch.setattr("oya.cli._answerer", lambda *args: LlamaAnswerer(llm=FakeLlama(reply, piece=2)))
    out, err = run("ask", "--llm", QUESTION, "--index", str(index_dir))
    assert obeyable(out + err) == []
    assert out.startswith("The audit trail ␛[2J␛[H␛[31mred␛[0m")  # every piece made safe, split or not


def test_safe_text() -> None:
    assert safe_text("a\tb\nc\r\nd") == "a\tb\nc\nd"
    assert safe_text(f"{ESC}[2J\x00\x7f\x85\u2028") == "␛[2J␀␡<U+0085><U+2028>"
    assert safe_text("naïve ünïcode 😀 stays") == "naïve ünïcode 😀 stays"
