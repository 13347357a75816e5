"""``risutools review``: a whole catalog, read-only: findings and digests per document, the
capability graph, duplicates, id collisions, the transition log, approvals, status counts
and the promotion board."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from risutools.catalog.catalog import Catalog
from risutools.catalog.review import Review, review_catalog
from risutools.checks.registry import check_selection, for_command
from risutools.commands.catalogs import configure
from risutools.errors import UsageError

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

    def __post_init__(self) -> None:
        if self.jobs is not None and self.jobs < 1:
            raise UsageError("--jobs", "must be at least 1")
        check_selection("review", self.select, self.ignore)


@dataclass
class Reviewed:
    kind: ClassVar[str] = "review"
    review: Review

    def exit_code(self) -> int:
        return self.review.exit_code()


def run(opts: Options, progress: Progress | None = None) -> Reviewed:
    cfg = configure(opts.config_file, select=opts.select, ignore=opts.ignore,
                    sources=opts.sources, exclude=opts.exclude)
    review = review_catalog(Catalog.open(opts.catalog, configure=cfg), jobs=opts.jobs,
                            progress=progress)
    review.result.checks = for_command("review")
    return Reviewed(review)
