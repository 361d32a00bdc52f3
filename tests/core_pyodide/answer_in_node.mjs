// The oya core answering questions under real Pyodide in Node, booted as the site's engine worker boots
// it (site_template/static/pyodide_boot.js and pyodide_worker.js): the wheel unpacked into
// site-packages with pyodide.unpackArchive, shards handed over as bytes from a JS map, the whole
// bundle's bytes given to the reference reader (bench/variants/whole_bundle.py, --reference: not part
// of the shipped core, installed beside it here). Used by tests/site/test_stdlib_trim.py, which compares the
// answers with CPython's and the standard library's modules it imported with the trimmed list
// (oya/site/stdlib_trim.py).
//
// Usage: node answer_in_node.mjs --pyodide <node_modules/pyodide> --wheel <core wheel> --shards <dir>
//        --bundle <dir> --reference <whole_bundle.py> --requests <file> [--stdlib <zip>]
// <requests>: {"manifest": shard manifest name, "asks": [ask_json requests], "reports": [texts to
// condense], "rank": [[vector, n], ...]}. --stdlib: the standard library zip to boot from (loadPyodide's
// stdLibURL; default Pyodide's own). Prints one JSON object: {sharded, whole: [ask_json answers],
// condensed: [[text, note]], ranked: [rank_vectors JSON], modules: [the stdlib modules imported, from
// the zip]}.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const KEYS = ["pyodide", "wheel", "shards", "bundle", "reference", "requests", "stdlib"];

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!KEYS.includes(key) || i + 1 >= argv.length) throw new Error(`unknown or incomplete argument: ${argv[i]}`);
    opts[key] = path.resolve(argv[i + 1]);
  }
  for (const key of KEYS.slice(0, -1)) if (!opts[key]) throw new Error(`missing --${key}`);
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const { loadPyodide } = await import(pathToFileURL(path.join(opts.pyodide, "pyodide.mjs")).href);
const pyodide = await loadPyodide({
  indexURL: opts.pyodide + path.sep,
  ...(opts.stdlib ? { stdLibURL: opts.stdlib } : {}),
  env: { HOME: "/home/pyodide", PYTHONDONTWRITEBYTECODE: "1" },
});
// as pyodide_boot.js installs the wheel
const SITE_PACKAGES = "next(p for p in __import__('sys').path if p.endswith('/site-packages'))";
const purelib = pyodide.runPython(SITE_PACKAGES);
pyodide.unpackArchive(new Uint8Array(fs.readFileSync(opts.wheel)), "wheel", { extractDir: purelib });
pyodide.FS.writeFile(purelib + "/oya_whole_bundle.py", fs.readFileSync(opts.reference, "utf8"));
pyodide.runPython(`import sys\nsys.path_importer_cache.pop(${SITE_PACKAGES}, None)\nimport oya.core`);

const requests = JSON.parse(fs.readFileSync(opts.requests, "utf8"));
const read = (dir, name) => new Uint8Array(fs.readFileSync(path.join(dir, name)));
// the worker's map of fetched shards: here every shard is at hand (a name outside the folder is not)
pyodide.globals.set("oya_shard_bytes", (name) => (/^[a-z]+-[0-9a-f]{16}\.(json|bin)\.gz$/.test(name) ? read(opts.shards, name) : undefined));
pyodide.globals.set("OYA_INDEX_BYTES", read(opts.bundle, "index.json.gz"));
pyodide.globals.set("OYA_VECTOR_BYTES", read(opts.bundle, "vectors.bin.gz"));
pyodide.globals.set("OYA_REQUESTS", JSON.stringify(requests));
const out = pyodide.runPython(`
import json
import sys

from oya.core.bundle import ask_json
from oya.core.query import MAX_QUESTION_CHARS
from oya.core.report import condense_report
from oya.core.shard_store import ShardsMissing
from oya.core.shards import open_shards
from oya_whole_bundle import decode_bundle


def _fetch(name):
    data = oya_shard_bytes(name)
    if data is None:
        raise ShardsMissing([name])
    return data.to_bytes()


_req = json.loads(OYA_REQUESTS)
_sharded = open_shards(_fetch, _req["manifest"])
_whole = decode_bundle(OYA_INDEX_BYTES.to_bytes(), OYA_VECTOR_BYTES.to_bytes())
_condensed = []
for _text in _req["reports"]:
    _c = condense_report(_text, MAX_QUESTION_CHARS)
    _condensed.append(None if _c is None else [_c.text, _c.note(more=False)])
_zip = next(p for p in sys.path if p.endswith(".zip")) + "/"
json.dumps(
    {
        "sharded": [ask_json(_sharded, json.dumps(r)) for r in _req["asks"]],
        "whole": [ask_json(_whole, json.dumps(r)) for r in _req["asks"]],
        "condensed": _condensed,
        "ranked": [json.dumps(_sharded.rank_vectors(v, n)) for v, n in _req["rank"]],
        "modules": sorted(
            name for name, m in list(sys.modules.items()) if (getattr(m, "__file__", None) or "").startswith(_zip)
        ),
    }
)
`);
process.stdout.write(out);
