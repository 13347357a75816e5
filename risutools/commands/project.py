"""``risutools project``: the matrix-component-v1 candidate document of each component in a
file (a module, a card's own content, a preset), printed or written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from risutools.checks.registry import check_selection
from risutools.errors import check_choice
from risutools.projection.run import project_path, write_documents
from risutools.projection.text import LANGS
from risutools.settings.config import resolve_settings
from risutools.targets import check_target


@dataclass(frozen=True)
class Options:
    file: str
    post_id: str | None = None
    notes: str | None = None
    lang: str = "en"
    out: str | None = None
    force: bool = False
    config_file: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_choice(self.lang, LANGS, "--lang")
        check_selection("project", self.select, self.ignore)
        if self.out:
            check_target(self.out, folder=None)  # a file, or a folder for several


@dataclass
class Projected:
    """The documents, and the files written (``-o``; none: print them)."""

    kind: ClassVar[str] = "project"
    documents: list[dict[str, Any]]
    written: list[str] = field(default_factory=list)

    def exit_code(self) -> int:
        return 0


def run(opts: Options) -> Projected:
    settings = resolve_settings(opts.config_file, [opts.file], select=opts.select,
                                ignore=opts.ignore)
    docs = project_path(opts.file, post_id=opts.post_id, notes_path=opts.notes, lang=opts.lang,
                        settings=settings)
    written = write_documents(docs, opts.out, force=opts.force) if opts.out else []
    return Projected(docs, written)

