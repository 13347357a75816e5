"""The static analyser's checks: every RA finding is one function here, decorated with
``@check(id, severity, "module", title)`` (:mod:`risutools.checks.registry`); its docstring
is its documentation (the summary, a ``Why:`` and a ``Fix:`` paragraph: the docs' findings
table and ``risutools rule`` are made from it) and its body reads what the walk saw
(:class:`~risutools.analysis.seen.Seen`) and yields a :class:`~risutools.analysis.seen.Hit`
per finding.  One module per family: ``code`` (RA1xx), ``regex`` (RA2xx), ``html``
(RA3xx), ``assets`` (RA4xx), ``legacy_js`` (RA5xx), ``unreadable`` (RA6xx), ``toggles``
(RA7xx), ``fields`` (RA8xx, RA900).  Cases: ``risutools/checks/cases/<ID>.yaml``.
"""

from __future__ import annotations

from risutools.analysis.checks import (
    assets,
    code,
    fields,
    html,
    legacy_js,
    regex,
    toggles,
    unreadable,
)
from risutools.checks.registry import REGISTRY, Check, sort_key

#: the modules that declare the checks (imported above, so every check is registered)
FAMILIES = (code, regex, html, assets, legacy_js, unreadable, toggles, fields)


def module_checks() -> list[Check]:
    """The checks of scope ``module`` (what :func:`risutools.analysis.analyze` runs), in id
    order."""
    return sorted((c for c in REGISTRY.values() if c.scope == "module"), key=sort_key)
