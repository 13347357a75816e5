"""A standard stream closed when the program starts (``>&-``, ``2>&-``, ``<&-``).

Python leaves ``sys.stdout`` (``sys.stdin``, ``sys.stderr``) ``None`` then, and every command
that printed its report or summary ended in "internal error: AttributeError: 'NoneType'
object has no attribute 'flush'"; ``validate -`` with standard input closed, the same.  And a
closed descriptor is the lowest free number: the first file the program opens takes it, so
what is written "to standard error" later lands in that file.  Now the descriptor is held by
the null device from the start, a report that cannot be printed is one line (``standard
output: unwritable``, exit 2, as ``> /dev/full``), and a closed input is one line too.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ROOT, SEED, SOURCES

from risutools.errors import Code
from risutools.targets import path_error_line

PY = [sys.executable, "-m", "risutools"]


def _closed(args: list[str], closes: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``risutools ARGS`` under a shell that closes the descriptors ``closes`` names
    (``>&-`` and so on) before the program starts; standard error captured unless closed."""
    line = " ".join(f"'{a}'" for a in [*PY, *args]) + " " + closes
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("RISUTOOLS_DEBUG", None)
    return subprocess.run(["/bin/sh", "-c", f"exec {line}"], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120, check=False)


@pytest.mark.parametrize("args", [
    ["validate", str(SEED)],
    ["validate", "-f", "json", str(SEED)],
    ["--help"],
    ["validate", "--help"],
])
def test_a_report_to_a_closed_output_is_one_line(args: list[str], tmp_path: Path) -> None:
    r = _closed(args, ">&-", tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert "standard output" in lines[0] and "closed when the program started" in lines[0]
    assert "internal error" not in r.stderr


def test_a_report_to_a_file_is_unaffected_by_a_closed_output(tmp_path: Path) -> None:
    r = _closed(["validate", str(SEED), "-o", str(tmp_path / "r.txt")], ">&-", tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert (tmp_path / "r.txt").read_bytes()


def test_ingest_writes_its_catalog_then_says_the_summary_could_not_be_printed(
        tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(SOURCES / "174678332_context-cutter.risum", src)
    r = _closed(["ingest", str(src), "-o", str(tmp_path / "cat"), "--no-cache", "-j", "1"],
                ">&-", tmp_path)
    assert r.returncode == 2
    assert len(r.stderr.splitlines()) == 1 and "standard output" in r.stderr, r.stderr
    assert list((tmp_path / "cat").glob("*.json"))  # (the catalog was written first)


def test_a_closed_input_is_one_line(tmp_path: Path) -> None:
    r = _closed(["validate", "-"], "<&-", tmp_path)
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("risutools: -: ") and "cannot read" in lines[0]
    assert "internal error" not in r.stderr


def test_a_closed_error_stream_changes_nothing_written(tmp_path: Path) -> None:
    """With standard error closed, ``ingest`` writes the same catalog as with it open
    (nothing the program says lands in a file it opened at descriptor 2)."""
    src = tmp_path / "src"
    src.mkdir()
    for f in sorted(SOURCES.iterdir())[:3]:
        shutil.copy(f, src)
    a = _closed(["ingest", str(src), "-o", str(tmp_path / "a"), "--no-cache", "-j", "1"],
                "2>&-", tmp_path)
    b = _closed(["ingest", str(src), "-o", str(tmp_path / "b"), "--no-cache", "-j", "1"],
                "", tmp_path)
    assert a.returncode == b.returncode == 0, b.stderr
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*"))
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*"))
    assert files_a == files_b and files_a
    for rel in files_a:
        if (tmp_path / "a" / rel).is_file():
            assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()


def test_the_first_file_opened_never_takes_a_closed_descriptor(tmp_path: Path) -> None:
    """The class: after the start, every standard descriptor that was closed is held, so the
    program's first ``open`` gets 3 or more, whichever of them were closed."""
    code = ("import os, sys; from risutools import stdstreams; "
            "closed = stdstreams.occupy_closed(); "
            f"fd = os.open({str(tmp_path / 'f')!r}, os.O_WRONLY | os.O_CREAT); "
            f"open({str(tmp_path / 'out')!r}, 'w').write(f'{{closed}} {{fd}}')")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for closes, expect in (("<&- >&- 2>&-", (0, 1, 2)), ("2>&-", (2,)), (">&-", (1,)),
                           ("<&-", (0,)), ("", ())):
        subprocess.run(["/bin/sh", "-c", f"exec '{sys.executable}' -c \"{code}\" {closes}"],
                       env=env, check=True, timeout=60)
        closed, fd = (tmp_path / "out").read_text().rsplit(" ", 1)
        assert closed == repr(expect) and int(fd) >= 3, (closes, closed, fd)


@pytest.mark.parametrize("err", [errno.EMFILE, errno.ENFILE, errno.ENOMEM])
def test_a_system_limit_is_one_line_not_an_internal_error(err: int) -> None:
    """The class beside closed streams: the system refused a resource (a pool's workers
    started past ``ulimit -n``: EMFILE from ``fork``, no file named) was "internal error
    ... please report it"; now ``system-limit``, one line, exit 2 (a path named when the
    error has one)."""
    line = path_error_line(OSError(err, os.strerror(err)))
    assert line is not None and line.code == Code.SYSTEM_LIMIT
    named = path_error_line(OSError(err, os.strerror(err), "a.risum"))
    assert named is not None and "a.risum" in str(named)
    assert path_error_line(OSError(errno.EACCES, "denied")) is None  # (not a limit)


def test_a_pool_started_past_the_open_files_limit_is_one_line(tmp_path: Path) -> None:
    """``ingest -j 2`` under ``ulimit -n 12``: the pool cannot start its workers."""
    line = " ".join(f"'{a}'" for a in [*PY, "ingest", str(SOURCES), "-o", str(tmp_path / "c"),
                                       "--no-cache", "-j", "2"])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("RISUTOOLS_DEBUG", None)
    r = subprocess.run(["/bin/sh", "-c", f"ulimit -n 12 && exec {line}"], capture_output=True,
                       text=True, env=env, timeout=120, check=False)
    if r.returncode == 0:  # (this machine's Python started the pool within the limit)
        pytest.skip("the pool started within 12 open files here")
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "system-limit" in lines[0], r.stderr
    assert "internal error" not in r.stderr
