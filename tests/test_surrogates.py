"""Text that is not Unicode (an unpaired surrogate: a JSON ``"\\ud800"`` escape, a YAML one
through PyYAML's parser, a command-line value whose bytes are not UTF-8) has no UTF-8
bytes, so no canonical form and no digest.  Wherever risutools takes such a value to hash,
canonicalise or record it, the answer is one line naming where (a JSON pointer, a line, an
option) and why, with the command's usual outcome for bad input: exit 2, or an MC000
finding; never a traceback, never a record no other command can read."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from harness import FIXTURES, SEED, SOURCES, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from risutools import yamlsafe
from risutools.canonical import canonical
from risutools.contract.loaders import load_bytes
from risutools.errors import ConfigError, UsageError
from risutools.jsonlines import unpaired_surrogate
from risutools.projection.notes import Notes

CUTTER_SRC = SOURCES / "174678332_context-cutter.risum"
SUMMARY_BAD = "\\ud800 a summary"  # as written in a JSON file


def _one_line(stderr: str) -> None:
    assert "Traceback" not in stderr and stderr.count("\n") == 1, stderr


# --------------------------------------------------------------------------- the helper

_text = st.text(alphabet=st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010), max_size=3)
_json = st.recursive(st.none() | st.integers() | _text,
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(_text, inner, max_size=3), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_the_helper_finds_what_canonical_refuses(value: Any) -> None:
    found = unpaired_surrogate(value)
    try:
        canonical(value)
    except UnicodeEncodeError:
        assert found is not None
        ptr, why = found
        assert "unpaired surrogate U+D" in why
        assert unpaired_surrogate(ptr) is None  # the pointer itself can be printed
    else:
        assert found is None


def test_the_helper_names_the_first_in_document_order() -> None:
    assert unpaired_surrogate({"a": ["x", "\udc00"], "b": "\ud800"}) == (
        "/a/1", "string holds an unpaired surrogate U+DC00 (not valid Unicode); fix the text")
    assert unpaired_surrogate({"a/b": {"k\ud801": 1}})[0] == "/a~1b"  # type: ignore[index]
    # JSON's escape pair is one character (U+1F600); two Python surrogates are not
    assert unpaired_surrogate(json.loads('{"a": "\\ud83d\\ude00"}')) is None
    assert unpaired_surrogate({"a": "\ud83d\ude00"}) is not None


# --------------------------------------------------------------------------- validate_document


@pytest.mark.parametrize("where, pointer", [
    (("projection", "summary"), "/projection/summary"),
    (("projection", "tags", 0), "/projection/tags/0"),
    (("provenance", "x-note\ud800"), "/provenance"),  # a key: its object's pointer
])
def test_validate_document_on_a_value_built_in_code(where: tuple[Any, ...],
                                                     pointer: str) -> None:
    """A document built in code may hold what no file can (the loaders refuse it): the
    loaders' finding, one MC000 error at the pointer, and nothing that would need its
    canonical form."""
    from risutools.contract.validate import validate_document

    doc = json.loads(SEED.read_text("utf-8"))
    assert validate_document(doc) == []  # the seed is clean: the finding is the surrogate's
    parent = doc
    for step in where[:-1]:
        parent = parent[step]
    parent[where[-1]] = "bad \udc80 text"
    lines = {pointer: 12}
    got = validate_document(doc, file="built.json", line=3, line_of=lines.get)
    assert [(f.rule, f.severity, f.pointer, f.file, f.line) for f in got] == [
        ("MC000", "error", pointer, "built.json", 12)]
    assert "unpaired surrogate U+D" in got[0].message
    assert validate_document(doc, line=3)[0].line == 3
    # what the loaders say of the same text in a file
    text = json.dumps(doc, ensure_ascii=True)
    (problem,) = load_bytes(text.encode(), "f.json", fmt="json").problems
    assert (problem.rule, problem.pointer, problem.message) == ("MC000", pointer, got[0].message)


# --------------------------------------------------------------------------- notes


@pytest.mark.parametrize(("data", "where"), [
    ({"notes": "notes-v1", "projection": {"summary": "a \ud800 b"}}, "/projection/summary"),
    ({"notes": "notes-v1", "payload": {"triggers": ["ok", "\udfff"]}}, "/payload/triggers/1"),
    ({"notes": "notes-v1", "payload": {"state_effects": {"k\ud800": "x"}}},
     "/payload/state_effects"),
    ({"notes": "notes-v1", "x\ud800": 1}, "(top)"),
])
def test_notes_from_dict_refuses_with_the_pointer(data: dict[str, Any], where: str) -> None:
    with pytest.raises(ConfigError) as ei:
        Notes.from_dict(data, path="n.json")
    assert ei.value.code == "notes-invalid" and ei.value.where == where
    assert "unpaired surrogate" in ei.value.one_line() and "\n" not in ei.value.one_line()


@pytest.mark.parametrize("libyaml", [True, False], ids=["libyaml", "pure"])
def test_project_with_a_json_notes_file(tmp_path: Path, libyaml: bool,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    if libyaml and not yamlsafe.HAVE_LIBYAML:
        pytest.skip("PyYAML without libyaml")  # (test_contract_yamlsafe requires it in CI)
    monkeypatch.setattr(yamlsafe, "_HAVE_LIBYAML", libyaml)
    for text in ('{"notes": "notes-v1", "projection": {"summary": "' + SUMMARY_BAD + '"}}',
                 '{"notes": "notes-v1", "projection": {"a\\udc00": "x"}}'):
        notes = tmp_path / "n.json"
        notes.write_text(text, encoding="utf-8")
        r = run_cli("project", CUTTER_SRC, "--notes", notes, cwd=tmp_path)
        assert r.returncode == 2 and r.stdout == ""
        _one_line(r.stderr)
        assert "n.json: line 1: notes-invalid:" in r.stderr
        # libyaml refuses the escape as syntax; PyYAML's parser reads it and it is refused
        assert ("surrogate" in r.stderr) != libyaml or "escape" in r.stderr


def test_a_yaml_key_through_pyyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    yamlsafe._load_yaml()
    monkeypatch.setattr(yamlsafe, "_HAVE_LIBYAML", False)
    out = load_bytes(b'a:\n  "k\\ud800": 1\n', "x.yaml", fmt="yaml")
    assert not out.documents
    [p] = out.problems
    assert p.rule == "MC000" and p.pointer == "/a" and p.line == 2
    assert "unpaired surrogate U+D800" in p.message


# --------------------------------------------------------------------------- documents


def _bad_doc(key: bool = False) -> str:
    text = SEED.read_text(encoding="utf-8")
    if key:
        return text.replace('"component_id"', '"x\\ud800y": 1, "component_id"', 1)
    doc = json.loads(text)
    doc["projection"]["summary"] = "SUMMARY"
    return json.dumps(doc, indent=1).replace("SUMMARY", SUMMARY_BAD)


def _summary_line(text: str) -> int:
    return 1 + text[:text.index(SUMMARY_BAD)].count("\n")


@pytest.mark.parametrize("command", ["validate", "verify"])
def test_validate_and_verify_name_the_pointer(tmp_path: Path, command: str) -> None:
    (tmp_path / "d.json").write_text(_bad_doc(), encoding="utf-8")
    (tmp_path / "k.json").write_text(_bad_doc(key=True), encoding="utf-8")
    line = json.dumps(json.loads(SEED.read_text("utf-8")))
    (tmp_path / "c.ndjson").write_text(
        line + "\n" + line.replace('"summary": "', '"summary": "\\udfff', 1) + "\n",
        encoding="utf-8")
    r = run_cli(command, "d.json", "k.json", "c.ndjson", "-f", "json", cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    got = sorted((f["file"], f["rule"], f.get("pointer", ""), f.get("line"))
                 for f in json.loads(r.stdout)["findings"] if f["rule"] == "MC000")
    assert got == [("c.ndjson", "MC000", "/projection/summary", 2),
                   ("d.json", "MC000", "/projection/summary", _summary_line(_bad_doc())),
                   ("k.json", "MC000", "", 1)]


def test_review_reads_a_bad_document_and_a_bad_approval(tmp_path: Path) -> None:
    cat = tmp_path / "cat"
    (cat / "approvals").mkdir(parents=True)
    (cat / "d.json").write_text(_bad_doc(), encoding="utf-8")
    (cat / "seed.json").write_text(SEED.read_text("utf-8"), encoding="utf-8")
    rec = {"component_id": "module.risu.174678332.context-cutter",
           "component_version": "1.0.0", "action": "request_review", "reviewer": "kim",
           "at": "2026-01-01T00:00:00+00:00", "base_sha256": "sha256:" + "0" * 64,
           "note": "NOTE"}
    (cat / "approvals" / "a.json").write_text(json.dumps(rec).replace("NOTE", "\\ud800"),
                                              encoding="utf-8")
    r = run_cli("review", cat, "-q", "-f", "json", cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    found = {(f["file"], f["rule"], f.get("pointer")): f["message"]
             for f in json.loads(r.stdout)["file_findings"]}
    assert set(found) == {("cat/d.json", "MC000", "/projection/summary"),
                          ("cat/approvals/a.json", "RV301", None)}, found
    assert all("unpaired surrogate U+D800" in m for m in found.values())


def test_replay_fixture_and_component(tmp_path: Path) -> None:
    fixture = yaml.safe_load((FIXTURES / "replay" / "anchor-edit.yaml").read_text("utf-8"))
    fixture["fixture"] = "FIXTURE"
    (tmp_path / "f.json").write_text(json.dumps(fixture).replace("FIXTURE", "\\ud800"),
                                     encoding="utf-8")
    (tmp_path / "doc.json").write_text(SEED.read_text("utf-8"), encoding="utf-8")
    (tmp_path / "bad.json").write_text(_bad_doc(), encoding="utf-8")
    for doc, fx in (("doc.json", "f.json"),
                    ("bad.json", str(FIXTURES / "replay" / "anchor-edit.yaml"))):
        r = run_cli("replay", "run", doc, "-x", fx, "-o", tmp_path / "r.json", cwd=tmp_path)
        assert r.returncode == 2 and not (tmp_path / "r.json").exists()
        _one_line(r.stderr)
        assert "unpaired surrogate U+D800" in r.stderr


# --------------------------------------------------------------------------- records


def test_approve_refuses_text_that_is_not_utf8(tmp_path_factory: pytest.TempPathFactory,
                                               tmp_path: Path) -> None:
    from test_catalog_support import CUTTER, fresh_catalog

    cat = fresh_catalog(tmp_path_factory, tmp_path)
    for option in ("--reviewer", "--note"):
        args = {"--reviewer": "kim", "--note": "fine", option: "k\udcffm"}  # argv byte 0xff
        r = run_cli("approve", CUTTER, "--action", "request_review", "--reviewer",
                    args["--reviewer"], "--note", args["--note"], "--catalog", cat, cwd=cat)
        assert r.returncode == 2 and not list((cat / "approvals").glob("*"))
        _one_line(r.stderr)
        assert f"usage: Invalid value for {option}: not UTF-8 text" in r.stderr
    r = run_cli("packet", CUTTER, "--lane", "light", "--actor", "\udcfe", "-o", tmp_path / "p",
                "--catalog", cat, cwd=cat)
    assert r.returncode == 2 and "Invalid value for --actor: not UTF-8" in r.stderr
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize("signed", [False, True])
def test_approve_as_a_library_refuses_text_that_is_not_utf8(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, signed: bool) -> None:
    """approve() called from code (no command line to check its arguments): one
    ``usage`` line naming the field, nothing written, nothing signed."""
    import shutil
    import subprocess

    from harness import approve
    from test_catalog_support import CUTTER, fresh_catalog

    cat = fresh_catalog(tmp_path_factory, tmp_path)
    key = None
    if signed:
        if shutil.which("ssh-keygen") is None:
            pytest.skip("ssh-keygen (openssh-client) is not installed")
        key = str(tmp_path / "key")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "kim", "-f", key],
                       check=True)
    for reviewer, note, where in (("k\udcffm", "", "--reviewer"), ("kim", "ok \ud800", "--note")):
        with pytest.raises(UsageError) as exc:
            approve(CUTTER, "request_review", reviewer, note, key, str(cat))
        assert exc.value.code == "usage"
        assert exc.value.one_line().startswith(f"{where}: usage: not UTF-8 text")
        assert "\n" not in exc.value.one_line()
        assert not list((cat / "approvals").glob("*"))
    # the same call with text is written (the refusal is the text's, not the call's)
    approve(CUTTER, "request_review", "kim", "ok", key, str(cat))
    assert len(list((cat / "approvals").glob("*"))) == 1


def test_switch_and_packet_as_a_library_refuse_text_that_is_not_utf8(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """The actor, instruction and escalation text of switch() and run_packet() called from
    code: one ``usage`` line naming the option, nothing recorded."""
    from harness import run_packet, switch
    from test_catalog_support import CUTTER, fresh_catalog, log_lines, to_promoted

    cat = fresh_catalog(tmp_path_factory, tmp_path)
    to_promoted(cat)
    before = log_lines(cat)
    with pytest.raises(UsageError) as exc:
        switch(CUTTER, "active", "runtime", False, False, str(cat), actor="k\udcffm")
    assert exc.value.one_line().startswith("--by: usage: not UTF-8 text")
    assert log_lines(cat) == before
    for args, where in ((("\udcfe", None, None), "--actor"),
                        (("kim", "do \ud800", None), "--instruction"),
                        (("kim", None, "\ud800"), "--escalates")):
        with pytest.raises(UsageError) as exc:
            run_packet(CUTTER, "light", str(tmp_path / "p"), *args, None, None, 1, str(cat))
        assert exc.value.one_line().startswith(f"{where}: usage"), where
        assert not (tmp_path / "p").exists()


def test_activate_records_a_user_name_that_is_not_utf8(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    from test_catalog_support import CUTTER, fresh_catalog, log_lines, to_promoted

    cat = fresh_catalog(tmp_path_factory, tmp_path)
    to_promoted(cat)
    r = run_cli("activate", CUTTER, "--by", "\udcff", "--catalog", cat, cwd=cat)
    assert r.returncode == 2 and "Invalid value for --by: not UTF-8" in r.stderr
    env = {**os.environ, "USER": "k\udcffm"}  # $USER whose bytes are not UTF-8
    r = run_cli("activate", CUTTER, "--catalog", cat, cwd=cat, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    rec = log_lines(cat)[-1]
    assert rec["kind"] == "runtime" and rec["actor"] == "k\\xffm"  # escaped as file names are
