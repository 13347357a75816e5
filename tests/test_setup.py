"""Set-up as a new user meets it (issue 24): ``make demo`` says what it needs before it
builds anything, writes its review page after the promotions, and the build logs are plain
text when they do not go to a terminal."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ROOT

MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def _make(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    # a fresh user's make: nothing inherited from a make this suite runs under
    # (`make test PYTHON=python3.10` passes PYTHON down through MAKEFLAGS)
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PYTHON")}
    if path is not None:
        env["PATH"] = path
    return subprocess.run([str(MAKE), "--no-print-directory", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


def _bin_with(tmp_path: Path, *tools: str) -> str:
    """A PATH of one folder holding a real python3 and the named tools."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "python3").symlink_to(os.path.realpath(sys.executable))
    for tool in tools:
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"{tool} is not installed here")
        (folder / tool).symlink_to(found)
    return str(folder)


def test_demo_names_a_missing_ssh_keygen_before_building(tmp_path: Path) -> None:
    p = _make("-s", "demo", path=_bin_with(tmp_path))
    assert p.returncode != 0
    assert "make demo needs: ssh-keygen" in p.stderr
    assert "python3" not in p.stderr.split("needs:", 1)[1].split(";")[0]
    assert "venv" not in p.stdout + p.stderr.split("needs:")[0]  # nothing built first


def test_demo_names_a_missing_python(tmp_path: Path) -> None:
    folder = _bin_with(tmp_path, "ssh-keygen")
    (Path(folder) / "python3").unlink()
    p = _make("-s", "demo-check", path=folder)
    assert p.returncode != 0 and "make demo needs: python3 (3.10+" in p.stderr
    assert "ssh-keygen" not in p.stderr


def test_demo_check_passes_when_all_is_there(tmp_path: Path) -> None:
    p = _make("-s", "demo-check", path=_bin_with(tmp_path, "ssh-keygen"))
    assert p.returncode == 0 and p.stderr == ""


def test_the_review_page_is_written_after_the_promotions() -> None:
    lines = _make("-n", "demo").stdout.splitlines()
    page = [i for i, ln in enumerate(lines) if "-o build/demo-review.html" in ln]
    promotes = [i for i, ln in enumerate(lines) if "risutools promote" in ln]
    assert len(page) == 1 and promotes and page[0] > max(promotes)
    assert lines[0].startswith("missing="), lines[0]  # the check comes first


def test_build_logs_are_plain_off_a_terminal() -> None:
    lines = [ln for ln in _make("-n", "package").stdout.splitlines()
             if "-m build" in ln or "twine" in ln]
    assert len(lines) == 2
    for ln in lines:
        assert ln.startswith("[ -t 1 ] || export NO_COLOR=1"), ln
    assert "--no-color" in lines[1]
    # the guard itself: off a terminal it sets NO_COLOR
    out = subprocess.run(["sh", "-c", "[ -t 1 ] || export NO_COLOR=1 TERM=dumb; "
                          "echo \"$NO_COLOR\""], capture_output=True, text=True, check=True,
                         env={"PATH": os.environ.get("PATH", "")})
    assert out.stdout == "1\n"


def test_readme_says_what_make_demo_needs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head = readme.split("## Install", 1)[0]
    for tool in ("python3", "make", "ssh-keygen"):
        assert f"`{tool}`" in head, tool
