"""What git knows of a work tree, read so that the repository cannot run anything or point elsewhere.

Theory of operation:

* The threat. A repository arrives with its ``.git`` folder (a tarball, a copied folder, a CI
  artifact), and ``.git/config`` can name programs that git runs on its own: ``core.fsmonitor``
  runs on every index refresh (``git ls-files`` included), and hooks, pagers, diff, merge and
  filter drivers, ``core.sshCommand``, ``include.path``... name more. Overriding the known keys
  one by one with ``-c`` leaves every key git adds tomorrow open.
* So git never reads the repository's configuration at all. Each call runs against a *shadow*
  git directory made for it in a temporary folder: a minimal ``config`` of our own, an unborn
  ``HEAD``, empty ``objects`` and ``refs``, and copies of the two files listing needs, the
  ``index`` (what is tracked) and ``info/exclude``. ``GIT_DIR`` names the shadow,
  ``GIT_WORK_TREE`` the real top folder; the environment holds no ``GIT_*`` variable of the
  caller's, no global or system configuration (``HOME`` is the shadow), and no optional locks,
  so git writes nothing into the repository either.
* Finding the work tree is done here, not by git: the nearest folder at or above ``root`` with
  a ``.git`` folder (or a ``gitdir:`` file) that looks like a git directory, below any
  ``GIT_CEILING_DIRECTORIES`` as git would. A ``.git`` that is a symlink is not followed, and a
  ``gitdir:`` file is followed only into the tree itself or into a linked worktree's folder that
  names it back (as ``git worktree add`` writes): a copied folder's gitfile could otherwise name
  another repository, whose file names would be listed. Else the tree is walked as plain folders.
* ``HEAD`` is resolved by reading ``HEAD``, loose refs and ``packed-refs`` as files: the commit
  a build records needs no git process at all.
* Anything unexpected (no git on PATH, an index git cannot read without the repository's own
  settings, such as a split or sparse index) gives ``None`` and the caller walks the tree.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["WorkTree", "find_work_tree", "git_ls_files", "head_commit", "ignored_by_enclosing_tree"]

_SHADOW_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = false\n"
_INDEX_MAX_BYTES = 512 * 1024 * 1024  # an index of ~4M files; a bigger one is not a real index
_HEX_ID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_REF_NAME = re.compile(r"^refs/[A-Za-z0-9._/+-]+$")


@dataclass(frozen=True)
class WorkTree:
    """A git work tree: its top folder, its git directory and the common directory of its refs."""

    top: Path
    gitdir: Path
    commondir: Path


def _regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _read_small(path: Path, limit: int = 4096) -> str | None:
    """The text of a small regular file, never through a symlink; None if that is not what it is."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > limit:
        return None
    return data.decode("utf-8", "replace")


def _git_dir_of(top: Path) -> Path | None:
    dot = top / ".git"
    if _real_dir(dot):
        return dot
    if not _regular_file(dot):  # absent, or a symlink: not followed
        return None
    text = _read_small(dot)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:") :].strip())
    gitdir = target if target.is_absolute() else top / target
    if not _real_dir(gitdir):
        return None
    if _inside(gitdir, top) or _links_back(gitdir, dot):
        return gitdir
    return None  # a gitfile naming some other repository: its index would list that one's files


def _inside(path: Path, top: Path) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(top)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _links_back(gitdir: Path, dot: Path) -> bool:
    """Whether ``gitdir`` is a linked worktree's folder that names this ``.git`` file back (git
    writes ``gitdir`` there for ``git worktree add``): only then does it belong to this tree."""
    back = _read_small(gitdir / "gitdir")
    if back is None:
        return False
    named = Path(back.strip())
    named = named if named.is_absolute() else gitdir / named
    return os.path.realpath(named) == os.path.realpath(dot)


def _looks_like_git_dir(gitdir: Path, commondir: Path) -> bool:
    return _regular_file(gitdir / "HEAD") and _real_dir(commondir / "objects")


def _common_dir(gitdir: Path) -> Path:
    text = _read_small(gitdir / "commondir")
    if text is None or not text.strip():
        return gitdir
    target = Path(text.strip())
    common = target if target.is_absolute() else gitdir / target
    return common if _real_dir(common) else gitdir


def _ceilings() -> list[Path]:
    raw = os.environ.get("GIT_CEILING_DIRECTORIES", "")
    return [Path(p) for p in raw.split(os.pathsep) if p and os.path.isabs(p)]


def find_work_tree(root: Path) -> WorkTree | None:
    """The git work tree ``root`` belongs to (``root`` itself or a folder above it), or None."""
    start = Path(os.path.abspath(root))
    ceilings = {os.path.abspath(c) for c in _ceilings()}
    for folder in (start, *start.parents):
        if folder != start and os.fspath(folder) in ceilings:
            return None
        gitdir = _git_dir_of(folder)
        if gitdir is not None:
            commondir = _common_dir(gitdir)
            if _looks_like_git_dir(gitdir, commondir):
                return WorkTree(folder, gitdir, commondir)
            return None
    return None


def _copy_regular(src: Path, dst: Path, limit: int) -> bool:
    """Copy ``src`` to ``dst`` if it is a regular file (not a symlink) under ``limit`` bytes."""
    try:
        fd = os.open(src, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return False
        with os.fdopen(fd, "rb", closefd=False) as f, open(dst, "wb") as out:
            shutil.copyfileobj(f, out)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def _make_shadow(tree: WorkTree, folder: Path) -> None:
    (folder / "objects").mkdir()
    (folder / "refs").mkdir()
    (folder / "info").mkdir()
    (folder / "HEAD").write_text("ref: refs/heads/oya-shadow\n", encoding="ascii")
    (folder / "config").write_text(_SHADOW_CONFIG, encoding="ascii")
    _copy_regular(tree.gitdir / "index", folder / "index", _INDEX_MAX_BYTES)
    for shared in tree.gitdir.glob("sharedindex.*"):  # a split index keeps its base here
        _copy_regular(shared, folder / shared.name, _INDEX_MAX_BYTES)
    _copy_regular(tree.commondir / "info" / "exclude", folder / "info" / "exclude", 1024 * 1024)


def _environment(shadow: Path, top: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_DIR": os.fspath(shadow),
            "GIT_WORK_TREE": os.fspath(top),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "HOME": os.fspath(shadow),
            "XDG_CONFIG_HOME": os.fspath(shadow),
            "LC_ALL": "C",
        }
    )
    return env


def _run_git(
    tree: WorkTree, cwd: Path, calls: list[list[str]]
) -> list[subprocess.CompletedProcess[bytes]] | None:
    git = shutil.which("git")
    if git is None:
        return None
    with tempfile.TemporaryDirectory(prefix="oya-git-") as tmp:
        shadow = Path(tmp) / "shadow.git"
        shadow.mkdir()
        _make_shadow(tree, shadow)
        env = _environment(shadow, tree.top)
        done = []
        for args in calls:
            try:
                done.append(subprocess.run([git, *args], cwd=cwd, env=env, capture_output=True, check=False))
            except OSError:
                return None
        return done


def _names(out: bytes) -> list[str]:
    return [os.fsdecode(p) for p in out.split(b"\0") if p]


def git_ls_files(root: Path, tree: WorkTree) -> tuple[list[str], list[str]] | None:
    """``(listed, ignored)`` under ``root``, relative to it: the files git would commit (tracked,
    or untracked and not ignored), and what .gitignore hides (folders end with ``/``); None when
    git is missing or cannot list this tree without the repository's own settings."""
    calls = [
        ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"],
    ]
    done = _run_git(tree, root, calls)
    if done is None or any(p.returncode != 0 for p in done):
        return None
    return _names(done[0].stdout), _names(done[1].stdout)


def ignored_by_enclosing_tree(root: Path, tree: WorkTree) -> bool:
    """Whether ``root`` is a folder that its enclosing work tree ignores (an unpacked download
    under an ignored cache folder): git would list nothing there, so the caller walks it."""
    if Path(os.path.abspath(root)) == tree.top:
        return False
    done = _run_git(tree, root, [["check-ignore", "-q", "."]])
    return done is not None and done[0].returncode == 0


def _packed_ref(commondir: Path, name: str) -> str | None:
    text = _read_small(commondir / "packed-refs", limit=256 * 1024 * 1024)
    if text is None:
        return None
    for line in text.splitlines():
        sha, _, ref = line.partition(" ")
        if ref == name and _HEX_ID.match(sha):
            return sha
    return None


def head_commit(repo: Path) -> str:
    """The commit ``repo``'s HEAD names (40 or 64 hex digits), or "" when there is none to read:
    read from files, so no git process and no setting of the repository takes part."""
    tree = find_work_tree(repo)
    if tree is None:
        return ""
    text = _read_small(tree.gitdir / "HEAD")
    for _ in range(5):  # a symbolic ref may name another one; git stops at 5 levels too
        if text is None:
            return ""
        value = text.strip()
        if _HEX_ID.match(value):
            return value
        if not value.startswith("ref:"):
            return ""
        name = value[len("ref:") :].strip()
        if not _REF_NAME.match(name) or ".." in name or name.endswith(".lock"):
            return ""
        loose = _read_small(tree.commondir / name)
        if loose is None and tree.gitdir != tree.commondir:
            loose = _read_small(tree.gitdir / name)
        text = loose if loose is not None else _packed_ref(tree.commondir, name)
    return ""
