"""What the reader never enters or reads: the built-in ignores (version control, dependency and
build folders, lock files, minified bundles), and in walk mode the repository's ``.gitignore`` files.

Theory of operation:

* Built-in ignores apply in both modes, to a folder or file by its own name; the reader reports an
  ignored folder once, as the folder, and never descends into it.
* Outside a git work tree (walk mode) every ``.gitignore`` is honoured relative to its own folder,
  the deepest one with a matching pattern deciding, as in git (inside one, git lists the files
  and these rules are not needed). A ``.gitignore`` is read without following a symlink and
  only up to ``_GITIGNORE_MAX_BYTES``: it is the repository's, so untrusted.
"""

from __future__ import annotations

import functools
import os
import re

import pathspec

# --- built-in ignores -------------------------------------------------------------------

_IGNORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        "env",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        "build",
        "dist",
        "site-packages",
        ".idea",
        ".vscode",
    }
)
_IGNORED_FILES = frozenset(
    {
        ".git",  # a worktree or submodule's gitfile
        ".DS_Store",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "uv.lock",
        "Pipfile.lock",
        "pdm.lock",
        "Cargo.lock",
        "Gemfile.lock",
        "composer.lock",
    }
)


def builtin_ignore(name: str, is_dir: bool) -> bool:
    if is_dir:
        return name in _IGNORED_DIRS or name.endswith(".egg-info")
    return name in _IGNORED_FILES or name.endswith((".min.js", ".min.css", ".map"))


# --- walk mode: .gitignore files ---------------------------------------------------------

Specs = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]


def _last_match(spec: pathspec.GitIgnoreSpec, folder: str) -> bool | None:
    """Git's rule for one folder (``"a/b/"``) in one .gitignore: the last pattern that matches the
    folder itself decides.

    pathspec's expressions are made for files: a pattern's ``ps_d`` group also matches any path
    inside a matching folder, and ``x/**`` becomes the prefix ``^x/``. So a pattern with ``ps_d``
    names the folder only when it matches up to the folder's final slash, and one without
    (``x/**``, ``**/e/**``, ``*``) only when it matches the start of the folder's path with
    something left over: ``x/**`` holds ``x/y`` but not ``x`` itself, as in git."""
    for pattern in reversed(spec.patterns):
        if pattern.include is None or pattern.regex is None:
            continue
        if _folder_regex(pattern.regex).search(folder) is not None:
            return bool(pattern.include)
    return None


@functools.lru_cache(maxsize=4096)
def _folder_regex(regex: re.Pattern[str]) -> re.Pattern[str]:
    tail = r"\Z" if "ps_d" in regex.groupindex else r".+\Z"
    return re.compile(f"(?:{regex.pattern}){tail}", regex.flags)


def _file_verdict(spec: pathspec.GitIgnoreSpec, path: str) -> bool | None:
    """GitIgnoreSpec's verdict on a file, where a pattern that matches only a folder of the path
    (``!*/`` and ``*.txt`` hold ``a/`` of ``a/b`` and ``x.txt/`` of ``x.txt/a``) does not decide: the
    walk judged the folders already and let them through; git judges the file by the patterns that
    match the file itself (``*`` then ``!*/`` hides ``a/b``)."""
    patterns = list(spec.patterns)
    while True:
        result = pathspec.GitIgnoreSpec(patterns).check_file(path)
        index = result.index
        if index is None:
            return result.include
        regex = patterns[index].regex
        match = regex.search(path) if regex is not None else None
        if match is None or match.groupdict().get("ps_d") is None:
            return result.include
        del patterns[index]  # matched as a folder of the path: ask the other patterns


def gitignored(specs: Specs, rel: str, is_dir: bool) -> bool:
    """Whether git ignores ``rel``, whose parent folders the walk already let through.

    The deepest .gitignore with a matching pattern decides, as in git. A folder is judged by the
    last pattern matching ``folder/``: GitIgnoreSpec's own ranking, made for files inside
    excluded folders, would let ``*`` outrank a later ``!*/`` and hide every folder. A file is
    judged by GitIgnoreSpec, where a folder pattern cannot re-include what a file pattern hid."""
    for base, spec in reversed(specs):
        sub = rel[len(base) :]
        verdict = _last_match(spec, sub + "/") if is_dir else _file_verdict(spec, sub)
        if verdict is not None:
            return verdict
    return False


_GITIGNORE_MAX_BYTES = 1_000_000


def _gitignore_line(line: str) -> str:
    # pathspec reads "x/**/" as the folder x itself; git, as the folders inside x ("x/**/*/")
    return line.rstrip() + "*/" if line.rstrip().endswith("/**/") and line.strip() != "/**/" else line


def load_gitignore(path: str) -> pathspec.GitIgnoreSpec | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            raw = f.read(_GITIGNORE_MAX_BYTES)
    except OSError:
        return None
    lines = raw.decode("utf-8", "replace").splitlines()
    return pathspec.GitIgnoreSpec.from_lines([_gitignore_line(line) for line in lines])
