"""SARIF 2.1.0 for code scanning (GitHub ``upload-sarif`` and other viewers).

One run; ``tool.driver.rules`` lists every contract rule (id, name, short and
full description, help, default level); each result has ``ruleId``,
``ruleIndex``, ``level``, ``message.text`` and, when the file is known, a
physical location whose ``artifactLocation.uri`` is relative to the working
directory (``uriBaseId: %SRCROOT%``) with ``region.startLine`` when the line is
known; the JSON pointer is a logical location.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    from risutools.contract.validate import Result

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/risutools/risutools/blob/main/docs/contract.md"


def _uri(file: str) -> str:
    return quote(PurePosixPath(file).as_posix(), safe="/")


def sarif_dict(result: Result) -> dict[str, Any]:
    from risutools import __version__
    from risutools.contract.rules import RULES

    ids = sorted(RULES)
    index = {rid: i for i, rid in enumerate(ids)}
    rules = []
    for rid in ids:
        r = RULES[rid]
        rules.append({
            "id": rid,
            "name": r.title,
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": f"{r.summary} Fix: {r.fix}"},
            "help": {"text": r.fix, "markdown": f"**{rid}** {r.summary}\n\nFix: {r.fix}"},
            "helpUri": f"{INFO_URI}#{rid.lower()}",
            "defaultConfiguration": {"level": "warning" if r.severity == "warning" else "error"},
        })
    results = []
    for f in result.findings:
        res: dict[str, Any] = {
            "ruleId": f.rule,
            "level": {"error": "error", "warning": "warning"}.get(f.severity, "note"),
            "message": {"text": f.message},
        }
        if f.rule in index:
            res["ruleIndex"] = index[f.rule]
        if f.file and not f.file.startswith("<"):
            phys: dict[str, Any] = {
                "artifactLocation": {"uri": _uri(f.file), "uriBaseId": "%SRCROOT%"},
            }
            if f.line:
                phys["region"] = {"startLine": f.line}
            loc: dict[str, Any] = {"physicalLocation": phys}
            if f.pointer:
                loc["logicalLocations"] = [{"fullyQualifiedName": f.pointer, "kind": "member"}]
            res["locations"] = [loc]
        results.append(res)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "risutools",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFO_URI,
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def render_sarif(result: Result) -> str:
    return json.dumps(sarif_dict(result), ensure_ascii=False, sort_keys=True, indent=2) + "\n"
