"""The ``risutools`` command line: options mapped to a command of the command layer.

Each command here declares its options and hands their values to its module in
``risutools.commands`` (:data:`COMMANDS`): the options object checks them, ``run`` does the
work and returns a result, ``risutools.report.present`` says what to write, and the result
says the exit code.  Exit codes (every command): 0 = ran, nothing failed; 1 = ran, and found
errors (findings of error severity, failed gates, failed files); 2 = could not run
(unreadable input, bad arguments).  A :class:`RisuError` becomes one line on stderr, never
a traceback (set ``RISUTOOLS_DEBUG=1`` to see one).

A command's module is imported when the command runs (:func:`_command`), so that
``risutools validate`` never loads the analyser and ``-h`` loads no engine at all.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import io
import os
import sys
from collections.abc import Iterable
from typing import Any

import typer

from risutools import __version__, lastwords, stdstreams
from risutools.collector import cycles_paused_set_aside
from risutools.errors import RisuError, UsageError, WriteConflict, bounded
from risutools.pathnames import safe_line
from risutools.report import options as opt
from risutools.report.color import COLOR_HELP, use_color
from risutools.report.ingest_text import IngestProgress
from risutools.report.output import (
    PATH_PARAMS,
    check_report_path,
    refuse_empty_paths,
    refuse_output_on_input,
    stdout_unwritable,
    write_out,
    write_report,
)
from risutools.report.present import present
from risutools.report.reporters import FORMATS, formats, shows_hashes
from risutools.report.review_text import ReviewProgress
from risutools.report.statistics import STATISTICS_FORMATS
from risutools.report.usage import one_command, plain_argument_help, usage_line
from risutools.settings import lifecycle
from risutools.targets import path_error_line

#: the review's --format choices, from the reporter table
REVIEW_FORMATS = formats("review")

app = typer.Typer(
    name="risutools",
    help="Read RisuAI modules, cards and presets without executing them; project, "
    "validate, verify, replay, review and promote matrix-component-v1 documents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # plain help: metavars (FILE, DIR, N) instead of type names, paragraphs re-flowed
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
_REPLAY_HELP = "Reference simulations (context cutter, context monitor) and replay reports."
replay_app = typer.Typer(help=_REPLAY_HELP, no_args_is_help=True, rich_markup_mode=None)
app.add_typer(replay_app, name="replay", short_help=_REPLAY_HELP)  # whole in the command list
_NOTES_HELP = "Curator notes files (notes/<component_id>.yaml of a catalog)."
notes_app = typer.Typer(help=_NOTES_HELP, no_args_is_help=True, rich_markup_mode=None)
app.add_typer(notes_app, name="notes", short_help=_NOTES_HELP)


plain_argument_help()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"risutools {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
        help="Print the version and exit."),
) -> None:
    """risutools."""


#: command -> the module of the command layer that runs it.  The one import the command
#: line defers: a command loads its own engines when it runs (``risutools validate`` never
#: imports the analyser), and ``-h`` loads none (docs/architecture.md).
COMMANDS: dict[str, str] = {
    "validate": "risutools.commands.validate",
    "verify": "risutools.commands.verify",
    "hash": "risutools.commands.hash",
    "inspect": "risutools.commands.inspect",
    "unpack": "risutools.commands.unpack",
    "pack": "risutools.commands.pack",
    "analyze": "risutools.commands.analyze",
    "rule": "risutools.commands.rule",
    "project": "risutools.commands.project",
    "approve": "risutools.commands.approve",
    "promote": "risutools.commands.promote",
    "packet": "risutools.commands.packet",
    "review": "risutools.commands.review",
    "replay run": "risutools.commands.replay_run",
    "replay monitor": "risutools.commands.replay_monitor",
    "replay synth": "risutools.commands.replay_synth",
    "ingest": "risutools.commands.ingest",
    "notes init": "risutools.commands.notes_init",
}


def _command(name: str) -> Any:
    with cycles_paused_set_aside():  # (modules: they live as long as the program)
        return importlib.import_module(COMMANDS[name])


def _execute(name: str, params: dict[str, Any], *, exit_zero: bool = False,
             hooks: dict[str, Any] | None = None,
             around: contextlib.AbstractContextManager[Any] | None = None, **how: Any) -> None:
    """Run command ``name`` with its options (``params``), write what its result's
    presenter says (the report to stdout or ``-o``, notes to stderr) and exit with the
    result's code (``--exit-zero``: findings do not fail; 2, could not run, stays)."""
    command = _command(name)
    try:  # a value out of its choices, range or form: the option's usage error
        refuse_empty_paths({**params, **{k: v for k, v in how.items() if k in PATH_PARAMS}})
        before = getattr(command, "reads_before", None)  # (what it will find to read: a
        writes = getattr(command, "writes", lambda _p: ())(params)  # catalog; what it writes)
        refuse_output_on_input(params, how, getattr(command, "reads_file", None),
                               (lambda: before(params)) if before is not None else None, writes)
        options = command.Options(**params)
        check_report_path(how.get("output"), how.pop("formats", ()))
        check_report_path(how.get("report"))
        with around if around is not None else contextlib.nullcontext():
            result = command.run(options, **(hooks or {}))
        found = getattr(result, "reads", None)  # (what it found to read for itself: its
        if found is not None:  # catalog, its configuration ...)
            refuse_output_on_input(params, how, getattr(command, "reads_file", None), found,
                                   writes)
    except UsageError as exc:
        if not exc.where:  # options that do not fit together
            raise _click_class("UsageError")(exc.why) from None
        raise typer.BadParameter(exc.why, param_hint=exc.where) from None
    shown = present(result, **how)
    for path, text in shown.files:
        write_report(path, text)
    if shown.err_first:
        _notes(shown.err)
    if shown.out is not None:
        write_out(shown.out, how.get("output"))
    if not shown.err_first:
        _notes(shown.err)
    if shown.show is not None:
        shown.show()
    _exit(result.exit_code(), exit_zero)


def _notes(lines: Iterable[str]) -> None:
    """Each line on standard error as one printable line (:func:`safe_line`: a file name or a
    value a note quotes cannot add a line, an escape sequence or a bidi override)."""
    sys.stdout.flush()
    for line in lines:
        typer.echo(safe_line(line), err=True)


def _fail(exc: RisuError) -> None:
    typer.echo(safe_line(f"risutools: {exc.one_line()}"), err=True)


def _color_option() -> Any:
    return typer.Option("auto", "--color", metavar="WHEN", help=COLOR_HELP)


def _color(choice: str, stream: object = None) -> bool:
    """Whether to colour ``stream`` (stdout by default) for ``--color choice``."""
    try:
        return use_color(choice, stream if stream is not None else sys.stdout)  # type: ignore[arg-type]
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--color") from None


@app.command()
def inspect(
    files: list[str] = typer.Argument(..., metavar="FILE", help="Risu files to inspect."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array for machines."),
) -> None:
    """Show format, SHA-256, size and structural counts of Risu files (never any code)."""
    _execute("inspect", dict(files=tuple(files), as_json=as_json))


@app.command()
def unpack(
    file: str = typer.Argument(..., metavar="FILE",
        help=".risum, .charx, CharX-JPEG, .risup/.risupreset or JSON export."),
    out: str = typer.Option(..., "-o", "--output", metavar="DIR", help="Folder to write."),
    force: bool = typer.Option(False, "--force", help="Overwrite files that already exist."),
) -> None:
    """Write module.json, assets/ (sanitised names) and manifest.json into DIR."""
    _execute("unpack", dict(file=file, out=out, force=force))


@app.command()
def pack(
    src: str = typer.Argument(
        ...,
        metavar="DIR_OR_JSON",
        help="A folder from `unpack`, its manifest.json, or a module JSON.",
    ),
    out: str = typer.Option(
        ..., "-o", "--output", metavar="FILE",
        help="The .risum file to write (a file, not a folder).",
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite FILE if it exists."),
) -> None:
    """Pack an unpacked folder (or a module JSON) into a .risum."""
    _execute("pack", dict(src=src, out=out, force=force))


def _check_format(fmt: str, statistics: bool = False, formats: tuple[str, ...] = FORMATS
                  ) -> None:
    if fmt not in formats:
        raise typer.BadParameter(f"{fmt!r} is not one of {', '.join(formats)}",
                                 param_hint="--format")
    if statistics and fmt not in STATISTICS_FORMATS:
        raise typer.BadParameter(f"--statistics prints {', '.join(STATISTICS_FORMATS)}, "
                                 f"not {fmt!r}", param_hint="--format")


def _exit(code: int, exit_zero: bool) -> None:
    """Exit ``code``; with ``--exit-zero`` findings do not fail (2, could not run, stays)."""
    raise typer.Exit(0 if exit_zero and code == 1 else code)


@app.command()
def validate(
    paths: list[str] = typer.Argument(
        ..., metavar="PATH",
        help="Documents: .json/.yaml/.yml/.ndjson files, folders (recursive), - for stdin.",
    ),
    fmt: str = opt.format(),
    select: list[str] = opt.select("MC2,MC4"),
    ignore: list[str] = opt.ignore(),
    strict: bool = opt.strict(),
    promotion: bool = typer.Option(
        False, "--promotion",
        help="Apply the promotion gate: incomplete narrative (MC600) is an error.",
    ),
    config_file: str | None = opt.config(),
    exclude: list[str] = opt.exclude(),
    output: str | None = opt.output(),
    skip_non_documents: bool = typer.Option(
        False, "--skip-non-documents",
        help="Skip named files a folder walk passes over (README.md, approvals/, facts/, "
        "transitions.ndjson ...) and JSON/YAML files without `contract`/`component_id`; "
        "for hooks.",
    ),
    fix: bool = typer.Option(
        False, "--fix",
        help="Fix, in place, the findings whose fix is exact (marked [*] by `risutools rule`) "
        "in candidate documents; then report what is left.",
    ),
    allowed_signers: str | None = opt.allowed_signers(),
    allow_config_signers_outside: bool = opt.allow_signers_outside(),
    base_log: str | None = opt.base_log(),
    exit_zero: bool = opt.exit_zero(),
    statistics: bool = opt.statistics(),
    color: str = _color_option(),
) -> None:
    """Validate matrix-component-v1 documents against the schema and rules MC100-MC600.

    Exit 0: no errors; 1: error findings (or warnings with --strict); 2: could not run."""
    _check_format(fmt, statistics)
    _execute("validate", dict(
        paths=tuple(paths), config_file=config_file, select=tuple(select),
        ignore=tuple(ignore), exclude=tuple(exclude), promotion=promotion, strict=strict,
        skip_non_documents=skip_non_documents, fix=fix, allowed_signers=allowed_signers,
        allow_config_signers_outside=allow_config_signers_outside, base_log=base_log,
        hashes=shows_hashes(fmt),
    ), fmt=fmt, output=output, color=_color(color) and output is None, statistics=statistics,
        exit_zero=exit_zero, formats=FORMATS)


@app.command()
def verify(
    paths: list[str] = typer.Argument(..., metavar="PATH",
        help="Documents, folders or - (as for validate)."),
    sources: str | None = opt.sources(),
    require_sources: bool = typer.Option(False, "--require-sources",
        help="A source that is not at hand is an error, not a warning."),
    no_content_scan: bool = typer.Option(
        False, "--no-content-scan",
        help="Find sources by name and digest-named files only (do not hash the whole store).",
    ),
    fmt: str = opt.format(),
    select: list[str] = opt.select("MC201,MC202"),
    ignore: list[str] = opt.ignore(),
    strict: bool = opt.strict(),
    config_file: str | None = opt.config(),
    exclude: list[str] = opt.exclude(),
    output: str | None = opt.output(),
    skip_non_documents: bool = typer.Option(False, "--skip-non-documents",
        help="As for validate (for hooks).",),
    allow_config_sources_outside: bool = typer.Option(
        False, "--allow-config-sources-outside",
        help="Trust a `sources:` in the configuration that lies outside its repository "
        "(refused by default: a pull request can change the configuration).",
    ),
    exit_zero: bool = opt.exit_zero(),
    statistics: bool = opt.statistics(),
    color: str = _color_option(),
) -> None:
    """Verify digests: prompt_sha256, placeholders, source files, replay reports (MC200-MC203).

    A source that is not at hand is reported as "not verified" (a warning; an error
    with --require-sources). Without a source store, one line says that no source
    file was checked."""
    _check_format(fmt, statistics)
    _execute("verify", dict(
        paths=tuple(paths), sources=sources, require_sources=require_sources,
        content_scan=not no_content_scan, config_file=config_file, select=tuple(select),
        ignore=tuple(ignore), exclude=tuple(exclude), strict=strict,
        skip_non_documents=skip_non_documents,
        allow_config_sources_outside=allow_config_sources_outside,
    ), fmt=fmt, output=output, color=_color(color) and output is None, statistics=statistics,
        exit_zero=exit_zero, formats=FORMATS)


@app.command("hash")
def hash_cmd(
    files: list[str] = typer.Argument(
        ..., metavar="FILE",
        help="Documents (.json/.yaml) or NDJSON catalogs; - for stdin.",
    ),
    quiet: bool = typer.Option(False, "-q", "--quiet",
        help="Print the hashes alone, without file names."),
) -> None:
    """Print the base hash approvals name (no runtime fields): `sha256:<hex>  <file>`.

    Like sha256sum: one line per document; several documents in a file (NDJSON,
    multi-document YAML) show `sha256:<hex>  <file>:<line>  <component_id>`. With -q, the
    hash alone (`$(risutools hash -q doc.json)`)."""
    _execute("hash", dict(files=tuple(files), quiet=quiet))


@app.command("analyze")
def analyze_cmd(
    files: list[str] = typer.Argument(..., metavar="FILE",
        help="One or more .risum, .charx, .risup or JSON exports."),
    fmt: str = opt.format(),
    as_json: bool = typer.Option(False, "--json", help="Print the facts as JSON (= -f json)."),
    select: list[str] = opt.select("RA1,RA8"),
    ignore: list[str] = opt.ignore(),
    fail_on: str = typer.Option(
        "warning", "--fail-on", metavar="SEVERITY",
        help="Exit 1 on findings of this severity or worse: warning (the default: every RA "
        "finding but the info ones), error, or never.",
    ),
    output: str | None = opt.output(),
    config_file: str | None = opt.config(),
    exit_zero: bool = opt.exit_zero(),
    statistics: bool = opt.statistics(),
    color: str = _color_option(),
) -> None:
    """Static facts and findings about modules (nothing is executed).

    Several files: each is analysed; a file that cannot be read is one line on stderr and
    the others go on (exit 2 at the end)."""
    if as_json:
        fmt = "json"
    _check_format(fmt, statistics)
    use = _color(color)
    _execute("analyze", dict(files=tuple(files), fail_on=fail_on, config_file=config_file,
                             select=tuple(select), ignore=tuple(ignore)),
             fmt=fmt, output=output, color=use and output is None, statistics=statistics,
             exit_zero=exit_zero, formats=FORMATS)


@app.command("rule")
def rule_cmd(
    rule_id: str | None = typer.Argument(
        None, metavar="ID", help="A check id (MC201, RA101, R3, M1, G4, RV204), a prefix, or a "
        "gate's name (digests); none: list all."
    ),
) -> None:
    """Explain a check: what it checks, why, how to fix it, and an example.

    [*] marks the checks `validate --fix` fixes."""
    _execute("rule", dict(rule_id=rule_id))


@app.command("project")
def project_cmd(
    file: str = typer.Argument(..., metavar="FILE",
        help="A .risum, .charx, .risup or JSON export."),
    post_id: str = typer.Option(
        None, "--post-id", metavar="N",
        help="Post id (digits); default: leading digits of the file name.",
    ),
    notes: str = typer.Option(None, "--notes", metavar="FILE",
        help="Curator notes (YAML, notes-v1)."),
    lang: str = typer.Option("en", "--lang", metavar="LANG",
        help="Language of generated sentences: en or ko."),
    out: str = typer.Option(
        None, "-o", "--output", metavar="PATH", help="Write here (a folder when the file holds "
        "several components) instead of printing; an existing file is refused without --force."
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite documents that already exist."),
    select: list[str] = opt.select("", "Only these analysis findings in the documents."),
    ignore: list[str] = opt.ignore("Leave these analysis findings out of the documents."),
    config_file: str | None = opt.config(),
) -> None:
    """Project a module into a matrix-component-v1 candidate document.

    The analysis findings a document mentions are graded by the configuration (`rules:`,
    --select/--ignore), as in the documents `ingest` writes."""
    _execute("project", dict(file=file, post_id=post_id, notes=notes, lang=lang, out=out,
                             force=force, config_file=config_file, select=tuple(select),
                             ignore=tuple(ignore)))


@replay_app.command("run")
def replay_run(
    component: str = typer.Argument(..., metavar="FILE",
        help="A matrix-component-v1 document (.json or .yaml)."),
    fixture: str = typer.Option(..., "--fixture", "-x", metavar="FILE",
        help="conversation-v1 fixture."),
    config: str | None = typer.Option(
        None, "--config", "-c", metavar="FILE",
        help="JSON/YAML file of replay keys (over the fixture's and the catalog "
        "configuration's `replay:`).",
    ),
    output: str | None = typer.Option(
        None, "--output", "-o", metavar="FILE",
        help="Report path (default: <component dir>/replays/<id>--<fixture>.json); "
        ".md and .html are written next to it.",
    ),
    update: bool = typer.Option(False, "--update",
        help="Write replay_status, availability_verdict and source_refs back."),
) -> None:
    """Replay the reference simulation the component's capabilities select.

    A document that is not a valid matrix-component-v1 document (schema, MC100) is refused
    (exit 2) before anything runs."""
    _execute("replay run", dict(component=component, fixture=fixture, config=config,
                                output=output, update=update))


@replay_app.command("monitor")
def replay_monitor_cmd(
    component: str | None = typer.Argument(None, metavar="[DOC]",
                                           help="The monitor's document (its digest)."),
    fixture: str = typer.Option(..., "--fixture", "-x", metavar="FILE",
                                help="conversation-v1 fixture."),
    config: str | None = typer.Option(None, "--config", "-c", metavar="FILE",
                                      help="JSON/YAML configuration."),
    output: str | None = typer.Option(None, "--output", "-o", metavar="FILE",
                                      help="Also write the report here."),
) -> None:
    """Replay the context monitor alone (no cutter): levels, alerts and their text."""
    _execute("replay monitor", dict(locals()))


@replay_app.command("synth")
def replay_synth(
    seed: int = typer.Option(..., "--seed", metavar="N",
        help="Random seed (same seed, same bytes)."),
    messages: int = typer.Option(..., "--messages", metavar="N",
        help="History size after the last turn."),
    output: str = typer.Option(..., "--output", "-o", metavar="FILE",
        help="Output (.ndjson, .json or .yaml)."),
    turns: int | None = typer.Option(
        None, "--turns", metavar="N",
        help="Requests (default: (messages - 1) / 2, rounded down, at least 1).",
    ),
    edit_rate: float = typer.Option(0.05, "--edit-rate", metavar="P",
        help="Chance of an edit per turn."),
    delete_rate: float = typer.Option(0.02, "--delete-rate", metavar="P",
        help="Chance of a delete per turn."),
    tool_rate: float = typer.Option(0.1, "--tool-rate", metavar="P",
        help="Chance of a tool call per reply."),
    lang: str = typer.Option("mixed", "--lang", metavar="LANG", help="ko, en or mixed."),
    name: str | None = typer.Option(None, "--name", metavar="NAME", help="Fixture name."),
    edit_window: int | None = typer.Option(
        None, "--edit-window", metavar="N",
        help="Edits and deletes pick among the N most recent messages (default: any).",
    ),
) -> None:
    """Generate a long, seeded, deterministic conversation-v1 fixture."""
    _execute("replay synth", dict(seed=seed, messages=messages, output=output, turns=turns,
                                  edit_rate=edit_rate, delete_rate=delete_rate,
                                  tool_rate=tool_rate, lang=lang, name=name,
                                  edit_window=edit_window))


@app.command("ingest")
def ingest_cmd(
    src: str = typer.Argument(..., metavar="DIR",
        help="Folder of downloaded Risu files (searched recursively)."),
    out: str = typer.Option(
        ..., "-o", "--output", "--out", metavar="DIR",
        help="Catalog folder to write documents into.",
    ),
    ndjson: bool = typer.Option(False, "--ndjson", help="Write one components.ndjson."),
    lang: str = typer.Option("en", "--lang", metavar="LANG",
        help="Language of generated sentences: en or ko."),
    notes: str | None = typer.Option(
        None, "--notes", metavar="DIR",
        help="Folder of notes/<component_id>.yaml (default: CATALOG/notes).",
    ),
    jobs: int | None = typer.Option(None, "-j", "--jobs", metavar="N",
        help="Worker processes (default: all cores)."),
    scheduler: str | None = typer.Option(
        None, "--scheduler", metavar="ADDR", help="Run on a Dask cluster: its scheduler address "
        "(tcp://host:8786; needs risutools[dask]). Writes stay in this process.",
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore and do not write the cache."),
    report: str | None = typer.Option(None, "--report", metavar="FILE",
        help="Also write the run as JSON here."),
    as_json: bool = typer.Option(False, "--json", help="Print the run as JSON on stdout."),
    quiet: bool = typer.Option(False, "-q", "--quiet",
        help="No progress bar, no table (failed files still go to stderr)."),
    select: list[str] = opt.select("", "Only these analysis findings in the documents."),
    ignore: list[str] = opt.ignore("Leave these analysis findings out of the documents."),
    exclude: list[str] = opt.exclude(),
    config_file: str | None = typer.Option(
        None, "--config", metavar="FILE",
        help="Configuration file (default: the nearest one above the catalog folder)."),
    color: str = _color_option(),
) -> None:
    """Project every Risu file under DIR into matrix-component-v1 documents in a catalog."""
    use = _color(color)
    progress = IngestProgress(enabled=not quiet and not as_json, color=use)
    _execute("ingest", dict(src=src, out=out, ndjson=ndjson, lang=lang, notes=notes, jobs=jobs,
                            scheduler=scheduler, use_cache=not no_cache, config_file=config_file,
                            select=tuple(select), ignore=tuple(ignore), exclude=tuple(exclude)),
             hooks=dict(on_start=progress.start, on_progress=progress.update), around=progress,
             as_json=as_json, quiet=quiet, report=report, elapsed=progress.elapsed, color=use)


# Thin wrappers; the work is in risutools.catalog.{approvals,promote,packet,review}.


@app.command("approve")
def approve_cmd(
    component: str = opt.component(),
    action: str = typer.Option(
        ..., "--action", metavar="ACTION",
        help=" | ".join(lifecycle.ACTIONS)),
    reviewer: str = typer.Option(..., "--reviewer", metavar="NAME", help="The person approving."),
    note: str = typer.Option(
        "", "--note", metavar="NOTE", help="What the reviewer read and decided."),
    sign: str | None = typer.Option(
        None, "--sign", metavar="KEY", help="Sign with this SSH private key (ssh-keygen -Y)."),
    catalog: str | None = opt.catalog(),
    config_file: str | None = opt.config(),
    packet: str | None = typer.Option(None, "--packet", metavar="FILE", help="Packet read."),
    base: str | None = typer.Option(None, "--base", metavar="HASH", help="Base hash read."),
) -> None:
    """Write a human approval record naming the document's base hash (refused, exit 1, when
    --packet's or --base's hash is no longer the document's)."""
    _execute("approve", dict(locals()))


@app.command("promote")
def promote_cmd(
    component: str = opt.component(),
    to: str = typer.Option(
        ..., "--to", metavar="STATUS",
        help=" | ".join(lifecycle.TARGETS)),
    dry_run: bool = typer.Option(False, "--dry-run", help="Check the gates, write nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print the gates as JSON."),
    catalog: str | None = opt.catalog(),
    sources: str | None = opt.sources(),
    config_file: str | None = opt.config(),
) -> None:
    """Check every gate of a review-status transition; on success write it (exit 1: refused)."""
    _execute("promote", dict(component=component, to=to, dry_run=dry_run, as_json=as_json,
                             catalog=catalog, sources=sources, config_file=config_file))


def _runtime_switch(name: str, target: str, doc: str, kind: str = "runtime") -> None:
    """Register ``activate`` / ``deactivate`` / ``publish``: one body, its target baked in."""

    def command(
        component: str = opt.component(),
        dry_run: bool = typer.Option(False, "--dry-run", help="Check the gates, write nothing."),
        as_json: bool = typer.Option(False, "--json", help="Print the gates as JSON."),
        actor: str = typer.Option("", "--by", metavar="NAME",
            help="Who switches it (recorded in the log)."),
        catalog: str | None = opt.catalog(),
        config_file: str | None = opt.config(),
    ) -> None:
        _execute("promote", dict(component=component, to=target, kind=kind,
                                 dry_run=dry_run, as_json=as_json, actor=actor,
                                 catalog=catalog, config_file=config_file))

    command.__doc__ = doc
    command.__name__ = f"{name}_cmd"
    app.command(name)(command)


_runtime_switch("activate", lifecycle.ACTIVE,
                "Set runtime_status active (approved/promoted, no active conflict, exclusivity).")
_runtime_switch("deactivate", lifecycle.INACTIVE,
                "Set runtime_status inactive (logged in transitions.ndjson).")
_runtime_switch("publish", lifecycle.PUBLISHED, "Set publishable true (gate G15).", "publish")


@app.command("packet")
def packet_cmd(
    component: str | None = typer.Argument(
        None, metavar="COMPONENT", help="A document's path, or a component_id (not with --queue)."),
    lane: str = typer.Option(..., "--lane", metavar="LANE",
        help="light | full (the context shape)."),
    out: str = typer.Option("packets", "-o", "--output", metavar="DIR",
                            help="Folder for the JSON + Markdown files."),
    actor: str = typer.Option("", "--actor", metavar="NAME",
        help="Who asks for the review (recorded)."),
    instruction: str | None = typer.Option(
        None, "--instruction", metavar="TASK",
        help="The task (default: from the next lifecycle step)."),
    escalates: str | None = typer.Option(
        None, "--escalates", metavar="TASK", help="The light task this full packet escalates."),
    queue: str | None = typer.Option(
        None, "--queue", metavar="DIR", help="Hand-off: one light packet per component with "
        "--status, plus a hand-off record, into DIR."),
    status: str | None = typer.Option(None, "--status", metavar="STATUS",
        help="With --queue: which components."),
    limit: int = typer.Option(1000, "--limit", metavar="N",
        help="With --queue: at most this many packets."),
    catalog: str | None = opt.catalog(),
    config_file: str | None = opt.config(),
) -> None:
    """Write a review packet (JSON + Markdown): the light lane (the document, its permission
    facts and findings) or the full lane (its relations in the catalog too)."""
    _execute("packet", dict(component=component, lane=lane, out=out, actor=actor,
                            instruction=instruction, escalates=escalates, queue=queue,
                            status=status, limit=limit, catalog=catalog,
                            config_file=config_file))


@notes_app.command("init")
def notes_init_cmd(component: str = opt.component(), catalog: str | None = opt.catalog(),
                   config_file: str | None = opt.config()) -> None:
    """Write notes/<component_id>.yaml with every field a curator may fill, commented (the
    document's values shown); refused, nothing written, when the component has notes."""
    _execute("notes init", dict(locals()))


@app.command("review")
def review_cmd(
    catalog_dir: str | None = typer.Argument(
        None, metavar="CATALOG", help="Catalog folder (default: found above the current one)."),
    fmt: str = typer.Option("text", "--format", "-f", metavar="FORMAT",
                            help="text | json | markdown | html (the review's own) | concise | "
                            "github | sarif | junit (its findings)"),
    sources: str | None = opt.sources("Source store folder (default: `sources:` in the config)."),
    output: str | None = opt.output("Write the report here."),
    jobs: int | None = typer.Option(None, "-j", "--jobs", metavar="N", help="Processes at work "
                                    "on the document rules (default: all cores)."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
    select: list[str] = opt.select("MC2,RV2"),
    ignore: list[str] = opt.ignore(),
    exclude: list[str] = opt.exclude(),
    config_file: str | None = opt.config(),
    exit_zero: bool = opt.exit_zero(),
    statistics: bool = opt.statistics(),
    color: str = _color_option(),
    scheduler: str | None = typer.Option(
        None, "--scheduler", metavar="ADDR", help="Run the document rules on a Dask cluster: "
        "its scheduler address (needs risutools[dask])."),
    live: bool = typer.Option(False, "--live-only", help="Interactions between live "
                              "components only (active or promoted), in every format."),
    allowed_signers: str | None = opt.allowed_signers(),
    allow_config_signers_outside: bool = opt.allow_signers_outside(),
    base_log: str | None = opt.base_log(),
) -> None:
    """Review a whole catalog (read-only): findings, digests, interactions, versions, risk,
    graph, log, approvals, board."""
    _check_format(fmt, statistics, REVIEW_FORMATS)
    bar = ReviewProgress(enabled=not quiet)
    _execute("review", dict(catalog=catalog_dir, sources=sources, jobs=jobs, live_only=live,
                            config_file=config_file, select=tuple(select), ignore=tuple(ignore),
                            exclude=tuple(exclude), scheduler=scheduler, report=output,
                            allowed_signers=allowed_signers, base_log=base_log,
                            allow_config_signers_outside=allow_config_signers_outside),
             hooks=dict(progress=bar.update), around=bar, fmt=fmt, output=output,
             color=_color(color) and output is None, formats=REVIEW_FORMATS,
             statistics=statistics, exit_zero=exit_zero)


def _whole_short_helps() -> None:
    """The command list shows each command's first paragraph whole (wrapped, never cut
    mid-sentence with "...")."""
    import inspect as _inspect

    for typer_app in (app, replay_app, notes_app):
        for info in typer_app.registered_commands:
            doc = info.callback.__doc__ if info.callback is not None else None
            if info.short_help is None and info.help is None and doc:
                info.short_help = " ".join(_inspect.cleandoc(doc).split("\n\n")[0].split())


_whole_short_helps()


def _click_class(name: str) -> type[BaseException]:
    """A click exception class by name, whether typer vendors click or depends on it."""
    for cls in typer.BadParameter.__mro__:
        if cls.__name__ == name and issubclass(cls, BaseException):
            return cls
    raise LookupError(name)  # pragma: no cover - every typer version has both


def _utf8_streams() -> None:
    """Standard output and error in UTF-8 whatever the locale: documents and reports are
    mostly Korean, JSON and SARIF are UTF-8 by their specs, and under a locale such as
    ``en_US.ISO-8859-1`` every report holding a Korean word (or the ``…`` of a shortened
    hash) was an internal error (UnicodeEncodeError).  An encoding the user asks for
    (``PYTHONIOENCODING``) is kept, what it cannot spell written as backslash escapes; a lone
    surrogate a value still holds is written so too, never an error."""
    asked = bool(os.environ.get("PYTHONIOENCODING"))
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or ""
        if encoding.lower().replace("_", "-") not in ("utf-8", "utf8") and \
                isinstance(stream, io.TextIOWrapper):
            if asked:
                stream.reconfigure(errors="backslashreplace")
            else:
                stream.reconfigure(encoding="utf-8", errors="backslashreplace")


#: a write that failed for want of room or of a working device, with no file named: standard
#: output's (``> /dev/full``); what ``write_out`` says of the report, said of the rest
_OUTPUT_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def main() -> None:
    """Console entry point: maps errors to one line and exit code 2."""
    usage_error = _click_class("UsageError")
    click_error = _click_class("ClickException")
    stdstreams.occupy_closed()  # (before anything is opened: no file takes 0, 1 or 2)
    _utf8_streams()
    lastwords.install()
    try:
        with one_command(app, sys.argv[1:]):  # only the command run is made
            rc = app(standalone_mode=False, prog_name="risutools")
    except usage_error as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # no arguments: the help was shown
            text = str(getattr(exc, "format_message", exc.__str__)())
            if text.strip():  # (typer prints it itself; plain click leaves it to us)
                typer.echo(text)
        else:
            typer.echo(safe_line(usage_line(exc)), err=True)
        sys.exit(2)
    except click_error as exc:
        typer.echo(safe_line(f"risutools: {bounded(' '.join(str(exc).split()))}"), err=True)
        sys.exit(int(getattr(exc, "exit_code", 2)))
    except typer.Abort:
        typer.echo("risutools: aborted", err=True)
        sys.exit(130)
    except WriteConflict as exc:  # a lost compare-and-swap: ran, and found a newer file
        _fail(exc)
        sys.exit(1)
    except RisuError as exc:
        _fail(exc)  # one printable line, whatever bytes the path holds
        sys.exit(2)
    except KeyboardInterrupt:
        lastwords.interrupted()  # (a pool torn down late says nothing more)
        typer.echo("risutools: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # a bug: still one line, unless debugging
        named = path_error_line(exc) if isinstance(exc, OSError) else None
        if named is not None:  # (a path's name the system refuses: a one-line refusal)
            _fail(named)
            sys.exit(2)
        if isinstance(exc, OSError) and exc.filename is None and (
                exc.errno in _OUTPUT_FULL or isinstance(exc, stdstreams.StreamClosed)):
            _fail(stdout_unwritable(exc))  # (the help, a table the terminal library wrote)
            sys.exit(2)
        if os.environ.get("RISUTOOLS_DEBUG"):
            raise

        typer.echo(safe_line(
            f"risutools: internal error: {type(exc).__name__}: {bounded(str(exc))} "
            "(set RISUTOOLS_DEBUG=1 for a traceback, and please report it)"),
            err=True,
        )
        sys.exit(2)
    sys.exit(rc if isinstance(rc, int) else 0)
