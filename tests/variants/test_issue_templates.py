"""The issue-template variant (``bench.variants.issue_templates``) still reads a tree's templates and
drops their boilerplate from a report, and nothing else: the user's words, the title, code."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.variants.issue_templates import (
    MAX_TEMPLATE_LINES,
    collect_template_lines,
    is_template_path,
    normalise_line,
    read_issue_templates,
    strip_template_lines,
)

MARKDOWN = """---
name: Bug report
about: Something went wrong
---
#### What version of grepper are you using?

#### Describe your bug.
<!-- Please keep this short. -->
"""

FORM = """name: Bug Report
body:
  - type: markdown
    attributes:
      value: |
        Thanks for taking the time to fill out this report!
  - type: checkboxes
    attributes:
      label: Please tick this box to confirm you have searched.
      options:
        - label: "I have a different issue."
          required: true
  - type: textarea
    attributes:
      label: Steps to reproduce
      value: |
        1. Run the tool
        2. See the output
  - type: input
    attributes:
      label: 'Library version'
"""

REPORT = """grepper skips files named like folders
#### What version of grepper are you using?

0.8.1

#### Describe your bug.
<!-- Please keep this short. -->
A file `a.rs/` is skipped by walk_dir.

### Please tick this box to confirm you have searched.

- [X] I have a different issue.

### Steps to reproduce

Run the tool on a tree that holds it
```
Describe your bug.
```

### Library version

_No response_
"""

WITHOUT = """grepper skips files named like folders

0.8.1

A file `a.rs/` is skipped by walk_dir.



Run the tool on a tree that holds it
```
Describe your bug.
```

"""


def nonblank(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def write_tree(root: Path) -> Path:
    (root / ".github" / "ISSUE_TEMPLATE").mkdir(parents=True)
    (root / ".github" / "ISSUE_TEMPLATE" / "bug.md").write_text(MARKDOWN)
    (root / ".github" / "ISSUE_TEMPLATE" / "form.yml").write_text(FORM)
    (root / ".github" / "ISSUE_TEMPLATE" / "config.yml").write_text(
        "contact_links:\n  - name: A grepper forum\n"
    )
    (root / "src").mkdir()
    (root / "src" / "walk.rs").write_text("// Steps to reproduce\nfn walk_dir() {}\n")
    return root


def test_a_trees_templates_give_their_boilerplate_lines(tmp_path: Path) -> None:
    lines = read_issue_templates(write_tree(tmp_path))
    assert {
        "what version of grepper are you using?",
        "describe your bug.",
        "please keep this short.",
        "please tick this box to confirm you have searched.",
        "i have a different issue.",
        "steps to reproduce",
        "run the tool",
        "library version",
    } <= lines
    # front matter, the form's markdown text, config.yml and source files are not boilerplate
    assert not lines & {"name: bug report", "thanks for taking the time to fill out this report!"}
    assert not any("forum" in line or "walk" in line for line in lines)


def test_a_report_loses_its_template_lines_and_keeps_its_own(tmp_path: Path) -> None:
    lines = read_issue_templates(write_tree(tmp_path))
    stripped = strip_template_lines(REPORT, lines)
    assert nonblank(stripped.text) == nonblank(WITHOUT)
    assert stripped.text.count("\n") == REPORT.count("\n") - 8  # only the dropped lines went
    assert stripped.dropped == 8
    assert stripped.note() == "8 lines of the repository's issue templates ignored"


def test_a_report_without_template_lines_is_unchanged(tmp_path: Path) -> None:
    lines = read_issue_templates(write_tree(tmp_path))
    assert strip_template_lines(WITHOUT, lines).text == WITHOUT
    assert strip_template_lines(REPORT, frozenset()).dropped == 1  # "_No response_" only


@pytest.mark.parametrize(
    ("path", "is_template"),
    [
        (".github/ISSUE_TEMPLATE/bug_report.yml", True),
        (".github/issue_template/Bug.YAML", True),
        (".github/ISSUE_TEMPLATE.md", True),
        ("ISSUE_TEMPLATE.md", True),
        ("docs/issue_template.md", True),
        (".github/ISSUE_TEMPLATE/config.yml", False),
        (".github/ISSUE_TEMPLATE/sub/bug.md", False),
        ("src/ISSUE_TEMPLATE.md", False),
        (".github/PULL_REQUEST_TEMPLATE.md", False),
    ],
)
def test_which_files_are_issue_templates(path: str, is_template: bool) -> None:
    assert is_template_path(path) is is_template


def test_normalisation_strips_markdown_marks() -> None:
    assert normalise_line("  #### **Describe   the bug**:  ") == "describe the bug"
    assert normalise_line("- [x] The `develop` branch") == "the develop branch"
    assert normalise_line("<!-- Keep it short. -->") == "keep it short."


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks here")
def test_a_symlinked_template_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "outside.md"
    secret.write_text("a line from outside the tree\n")
    tree = tmp_path / "tree"
    (tree / ".github" / "ISSUE_TEMPLATE").mkdir(parents=True)
    (tree / ".github" / "ISSUE_TEMPLATE" / "bug.md").symlink_to(secret)
    (tree / ".github" / "ISSUE_TEMPLATE.md").symlink_to(secret)
    assert read_issue_templates(tree) == frozenset()


def test_template_lines_are_capped() -> None:
    many = "\n".join(f"prompt number {i}" for i in range(MAX_TEMPLATE_LINES + 500))
    assert len(collect_template_lines([("ISSUE_TEMPLATE.md", many)])) == MAX_TEMPLATE_LINES
