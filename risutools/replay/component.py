"""Read a component document and write a replay's result back into it.

``update_component`` sets ``projection.replay_status`` and
``provenance.availability_verdict`` together (MC304: passed -> available,
failed -> unavailable) and adds or replaces the ``source_refs`` entry
``{source_id: "replay:<fixture name>", source_version: "replay-report-v1",
sha256: "sha256:<sha256 of the report file bytes>"}`` (MC203), appended after
the existing entries so ``source_refs[0]`` stays the module's own source
(MC102).  The write is atomic and compare-and-swap against the bytes read.
The file keeps its format: JSON with its indentation (detected from the
first indented line) and ``ensure_ascii=False``; YAML through ``safe_dump``
with ``allow_unicode`` and the original key order (comments are not kept).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from risutools.errors import Code, DocumentError
from risutools.fsio import atomic_write
from risutools.jsonlines import detect_indent, patch_values
from risutools.jsonplaces import PARSE_INT
from risutools.safeio import read_or_raise
from risutools.settings.catalog import REPLAY_REPORT
from risutools.targets import os_error_line
from risutools.values import MAX_DOCUMENT_BYTES, decode_text, parse_value
from risutools.yamlpatch import patch_yaml_values

REPLAY_SOURCE_VERSION = REPLAY_REPORT


@dataclass
class ComponentFile:
    path: Path
    raw: bytes
    doc: dict[str, Any]
    fmt: str  # "json" | "yaml"
    indent: int = 1

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()


def load_component(path: str | Path) -> ComponentFile:
    p = Path(path)
    raw = read_or_raise(p, MAX_DOCUMENT_BYTES, DocumentError)
    text = decode_text(raw, str(p))
    suffix = p.suffix.lower()
    if suffix in (".ndjson", ".jsonl"):
        raise DocumentError(
            Code.UNSUPPORTED_DOCUMENT,
            "replay runs on one document file (.json or .yaml), not an NDJSON catalog",
            path=str(p),
        )
    fmt = "yaml" if suffix in (".yaml", ".yml") else "json"
    doc = parse_value(text, str(p), fmt)
    if not isinstance(doc, dict):
        raise DocumentError(Code.BAD_DOCUMENT,
                            "a component document must be a mapping", path=str(p))
    cid = doc.get("component_id")
    if not isinstance(cid, str) or not cid:
        raise DocumentError(
            Code.BAD_DOCUMENT, "missing component_id", where="/component_id", path=str(p)
        )
    return ComponentFile(p, raw, doc, fmt, detect_indent(text) if fmt == "json" else 2)


def check_recordable(doc: dict[str, Any]) -> None:
    """Refuse (before anything runs) a document ``--update`` could not record into."""
    for key in ("projection", "provenance"):
        if not isinstance(doc.get(key), dict):
            raise DocumentError(
                Code.BAD_DOCUMENT,
                f"--update needs a '{key}' mapping to record the replay in",
                where=f"/{key}",
            )


def updated_document(
    doc: dict[str, Any], *, passed: bool, fixture_name: str, report_sha256: str
) -> dict[str, Any]:
    """A copy of ``doc`` carrying the replay result (see the module docstring)."""
    check_recordable(doc)
    new = copy.deepcopy(doc)
    proj = new["projection"]
    prov = new["provenance"]
    proj["replay_status"] = "passed" if passed else "failed"
    prov["availability_verdict"] = "available" if passed else "unavailable"
    refs = prov.get("source_refs")
    if not isinstance(refs, list):
        refs = []
        prov["source_refs"] = refs
    entry = {
        "source_id": f"replay:{fixture_name}",
        "source_version": REPLAY_SOURCE_VERSION,
        "sha256": report_sha256,
    }
    for i, ref in enumerate(refs):
        if isinstance(ref, dict) and ref.get("source_id") == entry["source_id"]:
            refs[i] = entry
            break
    else:
        refs.append(entry)
    return new


BOM = b"\xef\xbb\xbf"


def dump_component(cf: ComponentFile, doc: dict[str, Any]) -> bytes:
    """``doc`` in the file's format.  JSON: only the values that changed are rewritten,
    where they stand (:func:`risutools.jsonlines.patch_values`: indentation, line ends, a
    byte-order mark, escapes and number spellings kept); a change of shape (a key added)
    writes the document whole with the file's indentation.  YAML likewise: only the
    scalars that changed, where they stand (:func:`risutools.yamlpatch.patch_yaml_values`:
    comments, key order, indentation and quoting kept); a change of shape, or a value that
    is no plain or quoted scalar, writes it whole through ``safe_dump`` (comments lost)."""
    if cf.fmt == "yaml":
        import yaml  # (here, not at import: ~30 ms of every command's start-up)

        bom = cf.raw.startswith(BOM)
        try:
            was = cf.raw[len(BOM):].decode("utf-8") if bom else cf.raw.decode("utf-8")
            patched = patch_yaml_values(was, _yaml_value(was), doc, _yaml_value)
        except (UnicodeDecodeError, DocumentError):
            patched = None
        if patched is not None:
            return (BOM if bom else b"") + patched.encode("utf-8")
        text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, default_flow_style=False)
        return text.encode("utf-8")
    bom = cf.raw.startswith(BOM)
    try:
        was = cf.raw[len(BOM):].decode("utf-8") if bom else cf.raw.decode("utf-8")
        patched = patch_values(was, json.loads(was, parse_int=PARSE_INT), doc)
    except (UnicodeDecodeError, ValueError, RecursionError):
        patched = None
    if patched is not None:
        return (BOM if bom else b"") + patched.encode("utf-8")
    # written whole: the file's indentation (tabs or spaces), line ends, final newline and
    # byte-order mark kept (escapes and number spellings cannot be)
    tabs = any(line.startswith(b"\t") for line in cf.raw.splitlines()[1:2])
    text = json.dumps(doc, ensure_ascii=False, indent="\t" if tabs else cf.indent)
    if cf.raw.endswith(b"\n"):
        text += "\n"
    if b"\r\n" in cf.raw:
        text = text.replace("\n", "\r\n")
    return (BOM if bom else b"") + text.encode("utf-8")


def _yaml_value(text: str) -> Any:
    """The one document of a YAML text, read as a catalog's documents are read (a
    :class:`DocumentError` for anything refused)."""
    return parse_value(text, "document", "yaml")


def write_component_update(
    cf: ComponentFile, *, passed: bool, fixture_name: str, report_sha256: str
) -> dict[str, Any]:
    """Write the updated document over ``cf.path`` (CAS on the bytes read); return it."""
    try:
        new = updated_document(
            cf.doc, passed=passed, fixture_name=fixture_name, report_sha256=report_sha256
        )
    except DocumentError as exc:
        raise exc.with_path(str(cf.path)) from None
    write_updated(cf, new)
    return new


def write_updated(cf: ComponentFile, new: dict[str, Any]) -> None:
    """``new`` over the file ``cf`` was read from, in its format (CAS on the bytes read)."""
    write_or_fail(cf.path, dump_component(cf, new), expect_sha256=cf.sha256)


def write_or_fail(path: Path, data: bytes | Iterable[bytes], *,
                  expect_sha256: str | None = None, sync_dir: bool = True) -> None:
    """``atomic_write`` (``data``: bytes, or its pieces in order) with operating-system
    failures as one-line :class:`RisuError`; ``sync_dir=False``: the caller fsyncs the
    folder (:func:`~risutools.fsio.fsync_directory`) once it has put its files there."""
    try:
        atomic_write(path, data, expect_sha256=expect_sha256, sync_dir=sync_dir)
    except OSError as exc:
        raise os_error_line(exc, path) from exc
