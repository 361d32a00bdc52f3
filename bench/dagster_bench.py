"""Oya through Dagster as a deployment runs it: one partitioned run per repository.

Theory of operation:

* Two real PyPI source distributions (``bench/corpus.py``): networkx 3.6.1 (~216k indexed lines,
  855 files) and pylint 4.1.4 (~150k lines in ~4,300 small files: a different shape, on purpose),
  each copied to ``bench/.cache/dagster_bench/repos/<name>`` and committed to a git repository.
  ``--second-copy`` makes the second repository a copy of the first at another path (its own git
  repository, partition and output): pylint's site does not build today (an ``oya/site`` bug).
* One deployment: its own ``DAGSTER_HOME`` (the repository's ``dagster.yaml``), an ``OYA_REPOS``
  file listing both repositories (each with its own output folder) and one shared embedding cache,
  as a team would configure it. A run is ``dagster job execute -m pipelines.definitions -j
  index_repository --tags {"dagster/partition": name}`` in its own process: what the run launcher
  starts for a run, with the job's in-process executor and the filesystem IO manager
  (``--executor multiprocess``: the process-per-step variant it replaced,
  ``bench/variants/dagster_multiprocess.py``). Wall and CPU seconds are the process's (its step
  processes included); per-asset seconds come from the materializations' ``seconds`` metadata; what
  is left is Dagster (process starts, imports, pickling, events, checks).
* ``--phase cold``: an empty embedding cache, no output: each repository built once, one after the
  other (this also fills the cache the warm phase uses).
* ``--phase one-file``: only the one-file change, on the output the last run left.
* ``--phase warm`` (the embedding cache warm, so the numbers are the pipeline's, not the model's),
  ``--rounds`` rounds, interleaved so load drift hits both alike: ``sequential`` = both repositories
  from scratch (output folders removed) one after the other; ``parallel`` = the same two runs
  started at once (two run processes, as a run coordinator with a limit >= 2 launches them);
  ``one file`` = a function appended to one networkx module, committed, and its partition rebuilt.
* Load average is recorded before and after every measurement: on a shared 2-core machine the
  ratios within one run mean more than the absolute seconds.

Run: ``nice -n 10 .venv/bin/python -m bench.dagster_bench --phase cold`` once, then
``--phase warm``; results are merged into ``bench/results/dagster_bench.json``; ``--reprint`` prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import BENCH_DIR, CACHE_DIR, RESULTS, ROOT, load_avg, machine, write_json
from bench.corpus import fetch_project
from bench.site_build_bench import _edit_one_file

WORK = CACHE_DIR / "dagster_bench"
RESULT = RESULTS / "dagster_bench.json"
PROJECTS = ("networkx==3.6.1", "pylint==4.1.4")
ASSETS = (
    "source_files",
    "code_graph",
    "chunks",
    "chunk_embeddings",
    "search_index",
    "wiki_pages",
    "wiki_site",
)
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false"]


def prepare(spec: str) -> str:
    """The project's tree as a committed git repository under WORK/repos; its partition name."""
    name = spec.split("==")[0]
    repo = WORK / "repos" / name
    if not (repo / ".git").is_dir():
        shutil.rmtree(repo, ignore_errors=True)
        shutil.copytree(fetch_project(spec), repo)
        subprocess.run([*GIT, "init", "-q", str(repo)], check=True)
        subprocess.run([*GIT, "-C", str(repo), "add", "-A"], check=True)
        subprocess.run([*GIT, "-C", str(repo), "commit", "-q", "-m", "sdist"], check=True)
    return name


def prepare_copy(name: str, copy: str) -> str:
    """A second repository made of the first's tree at another path (its own git repository)."""
    repo = WORK / "repos" / copy
    if not (repo / ".git").is_dir():
        shutil.copytree(WORK / "repos" / name, repo)
    return copy


def deployment(names: list[str]) -> dict[str, str]:
    """DAGSTER_HOME with the project's dagster.yaml, the repositories file; the runs' environment."""
    home = WORK / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    lines = [f'cache_dir = "{WORK / "embcache"}"', 'embedder = "minilm"']
    for n in names:
        lines += [
            "[[repos]]",
            f'name = "{n}"',
            f'path = "{WORK / "repos" / n}"',
            f'out = "{WORK / "out" / n}"',
        ]
    (WORK / "oya-repos.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {**os.environ, "DAGSTER_HOME": str(home), "OYA_REPOS": str(WORK / "oya-repos.toml")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.pop("OYA_EMBEDDER", None)
    subprocess.run(  # the sensor would add them; here the bench does, before launching runs
        [
            sys.executable,
            "-c",
            f"from dagster import DagsterInstance; DagsterInstance.get()"
            f".add_dynamic_partitions('repos', {names!r})",
        ],
        env=env,
        check=True,
    )
    return env


EXECUTOR = "in_process"  # the shipped job's; "multiprocess": bench/variants/dagster_multiprocess.py


def launch(name: str, env: dict[str, str]) -> subprocess.Popen[str]:
    dagster = str(Path(sys.executable).parent / "dagster")
    tags = json.dumps({"dagster/partition": name})
    # the shipped job runs in-process; the multiprocess variant it replaced is kept in bench/variants
    where = ["-m", "pipelines.definitions"]
    if EXECUTOR == "multiprocess":
        where = ["-f", str(BENCH_DIR / "variants" / "dagster_multiprocess.py"), "-a", "defs"]
    cmd = [dagster, "job", "execute", *where, "-j", "index_repository", "--tags", tags]
    log = open(WORK / f"{name}.log", "w", encoding="utf-8")  # noqa: SIM115 - closed by the child's exit
    return subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, text=True)


def runs(names: list[str], env: dict[str, str], *, parallel: bool) -> dict[str, Any]:
    """Run one partition per name, all at once or one after the other; wall seconds and each run's."""
    load = load_avg()
    t0 = time.perf_counter()
    walls: dict[str, float] = {}
    cpu: dict[str, float] = {}
    if parallel:
        procs = {n: launch(n, env) for n in names}
        for n, p in procs.items():
            cpu[n] = _wait(n, p)
            walls[n] = round(time.perf_counter() - t0, 2)
    else:
        for n in names:
            t1 = time.perf_counter()
            cpu[n] = _wait(n, launch(n, env))
            walls[n] = round(time.perf_counter() - t1, 2)
    total = round(time.perf_counter() - t0, 2)
    return {
        "wall_seconds": total,
        "runs": {n: {**assets_of_last_run(n, env), "wall": walls[n], "cpu": cpu[n]} for n in names},
        "load_before": load,
        "load_after": load_avg(),
    }


def _wait(name: str, proc: subprocess.Popen[str]) -> float:
    """Wait for a run's process; its CPU seconds, its step processes included (they are waited for)."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"the run of {name} failed: see {WORK / (name + '.log')}")
    return round(usage.ru_utime + usage.ru_stime, 2)


def assets_of_last_run(name: str, env: dict[str, str]) -> dict[str, Any]:
    """Per-asset seconds and counts of the partition's latest run, read from the instance."""
    code = (
        "import json, sys\n"
        "from dagster import AssetKey, DagsterInstance, EventRecordsFilter, DagsterEventType\n"
        "i = DagsterInstance.get(); out = {}\n"
        f"for a in {ASSETS!r}:\n"
        "    r = i.get_event_records(EventRecordsFilter(DagsterEventType.ASSET_MATERIALIZATION,"
        f" asset_key=AssetKey(a), asset_partitions=[{name!r}]), limit=1)\n"
        "    md = r[0].asset_materialization.metadata if r else {}\n"
        "    out[a] = {k: v.value for k, v in md.items() if k in ('seconds', 'embedded', 'files', 'lines',"
        " 'chunks', 'rendered', 'reused', 'pages')}\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    found = json.loads(done.stdout)
    seconds = {a: float(found[a].get("seconds", 0.0)) for a in ASSETS}
    return {"assets_seconds": seconds, "assets": found}


def fresh_outputs(names: list[str]) -> None:
    for n in names:
        shutil.rmtree(WORK / "out" / n, ignore_errors=True)


def phase_cold(names: list[str], env: dict[str, str]) -> dict[str, Any]:
    shutil.rmtree(WORK / "embcache", ignore_errors=True)
    fresh_outputs(names)
    return {n: runs([n], env, parallel=False) for n in names}


def phase_warm(names: list[str], env: dict[str, str], rounds: int, save: Any) -> dict[str, Any]:
    """``save(out)`` after every measurement: on a loaded machine a run can take many minutes."""
    out: dict[str, Any] = {"sequential": [], "parallel": [], "one_file": []}
    for r in range(rounds):
        order = ("sequential", "parallel") if r % 2 == 0 else ("parallel", "sequential")
        for kind in order:
            fresh_outputs(names)
            out[kind].append(runs(names, env, parallel=kind == "parallel"))
            save(out)
        out["one_file"].append(one_file(names[0], env))
        save(out)
    return out


def one_file(name: str, env: dict[str, str]) -> dict[str, Any]:
    """A function appended to one module and committed; the partition rebuilt from its last build."""
    repo = WORK / "repos" / name
    edited = _edit_one_file(repo)
    subprocess.run([*GIT, "-C", str(repo), "commit", "-q", "-am", f"bench edit {edited}"], check=True)
    time.sleep(2.1)  # past the scan's 2 s "racy" window, as a commit an hour is
    return {**runs([name], env, parallel=False), "edited": edited, "executor": EXECUTOR}


def _median(xs: list[float]) -> float:
    if not xs:
        return 0.0
    xs = sorted(xs)
    return round(xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2, 2)


def report(result: dict[str, Any]) -> None:
    print(
        f"\nOya through Dagster (dagster job execute, one process per run) — {result.get('machine', {}).get('date_utc')}"
    )
    for n, c in result.get("cold", {}).items():
        run = c["runs"][n]
        print(
            f"  cold {n}: {c['wall_seconds']} s wall, embedded {run['assets'].get('chunk_embeddings', {}).get('embedded')}"
            f" (load {c['load_before']} -> {c['load_after']})"
        )
    for label, key in (("full from scratch", "full"), ("one-file change", "one-file")):
        for entry in result.get(key, []):
            for n, run in entry["runs"].items():
                cpu = f", CPU {run['cpu']} s" if "cpu" in run else ""
                print(
                    f"  {label} ({entry.get('executor', 'multiprocess')}), {n}: wall {run['wall']} s{cpu}, in the assets {sum(run['assets_seconds'].values()):.2f} s "
                    f"(load {entry['load_before']} -> {entry['load_after']})"
                )
                for step, sec in run["assets_seconds"].items():
                    print(f"    {step:<17} {sec:>8.2f} s")
    warm = result.get("warm")
    if not warm:
        return
    measured = warm["sequential"] or warm["parallel"]
    names = list(measured[0]["runs"]) if measured else [result["projects"][0].split("==")[0]]
    n_rounds = max(len(v) for v in warm.values())
    rows: list[tuple[str, ...]] = [("measurement", *[f"round {i + 1}" for i in range(n_rounds)], "median")]

    def row(label: str, values: list[float]) -> None:
        if values:
            cells = [f"{v:.2f}" for v in values] + [""] * (n_rounds - len(values))
            rows.append((label, *cells, f"{_median(values):.2f}"))

    for n in names:
        seq = warm["sequential"]
        row(f"full from scratch, {n} (warm cache): wall s", [s["runs"][n]["wall"] for s in seq])
        row(
            "  CPU s (run and its step processes)",
            [s["runs"][n]["cpu"] for s in seq if "cpu" in s["runs"][n]],
        )
        row("  of which in the assets s", [sum(s["runs"][n]["assets_seconds"].values()) for s in seq])
    for kind in ("sequential", "parallel"):
        row(f"both repositories, {kind}: wall s", [s["wall_seconds"] for s in warm[kind]])
    one = [s["runs"][names[0]] for s in warm["one_file"]]
    row(f"one-file change, {names[0]}: wall s", [r["wall"] for r in one])
    row("  CPU s", [r["cpu"] for r in one if "cpu" in r])
    row("  of which in the assets s", [sum(r["assets_seconds"].values()) for r in one])
    width = max(len(r[0]) for r in rows)
    for r in rows:
        print("  " + r[0].ljust(width) + "  " + "  ".join(c.rjust(9) for c in r[1:]))
    loads = [s["load_before"][0] for k in ("sequential", "parallel", "one_file") for s in warm[k]]
    loads += [s["load_after"][0] for k in ("sequential", "parallel", "one_file") for s in warm[k]]
    print(f"  load average (1 min) before/after the measurements: {min(loads)}–{max(loads)}")
    for step in ASSETS:
        full = [s["runs"][names[0]]["assets_seconds"][step] for s in warm["sequential"]]
        edit = [r["assets_seconds"][step] for r in one]
        print(
            f"    {names[0]} {step:<17} full {_median(full):>7.2f} s   one file {_median(edit) if edit else 0:>6.2f} s"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--phase", choices=("cold", "warm", "one-file"), default="warm")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reprint", action="store_true")
    ap.add_argument("--second-copy", action="store_true", help="second repository: a copy of the first")
    ap.add_argument("--executor", choices=("multiprocess", "in_process"), default="in_process")
    args = ap.parse_args()
    global EXECUTOR
    EXECUTOR = args.executor
    result: dict[str, Any] = json.loads(RESULT.read_text()) if RESULT.exists() else {}
    if not args.reprint:
        names = [prepare(spec) for spec in PROJECTS]
        if args.second_copy:  # pylint's site does not build today (README "Performance"): a copy of networkx
            names[1] = prepare_copy(names[0], names[0] + "_copy")
        env = deployment(names)
        result["machine"] = machine()
        result["projects"] = list(PROJECTS) if not args.second_copy else [PROJECTS[0], f"{names[1]} (a copy)"]

        def save(part: dict[str, Any]) -> None:
            result[args.phase] = part
            write_json(RESULT, result)

        if args.phase == "cold":
            save(phase_cold(names, env))
        elif args.phase == "one-file":  # on the output a previous run left: just the incremental rebuild
            save(result.get("one-file", []) + [one_file(names[0], env) for _ in range(args.rounds)])
        else:
            save(phase_warm(names, env, args.rounds, save))
    report(result)


if __name__ == "__main__":
    main()
