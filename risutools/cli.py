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
from risutools.errors import RisuError, WriteConflict

app = typer.Typer(
    name="risutools",
    help="Read RisuAI modules, cards and presets without executing them; project, "
    "validate, verify and replay matrix-component-v1 documents.",
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


def _write_report(path: str, text: str) -> None:
    """Write a report file atomically; a target that cannot be written is one line, exit 2."""
    from risutools.fsio import atomic_write

    try:
        atomic_write(path, text.encode("utf-8"))
    except OSError as exc:
        raise RisuError("unwritable", f"cannot write: {exc.strerror or exc}", path=path) from None


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
    file: str = typer.Argument(
        ..., metavar="FILE", help=".risum, .charx, CharX-JPEG, .risup/.risupreset or JSON export."
    ),
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

_FORMATS = ("text", "json", "github", "sarif", "junit")


def _contract_config(config_file: str | None, paths: list[str]) -> object:
    from pathlib import Path

    from risutools.contract.config import load_config, load_config_file

    if config_file:
        return load_config_file(config_file)
    start = next((p for p in paths if p != "-"), ".")
    sp = Path(start)
    return load_config(sp if sp.is_dir() else (sp.parent if str(sp.parent) else Path(".")))


def _contract_render(result: object, fmt: str, output: str | None = None) -> str:
    from risutools.contract.validate import Result

    assert isinstance(result, Result)
    if fmt == "json":
        from risutools.report.json_out import render_json

        return render_json(result)
    if fmt == "github":
        from risutools.report.github import render_github

        return render_github(result)
    if fmt == "sarif":
        from risutools.report.sarif import render_sarif

        return render_sarif(result)
    if fmt == "junit":
        from risutools.report.junit import render_junit

        return render_junit(result)
    from risutools.report.text import render_text

    # colours only on a terminal, never into a report file
    color = output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    return render_text(result, color=color)


def _contract_output(text: str, output: str | None) -> None:
    if output:
        _write_report(output, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def _check_format(fmt: str) -> None:
    if fmt not in _FORMATS:
        raise typer.BadParameter(f"{fmt!r} is not one of {', '.join(_FORMATS)}",
                                 param_hint="--format")


@app.command()
def validate(
    paths: list[str] = typer.Argument(
        ..., help="Documents: .json/.yaml/.yml/.ndjson files, folders (recursive), - for stdin."
    ),
    fmt: str = typer.Option("text", "--format", "-f", help="text | json | github | sarif | junit"),
    select: list[str] = typer.Option([], "--select", help="Only these rules (id or prefix)."),
    ignore: list[str] = typer.Option([], "--ignore", help="Skip these rules (id or prefix)."),
    strict: bool = typer.Option(False, "--strict", help="Warnings fail too (exit 1)."),
    promotion: bool = typer.Option(
        False, "--promotion",
        help="Apply the promotion gate: incomplete narrative (MC600) is an error.",
    ),
    config_file: str | None = typer.Option(
        None, "--config",
        help="Configuration file (default: nearest .risutools.yaml / pyproject.toml).",
    ),
    output: str | None = typer.Option(None, "--output", "-o", help="Write the report to a file."),
    skip_non_documents: bool = typer.Option(
        False, "--skip-non-documents",
        help="Skip named JSON/YAML files without `contract`/`component_id` (as in folders); "
        "for hooks.",
    ),
) -> None:
    """Validate matrix-component-v1 documents against the schema and rules MC100-MC600.

    Exit 0: no errors; 1: error findings (or warnings with --strict); 2: could not run."""
    _check_format(fmt)
    from risutools.contract.config import ContractConfig
    from risutools.contract.validate import RuleFilter, validate_paths

    cfg = _contract_config(config_file, paths)
    assert isinstance(cfg, ContractConfig)
    if promotion:
        cfg = cfg.with_promotion_gate()
    result = validate_paths(paths, cfg, rule_filter=RuleFilter(select, ignore),
                            skip_non_documents=skip_non_documents)
    _contract_output(_contract_render(result, fmt, output), output)
    raise typer.Exit(result.exit_code(strict))


@app.command()
def verify(
    paths: list[str] = typer.Argument(..., help="Documents, folders or - (as for validate)."),
    sources: str | None = typer.Option(
        None, "--sources", help="Source store folder (default: `sources:` in the configuration)."
    ),
    require_sources: bool = typer.Option(
        False, "--require-sources", help="A source that is not at hand is an error, not a warning."
    ),
    no_content_scan: bool = typer.Option(
        False, "--no-content-scan",
        help="Find sources by name and digest-named files only (do not hash the whole store).",
    ),
    fmt: str = typer.Option("text", "--format", "-f", help="text | json | github | sarif | junit"),
    select: list[str] = typer.Option([], "--select", help="Only these rules (id or prefix)."),
    ignore: list[str] = typer.Option([], "--ignore", help="Skip these rules (id or prefix)."),
    strict: bool = typer.Option(False, "--strict", help="Warnings fail too (exit 1)."),
    config_file: str | None = typer.Option(None, "--config", help="Configuration file."),
    output: str | None = typer.Option(None, "--output", "-o", help="Write the report to a file."),
    skip_non_documents: bool = typer.Option(
        False, "--skip-non-documents", help="As for validate (for hooks).",
    ),
) -> None:
    """Verify digests: prompt_sha256, placeholders, source files, replay reports (MC200-MC203).

    A source that is not at hand is reported as "not verified" (a warning; an error
    with --require-sources)."""
    _check_format(fmt)
    from risutools.contract.config import ContractConfig
    from risutools.contract.validate import RuleFilter
    from risutools.contract.verify import verify_paths

    cfg = _contract_config(config_file, paths)
    assert isinstance(cfg, ContractConfig)
    result = verify_paths(
        paths, sources, config=cfg, require_sources=require_sources,
        content_scan=not no_content_scan, rule_filter=RuleFilter(select, ignore),
        skip_non_documents=skip_non_documents,
    )
    _contract_output(_contract_render(result, fmt, output), output)
    raise typer.Exit(result.exit_code(strict))


@app.command("hash")
def hash_cmd(
    file: str = typer.Argument(
        ..., help="A document (.json/.yaml) or an NDJSON catalog; - for stdin."
    ),
) -> None:
    """Print the canonical document hash (sha256:<hex>), the base hash for approvals.

    For several documents (NDJSON, multi-document YAML): one tab-separated line each,
    `<line> <component_id> sha256:<hex>`."""
    from risutools.contract.hashing import hash_lines

    lines, problems = hash_lines(file)
    for p in problems:
        typer.echo(f"risutools: {p}", err=True)
    for line in lines:
        typer.echo(line)
    raise typer.Exit(2 if problems else 0)



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
    elif len(docs) == 1:
        typer.echo(dumps(docs[0]), nl=False)
    else:  # several components: one NDJSON line each, a catalog `validate` reads as is
        from risutools.contract.canonical import canonical

        for doc in docs:
            typer.echo(canonical(doc).decode("utf-8"))
    raise typer.Exit(0)


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
    edit_window: int | None = typer.Option(
        None, "--edit-window",
        help="Edits and deletes pick among the N most recent messages (default: any).",
    ),
) -> None:
    """Generate a long, seeded, deterministic conversation-v1 fixture."""
    from risutools.replay.synth import synthesize, write_synth

    data = synthesize(seed, messages, turns=turns, edit_rate=edit_rate,
                      delete_rate=delete_rate, tool_rate=tool_rate, lang=lang, name=name,
                      edit_window=edit_window)
    size = write_synth(data, output)
    typer.echo(f"wrote {output}: {len(data['turns'])} turn(s), {messages} messages, {size} bytes")


# ==== end replay commands ====================================================


# ==== catalog commands: review, promote =====================================


@app.command("ingest")
def ingest_cmd(
    src: str = typer.Argument(..., help="Folder of downloaded Risu files (searched recursively)."),
    out: str = typer.Option(
        ..., "-o", "--output", "--out", help="Catalog folder to write documents into."
    ),
    ndjson: bool = typer.Option(False, "--ndjson", help="Write one components.ndjson."),
    lang: str = typer.Option("en", "--lang", help="Language of generated sentences: en or ko."),
    notes: str | None = typer.Option(
        None, "--notes", help="Folder of notes/<component_id>.yaml (default: CATALOG/notes)."
    ),
    jobs: int | None = typer.Option(
        None, "-j", "--jobs", help="Worker processes (default: all cores)."
    ),
    scheduler: str | None = typer.Option(
        None, "--scheduler", help="Run on a Dask cluster: its scheduler address "
        "(tcp://host:8786; needs risutools[dask]). Writes stay in this process.",
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore and do not write the cache."),
    report: str | None = typer.Option(None, "--report", help="Also write the run as JSON here."),
    as_json: bool = typer.Option(False, "--json", help="Print the run as JSON on stdout."),
    quiet: bool = typer.Option(
        False, "-q", "--quiet", help="No progress bar, no table (failed files still go to stderr)."
    ),
) -> None:
    """Project every Risu file under SRC into matrix-component-v1 documents in a catalog."""
    import contextlib

    from risutools.catalog.ingest import ingest
    from risutools.report.ingest_text import IngestProgress, render_summary

    progress = IngestProgress(enabled=not quiet and not as_json)
    with contextlib.ExitStack() as stack:
        executor = None
        if scheduler is not None:
            from risutools.catalog.cluster import cluster_executor
            from risutools.errors import ConfigError

            if jobs is not None:
                raise ConfigError("bad-option", "the cluster's workers do the work; leave out "
                                  "-j/--jobs", where="--scheduler")
            executor = stack.enter_context(cluster_executor(scheduler))
        with progress:
            result = ingest(
                src, out, ndjson=ndjson, lang=lang, notes_dir=notes, jobs=jobs,
                executor=executor, use_cache=not no_cache, on_start=progress.start,
                on_progress=progress.update,
            )
    if report:
        import json as _json

        _write_report(report, _json.dumps(result.to_dict(), ensure_ascii=False, indent=1) + "\n")
    if as_json:
        import json as _json

        typer.echo(_json.dumps(result.to_dict(), ensure_ascii=False, indent=1))
    elif not quiet:
        render_summary(result, progress.elapsed())
    else:
        for s in result.failures:
            typer.echo(f"failed: {s.error}", err=True)
        for line in [*result.collisions, *result.kept_unreadable]:
            typer.echo(line, err=True)
    raise typer.Exit(0 if result.ok else 1)


# ==== end catalog commands ===================================================


def _click_class(name: str) -> type[BaseException]:
    """A click exception class by name, whether typer vendors click or depends on it."""
    for cls in typer.BadParameter.__mro__:
        if cls.__name__ == name and issubclass(cls, BaseException):
            return cls
    raise LookupError(name)  # pragma: no cover - every typer version has both


def _usage_line(exc: BaseException) -> str:
    """A usage error (bad option value, missing argument, unknown option) on one line."""
    ctx = getattr(exc, "ctx", None)
    parts = list(getattr(ctx, "command_path", "").split()[1:]) if ctx is not None else []
    while parts and parts[0] in ("-m", "risutools"):  # "python -m risutools" as prog name
        parts.pop(0)
    cmd = " ".join(["risutools", *parts])
    message = " ".join(str(getattr(exc, "format_message", exc.__str__)()).split())
    where = f"{' '.join(parts)}: " if parts else ""
    return f"risutools: {where}usage: {message} (see '{cmd} -h')"


def main() -> None:
    """Console entry point: maps errors to one line and exit code 2."""
    usage_error = _click_class("UsageError")
    click_error = _click_class("ClickException")
    try:
        rc = app(standalone_mode=False)
    except usage_error as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # no arguments: the help was shown
            text = str(getattr(exc, "format_message", exc.__str__)())
            if text.strip():  # (typer prints it itself; plain click leaves it to us)
                typer.echo(text, err=True)
        else:
            typer.echo(_usage_line(exc), err=True)
        sys.exit(2)
    except click_error as exc:
        typer.echo(f"risutools: {' '.join(str(exc).split())}", err=True)
        sys.exit(int(getattr(exc, "exit_code", 2)))
    except typer.Abort:
        typer.echo("risutools: aborted", err=True)
        sys.exit(130)
    except WriteConflict as exc:  # a lost compare-and-swap: ran, and found a newer file
        typer.echo(f"risutools: {exc.one_line()}", err=True)
        sys.exit(1)
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
    sys.exit(rc if isinstance(rc, int) else 0)
