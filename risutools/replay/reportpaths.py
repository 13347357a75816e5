"""The names a replay report's three files take: the JSON report and its ``.md`` / ``.html``
renderings beside it.  Apart from the replay itself (:mod:`risutools.replay.api`) so that a
command which only asks whether an output would land on a report's rendering
(:mod:`risutools.commands.outputs`: ``validate``, ``review``, ``verify``...) does not load
the replay engine to know (28 modules, about a tenth of a one-file ``validate``'s start)."""

from __future__ import annotations

from pathlib import Path

from risutools.errors import UsageError
from risutools.pathnames import show_name


def report_paths(path: str | Path) -> tuple[Path, Path, Path]:
    """The JSON report's path and its ``.md`` / ``.html`` renderings next to it; a path that
    ends in ``.md`` or ``.html`` (any case: one file on a case-blind disk) is refused
    (``usage``, ``--output``): a rendering would be written over the JSON report."""
    p = Path(path)
    if p.suffix.lower() in (".md", ".html"):
        raise UsageError("--output", f"{show_name(str(p))} ends in {p.suffix}: the Markdown and "
                         "HTML renderings are written next to the JSON report under those "
                         "names; give the JSON report's path (.json)")
    return p, p.with_suffix(".md"), p.with_suffix(".html")
