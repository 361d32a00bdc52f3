"""The markdown page of ``embed_survey.py``: every tagged run's tables, the candidates and the
packages looked at but not measured (``results/archive/embed_survey.md``)."""

from __future__ import annotations

from typing import Any

from bench.experiments import embed_survey_models as em


def table(results: dict[str, Any], langs: list[str]) -> str:
    head = (
        "| row | "
        + " | ".join(f"{lang} R@5" for lang in langs)
        + " | all R@1 | all R@5 | all R@10 | all MRR |"
    )
    lines = [head, "|" + "---|" * (len(langs) + 5)]
    for row, summ in results.items():
        cells = [f"{100 * summ[lang]['R@5']:.1f}" if lang in summ else "-" for lang in langs]
        o = summ["overall"]
        lines.append(
            f"| {row} | "
            + " | ".join(cells)
            + f" | {100 * o['R@1']:.1f} | {100 * o['R@5']:.1f} | {100 * o['R@10']:.1f} | {o['MRR']:.3f} |"
        )
    return "\n".join(lines)


def render(reports: dict[str, dict[str, Any]]) -> str:
    """One markdown page from every tagged run: quality tables, speed and size, the survey."""
    out = ["# Embedding model survey (issue 16 item 4)", ""]
    for tag, rep in reports.items():
        if "results" in rep:
            langs = sorted(rep["per_language_n"])
            n = ", ".join(f"{lang} {k}" for lang, k in rep["per_language_n"].items())
            out += [
                f"## Quality, run `{tag}` ({rep['date']}, {rep['commit']}): {len(rep['queries'])} queries ({n})",
                "",
            ]
            out += [table(rep["results"], langs), ""]
            if rep.get("paired_vs_product"):
                out += [
                    "Minus the product's row of the same kind (mean, 95 % paired bootstrap interval):",
                    "",
                ]
                for row, ms in rep["paired_vs_product"].items():
                    cells = [f"{m} {v[0]:+.3f} [{v[1]:+.3f}, {v[2]:+.3f}]" for m, v in ms.items()]
                    out.append(f"- {row}: " + "; ".join(cells))
                out.append("")
            out += [
                f"Embedding work in this run (chunks not cached before, wall s under load {rep['load']}):",
                "",
            ]
            out += [
                f"- {m}: {int(s['chunks'])} chunks, {s['seconds']:.0f} s"
                for m, s in rep["embedding_run"].items()
                if s["chunks"]
            ]
            out += [f"- lines per chunk over these indexes: {rep['lines_per_chunk']:.1f}", ""]
        if "speed" in rep:
            sp = rep["speed"]
            out += [f"## Speed and browser file, run `{tag}` ({rep['date']}; load {sp['load_1min']})", ""]
            out += [
                "| model | chunks/s (wall, 2 threads, one text per run) | chunks per CPU s "
                "| int8 MB | int8 gzip MB | cos int8 vs fp32 (mean / min) | dim |",
                "|---|---|---|---|---|---|---|",
            ]
            for m, cps in sp["chunks_per_s"].items():
                per_cpu = sp.get("chunks_per_cpu_s", {}).get(m, float("nan"))
                b = rep["browser_file"].get(m, {})
                size = (
                    f"{b['int8_bytes'] / 1e6:.1f} | {b['int8_gzip_bytes'] / 1e6:.1f} | "
                    f"{b['cos_int8_fp32_mean']:.3f} / {b['cos_int8_fp32_min']:.3f} | {b['dim']}"
                    if b
                    else "- | - | - | -"
                )
                out.append(f"| {m} | {cps:.1f} | {per_cpu:.1f} | {size} |")
            out += ["", f"Sample: {rep['speed_sample']}", ""]
    out += [
        "## Candidates measured",
        "",
        "| name | package | model | licence | parameters |",
        "|---|---|---|---|---|",
    ]
    out += [f"| {c.name} | {c.package} | {c.model} | {c.licence} | {c.params} |" for c in em.CANDIDATES]
    out += ["", "## Looked at and not measured", ""]
    out += [f"- {name}: {why}" for name, why in em.REJECTED]
    return "\n".join(out) + "\n"
