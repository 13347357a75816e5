"""Test-wide settings and the harness's fixtures (paths, the in-process CLI runner).

Hypothesis: under CI (``CI`` set) the property tests are derandomized, so a run on
main is reproducible; on a developer machine they explore new examples each run
(and a failure is saved in .hypothesis/ and replayed first next time).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


# --------------------------------------------------------------------------- the harness
# paths and the in-process command line: tests/harness.py (importable as `harness`)

import harness  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture
def root() -> Path:
    return harness.ROOT


@pytest.fixture
def seed_path() -> Path:
    return harness.SEED


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """The command line, in-process: ``cli("validate", path, cwd=tmp_path)``."""
    return harness.run_cli
