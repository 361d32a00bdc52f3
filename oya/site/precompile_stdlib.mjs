// Compile Pyodide's standard library to bytecode once, at vendor time, with the same Pyodide the
// browser runs (so the bytecode matches its Python exactly). python_stdlib.zip ships only .py
// sources, so every page load recompiled the ~200 modules imported at boot: precompiled, a cold
// Pyodide boot took 0.3 s instead of 1.5 s under Node and 2.5 s instead of 3.9 s in Chromium, for
// 2 MB more to download. The core wheel's modules go the same way (oya.site.vendor.core_bytecode):
// given an input zip of sources, that zip is compiled instead of the standard library, at the
// optimization level given (2: without docstrings; the core reads none and asserts nothing).
// Usage: node precompile_stdlib.mjs <pyodide dir> <out zip> [<in zip> [<optimize>]]
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, outZip, inZip, optimize = "0"] = process.argv.slice(2);
if (!/^[012]$/.test(optimize)) throw new Error(`optimize must be 0, 1 or 2, not ${optimize}`);
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const py = await loadPyodide({ indexURL: pyodideDir + path.sep });
py.FS.writeFile("/tmp/in.zip", new Uint8Array(fs.readFileSync(inZip ?? path.join(pyodideDir, "python_stdlib.zip"))));
py.runPython(`
import importlib._bootstrap_external as be
import importlib.util
import zipfile

with zipfile.ZipFile("/tmp/in.zip") as zin, zipfile.ZipFile("/tmp/out.zip", "w", zipfile.ZIP_DEFLATED) as zout:
    for info in sorted(zin.infolist(), key=lambda i: i.filename):
        data = zin.read(info)
        if info.filename.endswith(".py"):
            try:
                code = compile(data, info.filename, "exec", dont_inherit=True, optimize=${optimize})
            except SyntaxError:  # test data with deliberate errors: keep the source
                zout.writestr(info, data)
                continue
            pyc = be._code_to_hash_pyc(code, importlib.util.source_hash(data), checked=False)
            out = zipfile.ZipInfo(info.filename + "c", date_time=(1980, 1, 1, 0, 0, 0))
            out.compress_type = zipfile.ZIP_DEFLATED
            zout.writestr(out, pyc)
        else:
            zout.writestr(info, data)
`);
fs.writeFileSync(outZip, py.FS.readFile("/tmp/out.zip"));
