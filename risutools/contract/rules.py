"""The contract's document rules MC101-MC600 (and :data:`DOCUMENT_RULES`, which runs them
with the schema check MC100 of :mod:`risutools.contract.schema` first).

Every document rule is a small function ``rule(doc, cfg) -> iterator of (pointer, message)``
decorated with ``@check(id, severity, "document", title)``; its docstring (summary,
``Why:``, ``Fix:``) is its documentation.  The rules never assume the document is
schema-valid: they read fields defensively and say nothing about a field that has the wrong
type (MC100 already does).  The contract's other checks live beside the pass that runs
them: MC000/MC001 in :mod:`risutools.contract.checks_load` (the loaders), MC104/MC305 in
:mod:`risutools.contract.checks_catalog` (``validate``'s catalog pass), MC202/MC203 in
:mod:`risutools.contract.verify`.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache
from itertools import filterfalse
from operator import methodcaller
from typing import Any

from risutools.canonical import sha256_prefixed
from risutools.checks.registry import Check, check, registered_checks
from risutools.contract.activecode import digit_shape, find_active_code
from risutools.contract.codetexts import SKIP_KEYS as _MC500_SKIP_KEYS
from risutools.contract.codetexts import all_texts as _all_texts
from risutools.contract.codetexts import plain_strings as _plain_strings
from risutools.contract.codetexts import skipped as _skipped
from risutools.contract.codetexts import strings as _strings
from risutools.contract.codetexts import texts as _texts  # noqa: F401 (the reference walk)
from risutools.contract.schema import mc100
from risutools.datatables import data_table
from risutools.findings import MAX_POINTER_SHOWN, Finding, Severity
from risutools.jsonplaces import pointer_at
from risutools.settings import lifecycle
from risutools.settings.catalog import NOTES_SOURCE_VERSION
from risutools.settings.config import CAPABILITY_RE, Settings

COMPONENT_TYPES = ("module", "preset", "character", "lorebook")
KNOWN_SOURCE_KINDS = ("risu_attachment", "risu_json_export", "risu_realm")
SITUATION_FIELDS = ("concrete_scene", "emotion_evoked", "why_memorable", "transferable_lesson")
CORE_FIELDS = ("core_idea", "behavioral_cause", "invariant_conflict", "core_drive",
               "core_dilemma")
REPLAY_TO_AVAILABILITY = {"not_run": "untested", "stale": "untested", "passed": "available",
                          "failed": "unavailable"}
DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}")  # used with fullmatch (no trailing "\n")


@cache
def vocabulary() -> frozenset[str]:
    return frozenset(data_table("capabilities.yaml")["capabilities"])


# --------------------------------------------------------------------------- helpers


def _get(doc: Any, *path: str) -> Any:
    cur = doc
    for key in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(key)
    return cur


def _get2(doc: Any, key: str, inner: str) -> Any:
    """``_get(doc, key, inner)`` without its loop and its tuple of keys (the rules' usual
    read: a field of one of the document's objects)."""
    cur = doc.get(key) if isinstance(doc, dict) else None
    return cur.get(inner) if isinstance(cur, dict) else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _short(v: Any, n: int = 60) -> str:
    s = str(v)
    return repr(s if len(s) <= n else s[: n - 1] + "…")


Issue = tuple[str, str]  # (pointer, message)
RuleFn = Callable[[dict[str, Any], Settings], Iterator[Issue]]


# --------------------------------------------------------------------------- rules


@check("MC101", "error", "document", "type-prefix")
def mc101(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """component_id starts with component_type + '.', and payload.namespace is
    'risu.<component_type>'.

    Why: Tools route a component by the first part of its id and by its namespace; when
    they disagree with component_type the component lands in the wrong place.

    Fix: Make component_type, the first part of component_id and payload.namespace agree.
    """
    ctype = _str(doc.get("component_type"))
    cid = _str(doc.get("component_id"))
    if ctype not in COMPONENT_TYPES:
        return  # MC100 reports a missing or unknown type
    if cid is not None and not cid.startswith(ctype + "."):
        yield ("/component_id", f"component_id {_short(cid)} does not start with the "
               f"component_type {ctype!r} + '.'; make them agree")
    ns = _str(_get2(doc, "payload", "namespace"))
    if ns is not None and ns != f"risu.{ctype}":
        yield ("/payload/namespace", f"payload.namespace is {ns!r} but component_type is "
               f"{ctype!r}; set it to 'risu.{ctype}'")


def _post_id(source_id: str) -> str | None:
    if source_id.startswith("risu:"):
        return source_id[len("risu:"):]
    return None


@check("MC102", "error", "document", "source-key")
def mc102(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """component_id's source key equals the post id of source_refs[0].source_id ('risu:<post
    id>') and idea_layers.evidence.source_post (when present).

    Why: The source key is how a component is traced back to the Risu post it came from; a
    mismatch sends reviewers to another post.

    source_refs[0] is the Risu attachment, never the curator notes' entry (source_version
    'notes.yaml'): a document whose only digest is its notes' is tied to no module bytes.

    Fix: Use the same post id in all three places (source_refs[0] is the Risu attachment,
    listed first).
    """
    cid = _str(doc.get("component_id"))
    if cid is None:
        return
    parts = cid.split(".")
    if len(parts) < 4:
        return  # MC100 (pattern) reports the malformed id
    key = parts[2]
    refs = _get2(doc, "provenance", "source_refs")
    if isinstance(refs, list) and refs and isinstance(refs[0], dict):
        sid = _str(refs[0].get("source_id"))
        if sid is not None:
            post = _post_id(sid)
            if post is None:
                yield ("/provenance/source_refs/0/source_id",
                       f"source_refs[0].source_id {_short(sid)} is not a Risu post "
                       "('risu:<post id>'); list the Risu attachment first")
            elif post != key:
                yield ("/provenance/source_refs/0/source_id",
                       f"component_id's source key {key!r} differs from the post id {post!r} "
                       "in source_refs[0].source_id; use the same post id in both")
        if refs[0].get("source_version") == NOTES_SOURCE_VERSION:
            yield ("/provenance/source_refs/0/source_version",
                   "source_refs[0] is the curator notes' entry, not the Risu attachment, so no "
                   "digest ties the document to the module's bytes; list the attachment (its "
                   "source_version and sha256) first")
    post = _get(doc, "payload", "idea_layers", "evidence", "source_post")
    if isinstance(post, str) and post != key:
        yield ("/payload/idea_layers/evidence/source_post",
               f"evidence.source_post {post!r} differs from component_id's source key {key!r}; "
               "use the same post id in both")


def _fix_mc103(doc: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """A candidate's lineage.promotion_status becomes 'candidate' (review_status is never
    written: it is the human decision the lineage field follows)."""
    lineage = _get(doc, "payload", "idea_layers", "lineage", "promotion_status")
    if _get2(doc, "provenance", "review_status") == "candidate" and lineage in lifecycle.STATES \
            and lineage != "candidate":
        yield ("/payload/idea_layers/lineage/promotion_status", "candidate")


@check("MC103", "error", "document", "lineage-status", fixer=_fix_mc103)
def mc103(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """idea_layers.lineage.promotion_status equals provenance.review_status (when present).

    Why: Two fields that record the same status must not disagree, or readers trust the
    wrong one.

    Fix: Set lineage.promotion_status to the review_status.
    """
    lineage = _get(doc, "payload", "idea_layers", "lineage", "promotion_status")
    review = _get2(doc, "provenance", "review_status")
    if lineage in lifecycle.STATES and review in lifecycle.STATES and lineage != review:
        yield ("/payload/idea_layers/lineage/promotion_status",
               f"lineage.promotion_status is {lineage!r} but review_status is {review!r}; "
               f"set promotion_status to {review!r}")


@check("MC105", "warning", "document", "source-kind")
def mc105(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """provenance.source_kind is one of risu_attachment, risu_json_export, risu_realm.

    Why: The spec says unknown source kinds are warned about: a new kind is usually a typo
    or an unreviewed source.

    Fix: Use a known source kind (or add the new one to the spec).
    """
    kind = _get2(doc, "provenance", "source_kind")
    if isinstance(kind, str) and kind not in KNOWN_SOURCE_KINDS:
        yield ("/provenance/source_kind",
               f"source_kind {_short(kind)} is not a known kind "
               f"({', '.join(KNOWN_SOURCE_KINDS)}); use one of them")


def digest_problem(value: str) -> str | None:
    """Why ``value`` is not a well-formed digest, or None."""
    if DIGEST_RE.fullmatch(value):
        if value[7:] == "0" * 64:
            return "is a placeholder (all zeros)"
        return None
    if value and value != value.strip():
        return "has leading or trailing whitespace"
    low = value.strip().lower()
    body = low[7:] if low.startswith("sha256:") else low
    if not low or body in ("", "pending", "todo", "tbd", "none", "null", "unknown", "x", "?"):
        return "is a placeholder"
    if "todo" in low or "pending" in low:
        return "is a placeholder"
    if not value.startswith("sha256:"):
        return "lacks the 'sha256:' prefix"
    hexpart = value[7:]
    if re.fullmatch(r"[0-9a-fA-F]+", hexpart):
        if len(hexpart) != 64:
            return f"has {len(hexpart)} hex digits, not 64"
        return "has uppercase hex digits (must be lowercase)"
    return "is not hexadecimal"


def _digests(doc: dict[str, Any]) -> Iterator[tuple[str, str]]:
    refs = _get2(doc, "provenance", "source_refs")
    if isinstance(refs, list):
        for i, ref in enumerate(refs):
            v = ref.get("sha256") if isinstance(ref, dict) else None
            if isinstance(v, str):
                yield (f"/provenance/source_refs/{i}/sha256", v)
    v = _get2(doc, "projection", "prompt_sha256")
    if isinstance(v, str):
        yield ("/projection/prompt_sha256", v)


@check("MC200", "error", "document", "digest-form")
def mc200(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """Every digest is 'sha256:' + 64 lowercase hex digits; placeholders (sha256:pending, all
    zeros, TODO, empty) are refused.

    Why: A placeholder digest looks verified but proves nothing; every later check compares
    against it.

    Fix: Write the real digest (`risutools hash`, `sha256sum`), in lowercase.
    """
    for ptr, value in _digests(doc):
        why = digest_problem(value)
        if why is not None:
            yield (ptr, f"digest {_short(value, 24)} {why}; write 'sha256:' + the 64 lowercase "
                   "hex digits of the real SHA-256")


def prompt_digest(prompt: str) -> str | None:
    try:
        return sha256_prefixed(prompt.encode("utf-8"))
    except UnicodeEncodeError:
        return None


def _fix_mc201(doc: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """prompt_sha256 becomes the digest of the prompt as it is."""
    prompt = _get2(doc, "projection", "prompt")
    declared = _get2(doc, "projection", "prompt_sha256")
    if not isinstance(prompt, str) or not isinstance(declared, str) \
            or digest_problem(declared) is not None:
        return
    actual = prompt_digest(prompt)
    if actual is not None and actual != declared:
        yield ("/projection/prompt_sha256", actual)


@check("MC201", "error", "document", "prompt-digest", fixer=_fix_mc201,
       needs=(mc200.id,))
def mc201(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """projection.prompt_sha256 is the SHA-256 of projection.prompt (UTF-8).

    Why: The digest pins the exact prompt that was reviewed; a prompt edited after review
    no longer matches what was approved.

    Fix: Set prompt_sha256 to the digest the message gives (or restore the prompt).
    """
    prompt = _get2(doc, "projection", "prompt")
    declared = _get2(doc, "projection", "prompt_sha256")
    if not isinstance(prompt, str) or not isinstance(declared, str):
        return
    if digest_problem(declared) is not None:
        return  # MC200 says it (a filter that keeps MC201 keeps MC200: its needs)
    actual = prompt_digest(prompt)
    if actual is None:
        yield ("/projection/prompt", "the prompt holds an unpaired surrogate and cannot be "
               "encoded as UTF-8; fix the prompt text")
    elif actual != declared:
        yield ("/projection/prompt_sha256",
               f"prompt_sha256 is {declared[:19]}… but the prompt hashes to {actual}; set "
               "prompt_sha256 to that value (or restore the prompt it was computed from)")


@check("MC300", "error", "document", "no-execute-policy")
def mc300(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """active_code_policy static_preserve_no_execute implies static_analysis_only: true and
    evidence.code_executed: false.

    Why: The policy promises that module code was never run; fields that say otherwise
    break that promise or misreport it.

    Fix: Set static_analysis_only true and code_executed false (or change the policy).
    """
    if _get2(doc, "provenance", "active_code_policy") != "static_preserve_no_execute":
        return
    if _get2(doc, "provenance", "static_analysis_only") is not True:
        yield ("/provenance/static_analysis_only",
               "active_code_policy static_preserve_no_execute needs static_analysis_only: true; "
               "set it (or change the policy)")
    evidence = _get(doc, "payload", "idea_layers", "evidence")
    if isinstance(evidence, dict) and evidence.get("code_executed") is not False:
        yield ("/payload/idea_layers/evidence/code_executed",
               "active_code_policy static_preserve_no_execute needs evidence.code_executed: "
               "false; nothing may be executed under this policy")


@check("MC301", "error", "document", "candidate-inactive", guards=True)
def mc301(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """review_status candidate implies runtime_status inactive and publishable false.

    Why: A candidate has not been reviewed by anyone; it must not run or be published.

    Fix: Set runtime_status inactive and publishable false until the component is reviewed.
    """
    if _get2(doc, "provenance", "review_status") != "candidate":
        return
    runtime = _get2(doc, "provenance", "runtime_status")
    if isinstance(runtime, str) and runtime != "inactive":
        yield ("/provenance/runtime_status",
               f"a candidate must be inactive, not {runtime!r}; set runtime_status: inactive")
    if _get2(doc, "provenance", "publishable") is True:
        yield ("/provenance/publishable",
               "a candidate cannot be publishable; set publishable: false")


@check("MC302", "error", "document", "active-needs-approval", guards=True)
def mc302(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """runtime_status active needs review_status approved or promoted.

    Why: Only a component a human approved may run.

    Fix: Set runtime_status inactive, or get the component approved first.
    """
    if _get2(doc, "provenance", "runtime_status") != lifecycle.ACTIVE:
        return
    review = _get2(doc, "provenance", "review_status")
    if isinstance(review, str) and review not in lifecycle.APPROVED:
        yield ("/provenance/runtime_status",
               f"runtime_status active needs review_status approved or promoted, not "
               f"{review!r}; set runtime_status: inactive until it is approved")


def _declared_caps(doc: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("provides", "requires"):
        v = _get(doc, "capabilities", key)
        if isinstance(v, list):
            out.extend(x for x in v if isinstance(x, str))
    return out


@check("MC303", "error", "document", "publishable-gate", guards=True)
def mc303(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """publishable true needs review_status promoted, replay_status passed (when a context.*
    capability is declared) and availability_verdict available.

    Why: Publishing is the last gate: everything before it (review, replay, availability)
    must have passed.

    Fix: Set publishable false until the component is promoted, replayed and available.
    """
    if _get2(doc, "provenance", "publishable") is not True:
        return
    review = _get2(doc, "provenance", "review_status")
    if review != "promoted":
        yield ("/provenance/publishable",
               f"publishable needs review_status promoted, not {_short(review)}; set "
               "publishable: false until it is promoted")
    if any(c.startswith("context.") for c in _declared_caps(doc)):
        replay = _get2(doc, "projection", "replay_status")
        if replay != "passed":
            yield ("/provenance/publishable",
                   f"publishable needs a passed replay for a context.* component, replay_status "
                   f"is {_short(replay)}; run `risutools replay` first")
    avail = _get2(doc, "provenance", "availability_verdict")
    if avail != "available":
        yield ("/provenance/publishable",
               f"publishable needs availability_verdict available, not {_short(avail)}; set "
               "publishable: false until the component is available")


@check("MC304", "error", "document", "availability-follows-replay")
def mc304(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """availability_verdict agrees with replay_status: not_run/stale -> untested, passed ->
    available, failed -> unavailable.

    Why: availability_verdict is derived from the replay; a verdict that does not follow it
    claims a result no replay gave.

    Fix: Set availability_verdict from replay_status (the replay write-back does both).
    """
    replay = _get2(doc, "projection", "replay_status")
    avail = _get2(doc, "provenance", "availability_verdict")
    if not isinstance(replay, str) or not isinstance(avail, str):
        return
    want = REPLAY_TO_AVAILABILITY.get(replay)
    if want is not None and avail != want:
        yield ("/provenance/availability_verdict",
               f"availability_verdict is {avail!r} but replay_status {replay!r} means {want!r}; "
               f"set availability_verdict: {want}")


@check("MC400", "error", "document", "capability-names")
def mc400(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """Capability names match ^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*$, are not repeated in a
    list, and provides does not intersect conflicts.

    Why: Capabilities are matched by exact name when components are combined; a malformed,
    repeated or self-conflicting name breaks that matching.

    Fix: Rename, de-duplicate, or remove the capability from provides or conflicts.
    """
    caps = doc.get("capabilities")
    if not isinstance(caps, dict):
        return
    for key in ("provides", "requires", "conflicts"):
        lst = caps.get(key)
        if not isinstance(lst, list):
            continue
        seen: set[str] = set()
        for i, name in enumerate(lst):
            if not isinstance(name, str):
                continue
            # (a vocabulary name is well formed: tests/test_foundation.py holds it)
            if name not in vocabulary() and not CAPABILITY_RE.fullmatch(name):
                yield (f"/capabilities/{key}/{i}",
                       f"capability name {_short(name)} is not lowercase dotted snake_case "
                       "(e.g. hook.edit_request); rename it")
            if name in seen:
                yield (f"/capabilities/{key}/{i}",
                       f"capability {name!r} is listed twice in {key}; remove the copy")
            seen.add(name)
    provides = caps.get("provides")
    conflicts = caps.get("conflicts")
    if isinstance(provides, list) and isinstance(conflicts, list):
        both = {x for x in provides if isinstance(x, str)} & {
            x for x in conflicts if isinstance(x, str)}
        for i, name in enumerate(conflicts):
            if isinstance(name, str) and name in both:  # (an object or a list: no name)
                yield (f"/capabilities/conflicts/{i}",
                       f"capability {name!r} is both provided and in conflicts; remove it from "
                       "one of them")


@check("MC401", "warning", "document", "unknown-capability")
def mc401(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """A capability name the vocabulary (risutools/data/capabilities.yaml plus the catalog
    configuration) does not know.

    Why: An unknown name is usually a misspelling, and a misspelt capability never matches
    the one it meant.

    Fix: Fix the spelling, or add the name under `capabilities:` in .risutools.yaml.
    """
    caps = doc.get("capabilities")
    if not isinstance(caps, dict):
        return
    known = vocabulary()
    for key in ("provides", "requires", "conflicts"):
        lst = caps.get(key)
        if not isinstance(lst, list):
            continue
        for i, name in enumerate(lst):
            if (isinstance(name, str) and name not in known
                    and name not in cfg.extra_capabilities and CAPABILITY_RE.fullmatch(name)):
                yield (f"/capabilities/{key}/{i}",
                       f"capability {name!r} is not in the vocabulary; fix the spelling or add "
                       "it under `capabilities:` in .risutools.yaml")


def _fresh_texts(doc: dict[str, Any], found: list[str] | None = None) -> list[str]:
    """The strings MC500's fast path joins: those of :func:`_texts` for payload and projection
    (their keys too; the skipped fields' own strings left out), less the strings known to be
    prose (:data:`_PROSE`, and those of a shape known to be prose: :data:`_PROSE_SHAPES`),
    and maybe a string more; in another order. Order and extra strings do not change MC500's
    answer (see :func:`_all_texts`). The skipped fields' strings are taken out once each: a
    string that is also elsewhere stays. ``found``: the strings of the two sections as
    :func:`_plain_strings` lists them, when the loader listed them."""
    sections = [doc.get("payload"), doc.get("projection")]
    if found is None:
        found = _plain_strings(sections)
    if found is None:
        fresh = [t for name, v in zip(("payload", "projection"), sections, strict=True)
                 for t in _all_texts(name, v) if t not in _PROSE]
    else:
        fresh = [*filterfalse(_PROSE.__contains__, found)]
        if fresh:
            for name, value in zip(("payload", "projection"), sections, strict=True):
                if isinstance(value, dict):
                    for k in _MC500_SKIP_KEYS[name]:
                        skipped = value.get(k)
                        if skipped in fresh:  # (a string: fresh holds nothing else)
                            fresh.remove(skipped)
    return _of_unknown_shape(fresh)


def _of_unknown_shape(fresh: list[str]) -> list[str]:
    """``fresh`` less the strings of a shape known to be prose (:data:`_PROSE_SHAPES`)."""
    if fresh and _PROSE_SHAPES:
        return [t for t in fresh if digit_shape(t) not in _PROSE_SHAPES]
    return fresh


def known_prose(docs: list[Any], found: list[str]) -> bool:
    """Whether MC500 finds nothing in any of ``docs``, told at once from ``found``: every
    string of their payload and projection (and maybe more, in any order; whose each is,
    need not be known).  MC500 finds something in a document only in one of its strings
    alone (:func:`active_code`), so this asks of each string not known to be prose (less
    those of the fields MC500 skips, each once a document as :func:`_fresh_texts` takes
    them out, and those of a shape known to be prose) whether it looks like prose: first
    of them all joined (when that looks like prose, so does each: see
    :func:`active_code`), then, when the join does not (the detector also counts
    statements and markers across a text: many documents' prose together may pass its
    thresholds), of each alone.  When all do, they are remembered as prose.  False: one
    does not (then ask :func:`active_code` of each document)."""
    fresh = [*filterfalse(_PROSE.__contains__, found)]
    if fresh:
        fresh = _less_skipped(fresh, _skipped_strings(docs))
    fresh = _of_unknown_shape(fresh)
    if not fresh:
        return True
    if find_active_code("\n".join(fresh)) is not None and any(
            find_active_code(t) is not None for t in fresh):
        return False
    _remember_prose(fresh)
    return True


def _less_skipped(fresh: list[str], skipped: list[str]) -> list[str]:
    """``fresh`` less ``skipped`` as multisets (a string as many times fewer as it is
    skipped), in ``fresh``'s order, each left once.  When ``fresh`` holds each string once
    (most batches: the strings every document has are known prose), a set says it.
    Otherwise the skipped fields' strings that every document repeats (a namespace, a
    status) are asked of the detector one by one and remembered when prose (prose in a
    skipped field is prose anywhere), so that the next batches leave them out at once."""
    if len(set(fresh)) == len(fresh):
        out = set(skipped)
        return [*filterfalse(out.__contains__, fresh)]
    left = Counter(fresh)
    left.subtract(skipped)
    repeated = [t for t, n in Counter(skipped).items() if n > 1 and t not in _PROSE]
    _remember_prose([t for t in repeated if find_active_code(t) is None])
    return [t for t, n in left.items() if n > 0]


def _skipped_strings(docs: list[Any]) -> list[str]:
    """The strings of the fields MC500 skips (:data:`_MC500_SKIP_KEYS`), one a field of a
    document: a field at a time over all of ``docs``."""
    out: list[str] = []
    objects = [d for d in docs if type(d) is dict]
    for name, keys in _MC500_SKIP_KEYS.items():
        sections = [s for s in map(methodcaller("get", name), objects) if type(s) is dict]
        for k in keys:
            out += [v for v in map(methodcaller("get", k), sections) if type(v) is str]
    return out


#: strings known to be prose (``find_active_code`` answers None), the bounded memory of
#: MC500: at most ``_PROSE_MAX`` strings of at most ``_PROSE_LONGEST`` characters each;
#: when full, the older half is forgotten (a sentence every document has is seen again
#: at once, a name of one document never); ``dict`` for its insertion order and C lookups
_PROSE: dict[str, None] = {}
#: the shapes of those strings (:func:`~risutools.contract.activecode.digit_shape`: the
#: same sentence with other numbers is prose too), within the same bounds
_PROSE_SHAPES: dict[bytes, None] = {}
_PROSE_MAX = 4096
_PROSE_LONGEST = 1024


def _make_room(memory: dict[Any, None], coming: int) -> None:
    """The older half of ``memory`` (and room for ``coming`` more) forgotten when it would
    pass :data:`_PROSE_MAX`."""
    if len(memory) + coming > _PROSE_MAX:
        for old in list(itertools.islice(memory, len(memory) // 2 + coming)):
            del memory[old]


def _remember_prose(texts: list[str]) -> None:
    _make_room(_PROSE, len(texts))
    _make_room(_PROSE_SHAPES, len(texts))
    for t in texts[:_PROSE_MAX]:
        if len(t) <= _PROSE_LONGEST:
            _PROSE[t] = None
            shape = digit_shape(t)
            if shape is not None:
                _PROSE_SHAPES[shape] = None


@check("MC500", "error", "document", "active-code")
def mc500(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """No active code in payload or projection, in a value or a key: no Lua/JS bodies, CBS,
    HTML script or regex patterns copied from the module.

    Why: Documents describe what a module does; copied code could be executed by whatever
    reads the catalog, and it hides the idea in implementation detail.

    Fix: Describe what the code does in a sentence instead of copying it.
    """
    return active_code(doc, None)


#: the members of a document MC500 reads
ACTIVE_CODE_SECTIONS = ("payload", "projection")


def active_code(doc: dict[str, Any], found: list[str] | None) -> Iterator[Issue]:
    """MC500's findings; ``found``: every string of :data:`ACTIVE_CODE_SECTIONS` (and
    maybe more, in any order) but those known to be prose, as the loader's level walk met
    them (empty when the loader found every one prose: :func:`known_prose`), or None
    (they are looked for here)."""
    # Fast path: when the strings joined by newlines look like prose, each one does
    # (every pattern match inside one string is a match in the joined text, since
    # the detector's anchors behave at a newline as at a string's start or end).  A
    # string already seen as prose (the sentences a projection writes in every document)
    # is left out of the join: one pass over the document's other strings.
    if found is not None and not found:  # (nothing to look at: see known_prose)
        return
    fresh = _fresh_texts(doc, found)
    if find_active_code("\n".join(fresh)) is None:
        _remember_prose(fresh)
        return
    strings = [
        (place, text, key)
        for section in ("payload", "projection")
        for place, text, key in _strings(doc.get(section), (None, section))
        if not _skipped(place, section, key)
    ]
    for place, text, key in strings:
        why = find_active_code(text)
        if why is not None:
            yield (pointer_at(place, MAX_POINTER_SHOWN),
                   f"its key looks like active code ({why}); name it in words instead of "
                   "copying code or patterns" if key else f"looks like active code ({why}); "
                   "describe what it does in a sentence instead of copying code or patterns")


def _blank(v: Any) -> bool:
    return not isinstance(v, str) or not v.strip()


@check("MC600", "warning", "document", "narrative", needs=(mc100.id,))
def mc600(doc: dict[str, Any], cfg: Settings) -> Iterator[Issue]:
    """Narrative fields (idea_layers.situation, idea_layers.core, invariants) are complete; a
    warning for a candidate, an error once approved/promoted/retired or under the promotion
    gate.

    Why: The narrative is what a reviewer approves; an approved component without it cannot
    be understood or reused.

    Fix: Write the missing fields in the curator notes (notes/<component_id>.yaml).
    """
    layers = _get2(doc, "payload", "idea_layers")
    missing: list[str] = []
    if not isinstance(layers, dict):  # (both read as None)
        layers = {}
    situation = layers.get("situation")
    if not isinstance(situation, dict):
        missing.append("idea_layers.situation")
    else:
        missing += [f"situation.{k}" for k in SITUATION_FIELDS if _blank(situation.get(k))]
    core = layers.get("core")
    if not isinstance(core, dict):
        missing.append("idea_layers.core")
    else:
        missing += [f"core.{k}" for k in CORE_FIELDS if _blank(core.get(k))]
    inv = _get2(doc, "payload", "invariants")
    if not isinstance(inv, list) or not any(isinstance(x, str) and x.strip() for x in inv):
        missing.append("payload.invariants")
    if missing:
        yield ("/payload", f"narrative incomplete: {', '.join(missing)} missing or empty; write "
               "them in the curator notes (notes/<component_id>.yaml)")



#: the document rules by id, in id order: MC100 (the schema) first, then this module's
DOCUMENT_CHECKS: dict[str, Check] = {
    k: c for k, c in registered_checks().items()
    if c.family == mc100.family and c.scope == "document"}

#: (id, function) of every document rule, in id order: what ``validate_document`` runs
DOCUMENT_RULES: tuple[tuple[str, RuleFn], ...] = tuple(
    (c.id, c.run) for c in DOCUMENT_CHECKS.values() if c.run is not None)


def effective_severity(rule: str | Check, doc: Any, cfg: Settings) -> str:
    """The severity after configuration (``off`` drops the finding)."""
    rule = str(rule)
    if rule == mc600.id:
        if cfg.promotion_gate:
            return "error"  # the promotion gate cannot be configured away
        review = _get2(doc, "provenance", "review_status")
        if review in lifecycle.NARRATIVE_REQUIRED:
            return "error" if cfg.severities.get(rule) != "off" else "off"
    return cfg.severities.get(rule, DOCUMENT_CHECKS[rule].severity)


def make_finding(rule: str | Check, severity: str, message: str, file: str | None,
                 line: int | None, pointer: str) -> Finding:
    sev: Severity = "warning" if severity == "warning" else "error"
    return Finding(str(rule), sev, message, file=file, line=line, pointer=pointer)

