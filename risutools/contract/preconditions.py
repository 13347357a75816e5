"""Preconditions of the contract's document rules: :func:`quiet_rules` tells, by one read
of the fields the rules MC101-MC401 read, which of them find nothing in a document, so
that ``validate_document`` does not run them (issue 23: a rule that cannot apply costs a
few comparisons, not a call).  Each test is the negation of what its rule needs before it
can yield, read with the same operations as the rule reads its fields."""

from __future__ import annotations

from typing import Any

from risutools.contract.rules import (
    COMPONENT_TYPES,
    DIGEST_RE,
    KNOWN_SOURCE_KINDS,
    REPLAY_TO_AVAILABILITY,
    _str,
    mc101,
    mc103,
    mc105,
    mc200,
    mc300,
    mc301,
    mc302,
    mc303,
    mc304,
    mc400,
    mc401,
    vocabulary,
)
from risutools.settings import lifecycle

_ZERO_DIGEST = "0" * 64
#: every rule :func:`quiet_rules` may name (where none of them runs, it is not asked)
PRECONDITIONED: frozenset[str] = frozenset(r.id for r in (
    mc101, mc103, mc105, mc200, mc300, mc301, mc302, mc303, mc304, mc400, mc401))


def quiet_rules(doc: dict[str, Any]) -> set[str]:
    """Ids of document rules (of MC101-MC401, MC500 and MC600 never) that find nothing in
    ``doc``, told by one read of the fields they read: ``validate_document`` does not run
    them.  Each test below is the negation of what its rule needs before it can yield
    (its fields read with the same operations as the rule reads them: ``isinstance``,
    ``get``, ``in`` and ``==``, so a value the rule would trip on trips here too); a rule
    whose fields are of an unexpected shape is not in the set (it runs).
    (tests/test_validate_round9.py holds each rule's findings empty whenever it is here.)"""
    quiet: set[str] = set()
    prov = doc.get("provenance")
    payload = doc.get("payload")
    layers = payload.get("idea_layers") if isinstance(payload, dict) else None
    _quiet_identity(doc, payload, quiet)
    if isinstance(prov, dict):
        _quiet_provenance(doc, prov, layers, quiet)
    else:  # every field below it reads as None
        quiet.update((mc103.id, mc105.id, mc300.id, mc301.id, mc302.id, mc303.id, mc304.id))
    if _digests_quiet(prov, doc.get("projection")):
        quiet.add(mc200.id)
    caps = doc.get("capabilities")
    if not isinstance(caps, dict):
        quiet.update((mc400.id, mc401.id))
    else:
        _quiet_capabilities(caps, quiet)
    return quiet


def _quiet_identity(doc: dict[str, Any], payload: Any, quiet: set[str]) -> None:
    """MC101: quiet when the type is unknown, or the id and the namespace agree with it."""
    ctype = _str(doc.get("component_type"))
    if ctype not in COMPONENT_TYPES:
        quiet.add(mc101.id)
        return
    cid = _str(doc.get("component_id"))
    ns = _str(payload.get("namespace")) if isinstance(payload, dict) else None
    if (cid is None or cid.startswith(ctype + ".")) and (ns is None or ns == f"risu.{ctype}"):
        quiet.add(mc101.id)


def _quiet_provenance(doc: dict[str, Any], prov: dict[str, Any], layers: Any,
                      quiet: set[str]) -> None:
    """MC103, MC105, MC300-MC304 (``prov``: the provenance object; ``layers``:
    payload.idea_layers, or None)."""
    review = prov.get("review_status")
    runtime = prov.get("runtime_status")
    publishable = prov.get("publishable")
    lineage = layers.get("lineage") if isinstance(layers, dict) else None
    lineage = lineage.get("promotion_status") if isinstance(lineage, dict) else None
    if not (lineage in lifecycle.STATES and review in lifecycle.STATES and lineage != review):
        quiet.add(mc103.id)
    kind = prov.get("source_kind")
    if not (isinstance(kind, str) and kind not in KNOWN_SOURCE_KINDS):
        quiet.add(mc105.id)
    if prov.get("active_code_policy") != "static_preserve_no_execute" or (
            prov.get("static_analysis_only") is True and not _executed(layers)):
        quiet.add(mc300.id)
    if review != "candidate" or (not (isinstance(runtime, str) and runtime != "inactive")
                                 and publishable is not True):
        quiet.add(mc301.id)
    if runtime != lifecycle.ACTIVE or not (isinstance(review, str)
                                           and review not in lifecycle.APPROVED):
        quiet.add(mc302.id)
    if publishable is not True:
        quiet.add(mc303.id)
    if _replay_quiet(doc, prov):
        quiet.add(mc304.id)


def _replay_quiet(doc: dict[str, Any], prov: dict[str, Any]) -> bool:
    """MC304: replay_status and availability_verdict are not both strings, or agree."""
    replay = doc.get("projection")
    replay = replay.get("replay_status") if isinstance(replay, dict) else None
    avail = prov.get("availability_verdict")
    return not isinstance(replay, str) or not isinstance(avail, str) \
        or REPLAY_TO_AVAILABILITY.get(replay) in (None, avail)


def _executed(layers: Any) -> bool:
    """Whether MC300 speaks of idea_layers.evidence.code_executed (``layers``:
    payload.idea_layers, or None)."""
    evidence = layers.get("evidence") if isinstance(layers, dict) else None
    return isinstance(evidence, dict) and evidence.get("code_executed") is not False


def _digests_quiet(prov: Any, projection: Any) -> bool:
    """MC200: every digest it reads (strings only) is well formed and no placeholder."""
    refs = prov.get("source_refs") if isinstance(prov, dict) else None
    if isinstance(refs, list):
        for ref in refs:
            v = ref.get("sha256") if isinstance(ref, dict) else None
            if isinstance(v, str) and (DIGEST_RE.fullmatch(v) is None or v[7:] == _ZERO_DIGEST):
                return False
    v = projection.get("prompt_sha256") if isinstance(projection, dict) else None
    return not isinstance(v, str) or (DIGEST_RE.fullmatch(v) is not None
                                      and v[7:] != _ZERO_DIGEST)


def _quiet_capabilities(caps: dict[str, Any], quiet: set[str]) -> None:
    """MC400 and MC401 (``caps``: the capabilities object): both quiet when every item of
    the three lists is a name of the vocabulary (so a well-formed, known string: anything
    else, unhashable included, and neither is quiet), MC400 also needing each list
    without a repeated item and provides and conflicts apart (the rule compares the
    strings only: a list's other items could only add a repeat or a shared item, never
    hide one)."""
    known = vocabulary()
    lists = [caps.get("provides"), caps.get("requires"), caps.get("conflicts")]
    try:
        for lst in lists:
            if isinstance(lst, list) and not known.issuperset(lst):
                return
    except TypeError:  # an unhashable item
        return
    quiet.add(mc401.id)
    provides, _, conflicts = lists
    for lst in lists:
        if isinstance(lst, list) and len(set(lst)) != len(lst):
            return
    if not (isinstance(provides, list) and isinstance(conflicts, list)) \
            or set(provides).isdisjoint(conflicts):
        quiet.add(mc400.id)
