"""Test-wide settings.

Hypothesis: under CI (``CI`` set) the property tests are derandomized, so a run on
main is reproducible; on a developer machine they explore new examples each run
(and a failure is saved in .hypothesis/ and replayed first next time).
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
