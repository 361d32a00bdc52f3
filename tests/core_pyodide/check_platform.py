"""Collected only when named on the command line by tests/core_pyodide: proves the run is really
inside Pyodide, and that the core imports there. (Not test_*.py, so CPython's pytest skips it.)"""

import sys


def test_runs_under_pyodide() -> None:
    assert sys.platform == "emscripten", sys.platform
    assert sys.version_info[:2] == (3, 14)


def test_core_tokenizer_runs() -> None:
    from oya.core.tokenize import tokenize

    assert tokenize("parseHTTPResponse") == tokenize("parseHTTPResponse")
    assert "http" in tokenize("parseHTTPResponse")
