"""File kinds (``oya.core.kinds``): what a path is, and what a question asks for."""

from __future__ import annotations

import pytest

from oya.core.kinds import asked_kinds, code_first, file_kind, first_line, unnamed_copies


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("src/click/core.py", "source"),
        ("src/_pytest/python.py", "source"),  # a folder named like a test runner holds code
        ("pkg/testing_tools/x.py", "source"),
        ("tests/test_core.py", "test"),
        ("pkg/integration_tests/run.go", "test"),
        ("server/handler_test.go", "test"),
        ("web/app.test.ts", "test"),
        ("src/test/java/FooTest.java", "test"),
        ("conftest.py", "test"),
        # Gradle / Kotlin Multiplatform test source sets and Jest's folders, told by their case
        ("okhttp/src/jvmTest/kotlin/okhttp3/UrlComponentEncodingTester.kt", "test"),
        ("okhttp/src/commonTest/kotlin/okhttp3/A.kt", "test"),
        ("app/src/androidUnitTest/kotlin/A.kt", "test"),
        ("lib/src/testFixtures/java/Fixture.java", "test"),
        ("src/__mocks__/fs.js", "test"),
        ("okhttp/src/jvmMain/kotlin/okhttp3/Dns.kt", "source"),
        ("src/latest/resolve.py", "source"),  # a word ending in "test" is not a test folder
        ("src/contest/score.go", "source"),
        ("src/manifest/load.ts", "source"),
        ("README.md", "doc"),
        ("docs/api.rst", "doc"),
        ("examples/basic.py", "doc"),
        ("CHANGELOG.md", "changelog"),
        ("CHANGES.rst", "changelog"),
        ("docs/release-notes.md", "changelog"),
        (".github/ISSUE_TEMPLATE/bug.md", "template"),
        (".github/PULL_REQUEST_TEMPLATE.md", "template"),
        ("pyproject.toml", "other"),
        ("Makefile", "other"),
        # a tool's configuration written in code is configuration; a module named config is code
        ("karma.conf.js", "other"),
        ("vite.config.ts", "other"),
        ("packages/app/.eslintrc.js", "other"),
        ("Gruntfile.js", "other"),
        ("httpx/_config.py", "source"),
        ("src/attr/_config.py", "source"),
        ("web/app-config.ts", "source"),
        # code whose name or folder sounds like documentation
        ("oya/site/render.py", "source"),
        ("django/contrib/sites/models.py", "source"),
        ("site/src/components/Nav.tsx", "doc"),  # a website at the top
        ("src/history.py", "source"),
        ("lib/changes.go", "source"),
        ("site_template/static/ask/history.test.js", "test"),
        ("HISTORY.rst", "changelog"),
        ("NEWS", "changelog"),
    ],
)
def test_file_kind(path: str, kind: str) -> None:
    assert file_kind(path) == kind


def test_asked_kinds_reads_the_words_for_each_kind() -> None:
    assert asked_kinds("fix the docs for --verbose") == {"doc"}
    assert asked_kinds("CHANGELOG entry and a test for it") == {"changelog", "test"}
    assert asked_kinds("update the issue template") == {"template"}
    assert asked_kinds("parser crashes on an empty file") == frozenset()


def test_first_line_is_the_subject() -> None:
    assert first_line("\n  Fix crash on empty input\n\nAdd tests and docs.") == "Fix crash on empty input"


def test_code_first_keeps_order_inside_each_group() -> None:
    paths = ["README.md", "a.py", "tests/test_a.py", "b.py", "CHANGES.md"]
    assert code_first(paths, str, "crash in a") == [
        "a.py",
        "b.py",
        "README.md",
        "tests/test_a.py",
        "CHANGES.md",
    ]
    assert code_first(paths, str, "crash in a test") == [
        "a.py",
        "tests/test_a.py",
        "b.py",
        "README.md",
        "CHANGES.md",
    ]
    assert code_first(paths, str, "x", demoted=()) == paths


def test_shell_scripts_are_tooling_after_the_code_unless_asked_for() -> None:
    paths = ["vet.sh", "scripts/release.bash", "gin.go"]
    assert [file_kind(p) for p in paths] == ["other", "other", "source"]
    assert code_first(paths, str, "panic in the router", demoted=("other",)) == [
        "gin.go",
        "vet.sh",
        "scripts/release.bash",
    ]
    assert code_first(paths, str, "the release script fails", demoted=("other",)) == paths


def test_script_words_keep_shell_scripts_in_place_not_every_build_file() -> None:
    # "scripts" asks for vet.sh; package.json stays after the code (vite: "non module scripts" is HTML)
    paths = ["package.json", "vet.sh", "src/html.ts"]
    question = "fix: do not warn about non module scripts"
    assert code_first(paths, str, question, demoted=("other",)) == ["vet.sh", "src/html.ts", "package.json"]
    assert code_first(paths, str, "fix the npm package.json", demoted=("other",)) == paths


def test_type_declarations_stay_in_place_when_the_subject_speaks_of_types() -> None:
    origins = {"index.d.ts": "declaration", "dist/axios.js": "generated"}
    paths = ["index.d.ts", "dist/axios.js", "lib/axios.js"]
    assert unnamed_copies(origins, paths, "fix response headers types") == {"dist/axios.js"}
    assert unnamed_copies(origins, paths, "Request hangs on redirect\nthe types are fine") == {
        "index.d.ts",
        "dist/axios.js",
    }


def test_tooling_stays_in_place_when_the_question_names_it_or_speaks_of_scripts() -> None:
    origins = {"tools/cpplint/cpplint.py": "tooling", "single_include/json.hpp": "amalgamated"}
    paths = ["tools/cpplint/cpplint.py", "single_include/json.hpp", "include/json.hpp"]
    both = {"tools/cpplint/cpplint.py", "single_include/json.hpp"}
    assert unnamed_copies(origins, paths, "parse error on an empty string") == both
    assert unnamed_copies(origins, paths, "cpplint.py: whitespace warning") == {"single_include/json.hpp"}
    assert unnamed_copies(origins, paths, "the release script fails") == {"single_include/json.hpp"}
    # a word that only contains the stem does not name it
    assert unnamed_copies(origins, paths, "cpplinter fails") == both
