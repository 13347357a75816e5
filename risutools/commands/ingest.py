"""``risutools ingest``: every Risu file under a folder (by content) into matrix-component-v1
documents in a catalog; cards' modules too; de-duplicated; incremental (a cache); on all
cores, or on a Dask cluster with ``--scheduler``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from risutools.catalog.cluster import cluster_executor
from risutools.catalog.ingest import IngestResult, ingest
from risutools.checks.registry import check_selection
from risutools.collector import survivors_frozen
from risutools.commands.outputs import reads_file as reads_file  # (cli asks it)
from risutools.errors import UsageError, check_choice
from risutools.projection.text import LANGS
from risutools.settings.config import resolve_settings


@dataclass(frozen=True)
class Options:
    src: str
    out: str
    ndjson: bool = False
    lang: str = "en"
    notes: str | None = None
    jobs: int | None = None
    scheduler: str | None = None
    use_cache: bool = True
    config_file: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_choice(self.lang, LANGS, "--lang")
        if self.jobs is not None and self.jobs < 1:
            raise UsageError("--jobs", f"must be at least 1, not {self.jobs}")
        check_selection("ingest", self.select, self.ignore)


@dataclass
class Ingested:
    kind: ClassVar[str] = "ingest"
    result: IngestResult

    def exit_code(self) -> int:
        return 0 if self.result.ok else 1


def run(opts: Options, on_start: Callable[[int, int], None] | None = None,
        on_progress: Callable[[int, int], None] | None = None) -> Ingested:
    with survivors_frozen():  # (see there: measured)
        return _run(opts, on_start, on_progress)


def _run(opts: Options, on_start: Callable[[int, int], None] | None,
         on_progress: Callable[[int, int], None] | None) -> Ingested:
    settings = resolve_settings(opts.config_file, [opts.out], select=opts.select,
                                ignore=opts.ignore, exclude=opts.exclude)
    with contextlib.ExitStack() as stack:
        executor = None
        if opts.scheduler is not None:
            if opts.jobs is not None:
                raise UsageError("--scheduler", "the cluster's workers do the work; leave out "
                                 "-j/--jobs")
            executor = stack.enter_context(cluster_executor(opts.scheduler))
        result = ingest(opts.src, opts.out, ndjson=opts.ndjson, lang=opts.lang,
                        notes_dir=opts.notes, jobs=opts.jobs, executor=executor,
                        use_cache=opts.use_cache, on_start=on_start, on_progress=on_progress,
                        settings=settings)
    return Ingested(result)
