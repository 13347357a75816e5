"""``risutools replay run``: the reference simulation a component's capabilities select
(the context cutter, the monitor), its report as JSON + Markdown + HTML, and with
``--update`` the verdict recorded in the document."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any, ClassVar

from risutools.catalog.catalog import refuse_outside_own_catalog
from risutools.catalog.evidence import evidence_writer
from risutools.commands.outputs import implicit_inputs, report_renderings, report_replaces
from risutools.contract.schema import mc100
from risutools.contract.validate import validate_document
from risutools.errors import Code, DocumentError
from risutools.replay.api import RunOutcome, report_paths, run_component
from risutools.replay.component import load_component
from risutools.replay.verdicts import PASSED
from risutools.settings.config import resolve_settings
from risutools.targets import check_target

#: a file the command reads (cli asks it): a report in replays/ is written again
reads_file = report_replaces
#: the renderings written next to the report (cli asks it)
writes = report_renderings

@dataclass(frozen=True)
class Options:
    component: str
    fixture: str
    config: str | None = None  # a file of replay keys, over the fixture's and the catalog's
    output: str | None = None

    def __post_init__(self) -> None:
        if self.output:
            for path in report_paths(self.output):  # (a .md/.html report path: refused)
                check_target(path, folder=False)
    update: bool = False


@dataclass
class Replayed:
    kind: ClassVar[str] = "replay-run"
    component: str
    outcome: RunOutcome

    def exit_code(self) -> int:
        """0 passed (or nothing to replay); 1 failed or nothing checked."""
        report = self.outcome.report
        return 0 if report is None or report["summary"]["verdict"] == PASSED else 1


def reads_before(params: dict[str, Any]) -> tuple[str, ...]:
    """What the command will read besides its command line, asked before it runs (it writes
    its reports as it runs): the catalog the document is in (its ``replay:`` section, and
    with ``--update`` its log), so ``-o`` never names a file of it (``transitions.ndjson``,
    another document: :func:`~risutools.commands.outputs.reads_file`)."""
    component = params.get("component")
    return implicit_inputs([component], None) if isinstance(component, str) else ()


def refuse_invalid_component(path: str) -> None:
    """A DocumentError (exit 2) naming the first schema error of the document at ``path``:
    nothing runs on a document that is not a valid matrix-component-v1 document."""
    cf = load_component(path)
    bad = [f for f in validate_document(cf.doc, file=path) if f.rule == mc100.id]
    if bad:
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        raise DocumentError(Code.INVALID_DOCUMENT, f"not a valid matrix-component-v1 document: "
                            f"{bad[0].message}{more}; see `risutools validate {shlex.quote(path)}`",
                            where=bad[0].pointer or "", path=path)


def run(opts: Options) -> Replayed:
    # (its reports go next to it, its --update writes it: never through a link out of the
    # catalog it is written in)
    refuse_outside_own_catalog(opts.component)
    refuse_invalid_component(opts.component)
    settings = resolve_settings(None, opts.component)  # the catalog's `replay:` section
    outcome = run_component(opts.component, opts.fixture, opts.config, opts.output, opts.update,
                            catalog_layer=settings.sections.get("replay"),
                            writer=evidence_writer("replay run --update"),
                            keep_rows=False)  # (the rows are in the files written)
    return Replayed(opts.component, outcome)
