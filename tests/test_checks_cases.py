"""One generic test for every check's cases (``risutools/checks/cases/<ID>.yaml``).

A document rule's case is a change to the seed document; a module finding's case is
a module; a catalog check's case is a small catalog (documents as changes to the seed,
transition log lines, approval records, a configuration), reviewed with ``review``; a
gate's case is such a catalog and a target, and the gate's verdict on the first document; a
load check's case is a path (a file's name and bytes, or a path of a kind), loaded; a verify
check's case is the seed document changed, with a source store and replays/, verified.
A replay invariant's case is a conversation replayed through the reference cutter and
monitor, observed as its turns say.
A firing case must make exactly that check fire (document rules: it alone, at the
expected pointer and severity, with a one-line "what; fix" message); a quiet case (a
near miss) must keep it quiet."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from harness import ROOT
from replay_cases import fail_report, replay_verdicts

from risutools.analysis import analyze
from risutools.checks.examples import CASES_DIR, load_cases
from risutools.commands.checks import every_check as all_checks
from risutools.contract.loaders import load_documents
from risutools.contract.validate import validate_document, validate_paths
from risutools.contract.verify import verify_paths
from risutools.formats.model import Anomaly, AssetInfo, Module
from risutools.settings.config import Settings, load_settings_file

SEED = json.loads((ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json")
                  .read_text(encoding="utf-8"))
# scopes whose cases this test can run alone
RUNNABLE = ("document", "module", "catalog", "promotion", "load", "verify", "replay")
CHECKS = all_checks()
CASE_IDS = sorted(p.stem for p in CASES_DIR.glob("*.yaml"))


def _tokens(pointer: str) -> list[str]:
    assert pointer.startswith("/"), pointer
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _parent(doc: Any, pointer: str) -> tuple[Any, Any]:
    *path, last = _tokens(pointer)
    node = doc
    for t in path:
        node = node[int(t)] if isinstance(node, list) else node[t]
    return node, (int(last) if isinstance(node, list) else last)


def apply_change(case: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(SEED)
    for pointer, value in (case.get("set") or {}).items():
        node, key = _parent(doc, pointer)
        node[key] = value
    for pointer, value in (case.get("append") or {}).items():
        node, key = _parent(doc, pointer)
        node[key].append(value)
    for pointer in case.get("delete") or []:
        node, key = _parent(doc, pointer)
        del node[key]
    return doc


def config(case: dict[str, Any], tmp: Path) -> Settings:
    if "config" not in case:
        return Settings()
    p = tmp / ".risutools.yaml"
    p.write_text(json.dumps(case["config"]), encoding="utf-8")
    return load_settings_file(p)


def module(case: dict[str, Any]) -> Module:
    assets = [AssetInfo(i, a["name"], "", a["ext"], size=a["size"],
                        head=bytes.fromhex(a["head_hex"]))
              for i, a in enumerate(case.get("assets") or [])]
    anomalies = [Anomaly(a["code"], a["where"], a["message"])
                 for a in case.get("anomalies") or []]
    # a preset or a .charx's module.risum: ``component_type`` and the ``card`` facts
    return Module(case["module"], component_type=case.get("component_type", "module"),
                  assets=assets, anomalies=anomalies, card=case.get("card"))


def _base(value: Any, base: str) -> Any:
    """``$BASE`` -> the first document's base hash, anywhere in ``value``."""
    if isinstance(value, str):
        return base if value == "$BASE" else value
    if isinstance(value, list):
        return [_base(v, base) for v in value]
    if isinstance(value, dict):
        return {k: _base(v, base) for k, v in value.items()}
    return value


def catalog_findings(case: dict[str, Any], root: Path) -> list[Any]:
    """Write the case's catalog under ``root`` and review it: every finding reported
    (``base_log``: the base branch's log, lines as for ``log``, given beside the catalog;
    ``command: validate``: the catalog's folder validated instead)."""
    from risutools.catalog.catalog import Catalog
    from risutools.catalog.review import review_catalog

    write_catalog(case, root)
    if case.get("command") == "validate":  # a check validate alone runs (review: its RV)
        from risutools.settings.config import resolve_settings

        return validate_paths([root], resolve_settings(None, root)).findings
    base = None
    if "base_log" in case:
        base = root.parent / "base.ndjson"
        base.write_text("".join(x + "\n" for x in case["base_log"]), "utf-8", newline="")
    return review_catalog(Catalog.open(root), jobs=1, base_log=base).findings


def write_catalog(case: dict[str, Any], root: Path) -> None:
    """The case's small catalog under ``root``: documents, log, approvals, configuration,
    and ``files`` (catalog-relative path -> text: a replay report, a notes file)."""
    from risutools.settings.lifecycle import base_sha256

    root.mkdir()
    docs = [apply_change(d) for d in case["documents"]]
    files = _reports(case.get("files") or {}, docs, root.parent)
    for i, doc in enumerate(docs):
        (root / f"doc{i}.json").write_text(json.dumps(doc), encoding="utf-8")
    base = base_sha256(docs[0])
    if "log" in case:
        lines = [x if isinstance(x, str) else json.dumps(_base(x, base)) for x in case["log"]]
        (root / "transitions.ndjson").write_text("".join(x + "\n" for x in lines), "utf-8")
    if "approvals" in case:
        (root / "approvals").mkdir()
        for name, rec in case["approvals"].items():
            text = rec if isinstance(rec, str) else yaml.safe_dump(_base(rec, base))
            (root / "approvals" / name).write_text(text, encoding="utf-8")
    if "config" in case:
        (root / ".risutools.yaml").write_text(json.dumps(case["config"]), encoding="utf-8")
    for name, text in files.items():  # catalog-relative path -> text
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    if "facts" in case:  # an RV4xx/RV5xx case: each document's facts summary (or null)
        _write_facts(root, docs, case["facts"])


def _reports(files: dict[str, Any], docs: list[dict[str, Any]], tmp: Path) -> dict[str, str]:
    """``files`` (name -> text) with each ``{replay: FIXTURE}`` made the report `replay run`
    writes for the first document over ``fixtures/replay/FIXTURE`` (``verdict``: its
    summary's verdict rewritten and its ``report_sha256`` worked out again, as a forger
    would), and each ``"@report"`` digest in the documents made that report's."""
    from risutools.canonical import indented, self_hash, sha256_prefixed
    from risutools.replay.api import run_component

    out: dict[str, str] = {}
    for name, spec in files.items():
        if not isinstance(spec, dict):
            out[name] = spec
            continue
        work = tmp / f"report-{len(out)}"
        work.mkdir()
        (work / "doc.json").write_text(json.dumps(docs[0]), encoding="utf-8")
        run_component(work / "doc.json", ROOT / "fixtures" / "replay" / spec["replay"],
                      output=work / "r.json")
        data = (work / "r.json").read_bytes()
        if "verdict" in spec:
            rep = json.loads(data)
            assert spec["verdict"] == "failed"  # (as the writer says it: replay_cases)
            fail_report(rep)
            rep["report_sha256"] = self_hash(rep)
            data = indented(rep)
        out[name] = data.decode("utf-8")
        for doc in docs:
            for ref in doc["provenance"]["source_refs"]:
                if ref.get("sha256") == "@report":
                    ref["sha256"] = sha256_prefixed(data)
    return out


def _write_facts(root: Path, docs: list[dict[str, Any]], facts: list[Any]) -> None:
    """``facts/<component_id>.json`` for each document with facts: the given fields, and
    the format, id and source digest ingest writes."""
    from risutools.catalog.render import safe_name

    (root / "facts").mkdir()
    for doc, f in zip(docs, facts, strict=False):
        if f is None:
            continue
        ref = doc["provenance"]["source_refs"][0]
        body = {"facts": "component-facts-v1", "component_id": doc["component_id"],
                "source_sha256": ref["sha256"], **f}
        name = safe_name(doc["component_id"]) + ".json"
        (root / "facts" / name).write_text(json.dumps(body), encoding="utf-8")


def gate_verdict(cid: str, case: dict[str, Any], root: Path) -> str:
    """Write the case's small catalog (documents, ``log``, ``approvals``, ``config`` as for a
    catalog check, and ``files``: catalog-relative path -> text), run every gate of moving
    the first document to ``case["target"]``: the verdict of gate ``cid``."""
    from risutools.catalog.catalog import Catalog
    from risutools.catalog.promote import plan
    from risutools.settings import lifecycle

    write_catalog(case, root)
    cat = Catalog.open(root)
    [entry] = [e for e in cat.entries() if e.path.name == "doc0.json"]
    kind = "runtime" if case["target"] in lifecycle.RUNTIME_STATES else \
        "publish" if case["target"] == lifecycle.PUBLISHED else "status"
    verdicts = {v.gate: v.verdict for v in plan(cat, entry, case["target"], kind=kind).verdicts}
    return verdicts[CHECKS[cid].title]


def load_findings(case: dict[str, Any], tmp: Path) -> list[Any]:
    """Make the case's path (``file``: its name, ``text``/``hex`` bytes, ``kind``) and load it."""
    spec = case["file"]
    p = tmp / spec["name"]
    data = bytes.fromhex(spec["hex"]) if "hex" in spec else spec.get("text", "").encode()
    kind = spec.get("kind", "file")
    if kind == "file":
        p.write_bytes(data)
    elif kind == "link":
        (tmp / "target").write_bytes(data)
        p.symlink_to(tmp / "target")
    elif kind == "dangling":
        p.symlink_to(tmp / "nothing")
    elif kind == "fifo":
        os.mkfifo(p)
    return load_documents(p).problems


def verify_findings(case: dict[str, Any], tmp: Path) -> list[Any]:
    """Verify the case's document (the seed, changed) with its source ``store`` and the
    catalog's ``replays`` (file name -> text)."""
    (tmp / "cat").mkdir()
    doc = tmp / "cat" / "doc.json"
    changed = apply_change(case)
    replays = _reports(case.get("replays") or {}, [changed], tmp)
    doc.write_text(json.dumps(changed), encoding="utf-8")
    for folder in ("store", "replays"):
        if folder in case:
            where = tmp / "cat" / folder if folder == "replays" else tmp / folder
            where.mkdir()
            for name, text in (replays if folder == "replays" else case[folder]).items():
                (where / name).write_text(text, encoding="utf-8")
    return verify_paths([doc], tmp / "store" if "store" in case else None).findings


FILE_RUNNERS = {"load": load_findings, "verify": verify_findings}


def _cases(kind: str) -> list[tuple[str, int]]:
    out = []
    for cid in CASE_IDS:
        data = load_cases(cid) or {}
        out += [(cid, i) for i in range(len(data.get(kind) or []))]
    return out


def test_every_runnable_check_has_cases_and_every_file_a_check() -> None:
    runnable = {c.id for c in CHECKS.values() if c.scope in RUNNABLE}
    assert set(CASE_IDS) == runnable
    for cid in CASE_IDS:
        data = load_cases(cid)
        assert data is not None and set(data) == {"fire", "quiet"}, cid
        assert data["fire"] and data["quiet"], cid
        for case in data["fire"] + data["quiet"]:
            assert case.get("about"), cid


@pytest.mark.parametrize(("cid", "i"), _cases("fire"))
def test_case_fires(cid: str, i: int, tmp_path: Path) -> None:
    case = (load_cases(cid) or {})["fire"][i]
    want = case["expect"]
    if CHECKS[cid].scope == "document":
        [f] = validate_document(apply_change(case), config=config(case, tmp_path))
        assert (f.rule, f.pointer, f.severity) == (cid, want["pointer"], want["severity"])
        what, _, fix = f.message.partition("; ")  # one sentence: what is wrong; what to do
        assert what and fix and "\n" not in f.message, f.message
    elif CHECKS[cid].scope == "catalog":
        fired = [f for f in catalog_findings(case, tmp_path / "cat") if f.rule == cid]
        assert fired and fired[0].severity == want["severity"], cid
        assert all(f.message and "\n" not in f.message and f.file for f in fired), cid
    elif CHECKS[cid].scope == "promotion":
        assert gate_verdict(cid, case, tmp_path / "cat") == want.get("verdict", "fail"), cid
    elif CHECKS[cid].scope in FILE_RUNNERS:
        fired = [f for f in FILE_RUNNERS[CHECKS[cid].scope](case, tmp_path) if f.rule == cid]
        assert fired and fired[0].severity == want["severity"], cid
        assert fired[0].line == want.get("line", fired[0].line), cid
        assert all(f.message and "\n" not in f.message and f.file for f in fired), cid
    elif CHECKS[cid].scope == "replay":
        verdicts = replay_verdicts(case)
        failed = {k for k, v in verdicts.items() if v.failures}
        assert failed == set(want.get("failed", [cid])), failed
        v = verdicts[cid]
        assert v.first_request == want["request"] and v.first_detail, v
    else:
        fired = [f for f in analyze(module(case)).findings if f.rule == cid]
        assert fired and all(f.evidence for f in fired), cid
        assert fired[0].severity == want["severity"]


@pytest.mark.parametrize(("cid", "i"), _cases("quiet"))
def test_case_stays_quiet(cid: str, i: int, tmp_path: Path) -> None:
    case = (load_cases(cid) or {})["quiet"][i]
    if CHECKS[cid].scope == "document":
        assert validate_document(apply_change(case), config=config(case, tmp_path)) == []
    elif CHECKS[cid].scope == "catalog":
        assert not [f for f in catalog_findings(case, tmp_path / "cat") if f.rule == cid]
    elif CHECKS[cid].scope == "promotion":
        want = (case.get("expect") or {}).get("verdict", "pass")
        assert gate_verdict(cid, case, tmp_path / "cat") == want, cid
    elif CHECKS[cid].scope in FILE_RUNNERS:
        assert not [f for f in FILE_RUNNERS[CHECKS[cid].scope](case, tmp_path) if f.rule == cid]
    elif CHECKS[cid].scope == "replay":
        assert replay_verdicts(case)[cid].verdict == "passed"  # checked, and it held
    else:
        assert not [f for f in analyze(module(case)).findings if f.rule == cid]


def test_the_seed_itself_is_quiet() -> None:
    assert validate_document(copy.deepcopy(SEED)) == []
