"""Notes that hold (issue 20): notes are found by the component's stable id and by any slug
alias, a repost keeps its notes (`for:` its RisuAI id or source digest), a notes file that
matches no component is reported, and a curator can add a missed `requires`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from harness import FIXTURES, run_cli

CUTTER = "module.risu.174678332.context-cutter"
SOURCE = FIXTURES / "sources" / "174678332_context-cutter.risum"
NOTES = FIXTURES / "notes" / f"{CUTTER}.yaml"


def _catalog(tmp: Path, notes: dict[str, dict[str, object]], source_name: str) -> Path:
    src = tmp / "src"
    src.mkdir()
    shutil.copy(SOURCE, src / source_name)
    cat = tmp / "cat"
    (cat / "notes").mkdir(parents=True)
    base = yaml.safe_load(NOTES.read_text("utf-8"))
    for name, change in notes.items():
        (cat / "notes" / name).write_text(
            yaml.safe_dump({**base, **change}, allow_unicode=True, sort_keys=False), "utf-8")
    return cat


def _ingest(tmp: Path, cat: Path) -> tuple[int, str]:
    r = run_cli("ingest", tmp / "src", "-o", cat, "--lang", "ko", "-j", "1", "--no-cache")
    return r.returncode, r.stderr


def test_a_slug_in_the_notes_is_an_alias_verify_and_packets_follow(tmp_path: Path) -> None:
    cat = _catalog(tmp_path, {f"{CUTTER}.yaml": {"slug": "renamed-cutter"}},
                   SOURCE.name)
    code, err = _ingest(tmp_path, cat)
    assert code == 0 and "notice" not in err, err
    doc = cat / "module.risu.174678332.renamed-cutter.json"
    assert doc.is_file()
    v = run_cli("verify", doc, "-f", "json", "--sources", tmp_path / "src")
    data = json.loads(v.stdout)
    notes = [x for x in data["verifications"] if "notes" in x.get("detail", "")
             or x.get("source", "").endswith("notes.yaml")]
    assert notes and all(x["status"] == "verified" for x in notes), data["verifications"]
    assert "MC202" not in v.stdout
    out = tmp_path / "packets"
    r = run_cli("packet", "module.risu.174678332.renamed-cutter", "--lane", "full", "-o", out,
                "--catalog", cat)
    assert r.returncode == 0, r.stderr
    (pk,) = out.glob("*.json")
    assert json.loads(pk.read_text())["relations"]["notes"]["slug"] == "renamed-cutter"


def test_a_repost_keeps_its_notes_by_source_digest_or_risuai_id(tmp_path: Path) -> None:
    import hashlib

    digest = "sha256:" + hashlib.sha256(SOURCE.read_bytes()).hexdigest()
    for i, target in enumerate(({"source_sha256": digest},
                                {"risuai_id": "6b1f7c1e-3a52-4d8e-9c0f-174678332001"})):
        tmp = tmp_path / str(i)
        tmp.mkdir()
        # the same module, reposted under a new post id; its notes keep their old name
        cat = _catalog(tmp, {f"{CUTTER}.yaml": {"for": target}}, "999000001_cutter.risum")
        code, err = _ingest(tmp, cat)
        assert code == 0 and "notice" not in err, err
        doc = json.loads((cat / "module.risu.999000001.context-cutter.json").read_text())
        assert doc["capabilities"]["provides"] == ["context.token_budget",
                                                   "context.anchor_continuity",
                                                   "context.protected_roles"]
        assert any(r["source_version"] == "notes.yaml" for r in doc["provenance"]["source_refs"])


def test_a_notes_file_matching_no_component_is_reported(tmp_path: Path) -> None:
    cat = _catalog(tmp_path, {f"{CUTTER}.yaml": {},
                              "module.risu.123.misspelled.yaml": {}}, SOURCE.name)
    code, err = _ingest(tmp_path, cat)
    assert code == 0
    (line,) = [x for x in err.splitlines() if "notice" in x]
    assert "notes/module.risu.123.misspelled.yaml: matches no component" in line
    rv = run_cli("review", cat, "-f", "concise")
    assert "module.risu.123.misspelled.yaml" in rv.stdout and "RV601" in rv.stdout


@pytest.mark.parametrize("bad", [{"slug": 5}, {"capabilities": "all"}, {"for": [1]}])
@pytest.mark.parametrize("cache", [False, True])
def test_a_notes_file_that_fails_its_component_is_said_once(
        tmp_path: Path, bad: dict[str, object], cache: bool) -> None:
    """A notes file named after a component of the run, that cannot be read, fails that
    source in one line; it is not also said to match no component (it did), on a first run
    or on one that takes the failure from the cache."""
    cat = _catalog(tmp_path, {f"{CUTTER}.yaml": bad}, SOURCE.name)
    for _ in range(2 if cache else 1):
        r = run_cli("ingest", tmp_path / "src", "-o", cat, "--lang", "ko", "-j", "1",
                    *(() if cache else ("--no-cache",)))
        assert r.returncode == 1
        lines = [x for x in r.stderr.splitlines() if x.strip()]
        assert len(lines) == 1 and f"notes/{CUTTER}.yaml" in lines[0], r.stderr
        assert "matches no component" not in r.stderr


def test_a_curator_adds_a_missed_requires(tmp_path: Path) -> None:
    cat = _catalog(tmp_path, {f"{CUTTER}.yaml": {
        "capabilities": {"provides": ["context.token_budget"],
                         "requires": ["hook.edit_request"]}}}, SOURCE.name)
    code, err = _ingest(tmp_path, cat)
    assert code == 0, err
    doc = json.loads((cat / f"{CUTTER}.json").read_text())
    assert doc["capabilities"]["requires"] == ["hook.edit_request"]
    assert run_cli("validate", cat / f"{CUTTER}.json").returncode in (0, 1)


def _scaffolded(tmp: Path) -> tuple[Path, Path]:
    """A catalog ingested without notes, and the notes file `notes init` wrote for the
    cutter (as a curator gets it)."""
    cat = tmp / "cat"
    src = tmp / "src"
    src.mkdir()
    shutil.copy(SOURCE, src / SOURCE.name)
    code, err = _ingest(tmp, cat)
    assert code == 0, err
    r = run_cli("notes", "init", CUTTER, cwd=cat)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (f"wrote notes/{CUTTER}.yaml: the notes of {CUTTER} (uncomment a field "
                        "and fill it; `risutools ingest` applies them)\n")
    return cat, cat / "notes" / f"{CUTTER}.yaml"


def test_notes_init_scaffolds_every_field_and_the_reader_accepts_it(tmp_path: Path) -> None:
    from risutools.projection.notes import load_notes

    cat, notes = _scaffolded(tmp_path)
    text = notes.read_text("utf-8")
    assert load_notes(notes).data == {"notes": "notes-v1"}  # only the marker is live
    for field in ("# slug: \"context-cutter\"", "# for:", "#   risuai_id:", "#   source_sha256:",
                  "# capabilities:", "#   provides:", "#   requires: [\"hook.edit_request\"",
                  "#   conflicts: []", "#   controller: \"user\"", "#   triggers:",
                  "#   state_effects:", "#   activation_rules:", "#   invariants:",
                  "#   boundaries:", "# idea_layers:", "#     lead_id:", "#     core_idea:",
                  "#   swappable_parts:", "#     origin:", "# projection:", "#   title:",
                  "#   prompt:", "#   summary:", "#   tags:", "#   flagship: false",
                  "#   core: false", "#   content_labels:", "#   harness_compatibility:"):
        assert f"\n{field}" in text, field
    # a second init refuses, one line, the file left as it was
    again = run_cli("notes", "init", CUTTER, "--catalog", cat)
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr == (f"risutools: notes/{CUTTER}.yaml: target-exists: {CUTTER} already "
                            "has a notes file; edit it (nothing written)\n")
    assert notes.read_text("utf-8") == text


def test_notes_init_refuses_a_component_whose_notes_have_another_name(tmp_path: Path) -> None:
    cat, notes = _scaffolded(tmp_path)
    alias = notes.with_name("module.risu.174678332.old-name.yaml")  # a slug alias
    notes.rename(alias)
    r = run_cli("notes", "init", CUTTER, "--catalog", cat)
    assert r.returncode == 2 and "notes/module.risu.174678332.old-name.yaml: target-exists" \
        in r.stderr, r.stderr
    assert not notes.exists()


def test_a_scaffold_filled_with_a_requires_reaches_the_document(tmp_path: Path) -> None:
    cat, notes = _scaffolded(tmp_path)
    before = json.loads((cat / f"{CUTTER}.json").read_text())
    assert before["capabilities"]["requires"] == ["hook.edit_request", "chat_state_kv",
                                                  "global_state_kv"]
    lines = notes.read_text("utf-8").splitlines()
    caps = lines.index("# capabilities:")
    lines[caps] = "capabilities:"
    req = next(i for i, ln in enumerate(lines) if ln.startswith("#   requires: "))
    assert lines[req].startswith('#   requires: ["hook.edit_request", "chat_state_kv", '
                                 '"global_state_kv"]  # ')
    lines[req] = '  requires: ["hook.edit_request", "global_state_kv", "hook.chat_start"]'
    notes.write_text("\n".join(lines) + "\n", "utf-8")
    code, err = _ingest(tmp_path, cat)
    assert code == 0, err
    doc = json.loads((cat / f"{CUTTER}.json").read_text())
    assert doc["capabilities"]["requires"] == ["hook.edit_request", "global_state_kv",
                                               "hook.chat_start"]
    assert doc["capabilities"]["provides"] == before["capabilities"]["provides"]
    assert any(r["source_version"] == "notes.yaml" for r in doc["provenance"]["source_refs"])


def test_a_scaffold_keeps_a_hostile_value_inside_its_comment(tmp_path: Path) -> None:
    from risutools.projection.notes import validate_notes
    from risutools.projection.notes_scaffold import scaffold

    doc = json.loads((FIXTURES / "documents" / "seed-000-context-cutter.json").read_text())
    doc["projection"]["title"] = "a\u2028slug: evil\u0085b\nc\u202e"
    text = scaffold(doc)
    assert "\u2028" not in text and "\u0085" not in text and "\u202e" not in text
    assert '#   title: "a\\u2028slug: evil\\u0085b\\nc\\u202e"  # a sentence' in text
    data = yaml.safe_load(text)
    assert data == {"notes": "notes-v1"}
    validate_notes(data)
