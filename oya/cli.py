"""The ``oya`` command: build an index, search it, ask it, serve its wiki.

Errors are one readable line on stderr and a non-zero exit; tracebacks only with
``OYA_DEBUG=1``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from oya.build.stats import BuildSummary
from oya.errors import OyaError, QueryError, RepositoryError
from oya.terminal import safe_text, styled

err_console = Console(stderr=True)
out_console = Console()

DEFAULT_INDEX = ".oya"


class OyaGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OyaError as exc:  # its message may name repository paths: made safe, on one line
            raise click.ClickException(safe_text(str(exc), one_line=True)) from exc
        except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:
            if os.environ.get("OYA_DEBUG"):
                raise
            first = str(exc).splitlines()[0] if str(exc) else ""
            raise click.ClickException(
                safe_text(
                    f"unexpected {type(exc).__name__}: {first} (set OYA_DEBUG=1 for a traceback)",
                    one_line=True,
                )
            ) from exc


@click.group(cls=OyaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="oya")
def main() -> None:
    """Oya: a code repository as a wiki, answered by graph-augmented retrieval."""


# -- build ---------------------------------------------------------------------------------
@main.command()
@click.argument("repo", required=False, default=".", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Index folder (default: REPO/.oya).")
@click.option(
    "--embedder",
    type=click.Choice(["minilm", "hashing"]),
    default="minilm",
    show_default=True,
    help="minilm: all-MiniLM-L6-v2 (int8 ONNX, the model the site's Ask panel runs); "
    "hashing: a fast deterministic stand-in (tests, demos).",
)
@click.option(
    "--cache-dir",
    type=click.Path(path_type=Path),
    help="Cache: embeddings, the exported model, the browser runtime (default: $OYA_CACHE_DIR or ~/.cache/oya).",
)
@click.option("--site/--no-site", default=False, help="Also build the static wiki into OUT/site.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
def build(
    repo: Path, out_dir: Path | None, embedder: str, cache_dir: Path | None, site: bool, quiet: bool
) -> None:
    """Index REPO (default: the current directory) through the Dagster asset job."""
    from oya.build.progress import ProgressBars
    from pipelines.build import run_build

    if not repo.exists():
        raise RepositoryError(f"repository not found: {repo}")
    if not repo.is_dir():
        raise RepositoryError(f"repository is not a directory: {repo}")
    summary = run_build(
        repo,
        out_dir,
        embedder=embedder,
        cache_dir=cache_dir,
        with_site=site,
        progress=None if quiet else ProgressBars(err_console),
    )
    print_build_summary(summary)


def print_build_summary(summary: BuildSummary) -> None:
    """The build's tables and paths; every text in them is made safe and kept on its line
    (file names and details come from the repository: oya.terminal)."""
    t = Table(
        title=styled(f"oya build — {summary.repo}", one_line=True), show_header=True, header_style="bold"
    )
    t.add_column("asset")
    t.add_column("result", justify="left")
    t.add_column("seconds", justify="right")
    for asset, result, seconds in summary.rows():
        t.add_row(asset, styled(result, one_line=True), f"{seconds:.2f}")
    t.add_row("[bold]total[/bold]", "", f"[bold]{summary.seconds:.2f}[/bold]")
    out_console.print(t)
    skipped = summary.skipped
    if skipped:
        s = Table(title=f"skipped files ({len(skipped)})", header_style="bold")
        s.add_column("path", overflow="fold")  # a long name shown whole, over lines of its cell
        s.add_column("reason")
        s.add_column("detail")
        for item in skipped[:200]:
            s.add_row(*(styled(text, one_line=True) for text in (item.path, item.reason, item.detail)))
        if len(skipped) > 200:
            s.add_row(f"... and {len(skipped) - 200} more", "", "")
        out_console.print(s)
    redactions = summary.stats.source_files.redactions
    if redactions:
        rules = ", ".join(f"{rule} {n}" for rule, n in redactions.items())
        out_console.print(styled(f"secrets redacted: {sum(redactions.values())} ({rules})", one_line=True))
    for check in summary.checks:
        mark = "[green]passed[/green]" if check.passed else "[red]FAILED[/red]"
        out_console.print(f"check {escape(check.name)}: {mark}")
    out_console.print(styled(f"index: {summary.index}", one_line=True))
    if summary.site:
        out_console.print(styled(f"site: {summary.site}", one_line=True))


# -- search / ask --------------------------------------------------------------------------
def _open(index_dir: Path | None) -> Any:
    from oya.query.searcher import Searcher

    return Searcher.open(index_dir or Path(DEFAULT_INDEX))


# a question (stdin or an argument) is read to its end (to condense it whole and say how long it
# was) but never past this: an endless pipe stops, and the note says "more than"
MAX_STDIN_CHARS = 10_000_000
_STDIN_PIECE = 1 << 16


def _read_query(query: str) -> str:
    """The question: QUERY, or standard input for ``-`` (pasted bug reports), blanks around it
    stripped. Past ``MAX_QUESTION_CHARS`` both are condensed alike (``oya.core.report``: the title,
    errors, stack frames and lines naming code, which cutting the tail would lose) and stderr says
    what went, in one line."""
    from oya.core.query import MAX_QUESTION_CHARS
    from oya.core.report import condense_report

    if query == "-":
        text, more = _read_stdin(sys.stdin, MAX_STDIN_CHARS)
    else:
        text, more = query[:MAX_STDIN_CHARS], len(query) > MAX_STDIN_CHARS
    text = text.strip()
    if not text:
        raise QueryError("the query is empty: give a question, a symbol name or a bug report")
    condensed = condense_report(text, MAX_QUESTION_CHARS)
    if condensed is None:
        return text
    # not through rich: it would wrap the line at 80 columns
    click.echo(f"note: {condensed.note(more=more)}", err=True)
    return condensed.text


def _read_stdin(stream: Any, most: int) -> tuple[str, bool]:
    """``stream``'s text, read piece by piece up to ``most`` characters, and whether it went on
    past them (then it is not read further: "more than")."""
    pieces: list[str] = []
    read = 0
    while read <= most and (piece := stream.read(_STDIN_PIECE)):
        pieces.append(piece)
        read += len(piece)
    return "".join(pieces)[:most], read > most


@main.command()
@click.argument("query")
@click.option("--index", "index_dir", type=click.Path(path_type=Path), help="Index folder (default: ./.oya).")
@click.option("-k", "k", default=10, show_default=True, type=click.IntRange(1, 200), help="How many results.")
@click.option("--files", "files_mode", is_flag=True, help="Rank repository files instead of chunks.")
@click.option("--json", "as_json", is_flag=True, help="A JSON list of objects, best first.")
@click.option("--include", multiple=True, help="Only paths matching this glob (repeatable), e.g. 'src/*'.")
@click.option(
    "--exclude", multiple=True, help="Leave out paths matching this glob (repeatable), e.g. 'tests/'."
)
def search(
    query: str,
    index_dir: Path | None,
    k: int,
    files_mode: bool,
    as_json: bool,
    include: Sequence[str],
    exclude: Sequence[str],
) -> None:
    """Ranked chunks (or files) for QUERY; QUERY may be a whole bug report ('-' reads stdin)."""
    query = _read_query(query)
    with _open(index_dir) as searcher:
        result = searcher.search(query, k=k, include=tuple(include), exclude=tuple(exclude))
    if files_mode:
        rows = [
            {"rank": i + 1, "path": f.path, "score": round(f.score, 6), "line": f.best_line}
            for i, f in enumerate(result.files[:k])
        ]
        if as_json:
            click.echo(json.dumps(rows, indent=2))
            return
        for r in rows:
            click.echo(safe_text(f"{r['rank']:>3}. {r['path']}  ({r['score']:.4f})", one_line=True))
        if not rows:
            click.echo("no files matched")
        _print_quality(result)
        return
    hits = result.to_dict()["hits"][:k]
    if as_json:
        click.echo(json.dumps([{"rank": i + 1, **h} for i, h in enumerate(hits)], indent=2))
        return
    for i, h in enumerate(hits):
        out_console.print(
            styled(
                f"{i + 1:>3}. ",
                (h["title"], "bold"),
                f"  {h['path']}:{h['start_line']}-{h['end_line']}",
                (f"  {h['score']:.4f} {'+'.join(h['channels'])}", "dim"),
                one_line=True,
            ),
            # one result, one line, even piped: Rich would break a long one at a space of the name
            soft_wrap=True,
        )
    if not hits:
        click.echo("no results")
    _print_quality(result)


def _print_quality(result: Any) -> None:
    err_console.print(styled((f"search quality: {result.quality.summary()}", "dim"), one_line=True))


@main.command()
@click.argument("question")
@click.option("--index", "index_dir", type=click.Path(path_type=Path), help="Index folder (default: ./.oya).")
@click.option("--json", "as_json", is_flag=True, help="The whole structured response as JSON.")
@click.option("-k", "k", default=8, show_default=True, type=click.IntRange(1, 50))
@click.option("--llm", "use_llm", is_flag=True, help="Answer with a local llama.cpp model (`make llm`).")
@click.option(
    "--llm-model",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A GGUF file for --llm (default: the model `make llm` installed).",
)
@click.option("--llm-server", metavar="URL", help="Answer with an OpenAI-compatible server at URL.")
@click.option(
    "--llm-timeout",
    default=None,
    type=click.FloatRange(min=1.0),
    help="Seconds before a model answer falls back to the extractive one "
    "(default: 3x what an answer takes on this machine, 120 until measured).",
)
def ask(
    question: str,
    index_dir: Path | None,
    as_json: bool,
    k: int,
    use_llm: bool,
    llm_model: Path | None,
    llm_server: str | None,
    llm_timeout: float | None,
) -> None:
    """Answer QUESTION from the index: extractive by default, or with a model (--llm, --llm-server)."""
    from oya.core.answer import extractive_answer

    question = _read_query(question)
    answerer = _answerer(use_llm or llm_model is not None, llm_model, llm_server, llm_timeout)
    with _open(index_dir) as searcher:
        options = answerer.retrieval_options(k) if answerer is not None else None
        result = searcher.search(question, k=k, options=options)
    if answerer is None:
        answer = extractive_answer(result)
    elif as_json:
        answer = answerer.answer(question, result)
    else:
        return _stream_answer(answerer, question, result)
    if as_json:
        payload = result.to_dict()
        payload["answer"] = answer.to_dict()
        click.echo(json.dumps(payload, indent=2))
        return
    print_answer(result, answer)


def _answerer(use_llm: bool, model: Path | None, server: str | None, timeout: float | None) -> Any:
    """The model answerer the flags ask for, or None for the extractive answer."""
    if server:
        from oya.query.llm import DEFAULT_TIME_LIMIT
        from oya.query.llm_server import OpenAIServerAnswerer

        try:
            return OpenAIServerAnswerer(server, time_limit=timeout or DEFAULT_TIME_LIMIT)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--llm-server") from exc
    if not use_llm:
        return None
    from oya.query.llm import INSTALL_HINT, LlamaAnswerer, llama_available

    if not llama_available():
        raise click.ClickException(INSTALL_HINT)
    return LlamaAnswerer(model, time_limit=timeout)


def _stream_answer(answerer: Any, question: str, result: Any) -> None:
    """Print the model's answer as it is written, then citations, confidence and search quality."""
    streamed: list[str] = []

    def on_token(piece: str) -> None:
        streamed.append(piece)
        click.echo(safe_text(piece), nl=False)  # char by char safe: a sequence split over pieces is too

    err_console.print(f"[dim]asking {answerer.name}…[/dim]")
    answer = answerer.answer_stream(question, result, on_token)
    if streamed:
        click.echo()
        if answer.method == "extractive":  # the model failed part-way: say so, then the fallback
            click.echo("[the model's answer above was discarded]")
    if not streamed or answer.method == "extractive":
        click.echo(safe_text(answer.text))
    if answer.note:
        err_console.print(styled((f"note: {answer.note}", "yellow"), one_line=True))
    _print_citations(answer)
    out_console.print()
    out_console.print(_confidence_line(result))
    out_console.print(
        styled(
            (f"answered by {answer.method}; search quality: {result.quality.summary()}", "dim"), one_line=True
        )
    )


_LEVEL_STYLE = {"HIGH": "bold white on green", "MEDIUM": "bold black on yellow", "LOW": "bold white on red"}


def _confidence_line(result: Any) -> Any:
    """The banner: the level, its disclaimer and, below, the evidence gaps that kept it down."""
    c = result.confidence
    line = styled((f" {c.level} confidence ", _LEVEL_STYLE[c.level]), f" {c.disclaimer}", one_line=True)
    for gap in c.gaps:  # each gap on its own line, and none can add another
        line.append_text(styled(("\n  why not higher: ", "yellow")))
        line.append_text(styled((gap, "yellow"), one_line=True))
    return line


def _print_citations(answer: Any) -> None:
    out_console.print()
    out_console.print(styled(("Citations:", "bold")))
    for item in answer.items:
        start, end = item.span
        out_console.print(
            styled(f"  [{item.n}] {item.path}:{start}-{end}  {item.url}", one_line=True), soft_wrap=True
        )


def _print_items(answer: Any) -> None:
    """The extractive answer from its items: one line per match, then the connected code."""
    if not answer.items:
        out_console.print(styled(answer.text))
        return
    out_console.print(styled(("The most relevant code:", "bold")))
    connected_header = False
    for item in answer.items:
        if item.kind == "connected" and not connected_header:
            connected_header = True
            out_console.print(styled(("Connected code (through the code graph):", "bold")))
        start, end = item.span
        parts: list[Any] = [f"[{item.n}] ", (item.title, "bold"), f" ({item.path}:{start}-{end})"]
        if item.kind == "match":
            if item.signature:
                parts.append((f": {item.signature}", "cyan"))
                if item.summary:
                    parts.append(f" — {item.summary}")
            elif item.summary:
                parts.append(f": {item.summary}")
            parts.append((f"  [{item.reason}]", "dim"))
        else:
            parts.append((f"  [{item.reason}]", "dim"))
        out_console.print(styled(*parts, one_line=True), soft_wrap=True)


def print_answer(result: Any, answer: Any) -> None:
    """The extractive answer for a reader: every repository text made safe (oya.terminal)."""
    out_console.print(_confidence_line(result))
    out_console.print()
    _print_items(answer)
    out_console.print()
    for s in result.context.snippets[:6]:
        cit = s.citation
        out_console.print(
            styled(
                (f"── {cit.path}:{cit.start_line}-{cit.end_line}", "bold cyan"),
                f" {cit.title}",
                one_line=True,
            ),
            soft_wrap=True,
        )
        out_console.print(styled(s.text, ("\n…" if s.truncated else "", "dim")))
    if result.context.mermaid:
        out_console.print()
        out_console.print(styled(("Connected code (Mermaid):", "bold")))
        out_console.print(styled("```mermaid\n" + result.context.mermaid + "\n```"))
    _print_citations(answer)
    out_console.print()
    out_console.print(styled((f"search quality: {result.quality.summary()}", "dim"), one_line=True))


@main.command()
@click.argument("site", required=False, type=click.Path(path_type=Path))
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--host", default="127.0.0.1", show_default=True)
def serve(site: Path | None, port: int, host: str) -> None:
    """Serve a built wiki SITE folder (default: ./.oya/site) on 127.0.0.1."""
    from oya.site.serve import serve_site

    serve_site(site or Path(DEFAULT_INDEX) / "site", host=host, port=port, console=err_console)
