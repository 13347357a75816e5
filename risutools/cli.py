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


# ==== end formats commands ===================================================


# ==== contract commands: validate, verify, hash ==============================


# ==== end contract commands ==================================================


# ==== analysis commands: analyze, project, ingest ============================


@app.command("analyze")
def analyze_cmd(
    file: str = typer.Argument(..., help="A .risum, .charx, .risup or JSON export."),
    as_json: bool = typer.Option(False, "--json", help="Print the facts as JSON."),
    fail_on: str = typer.Option(
        "error", "--fail-on", help="Exit 1 on findings of this severity or worse: "
        "error, warning or never."
    ),
) -> None:
    """Static facts and findings about a module (nothing is executed)."""
    from risutools.analysis.report import analyze_path, exit_code, render_text, to_json

    results = analyze_path(file)
    code = exit_code([a for _, a in results], fail_on)
    typer.echo(to_json(file, results) if as_json else render_text(file, results), nl=False)
    raise typer.Exit(code)


@app.command("project")
def project_cmd(
    file: str = typer.Argument(..., help="A .risum, .charx, .risup or JSON export."),
    post_id: str = typer.Option(
        None, "--post-id", help="Post id (digits); default: leading digits of the file name."
    ),
    notes: str = typer.Option(None, "--notes", help="Curator notes (YAML, notes-v1)."),
    lang: str = typer.Option("en", "--lang", help="Language of generated sentences: en or ko."),
    out: str = typer.Option(
        None, "-o", "--output", help="Write here (a directory when the file holds several "
        "components) instead of printing."
    ),
) -> None:
    """Project a module into a matrix-component-v1 candidate document."""
    from risutools.projection.run import dumps, project_path, write_documents

    docs = project_path(file, post_id=post_id, notes_path=notes, lang=lang)
    if out:
        for p in write_documents(docs, out):
            typer.echo(f"wrote {p}", err=True)
    else:
        for doc in docs:
            typer.echo(dumps(doc), nl=False)
    raise typer.Exit(0)


# ==== end analysis commands ==================================================


# ==== replay commands: replay run / synth / monitor ==========================


# ==== end replay commands ====================================================


# ==== catalog commands: review, promote =====================================


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
