"""The secret scanner's cost and its false positives: Oya's rules (oya.scanning.redact) against detect-secrets.

Theory of operation:

* Trees: this repository and PyPI source distributions (``bench/corpus.py``), django==5.2.8
  (about 700k lines) and networkx==3.6.1 (about 300k) by default. The files are the ones the
  reader lists (``scan_repository``: ignores, binaries, secret file names left out); their
  text is read again from disk, unredacted, since the reader returns it redacted.
* Cost: ``oya.scanning.redact.redact`` on every file's text, best of ``--repeat`` passes, reported as
  seconds per 100k lines. detect-secrets 1.5.0 (``SecretsCollection.scan_file`` with its
  default plugins and filters) is timed on the first ``--ds-lines`` lines' worth of files of
  each tree, once: it is about a hundred times slower, which is why it is not what Oya runs.
* Findings: every value Oya would redact is listed in ``bench/results/secret_findings.txt``
  with the line as it would be indexed (the value already replaced), for review by hand; the
  table counts them by rule. A false positive is a finding that is not a credential (a name,
  an expression, a regex); example and test credentials are true positives of the rules.
* Hostile input: files of about 1 MB built to make regular expressions backtrack (one long
  line, thousands of near-matches); each must stay well under a second.
* Recall: the corpus of tests/secret_corpus.py (73 forms, 14 provider tokens, 90 negatives),
  written to files with a fitting extension, scanned by both tools.

Run: ``.venv/bin/python -m bench.secret_bench [--project django==5.2.8 ...] [--tree DIR ...]
[--repeat 3] [--ds-lines 30000] [--no-detect-secrets]``; results go to ``bench/results/secret_bench.json``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import RESULTS, ROOT, load_avg, machine, write_json
from bench.corpus import fetch_project
from oya.scanning.languages import detect_language
from oya.scanning.reader import scan_repository
from oya.scanning.redact import find_secrets, redact
from tests.secret_corpus import NEGATIVES, POSITIVES, TOKENS

_EXT = {"yaml": ".yaml", "ini": ".cfg", "toml": ".toml", "json": ".json", "shell": ".sh", None: ".txt"}
_EXT |= {"dockerfile": ".dockerfile", "python": ".py", "javascript": ".js", "typescript": ".ts"}
_EXT |= {"go": ".go", "ruby": ".rb", "makefile": ".mk", "markdown": ".md", "text": ".txt"}
_EXT |= {"csharp": ".cs", "java": ".java", "php": ".php", "c": ".c"}


def _texts(root: Path) -> list[tuple[str, str, str]]:
    """(path, language, text as on disk) of every file the reader would index or redact."""
    result = scan_repository(root, max_file_bytes=2_000_000)
    paths = [(f.path, f.language) for f in result.files]
    paths += [(s.path, detect_language(s.path) or "text") for s in result.skipped if "lines hold" in s.detail]
    out = []
    for rel, language in sorted(paths):
        text = (root / rel).read_text(encoding="utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
        out.append((rel, language, text))
    return out


def _lines(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _oya(files: list[tuple[str, str, str]], repeat: int) -> dict[str, Any]:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _, language, text in files:
            redact(text, language)
        best = min(best, time.perf_counter() - t0)
    by_rule: dict[str, int] = {}
    findings = []
    for rel, language, text in files:
        red = redact(text, language)
        for rule, n in red.counts.items():
            by_rule[rule] = by_rule.get(rule, 0) + n
        if red.counts:
            old, new = text.split("\n"), red.text.split("\n")
            findings += [
                f"{rel}:{i + 1}: {new[i].strip()[:160]}" for i in range(len(old)) if old[i] != new[i]
            ]
    return {"seconds": best, "findings": sum(by_rule.values()), "by_rule": by_rule, "lines_shown": findings}


def _detect_secrets_files(paths: list[Path]) -> tuple[float, int] | None:
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ModuleNotFoundError:
        return None
    with default_settings():
        found = SecretsCollection()
        t0 = time.perf_counter()
        for path in paths:
            found.scan_file(str(path))
        seconds = time.perf_counter() - t0
    return seconds, sum(1 for _ in found)


def _detect_secrets_tree(
    root: Path, files: list[tuple[str, str, str]], max_lines: int
) -> dict[str, Any] | None:
    sample, lines = [], 0
    for rel, _, text in files:
        if lines >= max_lines:
            break
        sample.append(root / rel)
        lines += _lines(text)
    measured = _detect_secrets_files(sample)
    if measured is None:
        return None
    seconds, n = measured
    return {"lines": lines, "seconds": seconds, "findings": n, "per_100k": seconds / lines * 1e5}


def _recall(use_ds: bool) -> dict[str, Any]:
    """Forms caught and negatives flagged by each tool on the shared corpus."""
    cases = [(form, lang, text, True) for form, lang, text, _ in POSITIVES]
    cases += [(rule, "python", f"value = '{tok}'\n", True) for rule, tok in TOKENS]
    cases += [(line, lang, line + "\n", False) for lang, line in NEGATIVES]
    oya = {"caught": 0, "false_alarms": 0, "missed": []}
    ds: dict[str, Any] = {"caught": 0, "false_alarms": 0, "missed": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, lang, text, positive) in enumerate(cases):
            hit = bool(find_secrets(text, lang))
            _score(oya, name, hit, positive)
            if use_ds:
                path = Path(tmp) / f"case{i}{_EXT[lang]}"
                path.write_text(text, encoding="utf-8")
                measured = _detect_secrets_files([path])
                if measured is not None:
                    _score(ds, name, measured[1] > 0, positive)
    total = {"positives": len(POSITIVES) + len(TOKENS), "negatives": len(NEGATIVES)}
    return {"corpus": total, "oya": oya, "detect_secrets": ds if use_ds else None}


def _score(tally: dict[str, Any], name: str, hit: bool, positive: bool) -> None:
    if positive and hit:
        tally["caught"] += 1
    elif positive:
        tally["missed"].append(name)
    elif hit:
        tally["false_alarms"] += 1


# Hostile files near the reader's 1 MB limit: one long line, or thousands of near-matches.
HOSTILE = {
    "minified JSON, 40k keys": (
        '{"' + '", "'.join(f'key_{i}": "value_{i}' for i in range(40_000)) + '"}',
        "json",
    ),
    "one word repeated": ("token" * 200_000, "text"),
    "one 1 MB value": ("password=" + "x" * 999_000, "ini"),
    "30k key headers, no END": ("-----BEGIN RSA PRIVATE KEY-----\n" * 30_000, "text"),
    "70k JWT-shaped runs": ("eyJaaaaaaaaaa." * 70_000, "text"),
    "90k open quotes": ('api_key = "' * 90_000, "python"),
    "100k YAML keys": ("password:" * 100_000, "yaml"),
    "500k assignments on keyword lines": (("pw " + "a=" * 1000 + "\n") * 500, "yaml"),
    "70k curl -u pairs": ((" -u a:" + "b1cdefg ") * 71_000, "shell"),  # in pieces: not a finding here
    "160k mysql words": ("mysql " * 160_000, "shell"),
}


def _hostile() -> dict[str, float]:
    out = {}
    for name, (text, language) in HOSTILE.items():
        t0 = time.perf_counter()
        redact(text, language)
        out[name] = time.perf_counter() - t0
    return out


def _print(rows: list[dict[str, Any]], recall: dict[str, Any]) -> None:
    head = f"{'tree':<18}{'files':>7}{'lines':>9}{'oya s':>8}{'s/100k':>8}{'found':>7}"
    head += f"{'d-s lines':>11}{'d-s s':>8}{'d-s s/100k':>11}{'d-s found':>10}"
    print(head)
    for r in rows:
        ds = r["detect_secrets"] or {}
        line = f"{r['tree']:<18}{r['files']:>7}{r['lines']:>9}{r['oya']['seconds']:>8.2f}"
        line += f"{r['oya']['per_100k']:>8.2f}{r['oya']['findings']:>7}"
        if ds:
            line += f"{ds['lines']:>11}{ds['seconds']:>8.1f}{ds['per_100k']:>11.1f}{ds['findings']:>10}"
        print(line)
    for r in rows:
        print(f"  {r['tree']}: {r['oya']['by_rule'] or 'nothing found'}")
    for name, seconds in recall["hostile"].items():
        print(f"hostile 1 MB, {name}: {seconds:.2f} s")
    c = recall["corpus"]
    for tool in ("oya", "detect_secrets"):
        t = recall[tool]
        if t is not None:
            print(
                f"corpus, {tool}: {t['caught']}/{c['positives']} forms caught, "
                f"{t['false_alarms']}/{c['negatives']} negatives flagged; missed: {', '.join(t['missed']) or '-'}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--project", action="append", help="PyPI pin (repeatable)")
    parser.add_argument("--tree", action="append", default=[], help="a folder to scan as well (repeatable)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ds-lines", type=int, default=30_000, help="lines per tree for detect-secrets")
    parser.add_argument("--no-detect-secrets", action="store_true")
    args = parser.parse_args()
    trees = [("oya (this repo)", ROOT)]
    trees += [(spec, fetch_project(spec)) for spec in args.project or ["django==5.2.8", "networkx==3.6.1"]]
    trees += [(Path(t).name, Path(t)) for t in args.tree]
    rows, shown = [], []
    for name, root in trees:
        files = _texts(root)
        lines = sum(_lines(t) for _, _, t in files)
        oya = _oya(files, args.repeat)
        oya["per_100k"] = oya["seconds"] / lines * 1e5
        shown += [f"== {name}"] + oya.pop("lines_shown")
        ds = None if args.no_detect_secrets else _detect_secrets_tree(root, files, args.ds_lines)
        rows.append({"tree": name, "files": len(files), "lines": lines, "oya": oya, "detect_secrets": ds})
    recall = _recall(not args.no_detect_secrets)
    recall["hostile"] = _hostile()
    _print(rows, recall)
    out = {"trees": rows, "recall": recall, "loadavg": load_avg(), "machine": machine()}
    write_json(RESULTS / "secret_bench.json", out)
    (RESULTS / "secret_findings.txt").write_text("\n".join(shown) + "\n", encoding="utf-8")
    print(f"load average {out['loadavg'][0]:.2f}; wrote {RESULTS / 'secret_bench.json'}")


if __name__ == "__main__":
    main()
