"""Machine-readable findings: one JSON object, keys sorted, byte-stable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from risutools import __version__
from risutools.canonical import indented_text
from risutools.printable import json_text

if TYPE_CHECKING:
    from risutools.contract.validate import Result


def result_dict(result: Result) -> dict[str, Any]:
    out: dict[str, Any] = {
        "tool": "risutools",
        "version": __version__,
        "command": result.command,
        "summary": result.counts(),
        "findings": [f.to_dict() for f in result.findings],
        "documents": [
            {
                "file": d.file,
                "line": d.line,
                "component_id": d.component_id,
                "component_version": d.component_version,
                "sha256": d.sha256,
                "errors": sum(1 for f in d.findings if f.severity == "error"),
                "warnings": sum(1 for f in d.findings if f.severity == "warning"),
            }
            for d in result.documents
        ],
        "skipped": sorted(result.skipped),
    }
    if result.same:  # (links to a file already read: ``link -> file``; none, no key)
        out["links_read_once"] = sorted(result.same)
    if result.command == "verify":
        out["verifications"] = [
            {
                "file": v.file, "line": v.line, "component_id": v.component_id,
                "pointer": v.pointer, "source": v.source, "status": v.status,
                "detail": v.detail,
            }
            for v in result.verifications
        ]
    return out


def render_json(result: Result) -> str:
    """``json.dumps(result_dict(result), ensure_ascii=False, sort_keys=True, indent=2)``,
    written by orjson where its bytes are those (:func:`~risutools.canonical.indented_text`),
    every unprintable character escaped (:func:`~risutools.printable.json_text`)."""
    return json_text(indented_text(result_dict(result), indent=2)[:-1]) + "\n"
