"""What the ``replay`` commands call: run, write the three renderings, update."""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from risutools.canonical import prefixed
from risutools.collector import cycles_paused
from risutools.errors import Code, DocumentError, RisuError
from risutools.fsio import check_file_targets, fsync_directory
from risutools.pathnames import plain_id, show_name
from risutools.replay.component import (
    ComponentFile,
    check_recordable,
    load_component,
    updated_document,
    write_or_fail,
    write_updated,
)
from risutools.replay.fixture import Fixture, load_fixture, stream_fixture
from risutools.replay.render_html import render_html
from risutools.replay.render_markdown import render_markdown
from risutools.replay.reportpaths import report_paths as report_paths
from risutools.replay.row_views import RowViews
from risutools.replay.run import (
    CUTTER_CAPS,
    MONITOR_CAP,
    SIM_MONITOR,
    build_report,
    report_pieces,
    run_simulation,
    select_simulation,
)
from risutools.replay.spool import Spool
from risutools.replay.verdicts import NOT_CHECKED, PASSED
from risutools.safeio import check_inside, own_folder
from risutools.settings.catalog import REPLAYS_DIR
from risutools.settings.config import find_settings_file, load_settings
from risutools.settings.replay import ReplayConfig, load_replay_config


@dataclass
class RunOutcome:
    simulation: str | None  # None = no applicable simulation (nothing written)
    report: dict[str, Any] | None = None
    written: list[Path] = field(default_factory=list)
    updated: bool = False
    message: str = ""
    log_line: int | None = None  # the evidence line the update was logged as


#: writes an updated document: (the file as read, the new document, the report's digest,
#: the fixture's name) -> the log line that records it, or None
Writer = Callable[[ComponentFile, dict[str, Any], str, str], "int | None"]


def plain_writer(cf: ComponentFile, new: dict[str, Any], report_sha256: str,
                 fixture: str) -> int | None:
    """The document replaced (compare-and-swap on the bytes read), no log line: what a
    library caller gets; the command records evidence in the catalog's log
    (:func:`risutools.catalog.evidence.evidence_writer`)."""
    write_updated(cf, new)
    return None


def default_report_path(component_path: Path, component_id: str, fixture_name: str) -> Path:
    """``replays/<component_id>--<fixture>.json`` beside the document; an id that is not a
    plain name (:func:`risutools.pathnames.plain_id`: a separator, ``..``) never becomes a
    path: ``bad-component-id`` (name the report with ``-o``)."""
    if not plain_id(component_id):
        shown = show_name(str(component_id))
        raise DocumentError(Code.BAD_COMPONENT_ID, f"the component_id {shown!r} "
                            "is not a plain name, and the replay report would be named after "
                            "it; fix the id, or name the report with -o",
                            path=show_name(str(component_path)))
    out = component_path.parent / REPLAYS_DIR / f"{component_id}--{fixture_name}.json"
    # (a replays/ that is a link leading out of the document's folder is never written:
    # outside-catalog, one line; -o names a report anywhere, the user's word)
    check_inside(component_path.parent, out, "the document's folder")
    # (nor one that is a link to a folder inside: a report there would be read as a document)
    own_folder(component_path.parent, out.parent, f"{REPLAYS_DIR}/", "the document's folder")
    return out


def write_report_files(report: dict[str, Any], path: Path, views: RowViews | None = None,
                       *, hashed: bool = True) -> tuple[list[Path], str | None]:
    """Write ``path`` (JSON, streamed: :func:`report_pieces`) and the ``.md`` / ``.html``
    next to it; return the paths and the JSON file's ``sha256:`` digest (None unless
    ``hashed``: what only an update records).  ``views``: what the renderings read of the
    rows, gathered during the replay (:class:`RowViews`)."""
    digest = hashlib.sha256()

    def pieces() -> Iterator[bytes]:
        for piece in report_pieces(report):
            digest.update(piece)
            yield piece

    path, md, html = report_paths(path)
    check_file_targets(path, md, html)  # (one in the way: none of the three written)
    try:  # each file fsynced before it is put in place; their folder once, after them all
        write_or_fail(path, pieces() if hashed else report_pieces(report), sync_dir=False)
        picked = views.markdown_picked(report) if views is not None else None
        sweep, table = views.html_parts(report) if views is not None else (None, None)
        write_or_fail(md, render_markdown(report, picked).encode("utf-8"), sync_dir=False)
        write_or_fail(html, render_html(report, sweep, table).encode("utf-8"), sync_dir=False)
    finally:  # (those put in place before a failure made durable too)
        fsync_directory(path.parent)
    return [path, md, html], prefixed(digest.hexdigest()) if hashed else None


def run_component(
    component: str | Path,
    fixture: str | Path,
    config: str | Path | None = None,
    output: str | Path | None = None,
    update: bool = False,
    catalog_layer: dict[str, Any] | bool | None = False,
    writer: Writer = plain_writer,
    keep_rows: bool = True,
) -> RunOutcome:
    """``catalog_layer``: the catalog configuration's ``replay:`` section as the caller
    read it (the CLI's settings); ``False``: read the configuration above the component.
    ``keep_rows=False``: the report's rows (a :class:`~risutools.replay.spool.Spool`) are
    written to its files but not kept to be read back (what the command needs)."""
    cf = load_component(component)
    sim = select_simulation(cf.doc)
    if sim is None:
        return RunOutcome(
            None,
            message=f"no applicable simulation for {cf.doc['component_id']}: "
            f"capabilities.provides has none of {', '.join(CUTTER_CAPS)}, {MONITOR_CAP}; "
            "nothing written",
        )
    if update:
        try:
            check_recordable(cf.doc)
        except DocumentError as exc:
            raise exc.with_path(str(cf.path)) from None
    with cycles_paused():  # millions of small acyclic objects: no collector passes over them
        fx, report, written, digest = _replay(sim, cf, fixture, config, catalog_layer, output,
                                              keep_rows, hashed=update)
    outcome = RunOutcome(sim, report, written)
    verdict = report["summary"]["verdict"]
    if update and verdict == NOT_CHECKED:
        # a replay that checked nothing is not a pass: the component is left as it was
        outcome.message = (
            f"not recorded in {cf.path}: no invariant was checked on this fixture "
            "(verdict not-checked); the component is unchanged"
        )
    elif update:
        assert digest is not None  # (hashed when updating)
        try:
            new = updated_document(cf.doc, passed=verdict == PASSED, fixture_name=fx.name,
                                   report_sha256=digest)
        except DocumentError as exc:
            raise exc.with_path(str(cf.path)) from None
        outcome.log_line = writer(cf, new, digest, fx.name)
        outcome.updated = True
    return outcome


def _replay(sim: str, cf: ComponentFile, fixture: str | Path, config: str | Path | None,
            catalog_layer: dict[str, Any] | bool | None, output: str | Path | None,
            keep_rows: bool = True, *, hashed: bool = True,
            ) -> tuple[Fixture, dict[str, Any], list[Path], str | None]:
    """Load the fixture (an NDJSON one read as it is replayed), run, write the three files:
    (fixture, report, paths, the JSON file's digest: None unless ``hashed``).  The
    renderings' views of the rows are gathered as they are made, so without ``keep_rows``
    the rows are kept to be read back only while the renderings may yet read them (a page
    listing every one of more than 400 rows, each worth a look: :meth:`RowViews.rows_needed`);
    when they would read rows not kept (views that do not fit the report, never seen) the
    replay runs again, its rows kept (it ran twice for every page listing all its rows:
    docs/replay.md)."""
    layer = catalog_section(cf.path) if catalog_layer is False else catalog_layer
    fx, report, views = _replayed(sim, cf, fixture, config, layer, keep_rows=keep_rows)
    if not keep_rows and not views.complete(report) and not _held(report):
        fx, report, views = _replayed(sim, cf, fixture, config, layer, keep_rows=True)
    out = Path(output) if output else default_report_path(cf.path, cf.doc["component_id"], fx.name)
    written, digest = write_report_files(report, out, views, hashed=hashed)
    return fx, report, written, digest


def _replayed(sim: str, cf: ComponentFile, fixture: str | Path, config: str | Path | None,
              layer: dict[str, Any] | bool | None, *, keep_rows: bool,
              ) -> tuple[Fixture, dict[str, Any], RowViews]:
    fx = stream_fixture(fixture)
    cfg = _layered(config, layer if isinstance(layer, dict) else None, cf.path.parent, fx,
                   fixture)
    views = RowViews(fx.turn_count(), sim != SIM_MONITOR)
    try:  # the rows out of memory (the temporary folder past 1 MiB), then streamed
        run = run_simulation(sim, fx, cfg, spool=True, watch=views.add,
                             readable=True if keep_rows else views.rows_needed,
                             watch_many=views.add_columns)
        report = build_report(run, fx, cfg, cf.doc)
    except OSError as exc:  # the temporary folder full or unwritable
        raise _unspooled(exc) from exc
    return fx, report, views


def _layered(config: str | Path | None, section: dict[str, Any] | None,
             layer_from: Path | None, fx: Fixture, fixture: str | Path) -> ReplayConfig:
    """The replay's configuration: defaults, the catalog's ``replay:`` section (found from
    ``layer_from``: named in a message against it), the fixture's own, then ``config``."""
    settings_file = find_settings_file(layer_from) if section and layer_from else None
    return load_replay_config(config, section, fx.config,
                              paths=(show_name(str(settings_file)) if settings_file else None,
                                     str(fixture)))


def _unspooled(exc: OSError) -> RisuError:
    """The one line for rows that cannot be kept in the temporary folder."""
    return RisuError(Code.UNWRITABLE, "cannot keep the report's rows in the temporary "
                     f"folder: {exc.strerror or exc}", path=tempfile.gettempdir())


def _held(report: dict[str, Any]) -> bool:
    """The report's rows and alerts are still kept to be read back (then kept so)."""
    spools = [v for v in (report["requests"], report["alerts"]) if isinstance(v, Spool)]
    if not all(s.readable for s in spools):
        return False
    for s in spools:
        s.hold()
    return True


def catalog_section(component: Path) -> dict[str, Any] | None:
    """The ``replay:`` section of the catalog configuration above the component (the
    layer below the fixture's own ``config`` and ``--config``)."""
    section = load_settings(component.parent).sections.get("replay")
    return section if isinstance(section, dict) else None


def run_monitor(fixture: str | Path, config: str | Path | None = None,
                component: dict[str, Any] | None = None, *,
                streamed: bool = False, catalog_layer: dict[str, Any] | None = None,
                layer_from: Path | None = None) -> dict[str, Any]:
    """The monitor alone over a fixture; returns a replay-report-v1, tied to ``component``
    (the monitor's document: its id, version and digest) when one is given.
    ``catalog_layer``: the ``replay:`` section of the catalog configuration found from
    ``layer_from`` (under the fixture's own ``config`` and ``--config``, as ``replay run``).

    ``streamed`` (what ``replay monitor`` does): an NDJSON fixture read as the replay
    reaches its turns (:func:`stream_fixture`, as ``replay run`` reads it: no bound on its
    values but the file's), the cycle collector paused, and the report's rows and alerts
    kept in spools, out of memory (:class:`~risutools.replay.spool.Spool`, read back when
    listed): the same report, its rows a sequence rather than a list."""
    fx = stream_fixture(fixture) if streamed else load_fixture(fixture)
    cfg = _layered(config, catalog_layer, layer_from, fx, fixture)
    if not streamed:
        return build_report(run_simulation(SIM_MONITOR, fx, cfg), fx, cfg, component)
    with cycles_paused():
        try:
            run = run_simulation(SIM_MONITOR, fx, cfg, spool=True)
            return build_report(run, fx, cfg, component)
        except OSError as exc:  # the temporary folder full or unwritable
            raise _unspooled(exc) from exc
