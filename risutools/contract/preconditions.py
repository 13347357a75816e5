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
#: the rules quiet where provenance is no object (every field below it reads as None)
_NO_PROVENANCE = (mc103.id, mc105.id, mc300.id, mc301.id, mc302.id, mc303.id, mc304.id)
#: the rules quiet where capabilities is no object
_NO_CAPABILITIES = (mc400.id, mc401.id)
# (the ids and the lifecycle's names bound once: each read below is then one lookup)
_MC101, _MC103, _MC105, _MC200 = mc101.id, mc103.id, mc105.id, mc200.id
_MC300, _MC301, _MC302, _MC303, _MC304 = mc300.id, mc301.id, mc302.id, mc303.id, mc304.id
_MC400, _MC401 = mc400.id, mc401.id
_STATES, _APPROVED, _ACTIVE = lifecycle.STATES, lifecycle.APPROVED, lifecycle.ACTIVE
_POLICY = "static_preserve_no_execute"
_DIGEST = DIGEST_RE.fullmatch


def quiet_rules(doc: dict[str, Any]) -> set[str]:
    """Ids of document rules (of MC101-MC401, MC500 and MC600 never) that find nothing in
    ``doc``, told by one read of the fields they read: ``validate_document`` does not run
    them.  Each test below is the negation of what its rule needs before it can yield
    (its fields read with the same operations as the rule reads them: ``isinstance``,
    ``get``, ``in`` and ``==``, so a value the rule would trip on trips here too); a rule
    whose fields are of an unexpected shape is not in the set (it runs).
    (tests/test_validate_round9.py holds each rule's findings empty whenever it is here.)
    Run for every document (issue 23): each field is read once, the few calls it makes
    are few, and a set is made once, not added to rule by rule."""
    prov = doc.get("provenance")
    payload = doc.get("payload")
    projection = doc.get("projection")
    if isinstance(prov, dict):
        quiet = _quiet_provenance(prov, payload, projection)
    else:  # every field below it reads as None
        quiet = set(_NO_PROVENANCE)
    if _identity_quiet(doc, payload):
        quiet.add(_MC101)
    if _digests_quiet(prov, projection):
        quiet.add(_MC200)
    caps = doc.get("capabilities")
    if not isinstance(caps, dict):
        quiet.update(_NO_CAPABILITIES)
    else:
        _quiet_capabilities(caps, quiet)
    return quiet


def _identity_quiet(doc: dict[str, Any], payload: Any) -> bool:
    """MC101: quiet when the type is unknown, or the id and the namespace agree with it."""
    ctype = _str(doc.get("component_type"))
    if ctype not in COMPONENT_TYPES:
        return True
    cid = _str(doc.get("component_id"))
    ns = _str(payload.get("namespace")) if isinstance(payload, dict) else None
    return (cid is None or cid.startswith(ctype + ".")) and (ns is None or ns == f"risu.{ctype}")


def _quiet_provenance(prov: dict[str, Any], payload: Any, projection: Any) -> set[str]:
    """Of MC103, MC105, MC300-MC304, those quiet (``prov``: the provenance object;
    ``payload``, ``projection``: the document's, any value): one set display, each rule's
    id or None in it (None then dropped)."""
    review = prov.get("review_status")
    runtime = prov.get("runtime_status")
    publishable = prov.get("publishable")
    layers, lineage = _layers_lineage(payload)
    kind = prov.get("source_kind")
    quiet = {
        None if lineage in _STATES and review in _STATES and lineage != review else _MC103,
        None if isinstance(kind, str) and kind not in KNOWN_SOURCE_KINDS else _MC105,
        _MC300 if prov.get("active_code_policy") != _POLICY or (
            prov.get("static_analysis_only") is True and not _executed(layers)) else None,
        _MC301 if review != "candidate" or (
            not (isinstance(runtime, str) and runtime != "inactive")
            and publishable is not True) else None,
        _MC302 if runtime != _ACTIVE or not (isinstance(review, str)
                                             and review not in _APPROVED) else None,
        None if publishable is True else _MC303,
        _MC304 if _replay_quiet(prov, projection) else None,
    }
    quiet.discard(None)
    return quiet  # type: ignore[return-value]  # (None dropped)


def _layers_lineage(payload: Any) -> tuple[Any, Any]:
    """payload.idea_layers and its lineage.promotion_status (each None where not found)."""
    layers = payload.get("idea_layers") if isinstance(payload, dict) else None
    lineage = layers.get("lineage") if isinstance(layers, dict) else None
    return layers, lineage.get("promotion_status") if isinstance(lineage, dict) else None


def _replay_quiet(prov: dict[str, Any], projection: Any) -> bool:
    """MC304: replay_status and availability_verdict are not both strings, or agree."""
    replay = projection.get("replay_status") if isinstance(projection, dict) else None
    if not isinstance(replay, str):
        return True
    avail = prov.get("availability_verdict")
    return not isinstance(avail, str) or REPLAY_TO_AVAILABILITY.get(replay) in (None, avail)


def _executed(layers: Any) -> bool:
    """Whether MC300 speaks of idea_layers.evidence.code_executed (``layers``:
    payload.idea_layers, or None)."""
    evidence = layers.get("evidence") if isinstance(layers, dict) else None
    return isinstance(evidence, dict) and evidence.get("code_executed") is not False


def _digests_quiet(prov: Any, projection: Any) -> bool:
    """MC200: every digest it reads (strings only) is well formed and no placeholder (a
    well-formed digest is 71 characters long: its last 64 are the zeros or not)."""
    refs = prov.get("source_refs") if isinstance(prov, dict) else None
    if isinstance(refs, list):
        for ref in refs:
            v = ref.get("sha256") if isinstance(ref, dict) else None
            if isinstance(v, str) and (_DIGEST(v) is None or v.endswith(_ZERO_DIGEST)):
                return False
    v = projection.get("prompt_sha256") if isinstance(projection, dict) else None
    return not isinstance(v, str) or (_DIGEST(v) is not None
                                      and not v.endswith(_ZERO_DIGEST))


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
    quiet.add(_MC401)
    provides, _, conflicts = lists
    for lst in lists:
        if isinstance(lst, list) and len(set(lst)) != len(lst):
            return
    if not (isinstance(provides, list) and isinstance(conflicts, list)) \
            or set(provides).isdisjoint(conflicts):
        quiet.add(_MC400)
