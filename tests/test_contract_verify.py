"""verify: prompt digests, source store lookups, replay reports, not-at-hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness import ROOT

from risutools.contract.result import not_checked
from risutools.contract.verify import verify_paths
from risutools.settings.config import load_settings

FX = ROOT / "fixtures" / "contract"
STORE = FX / "store"


def statuses(r) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for v in r.verifications:
        out.setdefault(v.file.rsplit("/", 1)[-1], []).append(v.status)
    return out


def test_verify_fixture_outcomes() -> None:
    r = verify_paths([FX / "verify"], STORE)
    assert statuses(r) == {
        "absent.json": ["not_at_hand"],
        "card-module.json": ["verified"],
        "mismatch.json": ["mismatch"],
        "stale-report.json": ["verified", "mismatch"],
        "verified.json": ["verified", "verified"],
    }
    sev = sorted((f.file.rsplit("/", 1)[-1], f.rule, f.severity) for f in r.findings)
    assert sev == [("absent.json", "MC202", "warning"), ("mismatch.json", "MC202", "error"),
                   ("stale-report.json", "MC203", "error")]
    assert "not verified: source not at hand" in next(f for f in r.findings
                                                   if f.severity == "warning").message
    assert r.exit_code() == 1


def test_require_sources_makes_absent_an_error(tmp_path: Path) -> None:
    shutil.copy(FX / "verify" / "absent.json", tmp_path / "absent.json")
    r = verify_paths([tmp_path / "absent.json"], STORE)
    assert r.exit_code() == 0 and r.exit_code(strict=True) == 1
    r = verify_paths([tmp_path / "absent.json"], STORE, require_sources=True)
    assert r.exit_code() == 1


def test_no_store_means_not_at_hand_not_a_crash() -> None:
    r = verify_paths([ROOT / "fixtures" / "documents"])
    [v] = r.verifications
    assert v.status == "not_at_hand" and "no source store given" in v.detail
    assert r.exit_code() == 0
    # the words are made when shown, from the reference (nothing held a document for them)
    assert v.note is None and v.unchecked
    assert v.detail == f"{v.source}: no source store given (--sources or `sources:` in the " \
        "config)" and v.source.startswith("risu:")
    assert not_checked(r) == [v]
    with_store = verify_paths([ROOT / "fixtures" / "documents"], STORE)
    assert not any(x.unchecked for x in with_store.verifications) and not_checked(
        with_store) == []


def test_found_by_digest_under_any_name(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    shutil.copy(STORE / "300.risum", store / "renamed.bin")
    doc = json.loads((FX / "verify" / "verified.json").read_text(encoding="utf-8"))
    doc["provenance"]["source_refs"] = doc["provenance"]["source_refs"][:1]
    (tmp_path / "d.json").write_text(json.dumps(doc), encoding="utf-8")
    r = verify_paths([tmp_path / "d.json"], store)
    assert [v.status for v in r.verifications] == ["verified"]
    r = verify_paths([tmp_path / "d.json"], store, content_scan=False)
    assert [v.status for v in r.verifications] == ["not_at_hand"]


def test_edited_report_fails_its_own_digest(tmp_path: Path) -> None:
    from risutools.canonical import indented, sha256_prefixed

    cat = tmp_path / "cat"
    shutil.copytree(FX / "verify", cat)
    rep = cat / "replays" / "long-chat.report.json"
    data = json.loads(rep.read_text())
    data["summary"]["verdict"] = "failed"  # edited, report_sha256 left as it was
    raw = indented(data)  # (written as the writer writes a report)
    rep.write_bytes(raw)
    doc = json.loads((cat / "verified.json").read_text())
    doc["provenance"]["source_refs"][1]["sha256"] = sha256_prefixed(raw)
    (cat / "verified.json").write_text(json.dumps(doc))
    r = verify_paths([cat / "verified.json"], STORE)
    [f] = [f for f in r.findings if f.rule == "MC203"]
    assert "edited after it was written" in f.message


def test_missing_report_with_replays_folder_is_an_error(tmp_path: Path) -> None:
    cat = tmp_path / "cat"
    shutil.copytree(FX / "verify", cat)
    (cat / "replays" / "long-chat.report.json").unlink()
    r = verify_paths([cat / "verified.json"], STORE)
    assert [(f.rule, f.severity) for f in r.findings] == [("MC203", "error")]


def test_prompt_digest_and_placeholder_in_verify() -> None:
    r = verify_paths([FX / "bad" / "rules.json"], STORE)
    assert {f.rule for f in r.findings} >= {"MC200", "MC201"}


def test_config_sources_used(tmp_path: Path) -> None:
    cfg = load_settings(FX / "catalog")
    assert cfg.sources == STORE.resolve()
    r = verify_paths([FX / "verify" / "verified.json"], config=cfg)
    assert [v.status for v in r.verifications] == ["verified", "verified"]


def test_notes_ref_is_matched_by_content_not_by_post_id_name(tmp_path: Path) -> None:
    """A notes entry shares its module's post id: a module file named after that post id
    must not be taken for the notes file (that would report a false mismatch)."""
    store = tmp_path / "store"
    store.mkdir()
    shutil.copy(STORE / "300.risum", store / "300_module.risum")
    notes_bytes = b"notes: notes-v1\nslug: x\n"
    import hashlib

    doc = json.loads((FX / "verify" / "verified.json").read_text(encoding="utf-8"))
    doc["provenance"]["source_refs"] = [
        {
            "source_id": "risu:300",
            "source_version": "notes.yaml",
            "sha256": "sha256:" + hashlib.sha256(notes_bytes).hexdigest(),
        }
    ]
    target = tmp_path / "doc.json"
    target.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    [v] = verify_paths([target], store).verifications
    assert v.status == "not_at_hand"
    (store / "kept-notes.yaml").write_bytes(notes_bytes)
    [v] = verify_paths([target], store).verifications
    assert v.status == "verified"


def test_each_file_hashed_once_a_run(tmp_path: Path, monkeypatch) -> None:
    """Many documents, each with its own replay report and source: every report and every
    store file is hashed at most once in the run (the catalog's replays/ listed and hashed
    once, not once a document: that was O(documents * reports) files hashed), and each
    reference still finds its own file."""
    from risutools.canonical import indented, self_hash, sha256_prefixed
    from risutools.contract import sourcestore

    cat = tmp_path / "cat"
    shutil.copytree(FX / "verify", cat)
    for p in cat.glob("*.json"):
        p.unlink()
    base = json.loads((FX / "verify" / "verified.json").read_text(encoding="utf-8"))
    report = json.loads((cat / "replays" / "long-chat.report.json").read_bytes())
    n = 12
    for i in range(n):
        report["fixture"]["name"] = f"long-chat-{i}"  # (a report of its own, its own bytes)
        report["report_sha256"] = self_hash(report)
        raw = indented(report)
        (cat / "replays" / f"c{i}--long-chat-{i}.json").write_bytes(raw)
        doc = json.loads(json.dumps(base))
        doc["provenance"]["source_refs"][1]["source_id"] = f"replay:long-chat-{i}"
        doc["provenance"]["source_refs"][1]["sha256"] = sha256_prefixed(raw)
        (cat / f"d{i}.json").write_text(json.dumps(doc), encoding="utf-8")
    hashed: list[Path] = []
    real = sourcestore.sha256_regular

    def counted(path: Path, limit: int) -> str:
        hashed.append(path)
        return real(path, limit)

    monkeypatch.setattr(sourcestore, "sha256_regular", counted)
    r = verify_paths([cat], STORE)
    found = sorted((v.file.rsplit("/", 1)[-1], v.detail.rsplit("/", 1)[-1])
                   for v in r.verifications if "replay" in v.source)
    assert found == sorted((f"d{i}.json", f"c{i}--long-chat-{i}.json") for i in range(n))
    assert {v.status for v in r.verifications} == {"verified"}
    assert len(hashed) == len(set(hashed)) and len(hashed) <= n + 1 + len(list(STORE.iterdir()))
