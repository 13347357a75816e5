"""The test harness: the repository's paths, and the command line run in-process.

``from harness import ROOT, SEED, run_cli`` (the tests folder is on ``sys.path``); the
same names are pytest fixtures in ``conftest.py`` for tests that prefer them.

:func:`run_cli` calls :func:`risutools.cli.main` in this process, with its own argv,
working folder, stdin and environment, and captures what it writes; it returns a
:class:`subprocess.CompletedProcess` like ``subprocess.run(..., text=True)`` would, so
a test can switch between the two.  A few smoke tests (``test_packaging``,
``test_foundation``, the signal and stdin-closing tests) keep real subprocesses.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import time
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SOURCES = FIXTURES / "sources"
DOCUMENTS = FIXTURES / "documents"
SEED = DOCUMENTS / "seed-000-context-cutter.json"
PACKAGE = ROOT / "risutools"


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_cli(*args: str | os.PathLike[str], cwd: Path | str | None = None,
            stdin: bytes | str | None = None, env: Mapping[str, str] | None = None,
            binary: bool = False) -> subprocess.CompletedProcess[Any]:
    """``risutools ARGS`` in-process: exit code, stdout and stderr (text; bytes when
    ``binary``).  ``env`` replaces the environment for the call."""
    from risutools.cli import main

    argv = ["risutools", *map(os.fspath, args)]
    raw_in = stdin.encode() if isinstance(stdin, str) else (stdin or b"")
    out, err = io.BytesIO(), io.BytesIO()
    out_t = io.TextIOWrapper(out, encoding="utf-8", newline="")
    err_t = io.TextIOWrapper(err, encoding="utf-8", newline="")
    in_t = io.TextIOWrapper(io.BytesIO(raw_in), encoding="utf-8")
    saved = sys.argv, sys.stdin, sys.stdout, sys.stderr, os.getcwd()
    code: int = 0
    try:
        sys.argv, sys.stdin, sys.stdout, sys.stderr = argv, in_t, out_t, err_t
        if cwd is not None:
            os.chdir(cwd)
        with _environment(env):
            try:
                main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        out_t.flush()
        err_t.flush()
        sys.argv, sys.stdin, sys.stdout, sys.stderr = saved[:4]
        os.chdir(saved[4])
    if binary:
        return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())
    return subprocess.CompletedProcess(argv, code, out.getvalue().decode("utf-8"),
                                       err.getvalue().decode("utf-8"))


def run_subprocess(*args: str | os.PathLike[str], cwd: Path | str | None = None,
                   timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m risutools ARGS`` in a child process (the smoke tests)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("RISUTOOLS_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "risutools", *map(os.fspath, args)],
                          capture_output=True, text=True, cwd=cwd or ROOT, env=env,
                          timeout=timeout)


# ---------------------------------------------------------------- headless Chromium
#: the flags of every headless run (no network use of its own on this closed machine)
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run")


def browser_or_skip(what: str) -> str:
    """The Chromium to check a page in; a visible skip when there is none, except under
    ``RISUTOOLS_REQUIRE_BROWSER=1`` (CI), where a missing browser fails the test."""
    import shutil

    import pytest

    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("RISUTOOLS_REQUIRE_BROWSER") == "1":
        pytest.fail("RISUTOOLS_REQUIRE_BROWSER=1 but no chromium on PATH")
    pytest.skip(f"chromium not installed (apt-get install chromium): {what} not checked "
                "in a browser")


def run_browser(browser: str, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """One headless Chromium run with its own empty profile under ``tmp``."""
    cmd = [browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


# ---------------------------------------------------------------- the catalog commands
def approve(component: str, action: str, reviewer: str, note: str, key: str | None,
            catalog: str | None) -> str:
    """``risutools approve`` through the command layer: the line it prints."""
    from risutools.commands import approve as cmd

    return cmd.run(cmd.Options(component, action, reviewer, note, key, catalog)).line


def _shown(result: Any) -> None:
    from risutools.report.present import present

    shown = present(result)
    if shown.err_first:
        for line in shown.err:
            print(line, file=sys.stderr)
    print(shown.out or "", end="")
    if not shown.err_first:
        for line in shown.err:
            print(line, file=sys.stderr)


def switch(component: str, to: str, kind: str, dry_run: bool, as_json: bool,
           catalog: str | None, actor: str = "") -> int:
    """``risutools promote`` / ``activate`` / ``deactivate`` through the command layer:
    prints what the command prints, returns its exit code."""
    from risutools.commands import promote as cmd

    result = cmd.run(cmd.Options(component, to, kind, dry_run, as_json, actor, catalog))
    _shown(result)
    return result.exit_code()


def run_packet(component: str | None, lane: str, out: str, actor: str,
               instruction: str | None, escalates: str | None, queue: str | None,
               status: str | None, limit: int, catalog: str | None) -> int:
    """``risutools packet`` through the command layer (prints, returns the exit code)."""
    from risutools.commands import packet as cmd

    result = cmd.run(cmd.Options(component, lane, out, actor, instruction, escalates, queue,
                                 status, limit, catalog))
    _shown(result)
    return result.exit_code()


def json_places(value: Any) -> list[list[Any]]:
    """Every place below ``value`` (a JSON-like tree), as its list of keys and indexes,
    parents before children: what a structure-aware fuzz test picks from."""
    out: list[list[Any]] = []
    stack: list[tuple[Any, list[Any]]] = [(value, [])]
    while stack:
        v, at = stack.pop(0)
        if at:
            out.append(at)
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        stack[:0] = [(x, [*at, k]) for k, x in items]
    return out


def value_at(value: Any, at: list[Any]) -> Any:
    """The value at the place ``at`` (keys and indexes) below ``value``."""
    for k in at:
        value = value[k]
    return value


def assert_answered(done: subprocess.CompletedProcess[str], what: str) -> None:
    """A command's answer to hostile input: exit 0 or 1 (a verdict) or a refusal (exit 2)
    in one line, never an internal error or a traceback."""
    text = done.stdout + done.stderr
    assert done.returncode in (0, 1, 2), (what, done.returncode, text[-2000:])
    assert "internal error" not in text and "Traceback" not in text, (what, text[-2000:])
    if done.returncode == 2:
        assert done.stderr.strip() and "\n" not in done.stderr.strip(), (what, done.stderr)


# runs the CLI with the arguments given, then prints the peak resident size (MiB) as the
# last line of stderr (what :func:`run_capped` reads): this image's own (VmHWM; ru_maxrss
# carries the test process's resident size over fork and exec, so it is the fallback only)
_CAPPED_RUNNER = (
    "import resource, runpy, sys\n"
    "sys.argv = ['risutools', *sys.argv[1:]]\n"
    "def _peak():\n"
    "    try:\n"
    "        with open('/proc/self/status') as f:\n"
    "            for line in f:\n"
    "                if line.startswith('VmHWM:'):\n"
    "                    return int(line.split()[1]) // 1024\n"
    "    except OSError:\n"
    "        pass\n"
    "    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024\n"
    "try:\n"
    "    runpy.run_module('risutools', run_name='__main__')\n"
    "finally:\n"
    "    print('peak', _peak(), file=sys.stderr)\n"
)


def run_capped(args: list[str], cap: int, cwd: Path | str = ROOT
               ) -> tuple[int, str, str, int]:
    """``risutools ARGS`` in a child process whose address space is capped at ``cap``
    bytes (``RLIMIT_AS``: a hard stop for a runaway): (exit code, stdout, stderr without
    the last line, peak resident MiB or -1)."""
    import resource

    def _cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    run = subprocess.run([sys.executable, "-c", _CAPPED_RUNNER, *args], capture_output=True,
                         text=True, preexec_fn=_cap, cwd=cwd,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    lines = run.stderr.strip().splitlines()
    peak = int(lines[-1].split()[1]) if lines and lines[-1].startswith("peak ") else -1
    return run.returncode, run.stdout, "\n".join(lines[:-1]), peak


def process_gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (Linux ``/proc``; a zombie no one reaped yet
    counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2:][:1] == b"Z"


def wait_gone(pids: list[int], seconds: float) -> bool:
    """Whether every one of ``pids`` ended within ``seconds``."""
    deadline = time.monotonic() + seconds
    while not all(map(process_gone, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return all(map(process_gone, pids))


def traced_peak(run: Callable[[], object]) -> int:
    """The traced peak of ``run()`` (bytes), above what was traced when it started."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        run()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def zip_bytes(members: list[tuple[str, bytes]]) -> bytes:
    """A ZIP archive (deflated) of ``members`` (name, bytes), in memory."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()
