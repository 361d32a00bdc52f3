"""The browser app's unit tests (tests/js/*.test.js, Node's own test runner) as part of the pytest run.

The Ask panel's pure modules under site_template/static/ask/ (utilities, vector kernel, engine and
its worker protocol, answer views, diagram sanitising, history) are tested in Node, without a browser
(a second or so); the real-browser tests in this folder cover the DOM and the runtime. Node runs the
template's `.js` files as ES modules (site_template/package.json and tests/js/package.json say "type": "module").
A failure shows Node's own report here.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
JS_TESTS = REPO_ROOT / "tests" / "js"
NODE_TEST_ARGS = ("--test", "--test-reporter=tap")


def node_test_command(node: str, paths: tuple[Path, ...] = (JS_TESTS,)) -> list[str]:
    return [node, *NODE_TEST_ARGS, *(str(p) for p in paths)]


def _run(paths: tuple[Path, ...] = (JS_TESTS,)) -> tuple[int, str, dict[str, int]]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("the browser modules' unit tests need Node.js: run `make test-deps`", pytrace=False)
    proc = subprocess.run(
        node_test_command(node, paths),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    counts = {k: int(v) for k, v in re.findall(r"^# (tests|pass|fail|cancelled) (\d+)$", proc.stdout, re.M)}
    return proc.returncode, proc.stdout + proc.stderr, counts


def test_browser_modules_pass_their_node_unit_tests() -> None:
    code, report, counts = _run()
    failed = "\n".join(line for line in report.splitlines() if line.startswith("not ok") or "Error" in line)
    assert code == 0 and counts.get("fail") == 0, f"node --test failed:\n{failed}\n\n{report[-8000:]}"
    assert counts.get("tests", 0) >= 40 and counts["pass"] == counts["tests"], counts  # all of them ran


def test_a_broken_module_fails_its_node_tests(tmp_path: Path) -> None:
    """The runner reports a broken kernel: a copy of the modules whose ranking ignores the ids' order."""
    ask = tmp_path / "site_template" / "static" / "ask"
    shutil.copytree(REPO_ROOT / "site_template" / "static" / "ask", ask)
    shutil.copyfile(REPO_ROOT / "site_template" / "package.json", tmp_path / "site_template" / "package.json")
    kernel = ask / "vectors.js"
    kernel.write_text(
        kernel.read_text(encoding="utf-8").replace("|| byId(ids[a], ids[b])", ""), encoding="utf-8"
    )
    shutil.copytree(JS_TESTS, tmp_path / "tests" / "js")
    code, report, counts = _run((tmp_path / "tests" / "js" / "vectors.test.js",))
    assert code != 0 and counts.get("fail", 0) >= 1, report[-4000:]
    assert "ties broken by chunk id" in report
