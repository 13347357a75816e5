"""Every check of every engine, imported: for what must show them all (``risutools rule``,
the docs' tables, the SARIF rule list of a command's report, the generated id index).

The engines register their checks when they are imported; this module imports each
engine's checks so that :func:`every_check` holds all of them.  A new engine with checks
adds its module to :data:`UNITS` (a test fails when an id of the index is not here).
"""

from __future__ import annotations

from types import ModuleType

from risutools.analysis import checks as _analysis_checks
from risutools.catalog import gates as _gate_checks
from risutools.catalog import interaction_checks as _interaction_checks
from risutools.catalog import lineage_checks as _lineage_checks
from risutools.catalog import review_checks as _review_checks
from risutools.checks import registry
from risutools.checks.registry import Check, registered_checks
from risutools.contract import checks_catalog as _contract_catalog
from risutools.contract import checks_load as _contract_load
from risutools.contract import rules as _contract_rules
from risutools.contract import schema as _contract_schema
from risutools.contract import verify as _contract_verify
from risutools.replay import invariants as _cutter_invariants
from risutools.replay import monitor_invariants as _monitor_invariants

#: the modules that declare checks, one (or more) an engine
UNITS: tuple[ModuleType, ...] = (_contract_load, _contract_schema, _contract_rules,
                                 _contract_catalog, _contract_verify, *_analysis_checks.FAMILIES,
                                 _cutter_invariants, _monitor_invariants, _gate_checks,
                                 _review_checks, _interaction_checks, _lineage_checks)


def every_check() -> dict[str, Check]:
    """Every check of the toolkit, sorted by id."""
    return registered_checks()


def for_command(command: str) -> dict[str, Check]:
    """The checks a command reports, by id (its SARIF rule list, its statistics' titles),
    every engine's checks imported (a command asks the registry itself, having imported the
    engines it runs; a test holds the two equal)."""
    return registry.for_command(command)
