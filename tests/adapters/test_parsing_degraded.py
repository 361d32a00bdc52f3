"""A file a parser cannot read is indexed as text and counted, never fatal."""

from __future__ import annotations

from pathlib import Path

import pytest

from oya.build.steps import make_chunks, parse_and_link
from oya.errors import ParseError
from oya.graph.parsing import parser_for
from oya.models import SourceFile
from oya.scanning.reader import scan_repository

BROKEN_JS = "export function ok() { return 1; }\n" + "}}} ((( class = = = ;;; {{\n" * 5 + "const x = [\n"


def source(path: str, text: str, language: str) -> SourceFile:
    return SourceFile(path, language, len(text), "0" * 64, text.count("\n"), text)


def test_a_syntax_error_file_is_text_and_counted_the_rest_is_parsed(tmp_path: Path) -> None:
    (tmp_path / "broken.js").write_text(BROKEN_JS)
    (tmp_path / "good.go").write_text("package main\n\nfunc main() {\n\thelper()\n}\n\nfunc helper() {}\n")
    scan = scan_repository(tmp_path)
    graph = parse_and_link(scan)
    assert set(graph.degraded) == {"broken.js"}
    assert "syntax errors in 7 lines" in graph.degraded["broken.js"]
    assert "broken.js" not in graph.parsed
    assert {n.id for n in graph.nodes} >= {"good.go::main", "good.go::helper"}
    chunks = make_chunks(scan, graph)
    broken = [c for c in chunks if c.path == "broken.js"]
    assert broken and all(c.node_id is None for c in broken)  # line windows, not symbols
    assert "".join(c.text for c in broken).count("ok()") == 1


def test_a_small_recovered_error_keeps_the_symbols_and_reports_it() -> None:
    text = "package main\n\nfunc a() {\n\tb(\n}\n\nfunc b() {}\n" + "\n".join(
        f"// line {i}" for i in range(200)
    )
    parsed = parser_for("go").parse(source("x.go", text, "go"))  # type: ignore[union-attr]
    assert {s.id for s in parsed.symbols} >= {"x.go::a", "x.go::b"}
    assert parsed.errors and parsed.errors[0].startswith("line ")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("var a=" + "1+" * 20_000 + "1;\n", "minified or generated"),
        ("let x = 1;\n" * 50_001, "parse limit"),
    ],
)
def test_minified_or_huge_files_are_refused(text: str, reason: str) -> None:
    with pytest.raises(ParseError, match=reason):
        parser_for("javascript").parse(source("big.js", text, "javascript"))  # type: ignore[union-attr]


def test_a_c_header_written_in_cpp_falls_back_to_the_cpp_grammar() -> None:
    text = "namespace geo {\ntemplate <typename T>\nclass Box : public Base<T> {\n public:\n  T get() const { return v_; }\n  T v_;\n};\n}\n"
    parsed = parser_for("c").parse(source("box.h", text, "c"))  # type: ignore[union-attr]
    assert {s.id for s in parsed.symbols} >= {"box.h::Box", "box.h::Box.get"}


def test_unknown_languages_stay_text() -> None:
    assert parser_for("sql") is None and parser_for("yaml") is None
