"""Findings of a fifth fuzzing pass (``validate --fix``, ``notes``, ``verify``, ``replay``
with hostile configurations), each a test that fails before its fix:

* ``replay monitor`` never read the catalog's ``.risutools.yaml``: a file every other
  command refuses (an unknown key, a bad ``replay:`` value) passed silently, and its
  ``replay:`` section was not a layer of the monitor's configuration as it is of ``replay
  run``'s;
* ``replay run --update`` of a YAML document whose ``source_refs`` is a flow list (``[{...}]``)
  wrote the whole document again through ``safe_dump`` (its comments, quoting and layout
  gone) to add one reference.

(The pass's other findings have their own files: a forged replay report,
``test_replay_report_trusted.py``; a folder a command makes that is a file,
``test_cli_paths.py``.)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from harness import FIXTURES, SEED, run_cli

from risutools.replay.component import _yaml_value
from risutools.yamlpatch import patch_yaml_values

MONITOR = FIXTURES / "replay" / "monitor.yaml"


@pytest.mark.parametrize("config, why", [
    ("bogus_key: 1\n", "config-unknown-key"),
    ("replay: {max_context: -1}\n", "config-bad-value"),
    ("replay: {no_such_key: 1}\n", "no_such_key"),
])
@pytest.mark.parametrize("with_doc", [True, False])
def test_replay_monitor_reads_the_catalog_configuration(tmp_path: Path, config: str, why: str,
                                                        with_doc: bool) -> None:
    shutil.copy(SEED, tmp_path / "doc.json")
    shutil.copy(MONITOR, tmp_path / "monitor.yaml")
    (tmp_path / ".risutools.yaml").write_text(config, encoding="utf-8")
    args = ["replay", "monitor", *(["doc.json"] if with_doc else []), "-x", "monitor.yaml"]
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout[-300:] + done.stderr
    assert why in done.stderr and ".risutools.yaml" in done.stderr, done.stderr


def test_replay_monitor_takes_the_catalog_replay_section(tmp_path: Path) -> None:
    """The catalog's ``replay:`` keys are the layer under the fixture's own ``config``, as
    for ``replay run``: a fixture without a config then runs with the catalog's."""
    fixture = yaml.safe_load(MONITOR.read_text(encoding="utf-8"))
    own = fixture.pop("config")
    (tmp_path / "monitor.yaml").write_text(yaml.safe_dump(fixture), encoding="utf-8")
    shutil.copy(SEED, tmp_path / "doc.json")
    plain = run_cli("replay", "monitor", "doc.json", "-x", "monitor.yaml", "-o", "a.json",
                    cwd=tmp_path)
    (tmp_path / ".risutools.yaml").write_text(yaml.safe_dump({"replay": own}), "utf-8")
    layered = run_cli("replay", "monitor", "doc.json", "-x", "monitor.yaml", "-o", "b.json",
                      cwd=tmp_path)
    assert plain.returncode == layered.returncode == 0, plain.stderr + layered.stderr
    a = json.loads((tmp_path / "a.json").read_text("utf-8"))["config"]
    b = json.loads((tmp_path / "b.json").read_text("utf-8"))["config"]
    assert {k: b[k] for k in own} == own and a != b


# ---- a flow list grown where it stands ---------------------------------------------------

FLOW = """\
# 큐레이터 메모: 지우지 마세요
provenance:
  review_status: candidate   # 상태
  source_refs: [{source_id: 'risu:1', sha256: 'sha256:00'}]  # 출처
  more: [
    a,
    'b'
  ]
  nested: [ {id: x, list: [1, 2]} ]
"""


@pytest.mark.parametrize("where, want", [
    ("source_refs", """  source_refs: [{source_id: 'risu:1', sha256: 'sha256:00'}, {"source_id": \
"replay:x", "sha256": "sha256:11"}]  # 출처"""),
    ("more", """    'b', {"source_id": "replay:x", "sha256": "sha256:11"}"""),
    ("nested", """  nested: [ {id: x, list: [1, 2]}, {"source_id": "replay:x", "sha256": \
"sha256:11"} ]"""),
])
def test_an_item_appended_to_a_flow_list_is_written_after_its_last(where: str,
                                                                   want: str) -> None:
    old = _yaml_value(FLOW)
    new = json.loads(json.dumps(old))
    new["provenance"][where].append({"source_id": "replay:x", "sha256": "sha256:11"})
    got = patch_yaml_values(FLOW, old, new, _yaml_value)
    assert got is not None
    assert _yaml_value(got) == new
    before, after = FLOW.splitlines(), got.splitlines()
    assert [ln for ln in after if ln not in before] == [want]
    assert len(before) == len(after)


def test_replay_update_keeps_a_yaml_document_with_a_flow_list(tmp_path: Path) -> None:
    doc = json.loads(SEED.read_text("utf-8"))
    text = "# 큐레이터 메모\n" + yaml.safe_dump(doc, allow_unicode=True, sort_keys=False,
                                              default_flow_style=None, width=10_000)
    item = next(ln for ln in text.splitlines() if ln.startswith("  - {source_id:"))
    refs = "  source_refs: [" + item[len("  - "):] + "]"
    text = text.replace("  source_refs:\n" + item + "\n", refs + "\n")
    assert refs in text
    path = tmp_path / "doc.yaml"
    path.write_text(text, "utf-8")
    done = run_cli("replay", "run", path, "-x", FIXTURES / "replay" / "anchor-edit.yaml",
                   "--update", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    got = path.read_text("utf-8")
    changed = [ln for ln in got.splitlines() if ln not in text.splitlines()]
    assert got.startswith("# 큐레이터 메모\n")
    assert len(changed) == 3, changed  # the reference, replay_status, availability_verdict
    assert any(ln.startswith(refs.rstrip("]")) and '"replay:' in ln for ln in changed), changed


# ---- a notes file that cannot be read, in a review --------------------------------------

def test_review_reports_a_notes_file_it_cannot_read_as_verify_does(tmp_path: Path) -> None:
    """``verify`` said MC001 (an error) of a notes file that is a FIFO; ``review`` dropped
    it (a warning, exit 0)."""
    import os

    doc = json.loads(SEED.read_text("utf-8"))
    cid = doc["component_id"]
    doc["provenance"]["source_refs"].append({"source_id": f"notes:{cid}",
                                             "source_version": "notes.yaml",
                                             "sha256": "sha256:" + "1" * 64})
    (tmp_path / "doc.json").write_text(json.dumps(doc), "utf-8")
    (tmp_path / "notes").mkdir()
    os.mkfifo(tmp_path / "notes" / f"{cid}.yaml")
    verified = run_cli("verify", "doc.json", cwd=tmp_path)
    assert verified.returncode == 2 and "MC001" in verified.stdout, verified.stdout
    reviewed = run_cli("review", ".", "-f", "concise", cwd=tmp_path)
    assert reviewed.returncode == 1, reviewed.stdout + reviewed.stderr
    assert f"notes/{cid}.yaml: MC001 is a FIFO" in reviewed.stdout, reviewed.stdout


# ---- the ingest cache: a link or a FIFO is never opened, and is replaced ----------------

@pytest.mark.parametrize("which", ["ingest.msgpack", "ingest.msgpack.delta"])
@pytest.mark.parametrize("kind", ["outside-link", "device-link", "fifo"])
def test_a_cache_file_that_is_no_plain_file_is_not_read(
        tmp_path: Path, which: str, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sixth pass: a cache file that was a link out of the catalog was opened and trusted
    (a forged cache read from elsewhere); one that was a link to /dev/zero or a FIFO made
    every ingest exit 2."""
    import os

    from risutools.catalog import cache as cache_mod

    monkeypatch.setattr(cache_mod, "RACY_NS", 0)  # (the sources were just copied)

    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "sources", src)
    cat = tmp_path / "cat"
    first = run_cli("ingest", src, "-o", cat, "-q")
    assert first.returncode == 0, first.stderr
    cache = cat / ".risutools-cache" / which
    outside = tmp_path / "outside"
    if cache.exists():
        outside.write_bytes(cache.read_bytes())
        cache.unlink()
    else:
        outside.write_bytes(b"junk\n")
    if kind == "outside-link":
        cache.symlink_to(outside)
    elif kind == "device-link":
        cache.symlink_to("/dev/zero")
    else:
        os.mkfifo(cache)
    done = run_cli("ingest", src, "-o", cat, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["counts"]["cached"] == 0
    assert any("a symbolic link or not a regular file" in n for n in report["notices"])
    main = cat / ".risutools-cache" / "ingest.msgpack"
    assert main.is_file() and not main.is_symlink()  # (replaced by the run's own file)
    again = json.loads(run_cli("ingest", src, "-o", cat, "--json").stdout)
    assert again["counts"]["cached"] > 0 and not again["notices"]


# ---- what a killed writer left in notes/ or approvals/ ----------------------------------

@pytest.mark.parametrize("folder", ["notes", "approvals", "."])
def test_a_command_under_the_catalog_lock_sweeps_what_a_killed_writer_left(
        tmp_path: Path, folder: str) -> None:
    """A sixth pass: a `notes init` killed between linking its temp file to the notes
    file and removing the temp name left `notes/.<id>.yaml.risutools-tmp-...`, which
    nothing swept (a second `notes init` is refused and wrote nothing)."""
    cat = tmp_path / "cat"
    cat.mkdir()
    shutil.copy(SEED, cat / "doc.json")
    cid = json.loads(SEED.read_text("utf-8"))["component_id"]
    (cat / "notes").mkdir()
    (cat / "notes" / f"{cid}.yaml").write_text("notes: {}\n", "utf-8")
    (cat / "approvals").mkdir()
    dead = 4_194_303  # (past the largest pid Linux gives: no process has it)
    left = cat / folder / f".x.yaml.risutools-tmp-{dead}-0badc0de"
    left.write_text("left by a killed writer\n", "utf-8")
    done = run_cli("notes", "init", cid, "--catalog", cat, cwd=tmp_path)
    assert done.returncode == 2 and "target-exists" in done.stderr, done.stderr
    assert not left.exists()


CUTTER_ID = "module.risu.174678332.context-cutter"


def _pending_with_new_notes(cat: Path, how: str, facts: Path | None = None) -> bytes:
    """A catalog ingested (``how``: ``--ndjson`` or ``-q``) whose cutter is pending review,
    then its notes' title changed; the cutter's facts as the first ingest wrote them."""
    cat.mkdir()
    shutil.copytree(FIXTURES / "notes", cat / "notes")
    assert run_cli("ingest", FIXTURES / "sources", "-o", cat, how).returncode == 0
    old = facts.read_bytes() if facts is not None else b""
    assert run_cli("approve", CUTTER_ID, "--catalog", cat, "--action", "request_review",
                   "--reviewer", "r").returncode == 0
    assert run_cli("promote", CUTTER_ID, "--catalog", cat, "--to",
                   "pending_human_review").returncode == 0
    notes = cat / "notes" / f"{CUTTER_ID}.yaml"
    text = notes.read_text("utf-8")
    title = next(ln for ln in text.splitlines() if ln.startswith("  title: "))
    notes.write_text(text.replace(title, "  title: Cut curated"), "utf-8")
    return old


def test_an_ndjson_catalog_says_it_kept_a_reviewed_line_whose_projection_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sixth pass: a pending document's changed notes became a logged evidence line in a
    JSON catalog and were dropped silently in an NDJSON one (no line, no notice)."""
    from risutools.catalog import cache as cache_mod

    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    cat, cid = tmp_path / "cat", CUTTER_ID
    _pending_with_new_notes(cat, "--ndjson")
    before = (cat / "components.ndjson").read_bytes()
    done = run_cli("ingest", FIXTURES / "sources", "-o", cat, "--ndjson", "--json")
    assert done.returncode == 0, done.stderr
    notices = json.loads(done.stdout)["notices"]
    assert any(n.startswith(f"{cid}: kept as reviewed:") for n in notices), notices
    assert (cat / "components.ndjson").read_bytes() == before


@pytest.mark.parametrize("cache", [True, False])
def test_facts_left_behind_by_a_killed_ingest_are_written_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: bool) -> None:
    """A sixth pass: an ingest killed after a pending document's evidence (its notes
    applied) and before its facts left `facts/<id>.json` of the old projection for good:
    the next runs found the document current and kept the facts of a reviewed component."""
    from risutools.catalog import cache as cache_mod

    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    cat, cid = tmp_path / "cat", CUTTER_ID
    facts = cat / "facts" / f"{cid}.json"
    old = _pending_with_new_notes(cat, "-q", facts)
    assert run_cli("ingest", FIXTURES / "sources", "-o", cat, "-q").returncode == 0
    new = facts.read_bytes()
    assert new != old and b"Cut curated" in new
    facts.write_bytes(old)  # (the state a kill between the two renames leaves)
    args = ["ingest", FIXTURES / "sources", "-o", cat, "-q", *([] if cache else ["--no-cache"])]
    assert run_cli(*args).returncode == 0
    assert facts.read_bytes() == new
