// The core's cost per question under real Pyodide (the browser's interpreter) in Node, in CPU time:
// what the engine worker's "python" step costs, whatever else the machine runs (bench/big_site_bench.py).
//
// Usage: node pyodide_core_time.mjs --pyodide <node_modules/pyodide> --repo <repo root>
//        --shards <the site's shard folder> --manifest <the shard manifest's name>
//        --requests <file: JSON list of ask_json requests {question, vector, ranked}>
// Prints one JSON object: {load_ms, cpu_ms: [...], wall_ms: [...]} (one entry per request, in order).
// The repo and the shard folder are mounted read-only-in-spirit with NODEFS; the worker's own calls
// are used: oya.core.shards.open_shards (over a folder fetcher: every shard is there, so no round
// of ShardsMissing), then ask_json per request, the JSON string in and out.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!["pyodide", "repo", "shards", "manifest", "requests"].includes(key) || i + 1 >= argv.length) {
      throw new Error(`unknown or incomplete argument: ${argv[i]}`);
    }
    opts[key] = key === "manifest" ? argv[i + 1] : path.resolve(argv[i + 1]);
  }
  if (!/^manifest-[0-9a-f]{16}\.json\.gz$/.test(opts.manifest || "")) throw new Error("--manifest: not a shard manifest name");
  for (const key of ["pyodide", "repo", "shards", "manifest", "requests"]) if (!opts[key]) throw new Error(`missing --${key}`);
  return opts;
}

function cpuMs(start) {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}

const opts = parseArgs(process.argv.slice(2));
const { loadPyodide } = await import(pathToFileURL(path.join(opts.pyodide, "pyodide.mjs")).href);
const pyodide = await loadPyodide({
  indexURL: opts.pyodide + path.sep,
  env: { HOME: "/home/pyodide", PYTHONDONTWRITEBYTECODE: "1" },
});
for (const [host, mount] of [
  [opts.repo, "/repo"],
  [opts.shards, "/shards"],
]) {
  pyodide.FS.mkdirTree(mount);
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: host }, mount);
}
const t0 = performance.now();
pyodide.runPython(`
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, "/repo")
from oya.core.bundle import ask_json
from oya.core.shard_store import folder_fetch
from oya.core.shards import open_shards
OYA_BUNDLE = open_shards(folder_fetch("/shards"), "${opts.manifest}")
`);
const askJson = pyodide.runPython("lambda request: ask_json(OYA_BUNDLE, request)");
const loadMs = performance.now() - t0;
const requests = JSON.parse(fs.readFileSync(opts.requests, "utf8"));
const cpu = [];
const wall = [];
for (const request of requests) {
  const text = JSON.stringify(request);
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  askJson(text);
  wall.push(performance.now() - w0);
  cpu.push(cpuMs(c0));
}
process.stdout.write(JSON.stringify({ load_ms: loadMs, cpu_ms: cpu, wall_ms: wall }) + "\n");
