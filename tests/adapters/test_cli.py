"""The oya command: output shapes, path filters, and one-line errors with non-zero exits."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from oya.cli import main
from pipelines.build import run_build

SAMPLE_REPO_DIR = Path(__file__).resolve().parents[2] / "data" / "sample_repo"


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("cli")
    out = base / "idx"
    run_build(SAMPLE_REPO_DIR, out, embedder="hashing", cache_dir=base / "cache")
    return out


def invoke(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_search_json_lists_objects_best_first(sample_index: Path) -> None:
    code, out, _ = invoke(
        "search", "save an item to the JSON file", "--index", str(sample_index), "--json", "-k", "5"
    )
    assert code == 0
    rows = json.loads(out)
    assert 1 <= len(rows) <= 5
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    scores = [r["score"] for r in rows]
    assert scores == sorted(scores, reverse=True)
    assert {"path", "title", "start_line", "end_line", "channels", "url"} <= rows[0].keys()


def test_search_files_ranks_repository_paths(sample_index: Path) -> None:
    code, out, _ = invoke(
        "search", "JsonStorage flush writes items to disk", "--index", str(sample_index), "--files", "--json"
    )
    assert code == 0
    rows = json.loads(out)
    assert rows[0]["path"] == "inventory/storage.py"
    assert len({r["path"] for r in rows}) == len(rows)


def test_search_accepts_a_pasted_bug_report_on_stdin(sample_index: Path) -> None:
    report = """Restocking crashes when the item is missing.

    Steps: run `inventory restock ABC 3` on an empty store.

    Traceback (most recent call last):
      File "inventory/cli.py", line 30, in main
      File "inventory/service.py", line 25, in restock
        item = self.store.get(sku)
    KeyError: 'ABC'

    I expected a friendly message instead of a KeyError. This happens on every machine we tried
    and it also happens when the JSON store is used instead of the memory store, thanks!
    """
    code, out, _ = invoke("search", "-", "--index", str(sample_index), "--files", "--json", input=report)
    assert code == 0
    top = [r["path"] for r in json.loads(out)[:3]]
    assert "inventory/service.py" in top


def test_include_and_exclude_globs_scope_the_search(sample_index: Path) -> None:
    code, out, _ = invoke(
        "search",
        "inventory",
        "--index",
        str(sample_index),
        "--json",
        "--exclude",
        "docs/",
        "--exclude",
        "*.md",
    )
    assert code == 0
    paths = {r["path"] for r in json.loads(out)}
    assert paths and not any(p.startswith("docs/") or p.endswith(".md") for p in paths)
    code, out, _ = invoke(
        "search", "inventory", "--index", str(sample_index), "--json", "--include", "docs/*"
    )
    assert code == 0
    assert {r["path"] for r in json.loads(out)} == {"docs/guide.rst"}


def test_ask_prints_answer_confidence_quality_and_diagram(sample_index: Path) -> None:
    code, out, _ = invoke("ask", "How does the service restock an item?", "--index", str(sample_index))
    assert code == 0
    assert "confidence" in out and "search quality:" in out
    assert "flowchart" in out and "Citations:" in out
    code, out, _ = invoke(
        "ask", "How does the service restock an item?", "--index", str(sample_index), "--json"
    )
    payload = json.loads(out)
    assert payload["confidence"]["level"] in {"HIGH", "MEDIUM", "LOW"}
    assert payload["confidence"]["disclaimer"]
    assert {c["name"] for c in payload["search_quality"]["channels"]} == {"lexical", "semantic", "graph"}
    cited = {(c["path"], c["start_line"]) for c in payload["citations"]}
    snippets = {(s["path"], s["start_line"]) for s in payload["snippets"]}
    assert cited and cited <= snippets
    assert payload["mermaid"].startswith("flowchart")
    assert payload["answer"]["method"] == "extractive"


def _run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oya", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("build", "does/not/exist"), "repository not found"),
        (("build", "pyproject.toml"), "not a directory"),
        (("search", "anything", "--index", "nowhere"), "no index"),
        (("ask", "anything", "--index", "nowhere"), "no index"),
        (("search", "   ", "--index", "."), "query is empty"),
        (("serve", "no-such-site"), "site"),
    ],
)
def test_bad_input_gives_one_line_and_nonzero_exit(
    args: tuple[str, ...], needle: str, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    proc = _run_cli(*args, cwd=tmp_path)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert needle in lines[0].lower()


def _long_report() -> str:
    """A 60,000-character bug report whose error and frames come last, after a long log (issue 24):
    the title and the log name nothing of the code; the trailing frames name inventory/utils.py."""
    title = "Nightly report job dies after a few hours\n\nIt ran for weeks, then stopped overnight.\n\n"
    trace = (
        "Traceback (most recent call last):\n"
        '  File "inventory/reports.py", line 12, in low_stock_report\n'
        '  File "inventory/utils.py", line 10, in format_money\n'
        '    return f"{amount:.2f} {currency}"\n'
        "ValueError: Unknown format code 'f' for object of type 'str'\n"
    )
    log: list[str] = []
    size = len(title) + len(trace)
    while size < 60_000:
        i = len(log) % 700  # then the log repeats itself: its repeats are dropped
        log.append(
            f"2024-05-01 02:{i // 60:02d}:{i % 60:02d} INFO heartbeat {i}: all good, {i % 7} waiting\n"
        )
        size += len(log[-1])
    return title + "".join(log) + trace


@pytest.mark.parametrize("command", ["search", "ask"])
def test_a_long_report_is_condensed_alike_from_an_argument_or_stdin_and_its_trailing_frames_count(
    sample_index: Path, command: str
) -> None:
    """Past 20,000 characters the question is condensed, not cut to its first part (which held only
    the title and the log): the error and the frames at the end are searched, and stderr says once
    what went. Blanks around the question do not count."""
    from oya.core.query import MAX_QUESTION_CHARS
    from oya.core.report import condense_report

    report = _long_report()
    assert 60_000 <= len(report) < 60_100 and "utils.py" not in report[:MAX_QUESTION_CHARS]
    condensed = condense_report(report.strip(), MAX_QUESTION_CHARS)
    assert condensed is not None and condensed.repeated_lines > 0
    said = f"note: {condensed.note()}"
    assert said.startswith(f"note: the question is {len(report.strip()):,} characters long; ")
    found = []
    for args, stdin in (([report], None), (["-"], report), (["-"], "\n" * 30_000 + report + " " * 9_000)):
        code, out, err = invoke(command, *args, "--index", str(sample_index), "--json", input=stdin)
        assert code == 0, err
        assert [ln for ln in err.splitlines() if ln.startswith("note:")] == [said], err
        payload = json.loads(out)
        found.append([h["path"] for h in (payload if command == "search" else payload["hits"])])
    # the same question either way: the same hits, led by the file the trailing frames name
    assert found[0] and found == [found[0]] * 3
    # (the first 20,000 characters led with storage.py, three times)
    assert found[0][0] in {"inventory/reports.py", "inventory/utils.py"}, found[0]
    assert "inventory/utils.py" in found[0][:3], found[0]  # where it failed
    huge = "x" * 1_048_576  # one 1 MB token: used to take longer than anyone waited
    for args, stdin, size in (([huge], None, "1,048,576"), (["-"], huge * 8, "8,388,608")):
        code, _, err = invoke(command, *args, "--index", str(sample_index), input=stdin)
        assert code == 0 and f"note: the question is {size} characters long; 2,000 were read" in err, err
    # at the limit (blanks around it do not count) nothing is condensed
    code, _, err = invoke(command, "-", "--index", str(sample_index), "--json", input=f"\n {'y' * 20_000} \n")
    assert code == 0 and "note:" not in err


def test_a_question_past_what_is_read_says_more_than(
    sample_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading stops at ``MAX_STDIN_CHARS`` (10 million; 100,000 here), for stdin and an argument alike."""
    import oya.cli

    monkeypatch.setattr(oya.cli, "MAX_STDIN_CHARS", 100_000)
    report = _long_report() * 2 + "the rest is never read\n"
    for args, stdin in (([report], None), (["-"], report)):
        code, _, err = invoke("search", *args, "--index", str(sample_index), input=stdin)
        assert code == 0, err
        notes = [ln for ln in err.splitlines() if ln.startswith("note:")]
        assert len(notes) == 1, err
        assert notes[0].startswith("note: the question is more than 100,000 characters long"), err


class _EndlessStream:
    """``yes | oya search -``: a standard input that never ends."""

    def __init__(self) -> None:
        self.served = 0

    def read(self, n: int) -> str:
        self.served += n
        return "y\n" * (n // 2)


def test_stdin_is_read_to_its_end_in_bounded_pieces_and_an_endless_one_stops() -> None:
    from oya.cli import _STDIN_PIECE, _read_stdin

    stream = _EndlessStream()
    text, more = _read_stdin(stream, 1_000_000)
    assert more and text == "y\n" * 500_000  # "more than" the most it reads
    assert stream.served <= 1_000_000 + 2 * _STDIN_PIECE
    text = "  \n" + "a b " * 100_000 + "\n\n  "
    assert _read_stdin(io.StringIO(text), 10**6) == (text, False)
    assert _read_stdin(io.StringIO("x" * 10), 10) == ("x" * 10, False)  # exactly the most: not more


def test_corrupt_index_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / "index.duckdb").write_bytes(b"this is not a database" * 100)
    proc = _run_cli("search", "x", "--index", "idx", cwd=tmp_path)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert len([ln for ln in proc.stderr.splitlines() if ln.strip()]) == 1
    assert "cannot read the index" in proc.stderr


def test_every_cli_command_is_in_the_readme() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for name in main.commands:
        assert f"oya {name}" in readme, f"`oya {name}` is not documented in README.md"
