"""A curator notes file to start from (``risutools notes init COMPONENT``).

Every field a curator may fill (the notes-v1 fields, walked from the one field table
:data:`risutools.projection.notes._SPEC`, so a new field shows up here by itself) is written
as a commented line: the field, the document's current value where it has one (so a field
uncommented as it stands changes nothing), and what it takes.  Only ``notes: notes-v1`` is
live: the file as written is valid notes-v1, and a field the curator uncomments without
filling (``""``) is refused by the notes reader, never applied.

Values come from a catalog document (untrusted): each is written as a JSON string or list
(valid YAML), with every character that is not printable -- line breaks YAML knows
(U+0085, U+2028, U+2029) included -- escaped, so no value leaves its comment.
"""

from __future__ import annotations

import json
import re
from typing import Any

from risutools.projection.notes import _SPEC

#: what each kind of field takes (the comment after it)
_HINTS: dict[str, str] = {
    "sentence": "a sentence",
    "sentences": "a list of sentences (replaces the generated list)",
    "map": "name: sentence, merged key by key",
    "bool": "true or false",
    "caps": "capability names (replaces the generated list)",
    "tags": "kebab-case tags (replaces the generated list)",
}
#: a notes field's path -> where its value lives in the document (the rest: the same path)
_DOC_PATH: dict[str, tuple[str, ...]] = {"idea_layers": ("payload", "idea_layers")}
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


def _escape(m: re.Match[str]) -> str:
    c = m.group(0)
    if c.isprintable():
        return c
    return f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}"


def yaml_value(value: Any) -> str:
    """``value`` as one line of YAML (JSON flow), every unprintable character escaped."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return _UNPRINTABLE.sub(_escape, text)


def _now(doc: dict[str, Any], path: tuple[str, ...]) -> Any:
    if path == ("slug",):  # the last part of ``<type>.<origin>.<key>.<slug>``
        parts = str(doc.get("component_id", "")).split(".", 3)
        return parts[3] if len(parts) == 4 else None
    head = _DOC_PATH.get(path[0], (path[0],))
    cur: Any = doc
    for k in (*head, *path[1:]):
        if not isinstance(cur, dict) or k not in cur:
            return None
        cur = cur[k]
    return cur


def _example(spec: Any, now: Any) -> tuple[str, str]:
    """(the value written after the field, the comment saying what it takes)."""
    kind = spec[0] if isinstance(spec, tuple) else spec
    if kind == "enum":
        return yaml_value(now if now in spec[1:] else spec[1]), " | ".join(spec[1:])
    if kind == "re":
        return yaml_value(now if isinstance(now, str) else ""), str(spec[2])
    if kind == "bool":
        return yaml_value(now if isinstance(now, bool) else False), _HINTS[kind]
    if kind in ("sentences", "caps", "tags"):
        return yaml_value(now if isinstance(now, list) else []), _HINTS[kind]
    if kind == "map":
        return yaml_value(now if isinstance(now, dict) else {}), _HINTS[kind]
    return yaml_value(now if isinstance(now, str) else ""), _HINTS[kind]


def _fields(spec: dict[str, Any], doc: dict[str, Any], path: tuple[str, ...],
            out: list[str]) -> None:
    pad = "  " * len(path)
    for key, sub in spec.items():
        here = (*path, key)
        if here == ("notes",) or here[:2] == ("payload", "idea_layers"):
            continue  # (live below; idea_layers: the top-level form, given once)
        if isinstance(sub, dict):
            out.append(f"# {pad}{key}:")
            _fields(sub, doc, here, out)
            continue
        value, hint = _example(sub, _now(doc, here) if here[0] != "for" else None)
        out.append(f"# {pad}{key}: {value}  # {hint}")


def scaffold(doc: dict[str, Any]) -> str:
    """The text of a new notes file for the component ``doc`` describes."""
    cid = yaml_value(doc.get("component_id", ""))
    lines = [
        f"# Curator notes (notes-v1) for {cid}, written by `risutools notes init`.",
        "# Uncomment a field (and the lines of the fields it is under) and fill it: notes win",
        "# over the generated text, lists replace the generated list, maps merge key by key.",
        "# Each value shown is the document's now; `ingest` applies the notes on its next run",
        "# (pending review: a logged `evidence` line, approvals in flight go stale; approved",
        "# or later: kept as reviewed).",
        "notes: notes-v1",
    ]
    _fields(_SPEC, doc, (), lines)
    return "\n".join(lines) + "\n"
