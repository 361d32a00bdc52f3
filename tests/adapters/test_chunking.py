"""Chunking: symbol chunks for Python, sections for docs, windows for the rest, and invariants."""

from __future__ import annotations

import hashlib
import textwrap

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oya.chunking.chunks import MAX_TOKENS, chunk_file, chunk_id, split_lines
from oya.core.tokenize import count_tokens
from oya.graph.parsing import parser_for
from oya.models import SourceFile


def source(path: str, text: str, language: str = "python") -> SourceFile:
    return SourceFile(
        path, language, len(text), hashlib.sha256(text.encode()).hexdigest(), text.count("\n"), text
    )


def chunks_of(path: str, text: str, language: str = "python"):
    file = source(path, text, language)
    parser = parser_for(language)
    return chunk_file(file, parser.parse(file) if parser else None)


def check_invariants(text: str, chunks) -> None:
    lines = split_lines(text)
    covered: set[int] = set()
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
        assert c.text.strip()
        assert c.content_hash == hashlib.sha256(c.text.encode()).hexdigest()
        assert c.id == chunk_id(c.path, c.start_line, c.end_line, c.text)
        assert c.n_tokens == count_tokens(c.text)
        span = set(range(c.start_line, c.end_line + 1))
        assert not span & covered, "chunks overlap"
        covered |= span
    for row, line in enumerate(lines, 1):
        if line.strip():
            assert row in covered, f"line {row} is in no chunk"


PY = textwrap.dedent(
    '''
    """Module doc."""
    import os

    LIMIT = 3


    class Store:
        """A store."""

        size = 1

        def save(self):
            return os.sep

        # helpers
        def load(self):
            return 2

        extra = 5


    def helper():
        return Store()


    if __name__ == "__main__":
        helper()
    '''
).lstrip("\n")


def test_python_chunks_per_symbol():
    chunks = chunks_of("src/pkg/store.py", PY)
    check_invariants(PY, chunks)
    got = [(c.title, c.start_line, c.end_line, c.node_id) for c in chunks]
    assert got == [
        ("pkg.store (module code)", 1, 4, "src/pkg/store.py"),
        ("Store", 7, 10, "src/pkg/store.py::Store"),
        ("Store.save", 12, 13, "src/pkg/store.py::Store.save"),
        ("Store.load", 15, 17, "src/pkg/store.py::Store.load"),  # the comment goes with it
        ("Store", 19, 19, "src/pkg/store.py::Store"),
        ("helper", 22, 23, "src/pkg/store.py::helper"),
        ("pkg.store (module code)", 26, 27, "src/pkg/store.py"),
    ]
    assert all(c.kind == "code" for c in chunks)


def test_class_without_methods_is_one_chunk():
    text = "class A:\n    x = 1\n    y = 2\n"
    chunks = chunks_of("a.py", text)
    assert [(c.title, c.start_line, c.end_line) for c in chunks] == [("A", 1, 3)]


def test_large_function_is_split_at_blank_lines_without_splitting_lines():
    body = "\n\n".join(
        "\n".join(f"    value_{i}_{j} = compute({i}, {j}) + other" for j in range(8)) for i in range(30)
    )
    text = f"def big():\n{body}\n    return 1\n"
    chunks = chunks_of("big.py", text)
    check_invariants(text, chunks)
    assert len(chunks) > 1
    assert all(c.n_tokens <= MAX_TOKENS for c in chunks)
    assert all(c.node_id == "big.py::big" for c in chunks)
    assert chunks[0].title.startswith("big (part 1/")
    lines = split_lines(text)
    for c in chunks[:-1]:  # pieces end where a paragraph ends
        assert not lines[c.end_line].strip()


def test_broken_python_is_still_covered():
    text = "def ok():\n    return 1\n\nx = broken(1,\n\ndef after():\n    return 2\n"
    chunks = chunks_of("bad.py", text)
    check_invariants(text, chunks)
    assert "after" in {c.title for c in chunks}


def test_chunk_ids_are_deterministic():
    assert [c.id for c in chunks_of("a.py", PY)] == [c.id for c in chunks_of("a.py", PY)]
    assert chunks_of("a.py", PY)[0].id != chunks_of("b.py", PY)[0].id
    assert len(chunk_id("a", 1, 2, "x")) == 16


def test_empty_and_blank_files_have_no_chunks():
    assert chunks_of("e.py", "") == []
    assert chunks_of("e.md", "\n\n  \n", "markdown") == []
    assert chunks_of("e.txt", "", "text") == []


MD = textwrap.dedent(
    """
    Intro line.

    # Oya

    Pitch.

    ## Install

    ```bash
    # not a heading
    pip install oya
    ```

    ### From source ###

    Clone it.

    ## Usage
    Run it.
    """
).lstrip("\n")


def test_markdown_sections_and_fences():
    chunks = chunks_of("README.md", MD, "markdown")
    check_invariants(MD, chunks)
    assert [(c.title, c.start_line) for c in chunks] == [
        ("README.md", 1),
        ("Oya", 3),
        ("Oya > Install", 7),
        ("Oya > Install > From source", 14),
        ("Oya > Usage", 18),
    ]
    assert all(c.kind == "doc" and c.node_id is None for c in chunks)
    assert "# not a heading" in chunks[2].text


RST = textwrap.dedent(
    """
    =====
    Title
    =====

    Intro.

    Install
    -------

    Text.

    Details
    ~~~~~~~

    More.

    Usage
    -----

    Go.
    """
).lstrip("\n")


def test_rst_sections():
    chunks = chunks_of("docs/index.rst", RST, "rst")
    check_invariants(RST, chunks)
    assert [(c.title, c.start_line) for c in chunks] == [
        ("Title", 1),
        ("Title > Install", 7),
        ("Title > Install > Details", 12),
        ("Title > Usage", 17),
    ]


def test_long_markdown_section_is_split_by_paragraphs():
    paragraphs = "\n\n".join(" ".join(f"word{i}x{j}" for j in range(60)) for i in range(40))
    text = f"# Big\n\n{paragraphs}\n"
    chunks = chunks_of("big.md", text, "markdown")
    check_invariants(text, chunks)
    assert len(chunks) > 2
    assert all(c.n_tokens <= MAX_TOKENS for c in chunks)


def test_other_languages_use_line_windows_ending_at_blank_lines():
    text = "\n".join("" if i % 10 == 0 else f"line {i};" for i in range(1, 200)) + "\n"
    chunks = chunks_of("x.sql", text, "sql")  # a language without a parser
    check_invariants(text, chunks)
    assert all(c.end_line - c.start_line < 60 for c in chunks)
    assert all(c.kind == "code" and c.node_id is None for c in chunks)
    lines = split_lines(text)
    assert all(not lines[c.end_line].strip() for c in chunks[:-1])


# -- properties --------------------------------------------------------------------------

_PY_LINE = st.sampled_from(
    [
        "",
        "x = 1",
        "import os",
        "def f(a):",
        "    return a",
        "class C(B):",
        "    def m(self):",
        "        self.f()",
        "    y = 2",
        "@decorator",
        "# comment",
        "    # indented comment",
        "if __name__ == '__main__':",
        "    f(1,",
        '"""doc"""',
        "    pass",
        "async def g():",
        "    await h()",
    ]
)
_TEXT_LINE = st.one_of(
    st.sampled_from(["", "# Title", "## Sub", "```", "~~~", "====", "----", "Heading", "   "]),
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\n\r"), max_size=40),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PY_LINE, max_size=60), st.booleans())
def test_python_chunks_cover_every_line_without_overlap(lines, final_newline):
    text = "\n".join(lines) + ("\n" if final_newline else "")
    check_invariants(text, chunks_of("pkg/m.py", text))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_TEXT_LINE, max_size=80),
    st.sampled_from([("a.md", "markdown"), ("a.rst", "rst"), ("a.txt", "text")]),
)
def test_document_chunks_cover_every_line_without_overlap(lines, kind):
    path, language = kind
    text = "\n".join(lines)
    check_invariants(text, chunks_of(path, text, language))
