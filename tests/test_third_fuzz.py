"""The third fuzzing pass's findings (bench/RESULTS.md, round 35), each a class fixed, each
test failing before:

- a catalog found from where a document's links lead, not where it is written: with
  ``components`` a link out of the catalog, ``replay run --update`` rewrote the document
  and wrote ``replays/`` and ``.risutools.lock`` outside, with no evidence line;
- reads outside the catalog: ``packet`` listed a ``notes/`` linked elsewhere, ``promote``
  hashed a ``sources:`` store outside the repository (``review`` refused both), and a
  ``.risutools.yaml`` linked to a file elsewhere was read by every command;
- ``pack`` read each asset whole (a 3 GB asset: MemoryError) and followed a
  ``manifest.json`` linked out of the folder;
- internal errors: ``Path.resolve`` on a symbolic link loop (RuntimeError), ``unpack -o`` a
  loop (FileExistsError), ``ingest -j 2147483648`` (OverflowError; ``-j 300`` of 9 files
  forked 300 processes);
- ``hash`` wrote a multi-document file's ``component_id`` raw (a newline: a forged
  ``::error::`` line in a CI log; ESC reached the terminal)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness import FIXTURES, ROOT, run_cli
from hostile_catalog import catalog_copy, cli, one_line, pair_catalog, snapshot, sparse_file
from test_catalog_support import CUTTER

from risutools.catalog import pool
from risutools.formats.risum import write_risum
from risutools.formats.unpack import pack_inputs
from risutools.pathnames import real_path
from risutools.settings.catalog import MAX_JOBS

SOURCE = FIXTURES / "sources" / "183120336_asset-pack.risum"


# ---- a document is in the catalog it is written in --------------------------------------

def _linked_out(tmp_factory: pytest.TempPathFactory, tmp_path: Path) -> tuple[Path, Path]:
    """A catalog whose documents are in ``components/``, a link to a folder outside it."""
    cat = catalog_copy(tmp_factory, tmp_path)
    away = tmp_path / "elsewhere"
    away.mkdir()
    shutil.move(str(cat / f"{CUTTER}.json"), away / f"{CUTTER}.json")
    (cat / "components").symlink_to("../elsewhere")
    return cat, away


@pytest.mark.parametrize("args", [
    ("replay", "run", "cat/components/{doc}", "-x", str(FIXTURES / "replay" / "anchor-edit.yaml"),
     "--update"),
    ("replay", "run", "cat/components/{doc}", "-x", str(FIXTURES / "replay" / "anchor-edit.yaml")),
    ("approve", "cat/components/{doc}", "--action", "request_review", "--reviewer", "kim"),
    ("notes", "init", "cat/components/{doc}"),
], ids=["replay --update", "replay", "approve", "notes init"])
def test_a_document_linked_out_of_its_catalog_is_refused(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, args: tuple[str, ...]) -> None:
    cat, away = _linked_out(tmp_path_factory, tmp_path)
    before_out, before_cat = snapshot(away), snapshot(cat)
    done = cli(*(a.format(doc=f"{CUTTER}.json") for a in args), cwd=tmp_path)
    assert done.returncode == 2 and "outside-catalog" in one_line(done.stderr), done.stderr
    assert snapshot(away) == before_out and sorted(os.listdir(away)) == [f"{CUTTER}.json"]
    assert snapshot(cat) == before_cat


def test_a_catalog_reached_through_a_link_still_works(tmp_path_factory: pytest.TempPathFactory,
                                                      tmp_path: Path) -> None:
    """The catalog itself behind a link (``~/cat -> /data/cat``): its documents are inside
    it once both are followed."""
    real = catalog_copy(tmp_path_factory, tmp_path / "data")
    (tmp_path / "link").symlink_to(real)
    done = cli("replay", "run", f"link/{CUTTER}.json", "-x",
               FIXTURES / "replay" / "anchor-edit.yaml", "-o", tmp_path / "r" / "r.json",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr


# ---- nothing of the catalog is read outside it --------------------------------------------

def test_packet_refuses_a_notes_folder_linked_out(tmp_path_factory: pytest.TempPathFactory,
                                                  tmp_path: Path) -> None:
    cat = catalog_copy(tmp_path_factory, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.yaml").write_text("for: {risuai_id: '1'}\nsecret: TOPSECRET\n")
    shutil.rmtree(cat / "notes")
    (cat / "notes").symlink_to("../outside")
    done = cli("packet", CUTTER, "--lane", "full", "-o", tmp_path / "pk", "--catalog", cat,
               cwd=tmp_path)
    assert done.returncode == 2 and "outside-catalog" in one_line(done.stderr)
    assert "notes/" in done.stderr and "TOPSECRET" not in done.stderr


def test_packet_markdown_says_unreadable_notes(tmp_path_factory: pytest.TempPathFactory,
                                               tmp_path: Path) -> None:
    """The JSON said ``{"unreadable": ...}`` and the Markdown "present"."""
    cat = catalog_copy(tmp_path_factory, tmp_path)
    note = cat / "notes" / f"{CUTTER}.yaml"
    note.unlink()
    os.mkfifo(note)
    done = cli("packet", CUTTER, "--lane", "full", "-o", tmp_path / "pk", "--catalog", cat,
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    md = next((tmp_path / "pk").glob("*.md")).read_text("utf-8")
    packet = json.loads(next((tmp_path / "pk").glob("*.json")).read_text("utf-8"))
    assert "unreadable" in json.dumps(packet)
    assert "Curator notes: unreadable (" in md and "Curator notes: present" not in md


def test_promote_refuses_a_source_store_outside(tmp_path_factory: pytest.TempPathFactory,
                                                tmp_path: Path) -> None:
    """As ``review`` and ``verify`` refuse it (``--sources DIR`` is the user's own word)."""
    cat = pair_catalog(tmp_path_factory, tmp_path)  # (approved: the digests gate runs)
    shutil.move(str(cat / ".store"), tmp_path / "outstore")
    (cat / ".store").symlink_to("../outstore")
    done = cli("promote", CUTTER, "--to", "promoted", "--dry-run", "--catalog", cat,
               cwd=tmp_path)
    assert done.returncode == 2 and "config-sources-outside" in one_line(done.stderr)
    done = cli("promote", CUTTER, "--to", "promoted", "--dry-run", "--catalog", cat,
               "--sources", tmp_path / "outstore", cwd=tmp_path)
    assert done.returncode in (0, 1) and "config-sources-outside" not in done.stderr
    assert "digests" in done.stdout


@pytest.mark.parametrize("command", [("review", "{cat}", "-q"),
                                     ("promote", CUTTER, "--to", "pending_human_review",
                                      "--dry-run", "--catalog", "{cat}"),
                                     ("packet", CUTTER, "--lane", "light", "-o", "pk",
                                      "--catalog", "{cat}")],
                         ids=["review", "promote", "packet"])
def test_a_configuration_linked_out_is_not_read(tmp_path_factory: pytest.TempPathFactory,
                                                tmp_path: Path, command: tuple[str, ...]
                                                ) -> None:
    cat = catalog_copy(tmp_path_factory, tmp_path)
    (tmp_path / "elsewhere.yaml").write_text("rules:\n  MC202: SECRET_VALUE_FROM_OUTSIDE\n")
    (cat / ".risutools.yaml").unlink()
    (cat / ".risutools.yaml").symlink_to("../elsewhere.yaml")
    done = cli(*(a.format(cat=cat) for a in command), cwd=tmp_path)
    line = one_line(done.stderr)
    assert done.returncode == 2 and "outside-catalog" in line and "SECRET" not in line
    assert "--config" in line


# ---- pack: streamed, inside the folder ------------------------------------------------

def _unpacked(tmp_path: Path) -> Path:
    assert run_cli("unpack", SOURCE, "-o", tmp_path / "u").returncode == 0
    return tmp_path / "u"


def test_pack_writes_what_it_wrote_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    """The same bytes as the whole-file writer, read a few bytes at a time."""
    from risutools.formats import unpack

    u = _unpacked(tmp_path)
    module, assets = pack_inputs(u)
    want = write_risum(module, [a.path.read_bytes() for a in assets])
    assert assets
    monkeypatch.setattr(unpack, "PACK_CHUNK", 7)
    assert run_cli("pack", u, "-o", tmp_path / "a.risum").returncode == 0
    assert (tmp_path / "a.risum").read_bytes() == want


def test_pack_holds_one_chunk_of_an_asset(tmp_path: Path) -> None:
    """A 192 MiB asset: the process's peak stays far below it (it held three copies)."""
    u = _unpacked(tmp_path)
    manifest = json.loads((u / "manifest.json").read_text("utf-8"))
    big = u / manifest["assets"][0]["file"]
    size = 192 << 20
    sparse_file(big, size)
    code = ("import sys; from risutools.cli import main; sys.argv = ['risutools', "
            f"'pack', {str(u)!r}, '-o', {str(tmp_path / 'big.risum')!r}]\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            # (VmHWM: this process's own peak; ru_maxrss would count the forking test
            # runner's size, carried over the exec)
            "print(next(ln for ln in open('/proc/self/status') if ln.startswith('VmHWM'))"
            ".split()[1])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) < 100 * 1024, done.stdout  # KiB: under 100 MiB
    assert (tmp_path / "big.risum").stat().st_size > size


def test_pack_refuses_a_manifest_linked_out(tmp_path: Path) -> None:
    u = _unpacked(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    shutil.move(str(u / "manifest.json"), tmp_path / "elsewhere" / "manifest.json")
    (u / "manifest.json").symlink_to("../elsewhere/manifest.json")
    done = run_cli("pack", u, "-o", tmp_path / "o.risum")
    assert done.returncode == 2 and "outside-target" in done.stderr
    assert not (tmp_path / "o.risum").exists()


def test_pack_refuses_a_manifest_that_is_a_fifo(tmp_path: Path) -> None:
    """It was taken for a folder without a manifest (its assets silently dropped)."""
    u = _unpacked(tmp_path)
    (u / "manifest.json").unlink()
    os.mkfifo(u / "manifest.json")
    done = cli("pack", u, "-o", tmp_path / "o.risum", cwd=tmp_path)
    assert done.returncode == 2 and "FIFO" in one_line(done.stderr)


# ---- one line, never an internal error ---------------------------------------------------

def test_a_link_loop_is_resolved_without_raising(tmp_path: Path) -> None:
    (tmp_path / "L").symlink_to("L")
    assert real_path(tmp_path / "L" / "x") == tmp_path / "L" / "x"


def test_pack_and_unpack_say_a_loop_in_one_line(tmp_path: Path) -> None:
    u = _unpacked(tmp_path)
    manifest = json.loads((u / "manifest.json").read_text("utf-8"))
    asset = u / manifest["assets"][0]["file"]
    asset.unlink()
    asset.symlink_to(asset.name)
    for args in (("pack", u, "-o", tmp_path / "o.risum"), ("pack", "L", "-o", "o.risum"),
                 ("unpack", SOURCE, "-o", "L")):
        (tmp_path / "L").unlink(missing_ok=True)
        (tmp_path / "L").symlink_to("L")
        done = cli(*args, cwd=tmp_path)
        assert done.returncode == 2 and "internal error" not in done.stderr
        one_line(done.stderr)


def test_ingest_jobs_past_any_machine(tmp_path: Path) -> None:
    done = cli("ingest", FIXTURES / "sources", "-o", tmp_path / "cat", "-q",
               "-j", "99999999999999999999999", cwd=tmp_path)
    assert "internal error" not in done.stderr and done.returncode in (0, 1), done.stderr


def test_ingest_starts_no_more_workers_than_files(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []

    class Stop(Exception):
        pass

    def own_pool(workers: int) -> None:
        asked.append(workers)
        raise Stop

    monkeypatch.setattr(pool, "_own_pool", own_pool)
    todo = [(str(SOURCE), "a.risum", 10), (str(SOURCE), "b.risum", 10)]
    for jobs in (300, 2 ** 40):
        with pytest.raises(Stop):
            pool.run_sources(todo, "en", None, False, jobs, None, lambda *_: None)
    assert asked == [2, 2] and MAX_JOBS >= 2


# ---- values shown as text -------------------------------------------------------------------

def test_hash_writes_each_id_on_its_own_line(tmp_path: Path) -> None:
    ids = ["x\n::error::PWN\x1b[31mRED\u202eEVIL", "ok"]
    (tmp_path / "t.ndjson").write_text(
        "".join(json.dumps({"component_id": i, "a": 1}) + "\n" for i in ids), "utf-8")
    done = run_cli("hash", tmp_path / "t.ndjson")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all(ln.startswith("sha256:") for ln in lines)
    assert "\x1b" not in done.stdout and "\u202e" not in done.stdout
    assert "\\n::error::" in lines[0]


def test_a_queue_of_one_source_stays_linear(tmp_path_factory: pytest.TempPathFactory,
                                            tmp_path: Path) -> None:
    """30 candidates from one source file (and the cutter it was copied from): each light
    packet names 20 of the 30 others and
    counts the rest (each named all the others: a queue of N such packets was N^2)."""
    from risutools.catalog.packet import MAX_REASONS_EACH

    cat = catalog_copy(tmp_path_factory, tmp_path)
    doc = json.loads((cat / f"{CUTTER}.json").read_text("utf-8"))
    doc["provenance"]["review_status"] = "candidate"
    for i in range(30):
        doc["component_id"] = f"module.risu.9{i:02d}.copy"
        (cat / f"copy{i}.json").write_text(json.dumps(doc, ensure_ascii=False), "utf-8")
    done = cli("packet", "--lane", "light", "--queue", tmp_path / "q", "--status",
               "candidate", "--catalog", cat, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    packets = [json.loads(p.read_text("utf-8")) for p in (tmp_path / "q").glob("*.json")
               if not p.name.startswith("handoff-")]
    copies = [p for p in packets if p["component"]["component_id"].endswith(".copy")]
    assert len(copies) == 30
    for p in copies:
        shared = [r for r in p["needs_full_context"] if r["reason"] == "shared-source"]
        assert len(shared) == MAX_REASONS_EACH + 1
        assert shared[-1]["detail"].startswith(f"and {30 - MAX_REASONS_EACH} more")


@pytest.mark.parametrize("field, value, why", [
    ("at", "9999-99-99T99:99:99Z", "at is not a date and time"),
    ("at", "99999-01-01T00:00:00+00:00", "at is not a date and time"),
    ("reviewer", "k\x1b[31mim\u202e\n::error::x", "reviewer holds the control character"),
    ("reviewer", "   ", "reviewer is blank"),
    ("note", "ok\u2028::warning::x", "note holds the control character"),
])
def test_a_record_written_by_hand_is_held_to_what_approve_writes(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, field: str, value: str,
        why: str) -> None:
    """``approve`` refuses such text; a record written by hand with it was counted by the
    gates (``promote``: approval pass) and not reported by ``review``.  Now RV301, and not
    counted."""
    import yaml
    from harness import approve

    cat = catalog_copy(tmp_path_factory, tmp_path)
    candidate = CUTTER  # (a candidate whose narrative is done: only the approval is asked)
    approve(candidate, "request_review", "kim", "read it", None, str(cat))
    (record,) = (cat / "approvals").rglob(f"{candidate}--request_review--*.yaml")
    rec = yaml.safe_load(record.read_text("utf-8"))
    good = cli("promote", candidate, "--to", "pending_human_review", "--dry-run",
               "--catalog", cat, cwd=tmp_path)
    assert "pass  approval" in good.stdout, good.stdout
    rec[field] = value
    record.write_text(yaml.safe_dump(rec, allow_unicode=False), "utf-8")
    done = cli("review", cat, "-f", "json", cwd=tmp_path)
    found = [f for f in json.loads(done.stdout)["file_findings"] if f["rule"] == "RV301"]
    assert any(why in f["message"] for f in found), found
    done = cli("promote", candidate, "--to", "pending_human_review", "--dry-run",
               "--catalog", cat, cwd=tmp_path)
    assert done.returncode == 1 and "FAIL  approval" in done.stdout
