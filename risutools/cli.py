"""The ``risutools`` command line: a thin layer over the library.

Exit codes (every command): 0 = ran, nothing failed; 1 = ran, and found errors
(findings of error severity, failed gates, failed files); 2 = could not run
(unreadable input, bad arguments).  A :class:`RisuError` becomes one line on
stderr, never a traceback (set ``RISUTOOLS_DEBUG=1`` to see one).

Library imports happen inside the commands so that start-up stays fast.
"""

from __future__ import annotations

import os
import sys

import typer

from risutools import __version__
from risutools.errors import RisuError

app = typer.Typer(
    name="risutools",
    help="Read RisuAI modules, cards and presets without executing them; project, "
    "validate, verify, replay and promote matrix-component-v1 documents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
replay_app = typer.Typer(
    help="Reference simulations (context cutter, context monitor) and replay reports.",
    no_args_is_help=True,
)
app.add_typer(replay_app, name="replay")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"risutools {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """risutools."""


# ==== formats commands: inspect, unpack, pack ================================


def _fail(exc: RisuError) -> None:
    typer.echo(f"risutools: {exc.one_line()}", err=True)


@app.command()
def inspect(
    files: list[str] = typer.Argument(..., metavar="FILE...", help="Risu files to inspect."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array for machines."),
) -> None:
    """Show format, SHA-256, size and structural counts of Risu files (never any code)."""
    import json

    from risutools.formats import read_path
    from risutools.formats.summary import render_text, summarize

    failed = 0
    results: list[dict[str, object]] = []
    for path in files:
        try:
            modules = read_path(path)
        except RisuError as exc:
            failed += 1
            exc.with_path(path)
            _fail(exc)
            results.append(
                {"path": path, "ok": False,
                 "error": {"code": exc.code, "where": exc.where, "message": exc.why}}
            )  # fmt: skip
            continue
        summaries = [summarize(m) for m in modules]
        results.append({"path": path, "ok": True, "modules": summaries})
        if as_json:
            continue
        if not summaries:
            typer.echo(f"{path}\n  character card without module.risum: no module to inspect")
        for s in summaries:
            typer.echo(render_text(s))
    if as_json:
        typer.echo(json.dumps(results, ensure_ascii=False, indent=2, sort_keys=True))
    if failed:
        raise typer.Exit(2)


@app.command()
def unpack(
    file: str = typer.Argument(..., metavar="FILE", help=".risum, .charx, CharX-JPEG or JSON."),
    out: str = typer.Option(..., "-o", "--output", metavar="DIR", help="Folder to write."),
    force: bool = typer.Option(False, "--force", help="Overwrite files that already exist."),
) -> None:
    """Write module.json, assets/ (sanitised names) and manifest.json into DIR."""
    from risutools.formats.unpack import unpack as do_unpack

    try:
        manifest = do_unpack(file, out, force=force)
    except RisuError as exc:
        _fail(exc.with_path(file))
        raise typer.Exit(2) from None
    assets = manifest.get("assets") or []
    written = sum(1 for a in assets if isinstance(a, dict) and a.get("file"))
    what = "module.json" if manifest.get("module") else "no module (card without module.risum)"
    typer.echo(f"unpacked {file} -> {out}: {what}, {written} asset file(s), manifest.json")


@app.command()
def pack(
    src: str = typer.Argument(
        ...,
        metavar="DIR_OR_JSON",
        help="A folder from `unpack`, its manifest.json, or a module JSON.",
    ),
    out: str = typer.Option(..., "-o", "--output", metavar="OUT.risum", help="File to write."),
    force: bool = typer.Option(False, "--force", help="Overwrite OUT if it exists."),
) -> None:
    """Pack an unpacked folder (or a module JSON) into a .risum."""
    from risutools.formats.unpack import pack as do_pack

    try:
        size = do_pack(src, out, force=force)
    except RisuError as exc:
        _fail(exc.with_path(src) if exc.path is None else exc)
        raise typer.Exit(2) from None
    typer.echo(f"packed {src} -> {out} ({size} bytes)")


# ==== end formats commands ===================================================


# ==== contract commands: validate, verify, hash ==============================


# ==== end contract commands ==================================================


# ==== analysis commands: analyze, project, ingest ============================


# ==== end analysis commands ==================================================


# ==== replay commands: replay run / synth / monitor ==========================


# ==== end replay commands ====================================================


# ==== catalog commands: review, promote =====================================


@app.command("ingest")
def ingest_cmd(
    src: str = typer.Argument(..., help="Folder of downloaded Risu files (searched recursively)."),
    out: str = typer.Option(..., "-o", "--out", help="Catalog folder to write documents into."),
    ndjson: bool = typer.Option(False, "--ndjson", help="Write one components.ndjson."),
    lang: str = typer.Option("en", "--lang", help="Language of generated sentences: en or ko."),
    notes: str | None = typer.Option(
        None, "--notes", help="Folder of notes/<component_id>.yaml (default: CATALOG/notes)."
    ),
    jobs: int | None = typer.Option(None, "-j", "--jobs", help="Worker processes (default: all cores)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore and do not write the cache."),
    report: str | None = typer.Option(None, "--report", help="Also write the run as JSON here."),
    as_json: bool = typer.Option(False, "--json", help="Print the run as JSON on stdout."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar, no table."),
) -> None:
    """Project every Risu file under SRC into matrix-component-v1 documents in a catalog."""
    from risutools.catalog.ingest import ingest
    from risutools.report.ingest_text import IngestProgress, render_summary

    if lang not in ("en", "ko"):
        raise typer.BadParameter("must be en or ko", param_hint="--lang")
    progress = IngestProgress(enabled=not quiet and not as_json)
    with progress:
        result = ingest(
            src, out, ndjson=ndjson, lang=lang, notes_dir=notes, jobs=jobs,
            use_cache=not no_cache, on_start=progress.start, on_progress=progress.update,
        )
    if report:
        import json as _json

        from risutools.fsio import atomic_write

        atomic_write(report, (_json.dumps(result.to_dict(), ensure_ascii=False, indent=1)
                              + "\n").encode("utf-8"))
    if as_json:
        import json as _json

        typer.echo(_json.dumps(result.to_dict(), ensure_ascii=False, indent=1))
    elif not quiet:
        render_summary(result, progress.elapsed())
    else:
        for s in result.failures:
            typer.echo(f"failed: {s.error}", err=True)
    raise typer.Exit(0 if result.ok else 1)


# ==== end catalog commands ===================================================


def main() -> None:
    """Console entry point: maps errors to one line and exit code 2."""
    try:
        app()
    except RisuError as exc:
        typer.echo(f"risutools: {exc.one_line()}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("risutools: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # a bug: still one line, unless debugging
        if os.environ.get("RISUTOOLS_DEBUG"):
            raise
        typer.echo(
            f"risutools: internal error: {type(exc).__name__}: {exc} "
            "(set RISUTOOLS_DEBUG=1 for a traceback, and please report it)",
            err=True,
        )
        sys.exit(2)
