"""``risutools replay monitor [DOC]``: the context monitor alone (no cutter) over a fixture:
its level and alerts per request, and the text each alert injects; with ``DOC`` the report is
tied to that document by digest (as ``replay run``); with ``-o`` the report as JSON +
Markdown + HTML."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from risutools.commands.outputs import implicit_inputs, report_renderings, report_replaces
from risutools.commands.replay_run import refuse_invalid_component
from risutools.replay.api import catalog_section, report_paths, run_monitor, write_report_files
from risutools.replay.component import load_component
from risutools.targets import check_target

#: a file the command reads (cli asks it): a report in replays/ is written again
reads_file = report_replaces
#: the renderings written next to the report (cli asks it)
writes = report_renderings

@dataclass(frozen=True)
class Options:
    fixture: str
    config: str | None = None
    output: str | None = None
    component: str | None = None  # the monitor's document (the report names its digest)

    def __post_init__(self) -> None:
        if self.output:
            for path in report_paths(self.output):  # (a .md/.html report path: refused)
                check_target(path, folder=False)


@dataclass
class Monitored:
    kind: ClassVar[str] = "replay-monitor"
    report: dict[str, Any]

    def exit_code(self) -> int:
        return 0


def reads_before(params: dict[str, Any]) -> tuple[str, ...]:
    """The catalog the command will read its ``replay:`` section from (the document's,
    else the fixture's), asked before it runs: ``-o`` never names a file of it."""
    start = params.get("component") or params.get("fixture")
    return implicit_inputs([start], None) if isinstance(start, str) else ()


def run(opts: Options) -> Monitored:
    doc = None
    if opts.component is not None:
        refuse_invalid_component(opts.component)
        doc = load_component(opts.component).doc
    # the catalog's configuration, found from the first path given (the document, else the
    # fixture): validated as every command validates it, its `replay:` section the layer
    # under the fixture's own config and --config (as `replay run`)
    start = Path(opts.component or opts.fixture)
    report = run_monitor(opts.fixture, opts.config, doc, streamed=True,
                         catalog_layer=catalog_section(start), layer_from=start.parent)
    if opts.output:
        write_report_files(report, Path(opts.output))
    return Monitored(report)
