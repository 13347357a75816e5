"""Curator notes looked up for many components at once (``ingest``, ``review``'s RV601,
``verify``): the notes folder is listed once a run, not once a component (each listing is
a ``stat`` a file: a re-ingest of 2,000 sources beside 1,000 notes took 11 s), and an
index taken once answers every lookup as the folder's names would."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from harness import FIXTURES, run_cli

from risutools.contract import notesfind
from risutools.contract.notesfind import find_notes, notes_index, stable_prefix

NOTES = FIXTURES / "notes" / "module.risu.186123400.mood-tracker.yaml"
MODULES = sorted((FIXTURES / "sources").glob("*.risum"))  # (5 distinct modules)


def _alias_scan(names: list[str], component_id: str) -> list[str]:
    """The alias rule as the module's docstring states it, over the folder's names."""
    prefix = stable_prefix(component_id)
    return [n for n in names if prefix is not None and n.startswith(prefix)]


NAMES = ["module.risu.1.a.yaml", "module.risu.1.b.yaml", "module.risu.2.a.yaml",
         "module.risu.22.x.yaml", "module.risu.2.yaml", "module.risu.3..yaml",
         "card.risu.3.c.yaml", "module.risu.yaml", "module..4.d.yaml", "m.r.5.e.f.g.yaml",
         "모듈.risu.6.요정.yaml"]
IDS = ["module.risu.1.a", "module.risu.1.zzz", "module.risu.2.b", "module.risu.22.y",
       "module.risu.2", "module.risu.3.q", "card.risu.3.other", "module.risu",
       "module..4.z", "m.r.5.e", "m.r.5", "모듈.risu.6.새이름", "module.risu.7.none"]


@pytest.mark.parametrize("component_id", IDS)
def test_an_index_taken_once_finds_what_the_names_say(tmp_path: Path, component_id: str) -> None:
    for name in NAMES:
        (tmp_path / name).write_text("notes: notes-v1\n", "utf-8")
    index = notes_index(tmp_path)
    got = find_notes(tmp_path, component_id, index=index)
    alone = find_notes(tmp_path, component_id)
    names = sorted(NAMES)
    if f"{component_id}.yaml" in names:
        want: Path | None = tmp_path / f"{component_id}.yaml"
    else:
        alias = _alias_scan(names, component_id)
        want = tmp_path / alias[0] if len(alias) == 1 else None
    assert got == alone == want
    decided, name = notesfind.notes_name_by_id(index, component_id)
    assert name == (want.name if want is not None else None)
    assert notesfind.notes_by_id(index, component_id) == (decided, want)


def test_the_ids_above_take_each_path() -> None:
    """(the cases above reach a name, a single alias, several aliases and none)"""
    kinds = set()
    for cid in IDS:
        alias = _alias_scan(NAMES, cid)
        kinds.add("name" if f"{cid}.yaml" in NAMES else
                  "alias" if len(alias) == 1 else "several" if alias else "none")
    assert kinds == {"name", "alias", "several", "none"}


def _count_listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    listed: list[str] = []
    real = os.scandir

    def counted(path):  # type: ignore[no-untyped-def]
        if str(path).endswith("notes"):
            listed.append(str(path))
        return real(path)

    monkeypatch.setattr(notesfind.os, "scandir", counted)
    return listed


def _many(tmp_path: Path, n: int) -> tuple[Path, Path]:
    """``n`` sources (copies of the fixture modules under their own post ids) and a
    catalog whose notes folder has an orphan and ``n`` notes named for no component."""
    src, cat = tmp_path / "src", tmp_path / "cat"
    src.mkdir()
    (cat / "notes").mkdir(parents=True)
    for i in range(n):
        module = MODULES[i % len(MODULES)]
        shutil.copy(module, src / f"{900000 + i}_{module.stem.split('_', 1)[1]}.risum")
        shutil.copy(NOTES, cat / "notes" / f"module.risu.{800000 + i}.gone.yaml")
    return src, cat


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ingest_lists_the_notes_folder_a_few_times_not_once_a_source(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str) -> None:
    n = 24
    src, cat = _many(tmp_path, n)
    listed = _count_listings(monkeypatch)
    r = run_cli("ingest", src, "-o", cat, "-j", jobs, "--no-cache")
    assert r.returncode == 0, r.stderr
    notices = [x for x in r.stderr.splitlines() if "matches no component" in x]
    assert len(notices) == n  # (every notes file an orphan, each said)
    # once each: the notes' digest (the cache key), the orphan check, and with -j 1 the
    # sources' lookups (a worker lists it in its own process, once a batch)
    assert len(listed) <= 3, listed


def test_review_and_verify_list_the_notes_folder_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    n = 24
    src, cat = _many(tmp_path, n)
    assert run_cli("ingest", src, "-o", cat, "-j", "1", "--no-cache").returncode == 0
    listed = _count_listings(monkeypatch)
    r = run_cli("review", cat, "-f", "concise", "-j", "1", "--exit-zero")
    assert r.stdout.count("RV601") == n
    assert len(listed) == 1, listed
    listed.clear()
    r = run_cli("verify", cat, "--sources", src, "-f", "json")
    assert r.returncode == 0, r.stderr
    assert len(listed) <= 1, listed


def _learn_ids(tmp_path: Path, src: Path) -> list[tuple[str, str]]:
    """(component id, source digest) of each source, from a scratch run."""
    import json

    scratch = tmp_path / "scratch"
    assert run_cli("ingest", src, "-o", scratch, "-j", "1", "--no-cache").returncode == 0
    out = []
    for p in sorted(scratch.glob("*.json")):
        doc = json.loads(p.read_text("utf-8"))
        out.append((doc["component_id"], doc["provenance"]["source_refs"][0]["sha256"]))
    return out


@pytest.mark.parametrize("with_for", [False, True])
def test_a_rerun_says_what_a_fresh_run_says_of_the_notes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_for: bool) -> None:
    """A re-run takes its sources from the cache and leaves their documents packed where
    the ids decide which notes they take (and every id does when no notes file has a
    ``for:``): its notices of notes no component took are those of a fresh run."""
    from risutools.catalog import cache

    src, cat = _many(tmp_path, len(MODULES))  # (each module once: no id shared)
    for p in (cat / "notes").iterdir():
        p.unlink()
    ids = _learn_ids(tmp_path, src)
    notes = cat / "notes"
    plain = "notes: notes-v1\n"
    (notes / f"{ids[0][0]}.yaml").write_text(plain, "utf-8")  # by its id
    stable = ids[1][0].rsplit(".", 1)[0]
    (notes / f"{stable}.old-slug.yaml").write_text(plain, "utf-8")  # the one alias
    twice = ids[2][0].rsplit(".", 1)[0]
    for slug in ("one", "two"):  # two aliases: neither is taken
        (notes / f"{twice}.{slug}.yaml").write_text(plain + f"# {slug}\n", "utf-8")
    (notes / "module.risu.1.nothing.yaml").write_text(plain + "# orphan\n", "utf-8")
    if with_for:
        (notes / "repost.yaml").write_text(f'for:\n  source_sha256: "{ids[3][1]}"\n' + plain,
                                           "utf-8")
    fresh = run_cli("ingest", src, "-o", cat, "-j", "1", "--no-cache")
    assert fresh.returncode == 0, fresh.stderr
    said = sorted(x.split(": ")[1] for x in fresh.stderr.splitlines() if "matches no" in x)
    assert said == sorted(f"notes/{n}" for n in (
        f"{twice}.one.yaml", f"{twice}.two.yaml", "module.risu.1.nothing.yaml"))
    unpacked: list[bytes] = []
    real = cache.unpack_outcome

    def counted(packed: bytes, ids: list[str]):  # type: ignore[no-untyped-def]
        unpacked.append(packed)
        return real(packed, ids)

    monkeypatch.setattr(cache, "RACY_NS", 0)  # (the files were just written)
    assert run_cli("ingest", src, "-o", cat, "-j", "1").returncode == 0  # (the cache made)
    monkeypatch.setattr(cache, "unpack_outcome", counted)
    again = run_cli("ingest", src, "-o", cat, "-j", "1", "--json")
    assert again.returncode == 0, again.stderr
    import json

    counts = json.loads(again.stdout)["counts"]
    assert counts["cached"] == counts["files"] == len(MODULES)
    notices = json.loads(again.stdout)["notices"]
    assert sorted(x.split(":")[0] for x in notices if "matches no" in x) == said
    if with_for:  # the sources whose ids decide nothing: their documents' keys asked
        assert 0 < len(unpacked) < len(MODULES)
    else:
        assert unpacked == []


def test_the_notes_a_failed_line_names_are_those_it_begins_with(tmp_path: Path) -> None:
    """``_said_failing`` (one pass over the failed lines) against the rule it replaces: a
    notes file is said by a failed line that begins with its shown path and a colon."""
    from risutools.catalog.ingest import _said_failing
    from risutools.fsio import display_path

    notes = str(tmp_path / "notes")
    esc = "x\x1b.yaml"
    names = ["a.yaml", "a:b.yaml", "a:b.yaml.yaml", "b.yaml", "요정.yaml", "c.yaml", esc]
    shown = {n: display_path(os.path.join(notes, n)) for n in names}
    errors = [f"{shown['a:b.yaml']}: notes-invalid: field 'x': must be text",
              f"{shown['요정.yaml']}: slug: notes-invalid: a:b.yaml: not a name",
              f"{shown[esc]}: unreadable",
              f"other/{shown['c.yaml']}: not this one", f"{shown['b.yaml']}", "", ":"]
    want = {n for n in names if any(e.startswith(shown[n] + ":") for e in errors)}
    assert _said_failing(notes, names, errors) == want
    assert want == {"a:b.yaml", "요정.yaml", esc}


def _signature_by_hand(folder: Path, names: list[str]) -> str:
    """The cache key's digest of the notes, as ingest's docstring defines it: name and
    bytes of each notes file, in name order."""
    import hashlib

    h = hashlib.sha256()
    for name in sorted(names):
        h.update(name.encode() + b"\0" + (folder / name).read_bytes() + b"\0")
    return h.hexdigest()


def _notes_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    for i, name in enumerate(["b.yaml", "a.yaml", "모듈.yaml", "c-d.yaml", "c.yaml"]):
        (folder / name).write_text(f"notes: notes-v1\n# {i} 메모\n", "utf-8")
    (folder / "readme.txt").write_text("not a notes file\n", "utf-8")
    return folder


def test_the_index_signs_the_notes_it_read_as_the_folder_is_signed(tmp_path: Path) -> None:
    folder = _notes_folder(tmp_path)
    names = [p.name for p in folder.glob("*.yaml")]
    expected = _signature_by_hand(folder, names)
    assert notesfind.notes_signature(folder) == expected
    assert notes_index(folder).signature == expected
    (folder / "a.yaml").write_text("notes: notes-v1\n# changed\n", "utf-8")
    changed = _signature_by_hand(folder, names)
    assert changed != expected and notes_index(folder).signature == changed


def test_a_link_is_signed_by_neither(tmp_path: Path) -> None:
    folder = _notes_folder(tmp_path)
    expected = _signature_by_hand(folder, [p.name for p in folder.glob("*.yaml")])
    (folder / "z.yaml").symlink_to(folder / "a.yaml")
    assert notes_index(folder).signature == expected == notesfind.notes_signature(folder)


@pytest.mark.parametrize("odd", ["hidden", "folder", "fifo", "large"])
def test_a_notes_entry_the_index_does_not_read_leaves_the_signature_to_the_folder(
        tmp_path: Path, odd: str) -> None:
    """A hidden ``*.yaml`` (signed, not indexed), a folder or a FIFO under that name, a
    file past the bound: the index gives no signature, and the folder's own reading
    signs the hidden file and refuses the others with one line, as before."""
    from risutools.errors import RisuError
    from risutools.settings.catalog import MAX_NOTES_BYTES

    folder = _notes_folder(tmp_path)
    if odd == "hidden":
        (folder / ".h.yaml").write_text("notes: notes-v1\n", "utf-8")
    elif odd == "folder":
        (folder / "f.yaml").mkdir()
    elif odd == "fifo":
        os.mkfifo(folder / "f.yaml")
    else:
        (folder / "f.yaml").write_bytes(b"#" * (MAX_NOTES_BYTES + 1))
    assert notes_index(folder).signature is None
    if odd == "hidden":
        names = [p.name for p in folder.iterdir() if p.name.endswith(".yaml")]
        assert ".h.yaml" in names
        assert notesfind.notes_signature(folder) == _signature_by_hand(folder, names)
    else:
        with pytest.raises(RisuError):
            notesfind.notes_signature(folder)


def test_a_rerun_reads_each_notes_file_once(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The notes' digest (part of every cache key) is taken from the bytes the index
    read: a re-run with nothing changed reads each notes file once, and a changed note
    still projects its component again."""
    src, cat = _many(tmp_path, 6)
    assert run_cli("ingest", src, "-o", cat, "-j", "1").returncode == 0
    from risutools.catalog import cache

    monkeypatch.setattr(cache, "RACY_NS", 0)
    assert run_cli("ingest", src, "-o", cat, "-j", "1").returncode == 0
    notesfind._CACHE.clear()
    reads: list[str] = []
    real = os.open

    def counted(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if Path(path).parent.name == "notes":
            reads.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counted)
    r = run_cli("ingest", src, "-o", cat, "-j", "1", "--json")
    assert r.returncode == 0, r.stderr
    import json

    assert json.loads(r.stdout)["counts"]["cached"] == 6
    names = sorted(p.name for p in (cat / "notes").glob("*.yaml"))
    assert sorted(reads) == names
    (cat / "notes" / names[0]).write_text("notes: notes-v1\n# 고침\n", "utf-8")
    r = run_cli("ingest", src, "-o", cat, "-j", "1", "--json")
    assert json.loads(r.stdout)["counts"]["cached"] == 0  # (the digest is every key's)
