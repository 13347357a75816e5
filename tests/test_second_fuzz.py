"""Two findings of the second fuzzing pass (bench/RESULTS.md, round 34), each an internal
error (exit 2) before:

- an approval record whose reviewer is ``"kim\\0"`` (a validly signed record, the name
  edited) reached ``ssh-keygen -I`` as an argument, and ``subprocess`` raised ValueError;
- ``replay synth --messages 2000000`` (then the largest accepted) built the whole
  conversation in memory before writing, about 1.75 KB a message, and ran out of memory,
  for a fixture past the 64 MiB bound that no command would have read."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import run_cli

from risutools.catalog.approvals import verify_with
from risutools.replay.synth import MAX_MESSAGES
from risutools.settings.catalog import CatalogSettings

SIGNATURE = ("-----BEGIN SSH SIGNATURE-----\nU1NIU0lHAAAAAQ==\n"
             "-----END SSH SIGNATURE-----\n")


@pytest.mark.parametrize("reviewer", ["kim\0", "\0", "a\0b"])
def test_a_reviewer_named_with_a_nul_is_not_an_allowed_signer(tmp_path: Path,
                                                               reviewer: str) -> None:
    signers = tmp_path / "signers"
    signers.write_text("kim ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeFakeFakeFakeFakeFake\n")
    record = {"action": "request_review", "component_id": "module.risu.1.x",
              "reviewer": reviewer, "signature": SIGNATURE}
    got = verify_with(CatalogSettings(allowed_signers=signers), record)
    assert got.status == "not_allowed" and "NUL" in got.detail


def test_synth_refuses_more_messages_than_a_fixture_may_hold(tmp_path: Path) -> None:
    r = run_cli("replay", "synth", "--seed", "1", "--messages", str(MAX_MESSAGES + 1),
                "-o", tmp_path / "s.ndjson")
    assert r.returncode == 2 and "internal error" not in r.stderr
    assert f"must be between 2 and {MAX_MESSAGES}" in r.stderr
    assert not (tmp_path / "s.ndjson").exists()
    assert MAX_MESSAGES * 210 < 64 * 1024 * 1024  # (as NDJSON, within the fixture bound)
