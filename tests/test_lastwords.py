"""An exception Python cannot raise (a finalizer's, one at exit) is one line on standard
error, never a traceback; after Ctrl-C, nothing (risutools.lastwords)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from harness import ROOT

# a finalizer that fails at exit, as concurrent.futures' exit handler can after Ctrl-C
_SCRIPT = """
import sys
{setup}
class Late:
    def __del__(self):
        raise OSError(9, "Bad file descriptor")
keep = Late()
"""


def _run(setup: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "RISUTOOLS_DEBUG"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-c", _SCRIPT.format(setup=setup)], env=env,
                          capture_output=True, text=True, timeout=60, check=False)


def test_without_the_hook_python_prints_a_traceback() -> None:
    """(What the hook is for: the test below would pass on nothing otherwise.)"""
    r = _run("")
    assert "Exception ignored" in r.stderr and "Traceback" in r.stderr


def test_an_unraisable_exception_is_one_line() -> None:
    r = _run("from risutools import lastwords; lastwords.install()")
    assert r.stderr == "risutools: ignored: OSError: [Errno 9] Bad file descriptor\n"
    assert r.returncode == 0


def test_after_an_interrupt_nothing_is_said() -> None:
    r = _run("from risutools import lastwords; lastwords.install(); lastwords.interrupted()")
    assert r.stderr == ""


def test_debugging_keeps_pythons_report(monkeypatch: pytest.MonkeyPatch) -> None:
    from risutools import lastwords

    monkeypatch.setenv("RISUTOOLS_DEBUG", "1")
    monkeypatch.setattr(sys, "unraisablehook", sys.__unraisablehook__)
    lastwords.install()
    assert sys.unraisablehook is sys.__unraisablehook__


def test_a_hostile_message_stays_on_one_line(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from risutools import lastwords

    monkeypatch.setattr(lastwords, "_INTERRUPTED", [False])
    lastwords._one_line(SimpleNamespace(exc_value=OSError("bad\nname\x1b[31m\u2028")))
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err and "\u2028" not in err
