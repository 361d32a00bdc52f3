"""The repository reader: what it accepts, what it skips and why, in git and plain-walk modes.

Secret-looking values are assembled from pieces so that this file is not itself a secret.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oya.errors import RepositoryError
from oya.models import ScanResult, SkippedFile, SourceFile
from oya.scanning.languages import detect_language
from oya.scanning.reader import MAX_PATH_BYTES, scan_repository

DEEP_PRUNED = "/".join(f"d{i:02d}" for i in range(41))  # first directory past max_depth=40

BAD_REPO_SKIPS = {
    "assets/logo.png": "binary",
    "big.py": "too-large",
    "pkg/latin1.py": "not-utf8",
    "empty.py": "empty",
    "loop_a": "symlink",
    "loop_b": "symlink",
    "pkg/parent_link": "symlink",
    DEEP_PRUNED: "too-deep",
    ".env": "secret",
    "id_rsa": "secret",
    "ignored_dir": "ignored",
    "node_modules": "ignored",
    "notes.weird": "unsupported",
}
BAD_REPO_FILES = {
    ".gitignore": None,  # a text file without an indexed language: reported as unsupported
    "README.md": "markdown",
    "pkg/__init__.py": "python",
    "pkg/broken.py": "python",
    "pkg/geometry.py": "python",
    "pkg/shapes.py": "python",
    "settings.py": "python",  # its two tokens are redacted, the rest is indexed
}

has_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture(autouse=True)
def _no_enclosing_git_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep git from finding a repository above tmp_path, so plain directories are walked."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=a@b", "-c", "user.name=x", "-c", "init.defaultBranch=main", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
    return root


def _by_path(result: ScanResult) -> tuple[dict[str, SourceFile], dict[str, SkippedFile]]:
    return {f.path: f for f in result.files}, {s.path: s for s in result.skipped}


def _scan_one(tmp_path: Path, name: str, content: str | bytes) -> SourceFile | SkippedFile:
    result = scan_repository(_write(tmp_path / "repo", {name: content}))
    (item,) = result.files + result.skipped
    return item


# --- the hostile repository -------------------------------------------------------------


@pytest.fixture(params=["walk", "git"])
def scanned_bad_repo(request: pytest.FixtureRequest, bad_repo: Path) -> ScanResult:
    if request.param == "git":
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        _git(bad_repo, "init", "-q")  # nothing committed: every file is untracked
    return scan_repository(bad_repo)


def test_bad_repo_every_skip_has_its_reason(scanned_bad_repo: ScanResult) -> None:
    _, skipped = _by_path(scanned_bad_repo)
    assert {path: skipped[path].reason for path in BAD_REPO_SKIPS if path in skipped} == BAD_REPO_SKIPS


def test_bad_repo_accepts_exactly_the_good_files(scanned_bad_repo: ScanResult) -> None:
    files, skipped = _by_path(scanned_bad_repo)
    expected = {path: lang for path, lang in BAD_REPO_FILES.items() if lang is not None}
    assert {path: f.language for path, f in files.items()} == expected
    assert skipped[".gitignore"].reason == "unsupported"


def test_bad_repo_reports_each_pruned_directory_once(scanned_bad_repo: ScanResult) -> None:
    paths = [s.path for s in scanned_bad_repo.skipped] + [f.path for f in scanned_bad_repo.files]
    for pruned in ("ignored_dir", "node_modules", DEEP_PRUNED):
        assert [p for p in paths if p == pruned or p.startswith(pruned + "/")] == [pruned]
    assert [s.path for s in scanned_bad_repo.skipped if s.reason == "too-deep"] == [DEEP_PRUNED]


def test_git_mode_and_walk_mode_agree_on_the_bad_repo(bad_repo: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    walked = scan_repository(bad_repo)
    _git(bad_repo, "init", "-q")
    from_git = scan_repository(bad_repo)
    assert from_git == walked


def test_good_files_have_hash_size_lines_and_text(bad_repo: Path) -> None:
    files, _ = _by_path(scan_repository(bad_repo))
    for path, f in files.items():
        raw = (bad_repo / path).read_bytes()
        assert f.size == len(raw)
        assert f.n_lines == len(raw.decode("utf-8").splitlines())
        if f.redactions:  # the hash is of what was indexed, never of the secret
            assert f.sha256 == hashlib.sha256(f.text.encode()).hexdigest() != hashlib.sha256(raw).hexdigest()
        else:
            assert f.sha256 == hashlib.sha256(raw).hexdigest()
            assert f.text == raw.decode("utf-8")
    assert "def before_error(x):" in files["pkg/broken.py"].text
    assert "def after_error(y):" in files["pkg/broken.py"].text


def test_no_secret_reaches_a_source_file_or_a_skip_detail(bad_repo: Path, secret_marker: str) -> None:
    result = scan_repository(bad_repo)
    assert not [f.path for f in result.files if secret_marker in f.text]
    assert not [s.path for s in result.skipped if secret_marker in s.detail]
    files, skipped = _by_path(result)
    assert files["settings.py"].redactions == (("aws_access_key_id", 1), ("github_token", 1))
    assert 'AWS_ACCESS_KEY_ID = "«redacted:aws_access_key_id»"' in files["settings.py"].text.split("\n")[3]
    assert result.redaction_counts() == {"aws_access_key_id": 1, "github_token": 1}
    assert skipped["id_rsa"].detail == "file name looks like a secret"


def test_the_50mb_file_is_judged_by_its_size(bad_repo: Path) -> None:
    _, skipped = _by_path(scan_repository(bad_repo))
    assert skipped["big.py"].reason == "too-large"
    assert str(50 * 1024 * 1024) in skipped["big.py"].detail


def test_a_deeper_limit_reaches_the_bottom_of_the_nest(bad_repo: Path) -> None:
    files, skipped = _by_path(scan_repository(bad_repo, max_depth=100))
    assert "/".join(f"d{i:02d}" for i in range(60)) + "/bottom.py" in files
    assert not [s for s in skipped.values() if s.reason == "too-deep"]


def test_scans_are_deterministic_and_sorted(bad_repo: Path) -> None:
    first, second = scan_repository(bad_repo), scan_repository(bad_repo)
    assert first == second
    assert [f.path for f in first.files] == sorted(f.path for f in first.files)
    assert [s.path for s in first.skipped] == sorted(s.path for s in first.skipped)


# --- the clean sample repository --------------------------------------------------------


def test_sample_repo_is_read_without_skips(sample_repo: Path) -> None:
    result = scan_repository(sample_repo)
    assert result.skipped == ()
    languages = {f.path: f.language for f in result.files}
    assert languages["README.md"] == "markdown"
    assert languages["docs/guide.rst"] == "rst"
    assert languages["inventory/service.py"] == "python"
    assert len(languages) == 9
    assert 150 <= sum(f.n_lines for f in result.files) <= 400


# --- errors ------------------------------------------------------------------------------


def test_missing_root_is_a_repository_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(RepositoryError, match="not found") as info:
        scan_repository(missing)
    assert str(missing) in str(info.value) and "\n" not in str(info.value)


def test_file_root_is_a_repository_error(tmp_path: Path) -> None:
    path = tmp_path / "file.py"
    path.write_text("x = 1\n")
    with pytest.raises(RepositoryError, match="not a directory") as info:
        scan_repository(path)
    assert str(path) in str(info.value)


# --- paths too long to become pages -------------------------------------------------------


def _long_path_repo(root: Path) -> tuple[Path, str, str]:
    """A repository with a folder path just past ``MAX_PATH_BYTES`` holding a file whose absolute path
    is near the system's 4,096 bytes, and a file whose own name (not its folder) is what is too long."""
    seg = "d" * 250  # each name under the 255-byte limit
    deep = "/".join([seg] * 15)  # about 3,800 bytes: legal, but no room left for a page path
    pruned = "/".join([seg] * 5)  # the first folder on the way past MAX_PATH_BYTES
    long_file = "/".join([seg] * 4) + "/" + "f" * 30 + ".py"  # its folder fits, the name does not
    _write(root, {f"{deep}/x.py": "X = 1\n", long_file: "Y = 2\n", "ok.py": "Z = 3\n"})
    return root, pruned, long_file


@pytest.mark.parametrize("mode", ["walk", "git"])
def test_a_path_too_long_for_a_page_is_skipped_with_its_reason(tmp_path: Path, mode: str) -> None:
    repo, pruned, long_file = _long_path_repo(tmp_path / "repo")
    assert len(str(repo).encode()) + len(long_file) < 4096  # legal on this system
    if mode == "git":
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        _git(repo, "init", "-q")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", "init")
    files, skipped = _by_path(scan_repository(repo))
    assert sorted(files) == ["ok.py"]
    long = {p: s for p, s in skipped.items() if s.reason == "too-long-path"}
    assert sorted(long) == sorted([pruned, long_file])  # the folder once, as the folder
    assert all(len(p.encode()) > MAX_PATH_BYTES for p in long)
    assert f"over the {MAX_PATH_BYTES:,}-byte limit" in long[pruned].detail


# --- git mode -----------------------------------------------------------------------------


@has_git
def test_git_mode_honours_gitignore_and_lists_untracked_files(tmp_path: Path) -> None:
    repo = _write(
        tmp_path / "repo",
        {
            ".gitignore": "*.log\nout/\n",
            "app.py": "print('tracked')\n",
            "debug.log": "noise\n",
            "out/gen.py": "X = 1\n",
            "sub/.gitignore": "local.py\n",
            "sub/local.py": "Y = 2\n",
            "sub/mod.py": "Z = 3\n",
        },
    )
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    (repo / "new.py").write_text("print('untracked')\n")
    files, skipped = _by_path(scan_repository(repo))
    assert sorted(files) == ["app.py", "new.py", "sub/mod.py"]
    assert {p: s.reason for p, s in skipped.items() if s.reason == "ignored"} == {
        "debug.log": "ignored",
        "out": "ignored",
        "sub/local.py": "ignored",
    }


@has_git
def test_git_mode_from_a_subdirectory_uses_paths_relative_to_root(tmp_path: Path) -> None:
    repo = _write(
        tmp_path / "repo",
        {".gitignore": "*.tmp\n", "top.py": "A = 1\n", "src/pkg/m.py": "B = 2\n", "src/pkg/x.tmp": "t\n"},
    )
    _git(repo, "init", "-q")
    files, skipped = _by_path(scan_repository(repo / "src"))
    assert sorted(files) == ["pkg/m.py"]
    assert skipped["pkg/x.tmp"].reason == "ignored"


@has_git
def test_git_mode_reports_a_deleted_tracked_file_as_unreadable(tmp_path: Path) -> None:
    repo = _write(tmp_path / "repo", {"keep.py": "A = 1\n", "gone.py": "B = 2\n"})
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    (repo / "gone.py").unlink()
    files, skipped = _by_path(scan_repository(repo))
    assert list(files) == ["keep.py"]
    assert skipped["gone.py"].reason == "unreadable"


@has_git
def test_git_mode_still_applies_builtin_ignores_to_tracked_files(tmp_path: Path) -> None:
    repo = _write(
        tmp_path / "repo",
        {"app.py": "A = 1\n", "build/lib/app.py": "A = 1\n", "uv.lock": "version = 1\n"},
    )
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    files, skipped = _by_path(scan_repository(repo))
    assert list(files) == ["app.py"]
    assert {p: s.reason for p, s in skipped.items()} == {"build": "ignored", "uv.lock": "ignored"}


# --- walk mode ----------------------------------------------------------------------------


def test_walk_mode_honours_nested_gitignore_relative_to_its_directory(tmp_path: Path) -> None:
    repo = _write(
        tmp_path / "repo",
        {
            ".gitignore": "*.tmp\n/root_only.py\n",
            "a.py": "A = 1\n",
            "x.tmp": "t\n",
            "root_only.py": "R = 1\n",
            "sub/root_only.py": "R = 2\n",  # anchored to the top: not ignored here
            "sub/.gitignore": "/local.py\n!keep.tmp\ncache/\n",
            "sub/local.py": "L = 1\n",
            "sub/keep.tmp": "kept\n",  # re-included by the deeper .gitignore
            "sub/cache/c.py": "C = 1\n",
            "sub/deeper/local.py": "L = 2\n",  # /local.py is anchored to sub/
        },
    )
    files, skipped = _by_path(scan_repository(repo))
    ignored = sorted(p for p, s in skipped.items() if s.reason == "ignored")
    assert ignored == ["root_only.py", "sub/cache", "sub/local.py", "x.tmp"]
    assert {"a.py", "sub/root_only.py", "sub/deeper/local.py"} <= set(files)
    assert skipped["sub/keep.tmp"].reason == "unsupported"  # not ignored: reached the reader


def test_walk_mode_builtin_ignores_are_not_descended(tmp_path: Path) -> None:
    repo = _write(
        tmp_path / "repo",
        {
            "app.py": "A = 1\n",
            ".venv/lib/site.py": "S = 1\n",
            "node_modules/x/index.js": "x\n",
            "pkg.egg-info/PKG-INFO": "x\n",
            "src/__pycache__/m.cpython-311.pyc": b"\x00",
            "package-lock.json": "{}\n",
            "web/app.min.js": "x\n",
            "web/app.js.map": "{}\n",
            "build.py": "B = 1\n",  # a file named like a built-in directory is fine
        },
    )
    files, skipped = _by_path(scan_repository(repo))
    assert sorted(files) == ["app.py", "build.py"]
    assert sorted(skipped) == [
        ".venv",
        "node_modules",
        "package-lock.json",
        "pkg.egg-info",
        "src/__pycache__",
        "web/app.js.map",
        "web/app.min.js",
    ]
    assert {s.reason for s in skipped.values()} == {"ignored"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_walk_mode_never_opens_a_fifo(tmp_path: Path) -> None:
    repo = _write(tmp_path / "repo", {"a.py": "A = 1\n"})
    os.mkfifo(repo / "pipe.py")
    files, skipped = _by_path(scan_repository(repo))
    assert list(files) == ["a.py"]
    assert skipped["pipe.py"] == SkippedFile("pipe.py", "unreadable", "not a regular file")


# --- one file at a time ---------------------------------------------------------------------


def test_nul_byte_means_binary_whatever_the_extension(tmp_path: Path) -> None:
    item = _scan_one(tmp_path, "data.py", b"x = 1\n\x00\x01")
    assert (item.reason, item.detail) == ("binary", "NUL byte in the first 8 KiB")


def test_known_binary_extension_is_not_read(tmp_path: Path) -> None:
    item = _scan_one(tmp_path, "model.onnx", "looks like text\n")
    assert item == SkippedFile("model.onnx", "binary", "binary extension .onnx")


@pytest.mark.parametrize("content", ["", "  \n\t\r\n"])
def test_empty_and_whitespace_only_files_are_empty(tmp_path: Path, content: str) -> None:
    assert _scan_one(tmp_path, "blank.py", content).reason == "empty"


def test_bom_is_stripped_and_newlines_normalised(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbfa = 1\r\nb = 2\rc = 3"
    item = _scan_one(tmp_path, "m.py", raw)
    assert isinstance(item, SourceFile)
    assert item.text == "a = 1\nb = 2\nc = 3"
    assert item.n_lines == 3
    assert item.size == len(raw) and item.sha256 == hashlib.sha256(raw).hexdigest()


def test_strict_utf8(tmp_path: Path) -> None:
    item = _scan_one(tmp_path, "m.py", b"ok = 1\nbad = '\xff'\n")
    assert (item.reason, item.detail) == ("not-utf8", "invalid UTF-8 at byte 14")


def test_size_limit_is_a_parameter(tmp_path: Path) -> None:
    repo = _write(tmp_path / "repo", {"m.py": "x = 1\n" * 10})
    assert scan_repository(repo, max_file_bytes=59).skipped[0].reason == "too-large"
    assert scan_repository(repo, max_file_bytes=60).files[0].n_lines == 10


@pytest.mark.parametrize(
    "name",
    [".env", ".env.example", "prod.env", "server.pem", "tls.KEY", "id_rsa", "id_ed25519", ".netrc", ".npmrc"]
    + ["credentials.json", "client_secret.yaml", "my-secrets.yml", "service-account-prod.json", "keys.p12"],
)
def test_secret_file_names(tmp_path: Path, name: str) -> None:
    assert _scan_one(tmp_path, name, "anything\n") == SkippedFile(
        name, "secret", "file name looks like a secret"
    )


@pytest.mark.parametrize("name", ["id_rsa.pub", "keys.py", "secret_santa.py", "token.md"])
def test_names_that_are_not_secrets(tmp_path: Path, name: str) -> None:
    assert getattr(_scan_one(tmp_path, name, "harmless = 1\n"), "reason", None) != "secret"


MARK = "OYASECRETMARKER"
SECRET_CONTENT = {
    "private_key": "-----BEGIN RSA PRIVATE" + " KEY-----\nMIIE" + MARK + "\n",
    "aws_access_key_id": "key = " + "AS" + "IA" + MARK + "Q\n",
    "github_token": "t = '" + "gh" + "s_" + MARK + "abcdefghij0123456789Z'\n",
    "slack_token": "hook = '" + "xo" + "xb-1234567890-" + MARK + "'\n",
    "stripe_key": "k = '" + "rk" + "_live_" + MARK + "0123'\n",
    "openai_key": "client = Client('" + "sk" + "-proj-" + MARK + "0123456789abcdefghij')\n",
    "google_api_key": "maps = '" + "AI" + "za" + MARK + "0123456789abcdefghij'\n",
    "jwt": "auth = 'Bearer " + "ey" + "JhbGciOiJIUzI1NiJ9.ey" + "JzdWIiOiIxMjM0NTY3ODkwIn0." + MARK + "'\n",
    "secret_assignment": "DB_PASS" + "WORD = '" + MARK + "_s3cr3t_v4lue'\n",
}


@pytest.mark.parametrize("rule", sorted(SECRET_CONTENT))
def test_secret_content_is_redacted_in_place(tmp_path: Path, rule: str) -> None:
    item = _scan_one(tmp_path, "config.py", "import os\n\n" + SECRET_CONTENT[rule])
    assert isinstance(item, SourceFile) and MARK not in item.text
    assert item.redactions == ((rule, 1),)
    assert item.text.startswith("import os\n\n") and f"«redacted:{rule}»" in item.text
    assert item.n_lines == item.text.count("\n") == 3 + (rule == "private_key")


def test_a_file_that_is_mostly_secrets_is_skipped(tmp_path: Path) -> None:
    text = "".join(f"svc{i}_password: {MARK}{i}x\n" for i in range(3)) + "host: db\n"
    item = _scan_one(tmp_path, "creds.yaml", text)
    assert item == SkippedFile("creds.yaml", "secret", "3 of 4 lines hold secrets (secret_assignment)")


@pytest.mark.parametrize(
    "line",
    [
        "token = tokens[0]",
        'TOKEN_TYPE = "token_type"',
        'refresh = {"grant": "refresh_token", "token_type_hint": "refresh_token_v2"}',
        'password = "changeme-changeme-123"',
        'api_key = "your_api_key_here_123"',
        'API_KEY = "${API_KEY}"',
        'tokenizer_class = "LlamaTokenizerFast"',
        'SECRET_KEY_SETTING = "DJANGO_SECRET_KEY_FALLBACK"',
        'password_field = "passwordConfirmation"',
        'publicKeyToken = "1fc8b3b9a1e18e3b"',
        'secret = os.environ["SECRET_TOKEN_VALUE_1234"]',
        'task_name = "task-' + "0123456789abcdef0123456789abcdef" + '"',
        'aws_doc = "' + "AK" + 'IAIOSFODNN7EXAMPLE"',
    ],
)
def test_things_that_are_not_secrets(tmp_path: Path, line: str) -> None:
    item = _scan_one(tmp_path, "config.py", line + "\n")
    assert isinstance(item, SourceFile) and item.redactions == () and item.text == line + "\n"


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("pkg/mod.py", "python"),
        ("stubs/mod.pyi", "python"),
        ("README.md", "markdown"),
        ("docs/guide.rst", "rst"),
        ("LICENSE", "text"),
        ("README", "text"),
        ("requirements.txt", "text"),
        ("Makefile", "makefile"),
        ("Dockerfile", "dockerfile"),
        ("docker/Dockerfile.dev", "dockerfile"),
        ("setup.cfg", "ini"),
        ("pyproject.toml", "toml"),
        ("ci.yml", "yaml"),
        ("package.json", "json"),
        ("run.sh", "shell"),
        ("app.ts", "typescript"),
        ("main.go", "go"),
        ("lib.rs", "rust"),
        ("A.java", "java"),
        ("x.h", "c"),
        ("x.cpp", "cpp"),
        ("x.rb", "ruby"),
        ("index.html", "html"),
        ("site.css", "css"),
        ("schema.sql", "sql"),
        ("notes.weird", None),
        ("Makefile.am", None),
        (".gitignore", None),
    ],
)
def test_detect_language(path: str, language: str | None) -> None:
    assert detect_language(path) == language


# Universal-newline reading is the reference for line counting and newline normalisation.
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["a", "é", " ", "\n", "\r", "\r\n", "\t", "€"]), min_size=1).map("".join))
def test_text_and_line_count_match_universal_newlines(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "f.py").write_bytes(text.encode("utf-8"))
        (item,) = (r := scan_repository(Path(tmp))).files + r.skipped
    if text.isspace():
        assert item.reason == "empty"
        return
    expected = io.StringIO(text, newline=None).read()
    assert item.text == expected
    assert item.n_lines == len(io.StringIO(text, newline=None).readlines())


@has_git
def test_git_mode_reports_a_nested_repository_once(tmp_path: Path) -> None:
    repo = _write(tmp_path / "repo", {"a.py": "A = 1\n", "vendor/lib/m.py": "M = 1\n"})
    _git(repo, "init", "-q")
    _git(repo / "vendor" / "lib", "init", "-q")
    files, skipped = _by_path(scan_repository(repo))
    assert list(files) == ["a.py"]
    assert skipped == {"vendor/lib": SkippedFile("vendor/lib", "ignored", "nested git repository")}


@has_git
def test_git_mode_reports_a_self_ignoring_directory_once(tmp_path: Path) -> None:
    # tools such as pytest and grimp write a ".gitignore" containing "*" into their caches
    repo = _write(
        tmp_path / "repo",
        {".gitignore": "cache/\n", "a.py": "A = 1\n", "cache/.gitignore": "*\n", "cache/c.json": "{}\n"},
    )
    _git(repo, "init", "-q")
    files, skipped = _by_path(scan_repository(repo))
    assert list(files) == ["a.py"]
    assert list(skipped) == [".gitignore", "cache"]


def test_a_folder_ignored_by_the_enclosing_repository_is_walked(tmp_path: Path) -> None:
    """An unpacked download under an ignored cache folder: git lists nothing there, so walk it."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("cache/\n")
    proj = tmp_path / "cache" / "proj"
    (proj / "pkg").mkdir(parents=True)
    (proj / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    (proj / ".gitignore").write_text("*.log\n")
    (proj / "debug.log").write_text("noise\n")
    result = scan_repository(proj)
    assert [f.path for f in result.files] == ["pkg/mod.py"]


# The five forms issue 11 found reaching the index, the bundle and the pages (each was indexed
# whole before redaction existed): the canary must not reach the SourceFile, and the file stays.
ISSUE_11_FORMS = {
    "config.yaml": "db:\n  password: " + MARK + "x9\n  api_key: " + MARK + "k7\n  host: db\n",
    "setup.cfg": "[db]\nhost = db\npassword = " + MARK + "x9\n",
    "app.py": 'import os\n\nos.environ.setdefault("API_KEY", "' + MARK + 'x9")\n',
    "client.py": 'HEADERS = {"Authorization": "Bearer ' + MARK + 'x9"}\n',
    "db.py": 'DSN = "postgres://app:' + MARK + 'x9@db.internal:5432/app"\n',
}


@pytest.mark.parametrize("name", sorted(ISSUE_11_FORMS))
def test_issue_11_forms_are_redacted(tmp_path: Path, name: str) -> None:
    item = _scan_one(tmp_path, name, ISSUE_11_FORMS[name])
    assert isinstance(item, SourceFile) and item.redactions
    assert MARK not in item.text and "«redacted:" in item.text
    assert item.n_lines == ISSUE_11_FORMS[name].count("\n")


# Issue 22: a file or folder named like a token. The path is the secret, so the file is never
# read nor offered to the scan cache, and every skip under it keeps only the masked path.
GH_TOKEN = "gh" + "p_" + MARK + "0123456789abcdefghijklmnopq"
AWS_KEY = "AK" + "IA" + MARK + "Q"


class _RecordingKnownFiles:
    """A scan cache that knows nothing and records every path it is asked about."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def get(self, rel: str, st: os.stat_result) -> SourceFile | None:
        self.asked.append(rel)
        return None

    def put(self, rel: str, st: os.stat_result, file: SourceFile) -> None:
        self.asked.append(rel)


@pytest.mark.parametrize("mode", ["walk", "git"])
def test_a_path_holding_a_token_is_skipped_under_its_masked_path(tmp_path: Path, mode: str) -> None:
    repo = _write(
        tmp_path / "repo",
        {
            f"{GH_TOKEN}.txt": "harmless = 1\n",
            f"backup_{AWS_KEY}.json": "{}\n",
            f"keys/{GH_TOKEN}/mod.py": "x = 1\n",
            f"{GH_TOKEN}.png": b"\x89PNG",
            "ok.py": "x = 1\n",
            ".gitignore": f"ignored-{AWS_KEY}.log\n",
            f"ignored-{AWS_KEY}.log": "noise\n",
        },
    )
    if mode == "git":
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        _git(repo, "init", "-q")
    known = _RecordingKnownFiles()
    result = scan_repository(repo, known=known)
    assert [f.path for f in result.files] == ["ok.py"]
    gh, aws = "«redacted:github_token»", "«redacted:aws_access_key_id»"
    assert {s.path: (s.reason, s.detail) for s in result.skipped if s.path != ".gitignore"} == {
        f"{gh}.txt": ("secret", "path holds a secret (github_token)"),
        f"{gh}.png": ("secret", "path holds a secret (github_token)"),
        f"backup_{aws}.json": ("secret", "path holds a secret (aws_access_key_id)"),
        f"ignored-{aws}.log": ("secret", "path holds a secret (aws_access_key_id)"),
        f"keys/{gh}/mod.py": ("secret", "path holds a secret (github_token)"),
    }
    assert MARK not in repr(result) and not [p for p in known.asked if MARK in p]
