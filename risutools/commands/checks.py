"""Every check of every engine, imported: for what must show them all (``risutools rule``,
the docs' tables, the SARIF rule list of a command's report, the generated id index).

The engines register their checks when they are imported; this module imports each
engine's checks so that :func:`every_check` holds all of them.  A new engine with checks
adds its module to :data:`UNITS` (a test fails when an id of the index is not here).
"""

from __future__ import annotations

from types import ModuleType

from risutools.checks import analysis as _analysis_checks
from risutools.checks import gates as _gate_checks
from risutools.checks import replay as _replay_checks
from risutools.checks import review as _review_checks
from risutools.checks.registry import Check, registered_checks
from risutools.contract import checks_catalog as _contract_catalog
from risutools.contract import checks_load as _contract_load
from risutools.contract import rules as _contract_rules
from risutools.contract import schema as _contract_schema
from risutools.contract import verify as _contract_verify

#: the modules that declare checks, one (or more) an engine
UNITS: tuple[ModuleType, ...] = (_contract_load, _contract_schema, _contract_rules,
                                 _contract_catalog, _contract_verify, _analysis_checks,
                                 _replay_checks, _gate_checks, _review_checks)
#: family -> the docs page whose table lists it (``python -m risutools.commands.docs``)
DOC_PAGES = {"MC": "docs/contract.md", "RA": "docs/analysis.md", "R": "docs/replay.md",
             "M": "docs/replay.md", "G": "docs/catalog.md", "RV": "docs/catalog.md"}
#: command -> the families it reports (the SARIF rule list of its reports)
FAMILIES_BY_COMMAND = {"validate": ("MC",), "verify": ("MC",), "analyze": ("RA",),
                       "review": ("MC", "RV")}


def every_check() -> dict[str, Check]:
    """Every check of the toolkit, sorted by id."""
    return registered_checks()


def for_command(command: str) -> list[Check]:
    """The checks a command reports, in id order (its SARIF rule list)."""
    fams = FAMILIES_BY_COMMAND.get(command, ())
    return [c for c in every_check().values() if c.family in fams]
