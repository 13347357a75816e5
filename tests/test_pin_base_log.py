"""``--base-log FILE`` (``validate``, ``review``): the pull request's transition log must
extend the base branch's, byte for byte (MC306; pin44).

A rollback -- lines cut off the end of ``transitions.ndjson`` and the documents put back as
they were -- reads as an older catalog that every other check passes: only the base
branch's log tells.  Each attack below fails with MC306 naming the first line that differs
and why; a base log that cannot be read stops the run (exit 2, one line), never reads as an
empty base."""

from __future__ import annotations

import json
import os
import shutil
import tracemalloc
from pathlib import Path

import pytest
from harness import run_cli
from test_catalog_support import CUTTER, approved_with_evidence, fresh_catalog

from risutools.contract.baselog import compare_logs

LOG = "transitions.ndjson"
COMMANDS = [("validate",), ("review", "-q")]


def _ok(*args: str | Path) -> None:
    r = run_cli(*args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The cutter approved, its replay evidence recorded (``before``: the catalog then,
    three log lines), then switched on (``after``: four lines, the base branch)."""
    home = tmp_path_factory.mktemp("walked")
    cat = fresh_catalog(tmp_path_factory, home)
    approved_with_evidence(cat)
    before = home / "before"
    shutil.copytree(cat, before)
    _ok("approve", CUTTER, "--action", "activate", "--reviewer", "kim", "--catalog", cat)
    _ok("activate", CUTTER, "--catalog", cat)
    _ok("validate", cat)
    return before, cat


@pytest.fixture
def pr(walked: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A pull request's checkout (a copy of the base branch's catalog) and the base
    branch's log (a copy taken apart, as CI takes it)."""
    cat = tmp_path / "pr"
    shutil.copytree(walked[1], cat)
    base = tmp_path / "base.ndjson"
    shutil.copy(walked[1] / LOG, base)
    return cat, base


def _lines(cat: Path) -> list[bytes]:
    return (cat / LOG).read_bytes().splitlines(keepends=True)


def _mc306(cat: Path, base: Path, command: tuple[str, ...]) -> list[str]:
    r = run_cli(*command, cat, "--base-log", base, "-f", "concise")
    assert r.returncode == 1, (command, r.stdout, r.stderr)
    found = [x for x in r.stdout.splitlines() if " MC306 " in x]
    assert found, (command, r.stdout)
    return found


def test_a_rollback_passes_every_check_but_the_base_log(walked: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    """The activation's line cut off the log and the document put back as it was: an older
    catalog, which validate and review pass; the base branch's log refuses it."""
    before, after = walked
    cat = tmp_path / "pr"
    shutil.copytree(before, cat)  # the documents as they were before the activation
    assert _lines(cat) == _lines(after)[:3]  # (the log: the base's, its last line cut off)
    base = tmp_path / "base.ndjson"
    shutil.copy(after / LOG, base)
    for command in COMMANDS:
        _ok(*command, cat)  # the hole: nothing else tells
        [line] = _mc306(cat, base, command)
        assert f"{LOG}:4:" in line and "line 4 is not the base branch's line 4" in line, line
        assert "the base branch's last line is cut off" in line, line
        assert "append-only" in line and "keep the base branch's 4 lines" in line, line


@pytest.mark.parametrize("command", COMMANDS)
def test_the_unchanged_log_and_appended_lines_pass(pr: tuple[Path, Path],
                                                   command: tuple[str, ...]) -> None:
    cat, base = pr
    _ok(*command, cat, "--base-log", base)
    base.write_bytes(b"".join(_lines(cat)[:2]))  # the base branch had two lines: 3, 4 added
    _ok(*command, cat, "--base-log", base)


@pytest.mark.parametrize("command", COMMANDS)
def test_an_empty_base_log_is_extended_by_every_log(pr: tuple[Path, Path],
                                                    command: tuple[str, ...]) -> None:
    """An empty file is a base branch with no line yet (not a missing file)."""
    cat, base = pr
    base.write_bytes(b"")
    _ok(*command, cat, "--base-log", base)


def _edit_line_2(lines: list[bytes]) -> list[bytes]:
    rec = json.loads(lines[1])
    rec["at"] = "2020-01-01T00:00:00+00:00"
    return [lines[0], json.dumps(rec, separators=(",", ":")).encode() + b"\n", *lines[2:]]


def _reorder_keys_of_line_3(lines: list[bytes]) -> list[bytes]:
    rec = json.loads(lines[2])
    text = json.dumps(dict(reversed(list(rec.items()))), ensure_ascii=False,
                      separators=(",", ":"))
    return [*lines[:2], text.encode() + b"\n", lines[3]]


#: (name, the pull request's log from the base's lines, the line MC306 names, its why)
ATTACKS = [
    ("truncated", lambda ls: ls[:2], 3, "the base branch's lines 3-4 are cut off"),
    ("emptied", lambda ls: [], 1, "the base branch's lines 1-4 are cut off"),
    ("cut mid-line", lambda ls: [*ls[:3], ls[3][:40]], 4, "the line is cut short"),
    ("a middle line edited", _edit_line_2, 2, "the line was edited, removed or moved"),
    ("a middle line removed", lambda ls: [ls[0], *ls[2:]], 2,
     "the base branch's line was removed"),
    ("two lines swapped", lambda ls: [ls[0], ls[2], ls[1], ls[3]], 2,
     "the line and the next were swapped"),
    ("a line moved to the end", lambda ls: [ls[0], ls[2], ls[3], ls[1]], 2,
     "the base branch's line was removed"),
    ("CRLF", lambda ls: [x.replace(b"\n", b"\r\n") for x in ls], 1,
     "its line ending was changed"),
    ("CRLF on the last line", lambda ls: [*ls[:3], ls[3].replace(b"\n", b"\r\n")], 4,
     "its line ending was changed"),
    ("BOM", lambda ls: [b"\xef\xbb\xbf" + ls[0], *ls[1:]], 1, "a byte order mark"),
    ("key order", _reorder_keys_of_line_3, 3, "the same record written with other bytes"),
    ("text added to a line", lambda ls: [*ls[:3], ls[3][:-1] + b" \n"], 4,
     "text was added to the end of the line"),
    ("a new line inserted before the last", lambda ls: [*ls[:3], ls[1], ls[3]], 4,
     "the line was edited, removed or moved"),
]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("name", "attack", "line", "why"), ATTACKS, ids=[a[0] for a in ATTACKS])
def test_a_log_that_does_not_extend_the_base_fails(pr: tuple[Path, Path],
                                                   command: tuple[str, ...], name: str,
                                                   attack: object, line: int,
                                                   why: str) -> None:
    cat, base = pr
    assert callable(attack)
    (cat / LOG).write_bytes(b"".join(attack(_lines(cat))))
    [found] = _mc306(cat, base, command)
    assert f"{LOG}:{line}:" in found and f"line {line} is not the base branch's line {line}" \
        in found, (name, found)
    assert why in found and "append-only" in found, (name, found)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_removed_log_fails(pr: tuple[Path, Path], command: tuple[str, ...]) -> None:
    cat, base = pr
    (cat / LOG).unlink()
    found = _mc306(cat, base, command)
    assert any("lines 1-4 are cut off" in x for x in found), found


@pytest.mark.parametrize("command", COMMANDS)
def test_a_base_line_without_a_line_feed_is_not_continued(pr: tuple[Path, Path],
                                                          command: tuple[str, ...]) -> None:
    """The base branch's last line has no line feed: the log may add one and go on, never
    write on that line."""
    cat, base = pr
    lines = _lines(cat)
    base.write_bytes(b"".join(lines[:3])[:-1])
    _ok(*command, cat, "--base-log", base)  # the line feed, then line 4: an append
    (cat / LOG).write_bytes(b"".join(lines[:3])[:-1] + b" " + b"\n" + lines[3])
    [found] = _mc306(cat, base, command)
    assert f"{LOG}:3:" in found and "text was added" in found, found


@pytest.mark.parametrize("command", COMMANDS)
def test_a_log_that_cannot_be_read_fails(pr: tuple[Path, Path], command: tuple[str, ...]
                                         ) -> None:
    cat, base = pr
    (cat / LOG).unlink()
    os.mkfifo(cat / LOG)
    found = _mc306(cat, base, command)
    assert any("cannot be read" in x and "FIFO" in x for x in found), found


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("kind", ["missing", "fifo", "folder", "dangling link"])
def test_a_base_log_that_cannot_be_read_stops_the_run(pr: tuple[Path, Path], tmp_path: Path,
                                                      command: tuple[str, ...],
                                                      kind: str) -> None:
    """Never an empty base: exit 2, one line naming the option and the file."""
    cat, _ = pr
    base = tmp_path / "gone.ndjson"
    if kind == "fifo":
        os.mkfifo(base)  # (with no writer: a read would wait for ever)
    elif kind == "folder":
        base.mkdir()
    elif kind == "dangling link":
        base.symlink_to(tmp_path / "nothing")
    r = run_cli(*command, cat, "--base-log", base)
    assert r.returncode == 2, (kind, r.stdout, r.stderr)
    assert r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr
    assert "gone.ndjson" in r.stderr and "--base-log" in r.stderr, r.stderr
    code = "not-found" if kind in ("missing", "dangling link") else "not-a-file"
    assert code in r.stderr, r.stderr


def test_the_comparison_streams(tmp_path: Path) -> None:
    """Two logs of 24 MB compared (the last byte differs) with a few MB at most held."""
    root = tmp_path / "cat"
    root.mkdir()
    line = json.dumps({"component_id": "x" * 200}).encode() + b"\n"
    body = line * (24_000_000 // len(line))
    (tmp_path / "base.ndjson").write_bytes(body)
    (root / LOG).write_bytes(body[:-2] + b"!\n")
    tracemalloc.start()
    try:
        got = compare_logs(tmp_path / "base.ndjson", root)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got is not None and got.line == body.count(b"\n"), got
    assert peak < 8_000_000, peak


def test_standard_input_compares_the_catalog_above_the_working_folder(
        pr: tuple[Path, Path]) -> None:
    """``validate -`` reads the catalog above the working folder for MC305: MC306 too."""
    cat, base = pr
    (cat / LOG).write_bytes(b"".join(_lines(cat)[:3]))
    doc = (cat / f"{CUTTER}.json").read_bytes()
    r = run_cli("validate", "-", "--base-log", base, "-f", "concise", stdin=doc, cwd=cat)
    assert r.returncode == 1 and " MC306 " in r.stdout, (r.stdout, r.stderr)
    assert "lines 4" not in r.stdout and "last line is cut off" in r.stdout, r.stdout
