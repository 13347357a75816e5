"""The options the commands of the command line share (``risutools.cli``): one factory an
option, so that every command spells, documents and defaults it alike."""

from __future__ import annotations

from typing import Any

import typer

from risutools.report.reporters import FORMAT_HELP


def select(example: str, help: str = "") -> Any:
    return typer.Option([], "--select", metavar="IDS", help=help or "Only these checks: ids "
                        f"or prefixes, repeated or comma-separated ({example}).")


def ignore(help: str = "Skip these checks: ids or prefixes, repeated or comma-separated.") -> Any:
    return typer.Option([], "--ignore", metavar="IDS", help=help)


def config(help: str = "Configuration file (default: the nearest .risutools.yaml / "
            "pyproject.toml).") -> Any:
    return typer.Option(None, "--config", metavar="FILE", help=help)


def exclude() -> Any:
    return typer.Option([], "--exclude", metavar="GLOB", help="Skip files matching this glob "
                        "in folder walks (repeated; replaces `exclude:`).")


def allowed_signers() -> Any:
    return typer.Option(None, "--allowed-signers", metavar="FILE",
                        help="Pin the trust root: signers' file.")


def allow_signers_outside() -> Any:
    return typer.Option(False, "--allow-config-signers-outside",
                        help="Trust an allowed_signers outside.")


def base_log() -> Any:
    return typer.Option(None, "--base-log", metavar="FILE", help="The base branch's "
                        "transitions.ndjson: the log must extend it, byte for byte (MC306).")


def output(help: str = "Write the report to a file.") -> Any:
    return typer.Option(None, "--output", "-o", metavar="FILE", help=help)


def format() -> Any:
    return typer.Option("text", "--format", "-f", metavar="FORMAT", help=FORMAT_HELP)


def exit_zero() -> Any:
    return typer.Option(False, "--exit-zero", help="Exit 0 even when findings fail the run "
                        "(2 still means it could not run).")


def statistics() -> Any:
    return typer.Option(False, "--statistics", help="Show how many findings each check gave "
                        "(text or -f json) instead of them.")


def catalog() -> Any:
    return typer.Option(None, "--catalog", metavar="DIR", help="Catalog folder (default: the "
                        "catalog found above the current folder).")


def component() -> Any:
    return typer.Argument(..., metavar="COMPONENT", help="A document's path, or a component_id.")


def strict() -> Any:
    return typer.Option(False, "--strict", help="Warnings fail too (exit 1).")


def sources(help: str = "Source store folder (default: `sources:` in the configuration).") -> Any:
    return typer.Option(None, "--sources", metavar="DIR", help=help)
