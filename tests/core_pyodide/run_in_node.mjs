// Run pytest under real Pyodide in Node (no browser, no network): the same interpreter the site uses.
//
// Usage: node run_in_node.mjs --pyodide <node_modules/pyodide> --repo <repo root> --deps <dir> -- [pytest args]
// <deps> holds pure-Python wheels installed for Python 3.14 (pytest and its dependencies). The repo
// and deps are mounted read-write with NODEFS at /repo and /deps; HOME stays outside the mount, no
// bytecode or pytest cache is written into the repo, and stdout is passed through unbuffered.
// Exit code: pytest's.
import path from "node:path";
import { pathToFileURL } from "node:url";

function parseArgs(argv) {
  const opts = { pytest: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      opts.pytest = argv.slice(i + 1);
      break;
    }
    if (!["--pyodide", "--repo", "--deps"].includes(a) || i + 1 >= argv.length) {
      throw new Error(`unknown or incomplete argument: ${a}`);
    }
    opts[a.slice(2)] = path.resolve(argv[++i]);
  }
  for (const key of ["pyodide", "repo", "deps"]) {
    if (!opts[key]) throw new Error(`missing --${key}`);
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const { loadPyodide } = await import(pathToFileURL(path.join(opts.pyodide, "pyodide.mjs")).href);
const write = (stream) => ({
  write: (buffer) => {
    stream.write(buffer);
    return buffer.length;
  },
});
const pyodide = await loadPyodide({
  indexURL: opts.pyodide + path.sep,
  env: { HOME: "/home/pyodide", PYTHONUNBUFFERED: "1", PYTHONDONTWRITEBYTECODE: "1" },
});
pyodide.setStdout(write(process.stdout));
pyodide.setStderr(write(process.stderr));
for (const [host, mount] of [
  [opts.repo, "/repo"],
  [opts.deps, "/deps"],
]) {
  pyodide.FS.mkdirTree(mount);
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: host }, mount);
}
pyodide.globals.set("PYTEST_ARGS", pyodide.toPy(opts.pytest));
const code = pyodide.runPython(`
import importlib, os, sys
sys.dont_write_bytecode = True
sys.path[:0] = ["/repo", "/deps"]
importlib.invalidate_caches()
os.chdir("/repo")
import pytest
int(pytest.main(["-p", "no:cacheprovider", *PYTEST_ARGS]))
`);
process.exit(code);
