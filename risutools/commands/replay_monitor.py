"""``risutools replay monitor``: the context monitor alone (no cutter) over a fixture: its
level and alerts per request; with ``-o`` the report as JSON + Markdown + HTML."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from risutools.fsio import check_target
from risutools.replay.api import run_monitor, write_report_files


@dataclass(frozen=True)
class Options:
    fixture: str
    config: str | None = None
    output: str | None = None

    def __post_init__(self) -> None:
        if self.output:
            check_target(self.output, folder=False)


@dataclass
class Monitored:
    kind: ClassVar[str] = "replay-monitor"
    report: dict[str, Any]

    def exit_code(self) -> int:
        return 0


def run(opts: Options) -> Monitored:
    report = run_monitor(opts.fixture, opts.config)
    if opts.output:
        write_report_files(report, Path(opts.output))
    return Monitored(report)
