"""bench/big_site_bench.py and its harness: what the bytes to an answer count, the bars of issue 26
(the 4x-bigger-repository growth among them), and a corpus taken from a local git snapshot."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench.big_site_bench import _mirror, bars, scaling
from bench.browser_harness import Transfer, kind_of, summarize


def test_bytes_to_the_first_answer_count_finished_responses_and_say_what_was_in_flight() -> None:
    first, full = 100.0, 200.0
    transfers = [
        Transfer("/wiki/vendor/pyodide.1a/pyodide.asm.wasm", 200, 3000, "br", 1.0, 50.0),
        Transfer("/wiki/bundle.9f/shards/graph-0123456789abcdef.json.gz", 200, 400, "", 2.0, 60.0),
        Transfer("/wiki/models/m/onnx/model_quantized.onnx", 200, 9000, "br", 10.0, 150.0),  # in flight
        Transfer("/wiki/bundle.9f/shards/terms-0123456789abcdef.json.gz", 200, 50, "", 190.0, 191.0),
        Transfer("/wiki/late.html", 200, 7, "", 250.0, 251.0),  # after the full answer
    ]
    s = summarize(transfers, first, full)
    assert s["bytes"] == 3400
    assert s["bytes_with_in_flight"] == 12400
    assert [p for p, _, _ in s["in_flight_at_first_answer"]] == ["/wiki/models/m/onnx/model_quantized.onnx"]
    assert s["first_answer_by_kind"] == {"pyodide": 3000, "shards:graph": 400}
    assert s["bytes_to_full_answer"] == 12450
    assert s["full_answer_by_kind"]["query model"] == 9000
    assert s["full_answer_by_kind"]["shards:terms"] == 50


def test_kinds_of_requests() -> None:
    assert kind_of("/bundle.1/shards/vectors-0123456789abcdef.bin.gz") == "shards:vectors"
    assert kind_of("/vendor/transformers.9/ort-wasm-simd-threaded.wasm") == "transformers+onnxruntime"
    assert kind_of("/vendor/oya_core-0.1-py3-none-any.whl") == "core wheel"
    assert kind_of("/files/a.py.html") == "pages"


def _run(name: str, lines: int, first_bytes: int) -> dict:
    cold = {
        "bytes": first_bytes,
        "seconds": 5.0,
        "bytes_to_full_answer": 7_000_000,
        "full_answer_seconds": 7.5,
    }
    return {
        "corpus": name,
        "build": {"counts": {"lines": lines}},
        "browser": {"oya": {"cold": cold, "warm_questions": {"panel_ms": {"p95": 250.0}}}},
        "sizes": {"largest_pages": [["a.html", 120_000]]},
    }


@pytest.mark.parametrize(("big_bytes", "met"), [(5_200_000, True), (5_400_000, False)])
def test_the_growth_bar_is_the_bigger_repository_s_first_answer_over_the_smaller_s_per_4x(
    big_bytes: int, met: bool
) -> None:
    small, big = _run("small", 100_000, 4_000_000), _run("big", 400_000, big_bytes)
    growth = scaling(big, small)
    assert growth is not None and growth["corpora"] == ["small", "big"]
    assert growth["per_4x"] == pytest.approx(big_bytes / 4_000_000, abs=1e-3)
    rows = {name: ok for name, _, _, ok in bars(big, small)}
    assert rows["first answer bytes, 4x bigger repo (normalised)"] is met
    assert rows["oya: first answer MB, cold"] and rows["oya: warm question panel p95 ms"]
    assert scaling(big, None) is None  # one corpus alone: no growth to report


def test_a_mirror_corpus_is_its_snapshot_s_head_unpacked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "mirrors" / "owner+proj" / "repo"
    src.mkdir(parents=True)
    git = ["git", "-C", str(src), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(src)], check=True)
    (src / "mod.py").write_text("def f():\n    return 1\n")
    subprocess.run([*git, "add", "mod.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    (src / "untracked.py").write_text("x = 2\n")  # not in HEAD: not unpacked
    head = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    monkeypatch.setenv("OYA_MIRRORS", str(tmp_path / "mirrors"))
    dest = tmp_path / "out"
    assert _mirror("owner/proj")(dest) == f"owner/proj@{head}"
    assert sorted(p.name for p in dest.iterdir()) == ["mod.py"]
