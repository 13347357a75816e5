"""No dead end (issue 20): every state the lifecycle reaches, times every command that can
change a document there, leaves a component that can still be approved or rejected, and
every piece of advice the tool prints on the way can be followed as printed.

States are reached through the commands themselves (approve + promote, activate); the
commands tried in each: replay run --update (evidence), activate, deactivate, ingest of the
same sources, and a hand edit (which the tool must refuse to record, and whose advice must
lead out).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from harness import FIXTURES, run_cli
from test_catalog_support import CUTTER, doc_path, fresh_catalog, load, log_lines

from risutools.settings import lifecycle

FIXTURE = FIXTURES / "replay" / "anchor-edit.yaml"
#: how each state is reached from the start: (action, target) steps, "activate" a switch
PATHS: dict[str, list[tuple[str, str]]] = {
    "candidate": [],
    "pending_human_review": [("request_review", "pending_human_review")],
    "approved": [("request_review", "pending_human_review"), ("approve", "approved")],
    "approved+active": [("request_review", "pending_human_review"), ("approve", "approved"),
                        ("activate", "active")],
    "promoted": [("request_review", "pending_human_review"), ("approve", "approved"),
                 ("promote", "promoted")],
    "rejected": [("reject", "rejected")],
    "retired": [("request_review", "pending_human_review"), ("approve", "approved"),
                ("promote", "promoted"), ("retire", "retired")],
}


def _step(cat: Path, action: str, to: str) -> None:
    if action in ("activate", "deactivate"):
        r = run_cli(action, CUTTER, "--catalog", cat)
    else:
        a = run_cli("approve", CUTTER, "--action", action, "--reviewer", "kim",
                    "--catalog", cat)
        assert a.returncode == 0, a.stderr
        r = run_cli("promote", CUTTER, "--to", to, "--catalog", cat)
    assert r.returncode == 0, (action, to, r.stdout, r.stderr)


def _status(cat: Path) -> tuple[str, str]:
    prov = load(doc_path(cat, CUTTER))["provenance"]
    return prov["review_status"], prov.get("runtime_status", "")


def _hand_edit(cat: Path) -> None:
    p = doc_path(cat, CUTTER)
    doc = load(p)
    doc["payload"]["boundaries"] = [*doc["payload"]["boundaries"], "edited by hand"]
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", "utf-8")


def _command(cat: Path, name: str) -> int:
    if name == "replay --update":
        return run_cli("replay", "run", doc_path(cat, CUTTER), "-x", FIXTURE,
                       "--update").returncode
    if name == "ingest":
        return run_cli("ingest", FIXTURES / "sources", "-o", cat, "--lang", "ko",
                       "-q").returncode
    if name == "hand edit":
        _hand_edit(cat)
        return 0
    return run_cli(name, CUTTER, "--catalog", cat).returncode


def _validate(cat: Path) -> tuple[int, str]:
    r = run_cli("validate", cat, "-f", "concise")
    return r.returncode, r.stdout + r.stderr


def _follow_advice(cat: Path, out: str) -> None:
    """Run, as printed (NAME -> a reviewer), every `risutools ...` command the MC305 line
    advises after its last "or"."""
    line = next(x for x in out.splitlines() if "MC305" in x)
    cmds = re.findall(r"`(risutools [^`]+)`", line.split(", or ")[-1])
    assert cmds, line
    for c in cmds:
        argv = c.replace("NAME", "kim").split()[1:]
        r = run_cli(*argv, "--catalog", cat)
        assert r.returncode == 0, (c, r.stdout, r.stderr)


def _can_still_move(cat: Path, tmp: Path, state: str) -> None:
    """From a non-terminal state: the next step and a rejection both go through (on copies
    of the catalog); from the end (rejected), nothing moves it."""
    status, runtime = _status(cat)
    step = lifecycle.next_step(status)
    if lifecycle.action_for(status, lifecycle.REJECTED) is None:  # the end: rejected
        for to in lifecycle.TARGETS:
            r = run_cli("promote", CUTTER, "--to", to, "--catalog", cat, "--dry-run")
            assert r.returncode == 1 and "FAIL  transition" in r.stdout, (state, to)
        return

    ways = [(step.action, step.to)] if step else []
    for i, (action, to) in enumerate([*ways, (lifecycle.REJECT, lifecycle.REJECTED)]):
        copy = tmp / f"try{i}"
        shutil.copytree(cat, copy)
        if runtime == lifecycle.ACTIVE and to in lifecycle.LEAVING:
            _step(copy, "deactivate", "inactive")  # what G8 advises
        _step(copy, action, to)
        assert _validate(copy)[0] == 0, (state, to, _validate(copy)[1])


COMMANDS = ("replay --update", "activate", "deactivate", "ingest", "hand edit")


@pytest.mark.parametrize("state", list(PATHS))
def test_every_state_times_every_command_leaves_a_way_out(
        state: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    start = fresh_catalog(tmp_path_factory, tmp_path / "start")
    for action, to in PATHS[state]:
        _step(start, action, to)
    assert _validate(start)[0] == 0

    for name in COMMANDS:
        cat = tmp_path / name.replace(" ", "_")
        shutil.copytree(start, cat)
        before = _status(cat)
        _command(cat, name)
        status, _ = _status(cat)
        assert status == before[0], (state, name)  # no command moves the review status
        code, out = _validate(cat)
        if name == "hand edit" and status in lifecycle.PAST_START:
            assert code == 1 and "MC305" in out, (state, out)
            if lifecycle.action_for(status, lifecycle.REJECTED) is None:
                assert "reject it" not in out  # advice that cannot be followed is not given
                continue
            if _status(cat)[1] == lifecycle.ACTIVE:
                _step(cat, "deactivate", "inactive")
            _follow_advice(cat, out)
            assert _status(cat)[0] == lifecycle.REJECTED
            code, out = _validate(cat)
        assert code == 0, (state, name, out)
        _can_still_move(cat, tmp_path / f"{name.replace(' ', '_')}-moves", state)


def test_evidence_on_a_pending_component_is_a_logged_line_the_next_approval_names(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    _step(cat, "request_review", "pending_human_review")
    r = run_cli("replay", "run", doc_path(cat, CUTTER), "-x", FIXTURE, "--update")
    assert r.returncode == 0 and "evidence, transitions.ndjson line 2" in r.stdout
    lines = log_lines(cat)
    ev = lines[-1]
    assert ev["kind"] == "evidence" and ev["before_sha256"] == lines[0]["after_sha256"]
    assert ev["report_sha256"] in ev["reason"]
    assert [c["pointer"] for c in ev["changes"]] == ["/provenance/source_refs"]
    now = run_cli("hash", "-q", doc_path(cat, CUTTER)).stdout.strip()
    assert ev["after_sha256"] == now
    a = run_cli("approve", CUTTER, "--action", "approve", "--reviewer", "kim", "--catalog", cat)
    assert f"at base {now}" in a.stdout


def test_a_forged_evidence_line_does_not_cover_another_change(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """A script that edits the document and appends an evidence line naming the new hash is
    caught: undoing the line's changes does not give the hash it started from."""
    from risutools.settings.lifecycle import base_sha256

    cat = fresh_catalog(tmp_path_factory, tmp_path)
    _step(cat, "request_review", "pending_human_review")
    before = log_lines(cat)[-1]["after_sha256"]
    _hand_edit(cat)
    doc = load(doc_path(cat, CUTTER))
    forged = {"kind": "evidence", "component_id": CUTTER, "reason": "replay",
              "changes": [{"pointer": "/projection/replay_status", "before": "passed",
                           "after": "passed"}],
              "before_sha256": before, "after_sha256": base_sha256(doc)}
    with open(cat / "transitions.ndjson", "a", encoding="utf-8") as f:
        f.write(json.dumps(forged) + "\n")
    code, out = _validate(cat)
    assert code == 1 and "undoing the evidence it records gives" in out
    # and an evidence line may not claim a field outside evidence (a lifecycle field: never;
    # content such as /payload/...: only while a decision is pending, and then undoing it
    # must still give the hash it started from)
    forged["changes"] = [{"pointer": "/provenance/review_status", "before": "candidate",
                          "after": "pending_human_review"}]
    lines = (cat / "transitions.ndjson").read_text("utf-8").splitlines()
    lines[-1] = json.dumps(forged)
    (cat / "transitions.ndjson").write_text("\n".join(lines) + "\n", "utf-8")
    code, out = _validate(cat)
    assert code == 1 and "evidence changes only" in out


def test_publish_is_its_own_approved_and_logged_step(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    for action, to in PATHS["promoted"][:2]:
        _step(cat, action, to)
    # approved is not enough, and the approval is refused as not a next step
    a = run_cli("approve", CUTTER, "--action", "publish", "--reviewer", "kim", "--catalog", cat)
    assert a.returncode == 2 and "action-not-next" in a.stderr
    _step(cat, "promote", "promoted")
    r = run_cli("publish", CUTTER, "--catalog", cat)
    assert r.returncode == 1 and "FAIL  publish" in r.stdout  # no approval yet
    assert run_cli("approve", CUTTER, "--action", "publish", "--reviewer", "kim",
                   "--catalog", cat).returncode == 0
    r = run_cli("publish", CUTTER, "--catalog", cat)
    assert r.returncode == 0, r.stdout
    assert load(doc_path(cat, CUTTER))["provenance"]["publishable"] is True
    line = log_lines(cat)[-1]
    assert line["kind"] == "publish" and line["to_publishable"] is True and line["approval"]
    assert _validate(cat)[0] == 0
    # once published, not again; a hand-made "publishable: true" elsewhere fails validate
    assert run_cli("publish", CUTTER, "--catalog", cat).returncode == 1
    assert _validate(cat)[0] == 0
    lines = (cat / "transitions.ndjson").read_text().splitlines()
    (cat / "transitions.ndjson").write_text("\n".join(lines[:-1]) + "\n")
    code, out = _validate(cat)
    assert code == 1 and "MC305" in out
