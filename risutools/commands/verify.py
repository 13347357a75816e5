"""``risutools verify``: the digests a document records (prompt, source files in a source
store, replay reports), MC200-MC203; what was not at hand is said, never passed."""

from __future__ import annotations

from dataclasses import dataclass

from risutools.checks.registry import check_selection, for_command
from risutools.commands.outputs import implicit_inputs
from risutools.commands.outputs import reads_file as reads_file  # (cli asks it)
from risutools.commands.validate import Validation, named_paths
from risutools.contract.result import no_store_note
from risutools.contract.rules import mc200, mc201
from risutools.contract.schema import mc100
from risutools.contract.verify import verify_paths
from risutools.settings.config import resolve_settings

#: the document checks verify runs besides its own (a document that is not an object, the
#: digests' form and the prompt digest)
RUNS = (mc100, mc200, mc201)


@dataclass(frozen=True)
class Options:
    """What ``verify`` was asked (the command line's values, checked)."""

    paths: tuple[str, ...]
    sources: str | None = None
    require_sources: bool = False
    content_scan: bool = True
    config_file: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    strict: bool = False
    skip_non_documents: bool = False
    allow_config_sources_outside: bool = False

    def __post_init__(self) -> None:
        check_selection("verify", self.select, self.ignore, also=RUNS)


def run(opts: Options) -> Validation:
    cfg = resolve_settings(opts.config_file, opts.paths, select=opts.select, ignore=opts.ignore,
                           sources=opts.sources, exclude=opts.exclude)
    result = verify_paths(
        opts.paths, None, config=cfg, require_sources=opts.require_sources,
        content_scan=opts.content_scan, rule_filter=cfg.rule_filter(),
        skip_non_documents=opts.skip_non_documents,
        allow_config_sources_outside=opts.allow_config_sources_outside,
    )
    result.strict = opts.strict
    result.checks = for_command("verify")
    return Validation(result, note=no_store_note(result),
                      reads=lambda: implicit_inputs(named_paths(opts.paths), cfg))
