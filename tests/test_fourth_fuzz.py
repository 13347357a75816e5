"""The fourth fuzzing pass's findings (nothing lost, races, environments; bench/RESULTS.md,
round 35), each test failing before:

- a YAML component document a command changed (``promote``, ``activate``, ``replay run
  --update``) was written whole by ``yaml.safe_dump``: its comments, key order as written,
  indentation and quoting gone for a one-word change;
- temp files a killed ``ingest -j 2`` left were never swept: its workers, ended but not
  reaped (zombies, where nothing reaps them, as in many containers), answered
  ``kill(pid, 0)`` as live writers;
- Ctrl-C while the program's modules load printed a Python traceback;
- under a locale whose encoding is not UTF-8 (``LC_ALL=C`` without coercion, ISO-8859-1)
  any report holding a Korean word or a ``…`` was an internal error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from harness import FIXTURES, ROOT, approve, run_cli
from hostile_catalog import catalog_copy, cli
from test_catalog_support import CUTTER

from risutools.fsio import sweep_temp_files
from risutools.replay.component import _yaml_value
from risutools.yamlpatch import patch_yaml_values

# ---- a YAML document changed where its values stand -------------------------------------

BASE = """\
# curator's header: kept
name: 컨텍스트 커터   # a comment after a value
provenance:
    review_status: candidate      # the status
    quoted: 'single'
    double: "double"
    refs:
    -   id: a
        sha: '1'
    -   id: b
        sha: '2'
    plain_list:
    - 1
    - 2
count: 7
ratio: 0.50
"""


BASE_2 = """\
# curator's header: kept
name: 컨텍스트 커터   # a comment after a value
provenance:
  review_status: candidate      # the status
  refs:
  - id: a
    sha: '1'
  - id: b
    sha: '2'
count: 7
"""


def _patched(text: str, change: dict[str, object]) -> str | None:
    old = _yaml_value(text)
    new = json.loads(json.dumps(old))
    for key, value in change.items():
        *parents, last = key.split("/")
        at = new
        for p in parents:
            at = at[int(p)] if isinstance(at, list) else at[p]
        if isinstance(at, list) and last == "+":
            at.append(value)
        else:
            at[last] = value
    got = patch_yaml_values(text, old, new, _yaml_value)
    if got is not None:
        assert _yaml_value(got) == new
    return got


@pytest.mark.parametrize("change, lines", [
    ({"provenance/review_status": "pending_human_review"},
     ["    review_status: pending_human_review      # the status"]),
    ({"provenance/quoted": "it's"}, ["    quoted: 'it''s'"]),
    ({"provenance/double": "a\"b"}, ['    double: "a\\"b"']),
    ({"provenance/review_status": "yes"}, ['    review_status: "yes"      # the status']),
    ({"provenance/review_status": "a: b"}, ['    review_status: "a: b"      # the status']),
    ({"provenance/review_status": "x\u2028y"},
     ['    review_status: "x\\u2028y"      # the status']),
    ({"count": 8, "ratio": 1.5}, ["count: 8", "ratio: 1.5"]),
    ({"provenance/refs/+": {"id": "c", "sha": "3"}}, ["    - id: c", "      sha: '3'"]),
    ({"provenance/plain_list/+": 3}, ["    - 3"]),
])
def test_only_the_changed_values_are_written(change: dict[str, object], lines: list[str]
                                             ) -> None:
    got = _patched(BASE, change)
    assert got is not None
    before, after = BASE.splitlines(), got.splitlines()
    assert [ln for ln in after if ln not in before] == lines
    assert [ln for ln in before if ln not in after] == [
        ln for ln in before if any(ln.split(":")[0].strip() == k.split("/")[-1]
                                   for k in change) and "+" not in "".join(change)]


@pytest.mark.parametrize("text", [
    BASE.replace("\n", "\r\n"),  # CRLF kept
    BASE.rstrip("\n"),  # no final newline
    BASE_2,  # two spaces, sequences not indented
])
def test_line_ends_and_indents_are_kept(text: str) -> None:
    got = _patched(text, {"provenance/review_status": "approved", "provenance/refs/+": {
        "id": "c", "sha": "3"}})
    assert got is not None
    assert got.count("\r\n") == (got.count("\n") if "\r\n" in text else 0)
    assert got.endswith("\n") is text.endswith("\n")
    assert "# curator's header: kept" in got and "# a comment after a value" in got


@pytest.mark.parametrize("text, change", [
    ("a: &x 1\nb: *x\n", {"a": 2}),  # an anchored value
    ("a: |\n  text\nb: 1\n", {"a": "other"}),  # a block scalar
    ("a: !!str 1\n", {"a": 2}),  # a tag the new value contradicts (kept: a string)
    ("a: 1\n---\na: 2\n", {"a": 3}),  # two documents (the reader refuses them)
])
def test_what_cannot_be_patched_is_written_whole(text: str, change: dict[str, object]
                                                 ) -> None:
    try:
        old = _yaml_value(text)
    except Exception:  # (refused by the reader: not a document a command changes)
        return
    new = json.loads(json.dumps(old))
    key = next(iter(change))
    if key.endswith("/+"):
        new[key[:-2]].append(change[key])
    else:
        new[key] = change[key]
    assert patch_yaml_values(text, old, new, _yaml_value) is None


def test_promote_keeps_a_yaml_document_as_written(tmp_path_factory: pytest.TempPathFactory,
                                                  tmp_path: Path) -> None:
    cat = catalog_copy(tmp_path_factory, tmp_path)
    doc = json.loads((cat / f"{CUTTER}.json").read_text("utf-8"))
    text = "# 큐레이터 메모: 지우지 마세요\n" + yaml.safe_dump(
        doc, allow_unicode=True, sort_keys=False, indent=4).replace(
        "review_status: candidate", "review_status: candidate   # 상태")
    (cat / f"{CUTTER}.json").unlink()
    (cat / f"{CUTTER}.yaml").write_text(text, "utf-8")
    approve(CUTTER, "request_review", "kim", "read it", None, str(cat))
    done = cli("promote", CUTTER, "--to", "pending_human_review", "--catalog", cat,
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    after = (cat / f"{CUTTER}.yaml").read_text("utf-8")
    changed = [(a, b) for a, b in zip(text.splitlines(), after.splitlines(), strict=True)
               if a != b]
    assert len(after.splitlines()) == len(text.splitlines())
    assert [b.strip() for _, b in changed] == [
        "review_status: pending_human_review   # 상태",
        "promotion_status: pending_human_review"]


def test_replay_update_appends_its_report_where_it_belongs(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "documents" / "seed-000-context-cutter.json").read_text())
    text = "# header\n" + yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, indent=4)
    (tmp_path / "doc.yaml").write_text(text, "utf-8")
    done = run_cli("replay", "run", tmp_path / "doc.yaml", "-x",
                   FIXTURES / "replay" / "anchor-edit.yaml", "--update", "-o",
                   tmp_path / "r" / "r.json")
    assert done.returncode == 0, done.stderr
    after = (tmp_path / "doc.yaml").read_text("utf-8")
    added = [ln for ln in after.splitlines() if ln not in text.splitlines()]
    assert after.startswith("# header\n")
    assert [ln.strip().split(":")[0] for ln in added] == [
        "availability_verdict", "- source_id", "source_version", "sha256", "replay_status"]


# ---- temp files of a writer that ended, not reaped ------------------------------------------

def test_a_zombie_writers_temp_files_are_swept(tmp_path: Path) -> None:
    pid = os.fork()
    if pid == 0:  # (the child ends at once; not waited for until the sweep is done)
        os._exit(0)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # (until it has ended, and is not reaped)
            state = Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[0]
            if state == b"Z":
                break
            time.sleep(0.001)
        assert state == b"Z"
        left = tmp_path / f".doc.json.risutools-tmp-{pid}-0badcafe"
        left.write_bytes(b"half")
        assert sweep_temp_files(tmp_path) == [left]
        assert not left.exists()
    finally:
        os.waitpid(pid, 0)


# ---- Ctrl-C while loading; a locale that is not UTF-8 ------------------------------------------

def test_an_interrupt_while_the_modules_load_is_one_line() -> None:
    code = """
import sys, runpy
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "risutools.cli":
            raise KeyboardInterrupt
        return None
sys.meta_path.insert(0, Interrupt())
runpy.run_module("risutools", run_name="__main__")
"""
    done = subprocess.run([sys.executable, "-c", code, "validate", "x"], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert done.returncode == 130
    assert done.stderr == "risutools: interrupted\n"


def test_output_is_utf8_whatever_the_locale() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LC_ALL": "C", "PYTHONCOERCECLOCALE": "0",
           "PYTHONUTF8": "0"}
    env.pop("PYTHONIOENCODING", None)
    done = subprocess.run([sys.executable, "-m", "risutools", "inspect",
                           FIXTURES / "sources" / "174678332_context-cutter.risum"],
                          capture_output=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert "컨텍스트 커터" in done.stdout.decode("utf-8")


# ---- JSON documents: appended items and whole rewrites keep the file's layout --------------

def _odd_json(doc: dict[str, object]) -> bytes:
    """A document as a user may keep it: tabs, CRLF, a byte-order mark, escaped text,
    numbers spelled their own way."""
    text = json.dumps(doc, ensure_ascii=True, indent="\t").replace("\n", "\r\n")
    return b"\xef\xbb\xbf" + text.encode("ascii") + b"\r\n"


def test_replay_update_of_a_json_document_keeps_its_layout(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "documents" / "seed-000-context-cutter.json").read_text())
    raw = _odd_json(doc)
    (tmp_path / "doc.json").write_bytes(raw)
    done = run_cli("replay", "run", tmp_path / "doc.json", "-x",
                   FIXTURES / "replay" / "anchor-edit.yaml", "--update", "-o",
                   tmp_path / "r" / "r.json")
    assert done.returncode == 0, done.stderr
    after = (tmp_path / "doc.json").read_bytes()
    assert after.startswith(b"\xef\xbb\xbf") and after.count(b"\r\n") == after.count(b"\n")
    assert after[3:].isascii() and b"\\u" in after  # (escapes kept: the text as written)
    before_lines, after_lines = raw.split(b"\r\n"), after.split(b"\r\n")
    assert len(after_lines) == len(before_lines) + 5  # (one source_refs entry: 5 lines)
    assert all(ln.startswith(b"\t") or ln in (b"{", b"}", b"") or ln.startswith(b"\xef")
               for ln in after_lines)


def test_a_json_document_written_whole_keeps_tabs_crlf_and_bom() -> None:
    """A change of shape the patch cannot make (a key added): written whole, the layout's
    indentation, line ends and byte-order mark kept."""
    from risutools.replay.component import ComponentFile, dump_component

    doc = {"a": 1, "b": ["x"]}
    raw = _odd_json(doc)
    new = {"a": 1, "b": ["x"], "c": "새 값"}
    out = dump_component(ComponentFile(Path("d.json"), raw, doc, "json", 1), new)
    assert out.startswith(b"\xef\xbb\xbf") and b"\r\n\t\"c\"" in out
    assert json.loads(out.decode("utf-8-sig")) == new


# ---- NDJSON lines, unreadable documents, ingest over a user's layout ----------------------

def test_promote_in_an_ndjson_catalog_keeps_crlf_and_bom(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = catalog_copy(tmp_path_factory, tmp_path)
    docs = sorted(cat.glob("*.json"))
    lines = [json.dumps(json.loads(p.read_text("utf-8")), ensure_ascii=False) for p in docs]
    first = next(i for i, p in enumerate(docs) if p.stem == CUTTER)
    lines.insert(0, lines.pop(first))  # (the promoted document on the first line)
    for p in docs:
        p.unlink()
    (cat / "components.ndjson").write_bytes(
        b"\xef\xbb\xbf" + "\r\n".join(lines).encode("utf-8") + b"\r\n")
    approve(CUTTER, "request_review", "kim", "read it", None, str(cat))
    done = cli("promote", CUTTER, "--to", "pending_human_review", "--catalog", cat,
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    after = (cat / "components.ndjson").read_bytes()
    assert after.startswith(b"\xef\xbb\xbf")
    assert after.count(b"\r\n") == after.count(b"\n") == len(lines)
    assert b"pending_human_review" in after.split(b"\r\n")[0]


def test_an_unreadable_document_named_by_id_says_why(tmp_path_factory: pytest.TempPathFactory,
                                                     tmp_path: Path) -> None:
    cat = catalog_copy(tmp_path_factory, tmp_path)
    path = cat / f"{CUTTER}.json"
    text = path.read_text("utf-8")
    path.write_text(text.replace('"review_status"', '"review_status": "x", "review_status"',
                                 1), "utf-8")
    for args in (("approve", CUTTER, "--action", "request_review", "--reviewer", "kim"),
                 ("promote", CUTTER, "--to", "pending_human_review")):
        done = cli(*args, "--catalog", cat, cwd=tmp_path)
        assert done.returncode == 2
        assert "unreadable-document" in done.stderr and "duplicate key" in done.stderr


def test_ingest_again_keeps_a_document_the_user_reformatted(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    source = FIXTURES / "sources" / "182004771_net-summarizer.risum"
    (tmp_path / "src" / source.name).write_bytes(source.read_bytes())
    assert run_cli("ingest", tmp_path / "src", "-o", tmp_path / "cat", "-j", "1", "-q",
                   "--no-cache").returncode == 0
    (doc,) = (tmp_path / "cat").glob("module.risu.*.json")
    mine = _odd_json(json.loads(doc.read_text("utf-8")))
    doc.write_bytes(mine)
    done = run_cli("ingest", tmp_path / "src", "-o", tmp_path / "cat", "-j", "1", "-q",
                   "--no-cache")
    assert done.returncode == 0, done.stderr
    assert doc.read_bytes() == mine


def test_ingest_ndjson_again_keeps_the_users_lines(tmp_path: Path) -> None:
    """A ``components.ndjson`` saved with a byte-order mark and CRLF, one line's text
    escaped: the same inputs again rewrote its lines in ingest's spelling."""
    (tmp_path / "src").mkdir()
    for name in ("182004771_net-summarizer.risum", "174678332_context-cutter.risum"):
        (tmp_path / "src" / name).write_bytes((FIXTURES / "sources" / name).read_bytes())
    cat = tmp_path / "cat"
    assert run_cli("ingest", tmp_path / "src", "-o", cat, "--ndjson", "-j", "1", "-q",
                   "--no-cache").returncode == 0
    (path,) = cat.glob("*.ndjson")
    lines = path.read_bytes().decode("utf-8").splitlines()
    lines[1] = json.dumps(json.loads(lines[1]), ensure_ascii=True)
    mine = b"\xef\xbb\xbf" + "\r\n".join(lines).encode("utf-8") + b"\r\n"
    path.write_bytes(mine)
    done = run_cli("ingest", tmp_path / "src", "-o", cat, "--ndjson", "-j", "1", "-q",
                   "--no-cache")
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == mine
