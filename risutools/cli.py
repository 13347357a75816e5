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


# ==== end analysis commands ==================================================


# ==== replay commands: replay run / synth / monitor ==========================


@replay_app.command("run")
def replay_run(
    component: str = typer.Argument(..., help="A matrix-component-v1 document (.json or .yaml)."),
    fixture: str = typer.Option(..., "--fixture", "-f", help="conversation-v1 fixture."),
    config: str | None = typer.Option(None, "--config", "-c", help="JSON/YAML configuration."),
    output: str | None = typer.Option(
        None, "--output", "-o",
        help="Report path (default: <component dir>/replays/<id>--<fixture>.json); "
        ".md and .html are written next to it.",
    ),
    update: bool = typer.Option(
        False, "--update", help="Write replay_status, availability_verdict and source_refs back."
    ),
) -> None:
    """Replay the reference simulation the component's capabilities select."""
    from risutools.replay.api import run_component

    outcome = run_component(component, fixture, config, output, update)
    if outcome.report is None:
        typer.echo(outcome.message)
        raise typer.Exit(0)
    s = outcome.report["summary"]
    failed = ", ".join(s["failed_invariants"]) or "none"
    typer.echo(
        f"{outcome.simulation}: {s['requests']} request(s), verdict {s['verdict']} "
        f"(failed invariants: {failed}); report {outcome.written[0]}"
    )
    if outcome.updated:
        typer.echo(f"updated {component}")
    raise typer.Exit(0 if s["verdict"] == "passed" else 1)


@replay_app.command("monitor")
def replay_monitor_cmd(
    fixture: str = typer.Option(..., "--fixture", "-f", help="conversation-v1 fixture."),
    config: str | None = typer.Option(None, "--config", "-c", help="JSON/YAML configuration."),
    output: str | None = typer.Option(None, "--output", "-o", help="Also write the report here."),
) -> None:
    """Replay the context monitor alone (no cutter): levels and alerts per request."""
    from pathlib import Path

    from risutools.replay.api import run_monitor, write_report_files

    report = run_monitor(fixture, config)
    for row in report["requests"]:
        mon = row["monitor"]
        level = mon["level"] or f"({mon['metrics']} metrics)"
        used = "-" if mon["used_pct"] is None else f"{mon['used_pct']:.1f}%"
        alert = f"  ALERT ({mon['alert_reason']})" if mon["alert"] else ""
        typer.echo(f"request {row['request']:>5}  {row['tokens_in']:>8} tokens  {used:>7}  "
                   f"{level}{alert}")
    summary = report["summary"]
    typer.echo(f"{summary['requests']} request(s), {summary['alerts']} alert(s)")
    if output:
        write_report_files(report, Path(output))


@replay_app.command("synth")
def replay_synth(
    seed: int = typer.Option(..., "--seed", help="Random seed (same seed, same bytes)."),
    messages: int = typer.Option(..., "--messages", help="History size after the last turn."),
    output: str = typer.Option(..., "--output", "-o", help="Output (.ndjson, .json or .yaml)."),
    turns: int | None = typer.Option(None, "--turns", help="Requests (default: messages/2)."),
    edit_rate: float = typer.Option(0.05, "--edit-rate", help="Chance of an edit per turn."),
    delete_rate: float = typer.Option(0.02, "--delete-rate", help="Chance of a delete per turn."),
    tool_rate: float = typer.Option(0.1, "--tool-rate", help="Chance of a tool call per reply."),
    lang: str = typer.Option("mixed", "--lang", help="ko, en or mixed."),
    name: str | None = typer.Option(None, "--name", help="Fixture name."),
) -> None:
    """Generate a long, seeded, deterministic conversation-v1 fixture."""
    from risutools.replay.synth import synthesize, write_synth

    data = synthesize(seed, messages, turns=turns, edit_rate=edit_rate,
                      delete_rate=delete_rate, tool_rate=tool_rate, lang=lang, name=name)
    size = write_synth(data, output)
    typer.echo(f"wrote {output}: {len(data['turns'])} turn(s), {messages} messages, {size} bytes")


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
