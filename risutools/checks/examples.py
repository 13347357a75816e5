"""A check's cases: ``risutools/checks/cases/<ID>.yaml`` (firing and quiet), as data.

Format (every key but ``fire``/``quiet`` optional)::

    # a document rule: changes applied to the seed document
    # (fixtures/documents/seed-000-context-cutter.json), by JSON pointer
    fire:
      - about: what the case shows (one line)
        set: {/projection/prompt: "edited"}      # pointer -> new value
        append: {/capabilities/requires: x}       # pointer of a list -> item added
        delete: [/payload/idea_layers/situation]  # pointers removed
        expect: {pointer: /projection/prompt_sha256, severity: error}
    quiet:
      - about: a near miss that must stay quiet
        config: {capabilities: [hook.unknown_thing]}   # .risutools.yaml content
        set: {...}

    # a module finding: the module JSON itself
    fire:
      - about: ...
        module: {name: A, lowLevelAccess: true}
        expect: {severity: warning}

    # a catalog check (scope catalog: MC104, MC305, RV...): a small catalog, reviewed
    fire:
      - about: ...
        documents: [{}, {set: {/component_id: module.risu.1.other}}]  # changes to the seed
        log: [{component_id: ..., before_sha256: $BASE, after_sha256: "sha256:02"}]
        approvals: {a.yaml: {component_id: ..., base_sha256: $BASE, ...}}  # or text
        config: {catalog: {require_signatures: true, allowed_signers: .allowed_signers}}
        expect: {severity: error}
    # ($BASE: the first document's base hash; a log line given as text is written as is)

    # a gate (scope promotion): a small catalog as above (+ files: catalog-relative path ->
    # text, e.g. a replay report), moved to a target; the gate's verdict on the first document
    fire:
      - about: ...
        documents: [{set: {/provenance/runtime_status: active}}]
        target: rejected                      # a review status, or active / inactive
        expect: {verdict: fail}
    quiet:
      - about: ...
        documents: [{}]
        target: rejected                      # verdict pass (or expect: {verdict: n/a})

    # a load check (MC000, MC001): one path, loaded as named on the command line
    fire:
      - about: ...
        file: {name: doc.json, text: '{"a": 1, "a": 2}'}  # or hex: 7b...; the name's
        expect: {severity: error, line: 1}               # extension gives the format
      - about: ...
        file: {name: pipe.json, kind: fifo}   # kind: file (default), link (to a file
                                              # holding the text), dangling, fifo, missing

    # a verify check (MC202, MC203): the seed document with changes (set/append/delete),
    # verified with a source store and the catalog's replays/ (file name -> text)
    fire:
      - about: ...
        store: {174678332.risum: other bytes}
        replays: {cutter.json: '{"run": 2}'}
        expect: {severity: error}

    # a replay invariant (scope replay: R1-R9, M1-M3): a conversation (conversation-v1
    # messages and turns) replayed through the reference cutter and monitor, observed as
    # each turn says (what is not said is what the reference does)
    fire:
      - about: ...
        config: {max_context: 40, tokenizer_profile: 1, message_overhead: 0}
        messages: [{id: s0, role: system, content: ...}, {id: u1, role: user, content: ...}]
        turns:
          - append: [{id: u2, role: user, content: ...}]
            sent: [u1, u2]                # the output: ids of the history, or messages as sent
            budget_unreachable: true      # the flag the cutter raised
            monitor: {level: NORMAL}      # fields of the monitor's row (MonitorEvent)
        expect: {request: 1, failed: [R1, R6]}   # first failing request; every invariant
                                                 # that fails (default: this one alone)

``tests/test_checks_cases.py`` runs every file; ``risutools rule ID`` shows the
first firing case as the example (but for the scopes of :data:`NO_EXAMPLE_SCOPES`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from risutools.checks.ids import SCOPE_OF

CASES_DIR = Path(__file__).resolve().parent / "cases"
#: the scopes whose cases ``risutools rule ID`` does not show as its example: a replay
#: invariant's case is a conversation with what a cutter was observed sending, a gate's a
#: catalog and a target, a load or verify check's files of a kind -- the data of a test, not
#: an example to read (the pages stay as they were before these checks had cases)
NO_EXAMPLE_SCOPES = ("replay", "promotion", "load", "verify")


def cases_path(check_id: str) -> Path:
    return CASES_DIR / f"{check_id}.yaml"


@cache
def load_cases(check_id: str) -> dict[str, Any] | None:
    """The cases of ``check_id`` (None when it has no cases file)."""
    p = cases_path(check_id)
    if not p.is_file():
        return None
    data = yaml.safe_load(p.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{p}: cases must be a mapping with fire/quiet lists")
    return data


def example_text(check_id: str) -> str | None:
    """The first firing case as a few lines of YAML (None without cases, or for a check
    of a scope in :data:`NO_EXAMPLE_SCOPES`)."""
    if SCOPE_OF.get(check_id) in NO_EXAMPLE_SCOPES:
        return None
    data = load_cases(check_id)
    fire = (data or {}).get("fire") or []
    if not fire:
        return None
    case = {k: v for k, v in fire[0].items() if k not in ("about", "expect")}
    body = yaml.safe_dump(case, allow_unicode=True, sort_keys=True, width=88).rstrip()
    about = fire[0].get("about", "")
    return (f"{about}\n" if about else "") + body
