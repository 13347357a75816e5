"""``validate --fix`` and file names (issue 21): the real path travels beside the display
name, and the display name is never opened; an NDJSON line that is not UTF-8 is kept byte
for byte while the other lines are fixed.

Before: ``--fix`` opened the escaped display name as a path.  For a file whose name is not
UTF-8 (``doc<0xff>.json``, shown as ``doc\\xff.json``) it rewrote another file that happened
to be called ``doc\\xff.json`` and said "fixed 1", leaving the named file unfixed; a name
with a newline or a backslash could never be fixed; an NDJSON catalog with one line that
is not UTF-8 was not fixed at all.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from harness import FIXTURES, SEED, run_cli

GOOD_DIGEST = "sha256:05aaa73785840a4779ac10348d3e6f8df2acc480691f4f2facdcd362b59dfc1d"
STALE_DIGEST = "sha256:" + "ab" * 32


def _stale(text: str) -> str:
    assert text.count(GOOD_DIGEST) == 1
    return text.replace(GOOD_DIGEST, STALE_DIGEST)


@pytest.mark.parametrize("raw_name", [b"doc\xff.json", b"new\nline.json", b"back\\slash.json",
                                      b"esc\x1b[2J.json", b"tab\there.yaml"])
def test_fix_writes_the_real_file_never_the_display_name(tmp_path: Path,
                                                         raw_name: bytes) -> None:
    cat = tmp_path / "cat"
    cat.mkdir()
    seed = SEED.read_text("utf-8")
    if raw_name.endswith(b".yaml"):
        seed = (FIXTURES / "contract" / "good" / "context-cutter.yaml").read_text("utf-8")
    real = os.path.join(os.fsencode(cat), raw_name)
    with open(real, "wb") as f:
        f.write(_stale(seed).encode("utf-8"))
    # a file named as the real one is shown: what the old code opened and rewrote
    shown = run_cli("validate", "-f", "json", os.fsdecode(real), cwd=tmp_path)
    display = json.loads(shown.stdout)["documents"][0]["file"]
    decoy = Path(display) if os.path.isabs(display) else tmp_path / display
    if decoy.parent.is_dir() and os.fsencode(decoy) != real:
        decoy.write_text(_stale(seed), "utf-8")
    r = run_cli("validate", "--fix", "-f", "concise", os.fsdecode(real), cwd=tmp_path)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "fixed 1 finding(s) in 1 file(s) (MC201 1)" in r.stderr
    with open(real, "rb") as f:
        assert f.read().decode("utf-8") == seed  # the named file, fixed byte for byte
    if decoy.exists() and os.fsencode(decoy) != real:
        assert decoy.read_text("utf-8") == _stale(seed)  # the other file untouched


def test_fix_keeps_a_non_utf8_ndjson_line_byte_for_byte(tmp_path: Path) -> None:
    good = (FIXTURES / "contract" / "good" / "components.ndjson").read_bytes()
    lines = good.split(b"\n")
    right = json.loads(lines[1])["projection"]["prompt_sha256"].encode()
    stale = list(lines)
    stale[1] = stale[1].replace(right, STALE_DIGEST.encode())
    alien = b'{"component_id": "x\xff\xfe", "note": "caf\xe9"}'  # Latin-1, not UTF-8
    stale.insert(2, alien)
    cat = tmp_path / "components.ndjson"
    cat.write_bytes(b"\n".join(stale))
    r = run_cli("validate", "--fix", "-f", "concise", str(cat), cwd=tmp_path)
    assert "fixed 1 finding(s) in 1 file(s) (MC201 1)" in r.stderr, (r.stdout, r.stderr)
    assert r.returncode == 1 and "MC000" in r.stdout  # the alien line is still reported
    after = cat.read_bytes().split(b"\n")
    want = list(lines)
    want.insert(2, alien)
    assert after == want  # the stale line fixed, the alien line and every other kept


@pytest.mark.parametrize("style", [">-", "|-"])  # (">" and "|" keep a newline: MC200)
def test_a_value_fix_cannot_rewrite_is_said_at_its_line_and_not_offered_again(
        tmp_path: Path, style: str) -> None:
    """A stale digest written as a YAML block scalar is not rewritten in place: --fix says
    so at the value's line (not the document's first), leaves the file as it was, and does
    not end by offering the command just run."""
    import yaml

    doc = json.loads(SEED.read_text("utf-8"))
    doc["projection"]["prompt_sha256"] = STALE_DIGEST
    text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    text = text.replace(f"prompt_sha256: {STALE_DIGEST}",
                        f"prompt_sha256: {style}\n    {STALE_DIGEST}")
    p = tmp_path / "b.yaml"
    p.write_text(text, "utf-8")
    line = 1 + text.split("\n").index(f"  prompt_sha256: {style}")
    before = p.read_bytes()
    plain = run_cli("validate", p)
    assert "fixable with" in plain.stdout  # (offered before a fix ran)
    r = run_cli("validate", "--fix", p)
    assert p.read_bytes() == before
    assert f"b.yaml:{line}: MC201 not fixed" in r.stderr, r.stderr
    assert "fixable with" not in r.stdout
