"""``risutools review``: a whole catalog, read-only: findings and digests per document, the
capability graph, interactions, versions, duplicates, id collisions, the transition log,
approvals, status counts and the promotion board; with ``--scheduler`` the document rules
run on a Dask cluster, like ingest."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from risutools.catalog.catalog import Catalog
from risutools.catalog.cluster import cluster_executor
from risutools.catalog.review import Review, review_catalog
from risutools.catalog.review_interactions import live_only
from risutools.checks.registry import check_selection, for_command
from risutools.commands.catalogs import TrustRoot, configure, pinned_file
from risutools.commands.outputs import implicit_inputs
from risutools.commands.outputs import reads_file as reads_file  # (cli asks it)
from risutools.commands.settle import raced, readers_locks
from risutools.errors import Code, DocumentError, UsageError
from risutools.safeio import enters

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Options:
    catalog: str | None = None
    sources: str | None = None
    jobs: int | None = None
    config_file: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    scheduler: str | None = None
    live_only: bool = False  # interactions between live components only (every format)
    report: str | None = None  # -o: where the report goes (checked before the review runs)
    allowed_signers: str | None = None  # the trust root CI pins (as validate's)
    allow_config_signers_outside: bool = False
    base_log: str | None = None  # the base branch's transitions.ndjson (MC306: append-only)

    def __post_init__(self) -> None:
        if self.jobs is not None and self.jobs < 1:
            raise UsageError("--jobs", "must be at least 1")
        if self.scheduler is not None and self.jobs is not None:
            raise UsageError("--scheduler", "the cluster's workers do the work; leave out "
                             "-j/--jobs")
        check_selection("review", self.select, self.ignore)


@dataclass
class Reviewed:
    kind: ClassVar[str] = "review"
    review: Review
    #: what the review read that its command line need not name (never a report's target),
    #: found when asked
    reads: Callable[[], tuple[str, ...]] | None = None

    def exit_code(self) -> int:
        return self.review.exit_code()


def run(opts: Options, progress: Progress | None = None) -> Reviewed:
    trust = TrustRoot(opts.allowed_signers, opts.allow_config_signers_outside)
    base_log = pinned_file(opts.base_log, "--base-log")
    cfg = configure(opts.config_file, select=opts.select, ignore=opts.ignore,
                    sources=opts.sources, exclude=opts.exclude, trust=trust)
    cat = Catalog.open(opts.catalog, configure=cfg)
    if opts.report is not None and enters(cat.root, opts.report):
        # (a report named through the catalog stays in it: a pull request can make a folder
        # on its way a link to elsewhere)
        cat.inside(Path(opts.report), "the report")
    with contextlib.ExitStack() as stack:
        executor = stack.enter_context(cluster_executor(opts.scheduler)) \
            if opts.scheduler is not None else None
        started = time.time_ns()
        review = review_catalog(cat, jobs=opts.jobs, progress=progress, executor=executor,
                                base_log=base_log)
        if raced(review.outline, started, [cat.root]):  # (MC305 a writer's two steps may
            del review  # have made: again, no writer half way; docs/writes.md)
            cat = Catalog.open(opts.catalog, configure=cfg)
            with readers_locks([cat.root]):
                review = review_catalog(cat, jobs=opts.jobs, progress=progress,
                                        executor=executor, base_log=base_log)
    counts = review.data["counts"]
    if not (review.outline.documents or review.outline.files or counts["errors"]):
        # (a catalog that gave no document to check: no verdict, whatever warnings its notes
        # or log give once every document is left out; an error still fails it)
        left_out = f"; left out: {', '.join(cat.config.exclude)}" if cat.config.exclude else ""
        raise DocumentError(Code.NO_DOCUMENTS, "no matrix-component documents found in the "
                            f"catalog (.json, .yaml, .yml, .ndjson, .jsonl{left_out})",
                            path=str(cat.root))
    review.outline.checks = for_command("review")
    if opts.live_only and review.data.get("interactions"):
        review.data["interactions"] = live_only(review.data["interactions"],
                                                review.data["documents"])
    return Reviewed(review, lambda: implicit_inputs([cat.root], cat.config))
