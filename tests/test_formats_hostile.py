"""The hostile corpus: every input made to cost memory or time is refused in one line.

Each input runs in a child process under a hard address-space cap (RLIMIT_AS,
600 MB: an input that escaped its bound would die with MemoryError instead of
being refused with its code), through the library and through ``risutools
inspect``; the child's peak resident memory must stay under the documented goal
(300 MB).  Time is not asserted here (bench/bench_formats.py records it); a
child that hangs fails the test through the subprocess timeout.
"""

from __future__ import annotations

import importlib.util
import io
import os
import resource
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from harness import ROOT

CAP = 600 * 1024 * 1024
GOAL_KB = 300 * 1024
HANG_GUARD = 300  # seconds; a hang is a failure, not a measurement

# file -> the error code it must be refused with (the CLI line carries it too)
EXPECTED = {
    "zip-bzip2-bomb.charx": "zip-unsupported-method",
    "zip-lzma-bomb.charx": "zip-unsupported-method",
    "zip-deflate-ratio.charx": "zip-bomb",
    "zip-eocd-offset-trick.charx": "zip-invalid",
    "zip-eocd-many.charx": "zip-invalid",
    "risup-envelope-bomb.risup": "too-large",
    "risup-deep.risupreset": "json-too-deep",
    "risup-preset-bomb.risup": "too-large",
    "json-quadratic.json": "json-too-deep",  # the first problem: 300 levels, before the string
    "json-containers.json": "too-large",
    "json-values.json": "too-large",
    "risum-containers.risum": "too-large",
    "zero-link.json": "not-a-file",
    "zero-link.risum": "not-a-file",
    "zero-link.charx": "not-a-file",
    "fifo.risum": "not-a-file",
    "folder.risum": "not-a-file",
    "folder-link.charx": "not-a-file",
}

# file -> the warning it is read with: RisuAI's reader (fflate's Unzip) keeps what a member
# inflates whatever size it declares, and skips one past 50 MiB (here never inflated past it)
READ = {
    "zip-deflate-bomb.charx": "module-too-large",  # declares 1 KiB, inflates 1 GiB
    "zip-stored-bomb.charx": "zip-size-mismatch",  # declares 4 GiB, holds the module
}

LIBRARY = """
import sys
from risutools.errors import RisuError
from risutools.formats import detect, read_path
try:
    detect(sys.argv[1])
    line = "ok " + " ".join(a.code for m in read_path(sys.argv[1]) for a in m.anomalies)
except RisuError as exc:
    line = exc.one_line()
# (VmHWM: this process's own peak; ru_maxrss starts at the test runner's, carried over
# the exec: a runner past 300 MB failed every case here)
print(next(ln for ln in open("/proc/self/status") if ln.startswith("VmHWM")).split()[1])
print(line)
"""


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "build_fixtures", ROOT / "fixtures" / "build_fixtures.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["build_fixtures"] = mod
    spec.loader.exec_module(mod)
    return mod


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("RISUTOOLS_DEBUG", None)
    return subprocess.run(
        args, capture_output=True, text=True, timeout=HANG_GUARD, preexec_fn=_cap, env=env,
        check=False, cwd=ROOT,
    )  # fmt: skip


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    b = _builder()
    for name, data in {**b.hostile(64), **b.hostile_large()}.items():
        (folder / name).write_bytes(data)
    for name in ("zero-link.json", "zero-link.risum", "zero-link.charx"):
        (folder / name).symlink_to("/dev/zero")
    os.mkfifo(folder / "fifo.risum")
    (folder / "folder.risum").mkdir()
    (folder / "folder-link.charx").symlink_to(folder / "folder.risum")
    return folder


def test_the_corpus_is_what_the_test_expects(corpus: Path) -> None:
    names = {p.name for p in corpus.iterdir()}
    assert names == set(EXPECTED) | set(READ) | {"zip-overlapping.charx"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_library_refuses_within_the_memory_goal(corpus: Path, name: str) -> None:
    got = _run([sys.executable, "-c", LIBRARY, str(corpus / name)])
    assert got.returncode == 0, got.stderr[-2000:]
    peak_kb, line = got.stdout.splitlines()
    assert line.startswith(f"{corpus / name}: ")
    assert f"{EXPECTED[name]}: " in line, line
    assert int(peak_kb) < GOAL_KB, f"{name}: peak {int(peak_kb) // 1024} MB"


@pytest.mark.parametrize("name", sorted(READ))
def test_library_reads_as_risuai_within_the_memory_goal(corpus: Path, name: str) -> None:
    got = _run([sys.executable, "-c", LIBRARY, str(corpus / name)])
    assert got.returncode == 0, got.stderr[-2000:]
    peak_kb, line = got.stdout.splitlines()
    assert line == f"ok {READ[name]}", line
    assert int(peak_kb) < GOAL_KB, f"{name}: peak {int(peak_kb) // 1024} MB"


def test_cli_inspect_gives_one_line_per_hostile_file(corpus: Path) -> None:
    files = [str(corpus / name) for name in sorted(EXPECTED)]
    got = _run([sys.executable, "-m", "risutools", "inspect", *files])
    assert got.returncode == 2
    assert got.stdout == ""
    lines = got.stderr.splitlines()
    assert len(lines) == len(files), got.stderr[-3000:]
    for path, line in zip(files, lines, strict=True):
        code = EXPECTED[Path(path).name]
        assert line.startswith(f"risutools: {path}: ") and f"{code}: " in line, line
        assert "Traceback" not in line


def test_cli_inspect_each_file_alone(corpus: Path) -> None:
    for name in ("zip-deflate-ratio.charx", "risup-envelope-bomb.risup", "fifo.risum"):
        got = _run([sys.executable, "-m", "risutools", "inspect", str(corpus / name)])
        assert got.returncode == 2, name
        assert len(got.stderr.splitlines()) == 1 and EXPECTED[name] in got.stderr, got.stderr


def test_overlapping_members_unpack_within_the_total_budget(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    got = _run([sys.executable, "-m", "risutools", "unpack", str(corpus / "zip-overlapping.charx"),
                "-o", str(out)])  # fmt: skip
    assert got.returncode == 0, got.stderr
    import json

    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    kept = [a for a in manifest["card_assets"] if a["file"]]
    skipped = [a for a in manifest["card_assets"] if not a["file"]]
    assert 0 < len(kept) <= 17 and len(skipped) == 64 * 64 - len(kept)
    assert all(a["skipped"].startswith("zip-total-too-large") for a in skipped)


@pytest.mark.parametrize(("actual", "said", "limit", "want"), [
    (3000, 3000, 100_000, 3000),  # as opened: all of it, one read the file's size
    (5000, 3000, 100_000, 5000),  # grew since it was opened: on to the end
    (5000, 3000, 4000, 4001),  # grew past the bound: a byte past it, no more
    (2000, 3000, 100_000, 2000),  # shrank: what is there
    (0, 0, 10, 0),
    (11, 10, 10, 11),
])
def test_read_to_bound_reads_what_the_file_holds_up_to_a_byte_past_the_bound(
        actual: int, said: int, limit: int, want: int) -> None:
    from risutools.formats.files import read_to_bound

    data = bytes(range(256)) * (actual // 256 + 1)
    fp = io.BufferedReader(io.BytesIO(data[:actual]))  # type: ignore[arg-type]
    assert read_to_bound(fp, said, limit) == data[:want]
