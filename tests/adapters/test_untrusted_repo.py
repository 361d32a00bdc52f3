"""An untrusted repository runs nothing, reads nothing outside itself, and its output never becomes input.

Each trap is first shown to be armed (plain git springs it), then Oya is shown not to spring it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from dagster import DagsterInstance
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from oya.build.ownership import check_apart
from oya.scanning.gitview import find_work_tree, head_commit
from oya.scanning.reader import scan_repository
from pipelines.definitions import build_definitions
from pipelines.repos import OyaRepos, RepoEntry

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT = ["git", "-c", "user.email=a@b", "-c", "user.name=x", "-c", "init.defaultBranch=main"]


@pytest.fixture(autouse=True)
def _no_enclosing_git_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True, text=True)
    return proc.stdout


def _repo(root: Path, files: dict[str, str], commit: bool = True) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    _git(root, "init", "-q")
    if commit:
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "init")
    return root


# --- 1. nothing from the repository runs ----------------------------------------------------

# Settings a repository's .git/config can hold that make git run a program, each pointing at a
# script that leaves a file behind. core.fsmonitor is the one git ls-files itself runs.
TRAPS = {
    "core.fsmonitor": "{sh} fsmonitor",
    "core.hooksPath": "{hooks}",
    "core.pager": "{sh} pager",
    "core.sshCommand": "{sh} ssh",
    "core.editor": "{sh} editor",
    "diff.external": "{sh} diff",
    "filter.trap.clean": "{sh} clean",
    "filter.trap.smudge": "{sh} smudge",
    "credential.helper": "!{sh} credential",
    "gpg.program": "{sh} gpg",
}


def _armed_repo(root: Path) -> tuple[Path, Path]:
    """A repository whose config names a program at every hook; returns (repo, where traps write)."""
    sprung = root / "sprung"
    sprung.mkdir()
    script = root / "trap.sh"
    script.write_text(f'#!/bin/sh\ntouch "{sprung}/$1"\ncat >/dev/null 2>&1 || true\n')
    script.chmod(0o755)
    hooks = root / "hooks"
    hooks.mkdir()
    for hook in ("post-index-change", "pre-commit", "post-checkout", "reference-transaction"):
        (hooks / hook).write_text(f'#!/bin/sh\ntouch "{sprung}/hook-{hook}"\n')
        (hooks / hook).chmod(0o755)
    repo = _repo(root / "repo", {"a.py": "A = 1\n", ".gitattributes": "*.py filter=trap diff=trap\n"})
    for key, value in TRAPS.items():
        _git(repo, "config", key, value.format(sh=script, hooks=hooks))
    included = root / "included.cfg"
    included.write_text(f"[core]\n\tfsmonitor = {script} included\n")
    _git(repo, "config", "include.path", str(included))
    (repo / "b.py").write_text("B = 2\n")  # untracked: listing it makes git look at the work tree
    os.utime(repo / "a.py", (1, 1))  # a stale stat makes git refresh (and run filters) for it
    return repo, sprung


def test_the_traps_are_armed(tmp_path: Path) -> None:
    """Plain git, run the way Oya ran it before, springs the repository's fsmonitor."""
    repo, sprung = _armed_repo(tmp_path)
    for args in (["ls-files", "--others", "--exclude-standard"], ["status", "--porcelain"]):
        subprocess.run(["git", *args], cwd=repo, capture_output=True, timeout=60, check=False)
    assert os.listdir(sprung)


def test_scanning_and_reading_head_run_nothing_the_repository_names(tmp_path: Path) -> None:
    repo, sprung = _armed_repo(tmp_path)
    result = scan_repository(repo)
    commit = head_commit(repo)
    assert os.listdir(sprung) == []
    assert [f.path for f in result.files] == ["a.py", "b.py"]  # .gitattributes: no indexed language
    assert commit == _git(repo, "rev-parse", "HEAD").strip()


def test_the_repository_is_left_as_it_was(tmp_path: Path) -> None:
    """No lock, no refreshed index, no file written into .git."""
    repo, _ = _armed_repo(tmp_path)
    before = {p: p.stat().st_mtime_ns for p in (repo / ".git").rglob("*") if p.is_file()}
    index_bytes = (repo / ".git" / "index").read_bytes()
    scan_repository(repo)
    after = {p: p.stat().st_mtime_ns for p in (repo / ".git").rglob("*") if p.is_file()}
    assert after == before
    assert (repo / ".git" / "index").read_bytes() == index_bytes


def test_a_dot_git_symlink_is_not_followed(tmp_path: Path) -> None:
    other = _repo(tmp_path / "other", {"secret_names.py": "X = 1\n"})
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("A = 1\n")
    (repo / ".git").symlink_to(other / ".git")
    assert find_work_tree(repo) is None
    assert head_commit(repo) == ""
    result = scan_repository(repo)
    assert [f.path for f in result.files] == ["a.py"]
    assert "secret_names.py" not in {s.path for s in result.skipped}


def test_a_gitfile_naming_another_repository_is_not_followed(tmp_path: Path) -> None:
    other = _repo(tmp_path / "other", {"private_plans.py": "X = 1\n"})
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("A = 1\n")
    (repo / ".git").write_text(f"gitdir: {other / '.git'}\n")
    assert find_work_tree(repo) is None
    result = scan_repository(repo)
    assert [f.path for f in result.files] == ["a.py"]
    assert "private_plans.py" not in {s.path for s in result.skipped}


# --- head_commit against git itself -----------------------------------------------------------


def test_head_commit_agrees_with_git_on_loose_packed_detached_and_worktree_heads(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    assert head_commit(repo) == _git(repo, "rev-parse", "HEAD").strip()
    (repo / "a.py").write_text("A = 2\n")
    _git(repo, "commit", "-qam", "two")
    _git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert head_commit(repo) == _git(repo, "rev-parse", "HEAD").strip()
    _git(repo, "checkout", "-q", "--detach", "HEAD~1")
    assert head_commit(repo) == _git(repo, "rev-parse", "HEAD").strip()
    _git(repo, "checkout", "-q", "main")
    _git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "wt"), "HEAD~1")
    assert head_commit(tmp_path / "wt") == _git(tmp_path / "wt", "rev-parse", "HEAD").strip()
    assert head_commit(repo / "sub-does-not-matter") == head_commit(repo)


@pytest.mark.parametrize(
    "head",
    ["ref: ../../../../etc/passwd\n", "ref: refs/heads/../../config\n", "not a ref\n", "ref: refs/x\n"],
)
def test_a_hostile_or_dangling_head_reads_as_no_commit(tmp_path: Path, head: str) -> None:
    repo = _repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    (repo / ".git" / "HEAD").write_text(head)
    assert head_commit(repo) == ""


# --- 2. nothing outside the repository is read ------------------------------------------------


def test_a_tracked_folder_replaced_by_a_symlink_is_not_read_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("OUTSIDE the repository\n")
    repo = _repo(tmp_path / "repo", {"data/notes.txt": "inside\n", "a.py": "A = 1\n"})
    shutil.rmtree(repo / "data")
    (repo / "data").symlink_to(elsewhere)
    result = scan_repository(repo)
    assert [f.path for f in result.files] == ["a.py"]
    assert all("OUTSIDE" not in f.text for f in result.files)
    skipped = {s.path: s for s in result.skipped}
    assert skipped["data"].reason == "symlink"


def _index_with(names: list[str], like: bytes) -> bytes:
    """A git index (version 2) holding ``names``, each with the stat data of the first entry of ``like``."""
    fixed = like[12 : 12 + 60]
    entries = b""
    for name in names:
        body = fixed + struct.pack(">H", len(name.encode())) + name.encode()
        entries += body + b"\0" * (8 - len(body) % 8)
    data = b"DIRC" + struct.pack(">II", 2, len(names)) + entries
    return data + hashlib.sha1(data).digest()


def test_a_crafted_index_cannot_name_files_outside_the_repository(tmp_path: Path) -> None:
    (tmp_path / "outside.py").write_text("OUTSIDE = 'the repository'\n")
    repo = _repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    index = repo / ".git" / "index"
    index.write_bytes(_index_with(["../outside.py", "a.py", "sub/../../outside.py"], index.read_bytes()))
    listed = _git(repo, "ls-files", "--cached")
    assert "../outside.py" in listed  # git itself lists what the index says
    result = scan_repository(repo)
    assert [f.path for f in result.files] == ["a.py"]
    assert all("OUTSIDE" not in f.text for f in result.files)


# --- 3. the output is never input -------------------------------------------------------------


def test_output_folders_inside_the_repository_are_not_read(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", {"a.py": "A = 1\n"}, commit=False)
    for out in (".oya", "wiki/out"):
        (repo / out).mkdir(parents=True)
        (repo / out / "page.html").write_text("<p>built</p>\n")
        (repo / out / "notes.md").write_text("# built\n")
    for mode in ("git", "walk"):
        if mode == "walk":
            shutil.rmtree(repo / ".git")
        result = scan_repository(repo, outputs=[repo / ".oya", repo / "wiki" / "out", tmp_path / "elsewhere"])
        assert [f.path for f in result.files] == ["a.py"], mode
        skipped = {s.path: s.detail for s in result.skipped}
        assert skipped[".oya"] == skipped["wiki/out"] == "Oya's own output folder", mode


@pytest.mark.parametrize("marker", [".oya-output", ".oya-site"])
def test_a_folder_an_earlier_build_marked_as_its_own_is_not_read(tmp_path: Path, marker: str) -> None:
    """An earlier build wrote to another --out inside the repository: its marker tells."""
    repo = _repo(tmp_path / "repo", {"a.py": "A = 1\n"}, commit=False)
    (repo / "old" / "wiki").mkdir(parents=True)
    (repo / "old" / "wiki" / marker).write_text('{"written_by": "oya"}\n')
    (repo / "old" / "wiki" / "page.md").write_text("# built\n")
    (repo / "old" / "notes.md").write_text("# the user's\n")
    for mode in ("git", "walk"):
        if mode == "walk":
            shutil.rmtree(repo / ".git")
        result = scan_repository(repo)
        assert [f.path for f in result.files] == ["a.py", "old/notes.md"], mode
        assert {s.path: s.detail for s in result.skipped}["old/wiki"] == "Oya's own output folder"


def test_rebuilding_into_the_default_folder_indexes_the_same_files(tmp_path: Path) -> None:
    """The probe: a one-file repository went 1 -> 30 -> 69 -> 128 indexed files over four builds."""
    repo = _repo(tmp_path / "repo", {"app.py": "def main():\n    return 1\n"}, commit=False)
    repos = OyaRepos(
        repos=[RepoEntry(name="r", path=str(repo))],  # out: the default, repo/.oya
        embedder="hashing",
        cache_dir=str(tmp_path / "cache"),
        site_runtime=False,
    )
    job = build_definitions(repos=repos).resolve_job_def("index_repository")
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("repos", ["r"])
    counts = []
    for _ in range(3):
        result = job.execute_in_process(partition_key="r", instance=instance)
        (scan,) = result.asset_materializations_for_node("source_files")
        counts.append(scan.metadata["files"].value)
    assert (repo / ".oya" / "site" / "index.html").is_file()
    assert counts == [1, 1, 1]


@pytest.mark.parametrize("where", ["repo", "parent"])
def test_an_output_folder_that_is_or_holds_the_repository_is_refused(tmp_path: Path, where: str) -> None:
    repo = _repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    out = repo if where == "repo" else tmp_path
    with pytest.raises(Exception, match="is the repository or holds it"):
        check_apart(repo, out)
    check_apart(repo, repo / ".oya", tmp_path / "elsewhere")  # these are fine
    proc = subprocess.run(
        [sys.executable, "-m", "oya", "build", str(repo), "--out", str(out), "--embedder", "hashing", "-q"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode != 0
    assert "is the repository or holds it" in proc.stderr
    assert "Traceback" not in proc.stderr


# --- 5. walk mode reads .gitignore as git does ------------------------------------------------


def _walked(root: Path) -> set[str]:
    result = scan_repository(root)
    return {f.path for f in result.files} | {s.path for s in result.skipped if s.reason != "ignored"}


def _git_lists(root: Path) -> set[str]:
    _git(root, "init", "-q")
    out = _git(root, "ls-files", "-z", "--others", "--exclude-standard")
    shutil.rmtree(root / ".git")
    return {p for p in out.split("\0") if p}


def test_the_go_pattern_ignores_only_files_without_a_dot(tmp_path: Path) -> None:
    """`*`, `!*.*`, `!*/`: ignore everything, then let files with an extension and every folder back."""
    root = tmp_path / "gin"
    files = ["main.go", "core/context.go", "core/render/json.go", "core/LICENSE", "Makefile", "docs/a.md"]
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("package x\n")
    (root / ".gitignore").write_text("*\n!*.*\n!*/\n")
    assert (
        _walked(root)
        == _git_lists(root)
        == {
            ".gitignore",
            "main.go",
            "core/context.go",
            "core/render/json.go",
            "docs/a.md",
        }
    )


# Pattern pieces real .gitignore files use, in the forms git gives distinct meanings to.
_PATTERNS = [
    "*", "!*.*", "!*/", "*.log", "out/", "/out", "a/**", "**/b", "!a/keep.txt", "a/*.txt", "b",
    "!b/", "*.txt", "!*.txt", "a/", "!a", "/a/b", "**/c.py", "c*", "!c.py", "*/", "a/b/", "**/",
    "!**/", "d?.py", "[ab].py", "!/a", "a/**/c.py", "#x", "\\#h.py", "b/*", "!b/c.py", "a/**/",
    "/*", "!/*/", "*/*.txt", "**", "!**", "**/*.log", "a/b/**", "!a/b/**/", "/a/", "a*/", "[!a]*",
    "\\!x", "x.txt ", "!*/*/", "*/b/", "e/", "!e", "**/e/**", "!**/keep.txt", "d1.py/", "?", "!?.*",
]  # fmt: skip
_NAMES = ["a", "b", "c.py", "d1.py", "x.txt", "out", "k.log", "keep.txt", "#h.py", "e", "a.b", "!x"]


@st.composite
def _trees(draw: st.DrawFn) -> tuple[list[str], dict[str, list[str]]]:
    paths = draw(st.lists(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=3), min_size=1, max_size=10))
    files: list[str] = []
    for parts in sorted(paths, key=len):
        rel = "/".join(parts)
        if not any(rel.startswith(f + "/") or f.startswith(rel + "/") or f == rel for f in files):
            files.append(rel)
    folders = sorted({f.rsplit("/", 1)[0] for f in files if "/" in f})
    ignores = {"": draw(st.lists(st.sampled_from(_PATTERNS), min_size=1, max_size=4))}
    for folder in folders:
        if draw(st.booleans()):
            ignores[folder] = draw(st.lists(st.sampled_from(_PATTERNS), min_size=1, max_size=3))
    return files, ignores


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=_trees())
# found by a CI run: a nested "!*/" re-includes the folder a/a, not the file a/a/a that "*" hides
@example(tree=(["a/b", "a/a/a"], {"": ["*", "!*/"], "a": ["!*/"]}))
def test_walk_mode_lists_what_git_lists(tmp_path_factory: pytest.TempPathFactory, tree: tuple) -> None:
    files, ignores = tree
    root = tmp_path_factory.mktemp("walk")
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x = 1\n")
    for folder, lines in ignores.items():
        (root / folder / ".gitignore").write_text("\n".join(lines) + "\n")
    assert _walked(root) == _git_lists(root)
