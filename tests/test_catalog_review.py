"""review: tampering is detected; graph, duplicates, collisions, approvals, board; formats."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from harness import approve, switch
from test_catalog_support import (
    CUTTER,
    MOOD,
    approve_and_promote,
    doc_path,
    fresh_catalog,
    load,
    run,
    to_promoted,
)

from risutools.catalog.catalog import Catalog
from risutools.catalog.review import review_catalog
from risutools.catalog.review_checks import unreadable_approval as RV301
from risutools.report.review_text import (
    render_review_json,
    render_review_markdown,
    render_review_text,
)

# CI (RISUTOOLS_REQUIRE_SSH=1, set by .ci/run) fails rather than skips without ssh-keygen
needs_ssh = pytest.mark.skipif(
    shutil.which("ssh-keygen") is None and not os.environ.get("RISUTOOLS_REQUIRE_SSH"),
    reason="ssh-keygen (openssh-client) is not installed")


@pytest.fixture
def cat(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return fresh_catalog(tmp_path_factory, tmp_path)


def _review(cat: Path) -> dict[str, Any]:
    return review_catalog(Catalog.open(cat)).data


def _messages(data: dict[str, Any]) -> str:
    parts = [f["message"] for d in data["documents"] for f in d["findings"]]
    parts += [c["message"] for c in data["chain"]]
    parts += [a["message"] for a in data["approvals"]]
    parts += [g["message"] for g in data["graph"]]
    return "\n".join(parts)


def test_clean_catalog_reviews_clean_and_deterministic(cat: Path) -> None:
    to_promoted(cat)
    assert switch(CUTTER, "active", "runtime", False, False, str(cat)) == 0
    rv = review_catalog(Catalog.open(cat))
    assert rv.exit_code() == 0, render_review_text(rv)
    d = rv.data
    assert d["counts"]["review_status"] == {"candidate": 8, "promoted": 1}
    assert d["counts"]["runtime_status"] == {"active": 1, "inactive": 8}
    assert d["counts"]["approvals"] == {"used": 3}
    assert d["counts"]["unsigned_approvals"] == 3
    assert d["counts"]["verifications"].get("verified", 0) >= 3
    assert {b["component_id"] for b in d["board"]} == {
        e.component_id for e in Catalog.open(cat).entries() if e.review_status == "candidate"}
    assert all(b["blocked_by"] == ["approval"] for b in d["board"])
    again = review_catalog(Catalog.open(cat))
    assert render_review_json(again) == render_review_json(rv)
    assert render_review_markdown(again) == render_review_markdown(rv)
    md = render_review_markdown(rv)
    assert "## Promotion board" in md and MOOD in md


def test_board_turns_ready_with_an_approval(cat: Path) -> None:
    approve(MOOD, "request_review", "kim", "", None, str(cat))
    (b,) = [b for b in _review(cat)["board"] if b["component_id"] == MOOD]
    assert b["ready"] and not b["blocked_by"]


def test_tampered_document_is_detected(cat: Path) -> None:
    to_promoted(cat)
    p = doc_path(cat, CUTTER)
    doc = load(p)
    doc["projection"]["summary"] += " (quietly edited)"
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=1))
    d = _review(cat)
    assert d["counts"]["errors"] >= 1
    assert "changed after its last recorded transition" in _messages(d)


def test_tampered_approval_is_detected(cat: Path) -> None:
    to_promoted(cat)
    a = sorted((cat / "approvals").glob("*--approve--*.yaml"))[0]
    a.write_text(a.read_text().replace("reviewer: kim", "reviewer: mallory"))
    d = _review(cat)
    assert d["counts"]["errors"] >= 1
    assert "changed after it was recorded" in _messages(d)


def test_tampered_log_line_is_detected(cat: Path) -> None:
    to_promoted(cat)
    log = cat / "transitions.ndjson"
    lines = log.read_text().splitlines()
    rec = json.loads(lines[1])
    rec["before_sha256"] = "sha256:" + "1" * 64
    lines[1] = json.dumps(rec)
    log.write_text("\n".join(lines) + "\n")
    d = _review(cat)
    assert d["counts"]["errors"] >= 1
    assert "previous line" in _messages(d)
    log.write_text("\n".join([*lines[:2], '{"component_id": "x", broken', *lines[2:]]) + "\n")
    d = _review(cat)
    assert any(c["line"] == 3 and "broken" in c["message"] for c in d["chain"])


def test_stale_and_orphan_approvals(cat: Path) -> None:
    approve(MOOD, "request_review", "kim", "", None, str(cat))
    p = doc_path(cat, MOOD)
    doc = load(p)
    doc["projection"]["summary"] += "!"
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=1))
    (cat / "approvals" / "ghost.yaml").write_text(
        "component_id: module.risu.1.ghost\ncomponent_version: 1.0.0\naction: approve\n"
        "reviewer: kim\nat: '2025-01-01T00:00:00+00:00'\nbase_sha256: sha256:"
        + "2" * 64 + "\nnote: ''\n")
    (cat / "approvals" / "junk.yaml").write_text("- not a record\n")
    d = _review(cat)
    states = {a["file"]: a["state"] for a in d["approvals"]}
    assert states["approvals/ghost.yaml"] == "orphan"
    assert states["approvals/junk.yaml"] == "unreadable"
    assert "stale" in states.values()
    assert d["counts"]["errors"] >= 1  # the unreadable record


def test_graph_problems_duplicates_and_collisions(cat: Path) -> None:
    base = load(doc_path(cat, CUTTER))

    def put(name: str, cid: str, **prov: Any) -> None:
        d = json.loads(json.dumps(base))
        d["component_id"] = cid
        d["provenance"].update(prov)
        (cat / name).write_text(json.dumps(d, ensure_ascii=False))

    put("a.json", "module.risu.174678332.twin-a", review_status="promoted",
        runtime_status="active")
    put("b.json", "module.risu.174678332.twin-b", review_status="promoted",
        runtime_status="active")
    put("c.json", CUTTER)  # the same id twice
    d = _review(cat)
    kinds = {g["kind"] for g in d["graph"]}
    assert "exclusive-capability" in kinds
    assert any(c["component_id"] == CUTTER for c in d["id_collisions"])
    assert any(len(g["components"]) >= 3 for g in d["duplicates"])
    base["capabilities"]["requires"].append("context.monitor")
    put("a.json", "module.risu.174678332.twin-a", review_status="promoted",
        runtime_status="active")
    d = _review(cat)
    assert any(g["kind"] == "unmet-requirement" and "context.monitor" in g["message"]
               for g in d["graph"])


def test_cli_review_formats_and_exit_codes(cat: Path) -> None:
    r = run("review", str(cat), cwd=cat)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "promotion board (" in r.stdout
    r = run("review", "--format", "json", cwd=cat)  # the catalog is found from cwd
    assert r.returncode == 0 and json.loads(r.stdout)["review"] == "catalog-review-v1"
    out = cat.parent / "review.md"
    r = run("review", str(cat), "-f", "markdown", "-o", str(out), cwd=cat)
    assert r.returncode == 0 and out.read_text().startswith("# Catalog review")
    (cat / "approvals").mkdir()
    (cat / "approvals" / "junk.yaml").write_text("- not a record\n")
    r = run("review", str(cat), "-f", "github", cwd=cat)
    assert r.returncode == 1
    assert f"::error file=approvals/junk.yaml,title={RV301.id}::" in r.stdout
    r = run("review", str(cat), "-f", "concise", cwd=cat)  # the reporter table's formats
    assert r.returncode == 1 and any(line.startswith("approvals/junk.yaml") and
                                     f" {RV301.id} " in line for line in r.stdout.splitlines())
    r = run("review", str(cat), "-f", "junit", cwd=cat)
    assert r.returncode == 1 and "<testsuites" in r.stdout and RV301.id in r.stdout
    r = run("review", str(cat), "-f", "sarif", cwd=cat)
    assert r.returncode == 1
    run_ = json.loads(r.stdout)["runs"][0]
    res = run_["results"]
    assert any(x["ruleId"] == RV301.id and "ruleIndex" in x for x in res)
    listed = [x["id"] for x in run_["tool"]["driver"]["rules"]]
    assert RV301.id in listed and "MC600" in listed
    assert any(x["ruleId"] == "MC600" and x["locations"][0]["physicalLocation"]["region"]
               for x in res)
    r = run("review", str(cat), "-f", "html", "-o", str(cat.parent / "r.html"), cwd=cat)
    assert r.returncode == 1 and "<table id=\"documents\"" in (cat.parent / "r.html").read_text()
    r = run("review", str(cat), "-f", "yaml", cwd=cat)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    r = run("review", str(cat / "nope"), cwd=cat)
    assert r.returncode == 2 and "nope: not-found: no such folder (the catalog)" in r.stderr


# --------------------------------------------------------------------------- signatures


def _keys(tmp: Path, cat: Path, names: tuple[str, ...] = ("kim",)) -> dict[str, Path]:
    import subprocess

    keys = {}
    lines = []
    for n in names:
        k = tmp / f"key-{n}"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", n, "-f", str(k)],
                       check=True)
        keys[n] = k
        kind, blob = (tmp / f"key-{n}.pub").read_text().split()[:2]
        lines.append(f"{n} {kind} {blob}")
    (cat / ".allowed_signers").write_text("\n".join(lines) + "\n")
    cfg = (cat / ".risutools.yaml").read_text()
    (cat / ".risutools.yaml").write_text(
        cfg + "catalog:\n  allowed_signers: .allowed_signers\n  require_signatures: true\n")
    return keys


@needs_ssh
def test_required_signatures(cat: Path, tmp_path: Path) -> None:
    keys = _keys(tmp_path, cat, ("kim", "lee"))
    approve(MOOD, "request_review", "kim", "", None, str(cat))  # unsigned
    assert switch(MOOD, "pending_human_review", "status", True, False, str(cat)) == 1
    # lee's key, but the record says kim: not allowed for that reviewer
    approve(MOOD, "request_review", "kim", "", str(keys["lee"]), str(cat))
    assert switch(MOOD, "pending_human_review", "status", True, False, str(cat)) == 1
    d = _review(cat)
    sigs = sorted(a["signature"] for a in d["approvals"])
    assert sigs == ["not_allowed", "unsigned"]
    assert d["counts"]["errors"] >= 2
    approve(MOOD, "request_review", "kim", "", str(keys["kim"]), str(cat))
    assert switch(MOOD, "pending_human_review", "status", False, False, str(cat)) == 0
    signed = [a for a in _review(cat)["approvals"] if a["signature"] == "verified"]
    assert len(signed) == 1 and signed[0]["state"] == "used"


@needs_ssh
def test_tampered_signature_is_detected(cat: Path, tmp_path: Path) -> None:
    keys = _keys(tmp_path, cat)
    approve(MOOD, "request_review", "kim", "", str(keys["kim"]), str(cat))
    (a,) = (cat / "approvals").glob("*.yaml")
    text = a.read_text()
    a.write_text(text.replace("note: ''", "note: 'added later'"))
    d = _review(cat)
    assert [x["signature"] for x in d["approvals"]] == ["bad"]
    assert switch(MOOD, "pending_human_review", "status", True, False, str(cat)) == 1
    # a damaged signature block is caught too
    lines = text.splitlines()
    i = next(n for n, ln in enumerate(lines) if "BEGIN SSH SIGNATURE" in ln) + 2
    lines[i] = lines[i][:-4] + ("AAAA" if not lines[i].endswith("AAAA") else "BBBB")
    a.write_text("\n".join(lines) + "\n")
    assert [x["signature"] for x in _review(cat)["approvals"]] == ["bad"]


@needs_ssh
def test_cli_sign_and_missing_key(cat: Path, tmp_path: Path) -> None:
    keys = _keys(tmp_path, cat)
    r = run("approve", MOOD, "--action", "request_review", "--reviewer", "kim", "--sign",
            str(keys["kim"]), cwd=cat)
    assert r.returncode == 0 and "(signed)" in r.stdout
    r = run("approve", MOOD, "--action", "request_review", "--reviewer", "kim", "--sign",
            str(tmp_path / "nokey"), cwd=cat)
    assert r.returncode == 2 and "nokey: not-found: no such file or folder" in r.stderr


def test_require_signatures_needs_a_signers_file(cat: Path) -> None:
    (cat / ".risutools.yaml").write_text("catalog:\n  require_signatures: true\n")
    r = run("review", str(cat), cwd=cat)
    assert r.returncode == 2 and "allowed_signers" in r.stderr
    (cat / ".risutools.yaml").write_text("catalog:\n  signers: x\n")
    r = run("review", str(cat), cwd=cat)
    assert r.returncode == 2 and "config-unknown-key" in r.stderr


def test_reject_from_pending(cat: Path) -> None:
    approve_and_promote(cat, MOOD, "request_review", "pending_human_review")
    approve_and_promote(cat, MOOD, "reject", "rejected")
    assert load(doc_path(cat, MOOD))["provenance"]["review_status"] == "rejected"
    assert _review(cat)["counts"]["errors"] == 0


def _copies(base: dict[str, Any], n: int) -> list[bytes]:
    """``n`` canonical copies of ``base``, each its own component id, every third with a
    capability outside the vocabulary (MC401)."""
    from risutools.canonical import canonical

    lines = []
    for i in range(n):
        d = json.loads(json.dumps(base))
        d["component_id"] = f"module.risu.186123400.copy-{i}"
        if i % 3 == 0:
            d["capabilities"]["requires"].append("hook.not_in_vocabulary")
        lines.append(canonical(d))
    return lines


def test_parallel_review_equals_one_process(cat: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers reading the files, or the parent reading an NDJSON catalog, give the bytes of
    one process; progress counts the files read."""
    from risutools.catalog import review_pass
    from risutools.report.review_text import render_review_json

    monkeypatch.setattr(review_pass, "CHUNK", 100)  # (450 files: 5 chunks, one worker)

    base = load(doc_path(cat, MOOD))
    lines = _copies(base, 450)
    big = tmp_path / "big"  # one NDJSON file: read by the parent
    big.mkdir()
    (big / "components.ndjson").write_bytes(b"\n".join(lines) + b"\n")
    (big / "approvals").mkdir()
    files = tmp_path / "files"  # one file a document: read by the workers
    files.mkdir()
    for i, line in enumerate(lines):
        (files / f"copy-{i:03d}.json").write_bytes(line)
    (files / "approvals").mkdir()
    for root, read in ((big, (1, 1)), (files, (450, 450))):
        seen: list[tuple[int, int]] = []
        one = review_catalog(Catalog.open(root), jobs=1)
        two = review_catalog(Catalog.open(root), jobs=2,
                             progress=lambda d, t, seen=seen: seen.append((d, t)))
        assert render_review_json(one) == render_review_json(two)
        assert seen[-1] == read
        assert seen == sorted(seen)  # files read, in order
        assert one.data["counts"]["documents"] == 450
        assert len(one.data["duplicates"]) == 1  # every copy shares the mood tracker's source
        rules = Counter(f["rule"] for d in one.data["documents"] for f in d["findings"])
        assert rules["MC401"] == 150  # every third copy's capability outside the vocabulary


@pytest.mark.parametrize("jobs", [2, 3, 5])
@pytest.mark.parametrize("slow", ["none", "workers", "parent"])
def test_the_chunks_go_to_whoever_gets_to_them_first(
        cat: Path, tmp_path: Path, jobs: int, slow: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On all cores the ``jobs - 1`` workers take the chunks from the first on and the
    parent from the last back, until they meet (``catalog.claims.Claims``): every chunk read
    once, by one process, whichever is the faster (slow workers: the parent reads most; a
    slow parent: the workers do); the bytes of one process, the progress in order, an
    NDJSON file among the chunks read where it is."""
    import time

    from risutools.catalog import review_pass
    from risutools.report.review_text import render_review_json

    monkeypatch.setattr(review_pass, "CHUNK", 7)
    monkeypatch.setattr(review_pass, "PARALLEL_MIN", 1)
    base = load(doc_path(cat, MOOD))
    root = tmp_path / "files"
    (root / "approvals").mkdir(parents=True)
    lines = _copies(base, 100)
    for i, line in enumerate(lines[:90]):
        (root / f"copy-{i:03d}.json").write_bytes(line)
    (root / "copy-050x.ndjson").write_bytes(b"\n".join(lines[90:]) + b"\n")  # between
    one = render_review_json(review_catalog(Catalog.open(root), jobs=1))
    made_again: list[int] = []  # a part a worker sent back (one a file)
    unflat = review_pass._unflat
    monkeypatch.setattr(review_pass, "_unflat",
                        lambda flat: made_again.append(1) or unflat(flat))
    mine: list[int] = []  # the chunks the parent read
    ahead = review_pass._Sweep.read_ahead

    def read_ahead(self: Any, k: int) -> None:
        mine.append(k)
        if slow == "parent":
            time.sleep(0.5)
        ahead(self, k)

    monkeypatch.setattr(review_pass._Sweep, "read_ahead", read_ahead)
    if slow == "workers":  # (the workers are forked after this: theirs is the slow one)
        survey = review_pass._survey_files
        monkeypatch.setattr(review_pass, "_survey_files",
                            lambda paths: time.sleep(1.0) or survey(paths))
    seen: list[tuple[int, int]] = []
    many = review_catalog(Catalog.open(root), jobs=jobs,
                          progress=lambda d, t: seen.append((d, t)))
    assert render_review_json(many) == one
    assert seen == sorted(seen) and seen[-1] == (91, 91)
    # the units: chunks of JSON files, 51 files before the NDJSON file (7 of 7 and 1 of 2:
    # units 0-7), the NDJSON file (unit 8), 39 after (5 of 7 and 1 of 4: units 9-14)
    sizes = dict(enumerate([7] * 7 + [2]))
    sizes.update(enumerate([7] * 5 + [4], start=9))
    assert len(set(mine)) == len(mine) and set(mine) <= set(sizes)
    assert len(made_again) == sum(n for k, n in sizes.items() if k not in mine)
    assert mine == sorted(mine, reverse=True)  # (from the last back)
    if slow == "workers":  # (each worker takes one chunk before the parent is done)
        assert len(mine) >= len(sizes) - 2 * (jobs - 1)
    elif slow == "parent":  # (the workers read the rest while the parent reads one)
        assert len(mine) <= 2


def test_without_record_locks_one_process_reads(
        cat: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A temporary folder whose files take no record lock (``ENOLCK``): the chunks cannot
    be claimed, so the parent reads every file itself, to the same bytes."""
    import errno
    import fcntl

    from risutools.catalog import claims, review_pass
    from risutools.report.review_text import render_review_json

    monkeypatch.setattr(review_pass, "CHUNK", 7)
    monkeypatch.setattr(review_pass, "PARALLEL_MIN", 1)
    root = tmp_path / "files"
    root.mkdir()
    for i, line in enumerate(_copies(load(doc_path(cat, MOOD)), 30)):
        (root / f"copy-{i:03d}.json").write_bytes(line)
    one = render_review_json(review_catalog(Catalog.open(root), jobs=1))

    def refused(*_args: Any) -> None:
        raise OSError(errno.ENOLCK, "no locks")

    monkeypatch.setattr(claims, "fcntl", type("F", (), {"lockf": staticmethod(refused),
                                                        "LOCK_EX": fcntl.LOCK_EX,
                                                        "LOCK_UN": fcntl.LOCK_UN}))
    unflat: list[int] = []
    monkeypatch.setattr(review_pass, "_unflat", lambda flat: unflat.append(1))
    assert render_review_json(review_catalog(Catalog.open(root), jobs=2)) == one
    assert unflat == []  # (no worker sent anything back)


def test_a_chunk_is_taken_once_across_a_fork() -> None:
    """``Claims``: a chunk taken by one process (a worker: ``take``; the parent, from the
    last back: ``take_last``) is not given to another, in either process."""
    from risutools.catalog.claims import Claims

    claims = Claims(10)
    try:
        assert claims.take(0) and not claims.take(0)
        chunks = list(range(10))
        assert claims.take_last(chunks) == 9 and chunks == list(range(9))
        assert not claims.take(9)
        pid = os.fork()
        if pid == 0:  # a worker's view: its own take, and the parent's 9 taken
            os._exit(0 if claims.take(1) and not claims.take(9) and not claims.take(0)
                     else 1)
        assert os.waitpid(pid, 0)[1] == 0
        assert not claims.take(1)
        assert claims.take_last([0, 1, 2]) == 2
        assert claims.take_last([0, 1]) is None
        rest = [3, 5]
        assert claims.take_last(rest) == 5 and rest == [3]
    finally:
        claims.close()


def test_a_card_and_its_module_are_not_duplicates(tmp_path: Path) -> None:
    """A .charx whose card has active content of its own gives two components from one file
    (``x.charx!card.json`` and ``x.charx!module.risum``): not duplicates.  The same file
    under two post ids still is."""
    import zipfile

    from harness import SOURCES

    from risutools.catalog.ingest import ingest

    src = tmp_path / "src"
    src.mkdir()
    with zipfile.ZipFile(SOURCES / "184500112_heroine-card.charx") as z:
        members = {n: z.read(n) for n in z.namelist()}
    card = json.loads(members["card.json"])
    card["data"].setdefault("extensions", {}).setdefault("risuai", {})["backgroundHTML"] = (
        "<div>{{getvar::mood}}</div>")
    members["card.json"] = json.dumps(card).encode()
    with zipfile.ZipFile(src / "184500112_card.charx", "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    ingest(src, tmp_path / "cat", jobs=1, use_cache=False)
    d = _review(tmp_path / "cat")
    assert sorted(x["component_id"] for x in d["documents"]) == [
        "character.risu.184500112.seorin", "module.risu.184500112.seorin-module"]
    assert d["duplicates"] == []
    shutil.copy(src / "184500112_card.charx", tmp_path / "184500999_copy.charx")
    (src / "184500112_card.charx").rename(src / "184500998_card.charx")
    shutil.move(tmp_path / "184500999_copy.charx", src / "184500999_copy.charx")
    ingest(src, tmp_path / "cat2", jobs=1, use_cache=False)
    # ingest keeps one of identical bytes; a catalog merged from two runs holds both
    for p in (tmp_path / "cat").glob("*.json"):
        shutil.copy(p, tmp_path / "cat2" / p.name)
    d = _review(tmp_path / "cat2")
    assert sorted(len(g["components"]) for g in d["duplicates"]) == [2, 2]


@pytest.mark.parametrize("where", ["inside", "outside", "linked"])
def test_an_entrys_place_is_shown_as_its_real_path_would_be(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, where: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry's place taken from the name the loader gave its file (when the file and its
    folder are their resolved selves, inside the working folder) is the place worked out
    from its real path: with links to a document and to the catalog, the catalog inside the
    working folder, outside it, or reached through a link."""
    from risutools.catalog import review_pass

    cat = fresh_catalog(tmp_path_factory, tmp_path / "real")
    first = sorted(cat.glob("*.json"))[0]
    os.symlink(first, cat / "zz-link-to-first.json")
    (tmp_path / "work").mkdir()
    if where == "inside":
        monkeypatch.chdir(cat.parent)
        named = Path("cat")
    elif where == "outside":
        monkeypatch.chdir(tmp_path / "work")
        named = Path("..") / "real" / "cat"
    else:
        os.symlink(cat, tmp_path / "work" / "via-link")
        monkeypatch.chdir(tmp_path / "work")
        named = Path("via-link")
    shortcut = render_review_json(review_catalog(Catalog.open(named), jobs=1))
    real = review_pass.Reals.resolve

    def never_alike(self: Any, p: Path) -> tuple[Path, bool]:
        return real(self, p)[0], False

    monkeypatch.setattr(review_pass.Reals, "resolve", never_alike)
    worked_out = render_review_json(review_catalog(Catalog.open(named), jobs=1))
    assert shortcut == worked_out
    if where == "inside":
        assert '"file":"cat/' in shortcut
