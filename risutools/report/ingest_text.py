"""Human output for ``risutools ingest``: a progress bar and a summary table.

The progress bar (files, bytes, rate, ETA: :mod:`risutools.report.progress`) is drawn on
stderr, and only when stderr is a terminal; the summary goes to stdout.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from risutools.report.progress import ByteProgress, size_text, status_text

if TYPE_CHECKING:
    from risutools.catalog.ingest import IngestResult


class IngestProgress:
    """Context manager drawing the progress of a run (:class:`ByteProgress`) with rich on
    stderr, from the moment the run starts (``finding files``) to the catalog's writing; a
    no-op when disabled or when stderr is not a terminal.  ``clock``: for tests."""

    def __init__(self, enabled: bool = True, color: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.color = color
        self.state = ByteProgress(clock)
        self._clock = clock
        self._t0 = clock()
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> IngestProgress:
        self._t0 = self._clock()
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn
            from rich.text import Text

            state = self.state

            class Status(ProgressColumn):  # computed at every refresh: the ETA keeps time
                def render(self, task: Any) -> Text:
                    return Text(status_text(state))

            self._progress = Progress(
                TextColumn("ingest"), BarColumn(), Status(),
                console=Console(stderr=True, **_console_colour(self.color)), transient=True,
            )
            self._progress.__enter__()
            # shown at once: a bar that pulses while the files are found
            self._task = self._progress.add_task("ingest", total=None)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)

    def start(self, files: int, total_bytes: int) -> None:
        self.state.start(files, total_bytes)
        self._draw()

    def update(self, files_done: int, bytes_done: int) -> None:
        self.state.update(files_done, bytes_done)
        self._draw()

    def _draw(self) -> None:
        if self._progress is not None and self._task is not None:
            s = self.state
            self._progress.update(self._task, total=max(s.total, 1), completed=s.done)

    def elapsed(self) -> float:
        return self._clock() - self._t0


_size = size_text


def _console_colour(color: bool | None) -> dict[str, Any]:
    """rich Console arguments for ``--color`` (None: rich decides, honouring NO_COLOR)."""
    if color is None:
        return {}
    return {"force_terminal": True} if color else {"no_color": True}


def render_summary(result: IngestResult, seconds: float, color: bool | None = None) -> None:
    """Print the summary table, then one line per failed file and collision."""
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False, soft_wrap=True, **_console_colour(color))
    c = result.counts()
    table = Table(title="ingest summary", show_header=True, header_style="bold")
    table.add_column("what")
    table.add_column("count", justify="right")
    rows = [
        ("source files", str(c["files"])),
        ("bytes read or known", _size(c["bytes"])),
        ("projected", str(c["ok"])),
        ("components", str(c["components"])),
        ("from cache", str(c["cached"])),
        ("duplicates (same bytes)", str(c["duplicate"])),
        ("cards without a module", str(c["empty"])),
        ("failed", str(c["failed"])),
        ("documents written", str(c["written"])),
        ("documents unchanged", str(c["unchanged"])),
        ("reviewed documents kept", str(c["kept_reviewed"])),
        ("id collisions", str(c["collisions"])),
        ("unreadable documents kept", str(c["kept_unreadable"])),
        ("not Risu files", str(c["not_risu"])),
    ]
    if c["evidence_kept"] or c["evidence_stale"]:  # replay verdicts carried over
        rows += [("replay verdicts kept", str(c["evidence_kept"])),
                 ("replay verdicts stale", str(c["evidence_stale"]))]
    if c["evidence_logged"]:  # reviewed documents re-projected, each a logged line
        rows += [("reviewed re-projected (logged)", str(c["evidence_logged"]))]
    for what, count in rows:
        table.add_row(what, count)
    console.print(table)
    rate = c["bytes"] / seconds if seconds > 0 else 0.0
    console.print(f"{c['files']} files in {seconds:.2f} s ({_size(rate)}/s)")
    console.print(result.why_documents(), markup=False)
    err = Console(stderr=True, highlight=False, soft_wrap=True, **_console_colour(color))
    for s in result.failures:
        err.print(f"failed: {s.error}", markup=False)
    for line in result.collisions:
        err.print(f"collision: {line}", markup=False)
    for line in result.kept_unreadable:
        err.print(f"kept: {line}", markup=False)
    for line in result.notices:
        err.print(f"notice: {line}", markup=False)
    for line in result.evidence_stale:
        err.print(f"stale: {line}", markup=False)
    for line in result.evidence_logged:
        err.print(f"evidence: {line}", markup=False)
    for s in result.sources:
        if s.duplicate_of:
            console.print(f"duplicate: {s.path} = {s.duplicate_of}", markup=False)
