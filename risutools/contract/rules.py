"""The contract rules MC100-MC600: metadata (the rule table) and the document-level checks.

Every rule is a small function ``rule(doc, ctx) -> iterator of (pointer, message)``
registered with its id and default severity.  The rules never assume the
document is schema-valid: they read fields defensively and say nothing about a
field that has the wrong type (MC100 already does).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from risutools.contract.activecode import find_active_code
from risutools.contract.config import CAPABILITY_RE, ContractConfig
from risutools.contract.jsonlines import escape_pointer_token
from risutools.findings import Finding


@dataclass(frozen=True)
class RuleInfo:
    id: str
    severity: str  # default severity: error | warning
    title: str  # short name
    summary: str  # what it checks (one sentence)
    fix: str  # how to fix it (one sentence)
    scope: str  # "load" | "document" | "catalog" | "verify"


def _r(id: str, severity: str, title: str, summary: str, fix: str, scope: str) -> RuleInfo:
    return RuleInfo(id, severity, title, summary, fix, scope)


RULES: dict[str, RuleInfo] = {r.id: r for r in (
    _r("MC000", "error", "unparsable-document",
       "The file is a readable JSON, YAML or NDJSON document (UTF-8, no duplicate keys, no "
       "NaN/Infinity, no YAML aliases or non-JSON tags, within the size and depth bounds).",
       "Fix the syntax at the reported line / byte offset / pointer.", "load"),
    _r("MC001", "error", "unreadable-path",
       "The path given can be read (exists, is permitted).",
       "Check the path and its permissions; risutools exits 2 for these.", "load"),
    _r("MC100", "error", "schema",
       "The document satisfies schemas/matrix-component-v1.schema.json (JSON Schema 2020-12); "
       "every schema error is listed with its JSON pointer.",
       "Add the missing field, fix the type or enum value, or remove the unknown property "
       "(extensions use an `x-` prefix).", "document"),
    _r("MC101", "error", "type-prefix",
       "component_id starts with component_type + '.', and payload.namespace is "
       "'risu.<component_type>'.",
       "Make component_type, the first part of component_id and payload.namespace agree.",
       "document"),
    _r("MC102", "error", "source-key",
       "component_id's source key equals the post id of source_refs[0].source_id "
       "('risu:<post id>') and idea_layers.evidence.source_post (when present).",
       "Use the same post id in all three places (source_refs[0] is the Risu attachment).",
       "document"),
    _r("MC103", "error", "lineage-status",
       "idea_layers.lineage.promotion_status equals provenance.review_status (when present).",
       "Set lineage.promotion_status to the review_status.", "document"),
    _r("MC104", "error", "duplicate-id",
       "Two documents in one catalog never share component_id + component_version.",
       "Bump component_version of one of them, or remove the copy.", "catalog"),
    _r("MC105", "warning", "source-kind",
       "provenance.source_kind is one of risu_attachment, risu_json_export, risu_realm.",
       "Use a known source kind (or add the new one to the spec).", "document"),
    _r("MC200", "error", "digest-form",
       "Every digest is 'sha256:' + 64 lowercase hex digits; placeholders (sha256:pending, all "
       "zeros, TODO, empty) are refused.",
       "Write the real digest (`risutools hash`, `sha256sum`), in lowercase.", "document"),
    _r("MC201", "error", "prompt-digest",
       "projection.prompt_sha256 is the SHA-256 of projection.prompt (UTF-8).",
       "Set prompt_sha256 to the digest the message gives (or restore the prompt).", "document"),
    _r("MC202", "error", "source-digest",
       "When the source file is at hand (source store), source_refs[].sha256 is the SHA-256 "
       "of its bytes (`risutools verify`).",
       "Re-project from the right source file, or fix the digest.", "verify"),
    _r("MC203", "error", "replay-report",
       "A replay report referenced in source_refs (source_id 'replay:...', source_version "
       "'replay-report-v1') exists and its digest matches (`risutools verify`).",
       "Re-run the replay and record the new report's digest, or restore the report file.",
       "verify"),
    _r("MC300", "error", "no-execute-policy",
       "active_code_policy static_preserve_no_execute implies static_analysis_only: true and "
       "evidence.code_executed: false.",
       "Set static_analysis_only true and code_executed false (or change the policy).",
       "document"),
    _r("MC301", "error", "candidate-inactive",
       "review_status candidate implies runtime_status inactive and publishable false.",
       "Set runtime_status inactive and publishable false until the component is reviewed.",
       "document"),
    _r("MC302", "error", "active-needs-approval",
       "runtime_status active needs review_status approved or promoted.",
       "Set runtime_status inactive, or get the component approved first.", "document"),
    _r("MC303", "error", "publishable-gate",
       "publishable true needs review_status promoted, replay_status passed (when a context.* "
       "capability is declared) and availability_verdict available.",
       "Set publishable false until the component is promoted, replayed and available.",
       "document"),
    _r("MC304", "error", "availability-follows-replay",
       "availability_verdict agrees with replay_status: not_run/stale -> untested, passed -> "
       "available, failed -> unavailable.",
       "Set availability_verdict from replay_status (the replay write-back does both).",
       "document"),
    _r("MC305", "error", "recorded-transitions",
       "A document past candidate ends a chain of recorded transitions (transitions.ndjson) "
       "from candidate, each backed by a human approval record in approvals/.",
       "Move the component only with `risutools promote` and an approval record; never edit "
       "review_status by hand.", "catalog"),
    _r("MC400", "error", "capability-names",
       "Capability names match ^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*$, are not repeated in a "
       "list, and provides does not intersect conflicts.",
       "Rename, de-duplicate, or remove the capability from provides or conflicts.", "document"),
    _r("MC401", "warning", "unknown-capability",
       "A capability name the vocabulary (risutools/data/capabilities.yaml plus the catalog "
       "configuration) does not know.",
       "Fix the spelling, or add the name under `capabilities:` in .risutools.yaml.",
       "document"),
    _r("MC500", "error", "active-code",
       "No active code in payload or projection: no Lua/JS bodies, CBS, HTML script or regex "
       "patterns copied from the module.",
       "Describe what the code does in a sentence instead of copying it.", "document"),
    _r("MC600", "warning", "narrative",
       "Narrative fields (idea_layers.situation, idea_layers.core, invariants) are complete; a "
       "warning for a candidate, an error once approved/promoted/retired or under the "
       "promotion gate.",
       "Write the missing fields in the curator notes (notes/<component_id>.yaml).",
       "document"),
)}

COMPONENT_TYPES = ("module", "preset", "character", "lorebook")
REVIEW_STATES = ("candidate", "pending_human_review", "approved", "promoted", "rejected",
                 "retired")
KNOWN_SOURCE_KINDS = ("risu_attachment", "risu_json_export", "risu_realm")
PAST_CANDIDATE = ("pending_human_review", "approved", "promoted", "rejected", "retired")
NARRATIVE_REQUIRED_STATES = ("approved", "promoted", "retired")
SITUATION_FIELDS = ("concrete_scene", "emotion_evoked", "why_memorable", "transferable_lesson")
CORE_FIELDS = ("core_idea", "behavioral_cause", "invariant_conflict", "core_drive",
               "core_dilemma")
REPLAY_TO_AVAILABILITY = {"not_run": "untested", "stale": "untested", "passed": "available",
                          "failed": "unavailable"}
DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}")  # used with fullmatch (no trailing "\n")


@cache
def vocabulary() -> frozenset[str]:
    from risutools.resources import load_data_yaml

    return frozenset(load_data_yaml("capabilities.yaml")["capabilities"])


# --------------------------------------------------------------------------- helpers


def _get(doc: Any, *path: str) -> Any:
    cur = doc
    for key in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(key)
    return cur


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _short(v: Any, n: int = 60) -> str:
    s = str(v)
    return repr(s if len(s) <= n else s[: n - 1] + "…")


Issue = tuple[str, str]  # (pointer, message)
RuleFn = Callable[[dict[str, Any], ContractConfig], Iterator[Issue]]


# --------------------------------------------------------------------------- rules


def mc101(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
    ctype = _str(doc.get("component_type"))
    cid = _str(doc.get("component_id"))
    if ctype not in COMPONENT_TYPES:
        return  # MC100 reports a missing or unknown type
    if cid is not None and not cid.startswith(ctype + "."):
        yield ("/component_id", f"component_id {_short(cid)} does not start with the "
               f"component_type {ctype!r} + '.'; make them agree")
    ns = _str(_get(doc, "payload", "namespace"))
    if ns is not None and ns != f"risu.{ctype}":
        yield ("/payload/namespace", f"payload.namespace is {ns!r} but component_type is "
               f"{ctype!r}; set it to 'risu.{ctype}'")


def _post_id(source_id: str) -> str | None:
    if source_id.startswith("risu:"):
        return source_id[len("risu:"):]
    return None


def mc102(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
    cid = _str(doc.get("component_id"))
    if cid is None:
        return
    parts = cid.split(".")
    if len(parts) < 4:
        return  # MC100 (pattern) reports the malformed id
    key = parts[2]
    refs = _get(doc, "provenance", "source_refs")
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
    post = _get(doc, "payload", "idea_layers", "evidence", "source_post")
    if isinstance(post, str) and post != key:
        yield ("/payload/idea_layers/evidence/source_post",
               f"evidence.source_post {post!r} differs from component_id's source key {key!r}; "
               "use the same post id in both")


def mc103(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
    lineage = _get(doc, "payload", "idea_layers", "lineage", "promotion_status")
    review = _get(doc, "provenance", "review_status")
    if lineage in REVIEW_STATES and review in REVIEW_STATES and lineage != review:
        yield ("/payload/idea_layers/lineage/promotion_status",
               f"lineage.promotion_status is {lineage!r} but review_status is {review!r}; "
               f"set promotion_status to {review!r}")


def mc105(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
    kind = _get(doc, "provenance", "source_kind")
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
    refs = _get(doc, "provenance", "source_refs")
    if isinstance(refs, list):
        for i, ref in enumerate(refs):
            v = ref.get("sha256") if isinstance(ref, dict) else None
            if isinstance(v, str):
                yield (f"/provenance/source_refs/{i}/sha256", v)
    v = _get(doc, "projection", "prompt_sha256")
    if isinstance(v, str):
        yield ("/projection/prompt_sha256", v)


def mc200(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
    for ptr, value in _digests(doc):
        why = digest_problem(value)
        if why is not None:
            yield (ptr, f"digest {_short(value, 24)} {why}; write 'sha256:' + the 64 lowercase "
                   "hex digits of the real SHA-256")


def prompt_digest(prompt: str) -> str | None:
    try:
        return "sha256:" + hashlib.sha256(prompt.encode("utf-8")).hexdigest()
    except UnicodeEncodeError:
        return None


def mc201(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
    prompt = _get(doc, "projection", "prompt")
    declared = _get(doc, "projection", "prompt_sha256")
    if not isinstance(prompt, str) or not isinstance(declared, str):
        return
    if digest_problem(declared) is not None:
        return  # MC200 says it
    actual = prompt_digest(prompt)
    if actual is None:
        yield ("/projection/prompt", "the prompt holds an unpaired surrogate and cannot be "
               "encoded as UTF-8; fix the prompt text")
    elif actual != declared:
        yield ("/projection/prompt_sha256",
               f"prompt_sha256 is {declared[:19]}… but the prompt hashes to {actual}; set "
               "prompt_sha256 to that value (or restore the prompt it was computed from)")


def mc300(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
    if _get(doc, "provenance", "active_code_policy") != "static_preserve_no_execute":
        return
    if _get(doc, "provenance", "static_analysis_only") is not True:
        yield ("/provenance/static_analysis_only",
               "active_code_policy static_preserve_no_execute needs static_analysis_only: true; "
               "set it (or change the policy)")
    evidence = _get(doc, "payload", "idea_layers", "evidence")
    if isinstance(evidence, dict) and evidence.get("code_executed") is not False:
        yield ("/payload/idea_layers/evidence/code_executed",
               "active_code_policy static_preserve_no_execute needs evidence.code_executed: "
               "false; nothing may be executed under this policy")


def mc301(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
    if _get(doc, "provenance", "review_status") != "candidate":
        return
    runtime = _get(doc, "provenance", "runtime_status")
    if isinstance(runtime, str) and runtime != "inactive":
        yield ("/provenance/runtime_status",
               f"a candidate must be inactive, not {runtime!r}; set runtime_status: inactive")
    if _get(doc, "provenance", "publishable") is True:
        yield ("/provenance/publishable",
               "a candidate cannot be publishable; set publishable: false")


def mc302(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
    if _get(doc, "provenance", "runtime_status") != "active":
        return
    review = _get(doc, "provenance", "review_status")
    if isinstance(review, str) and review not in ("approved", "promoted"):
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


def mc303(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
    if _get(doc, "provenance", "publishable") is not True:
        return
    review = _get(doc, "provenance", "review_status")
    if review != "promoted":
        yield ("/provenance/publishable",
               f"publishable needs review_status promoted, not {_short(review)}; set "
               "publishable: false until it is promoted")
    if any(c.startswith("context.") for c in _declared_caps(doc)):
        replay = _get(doc, "projection", "replay_status")
        if replay != "passed":
            yield ("/provenance/publishable",
                   f"publishable needs a passed replay for a context.* component, replay_status "
                   f"is {_short(replay)}; run `risutools replay` first")
    avail = _get(doc, "provenance", "availability_verdict")
    if avail != "available":
        yield ("/provenance/publishable",
               f"publishable needs availability_verdict available, not {_short(avail)}; set "
               "publishable: false until the component is available")


def mc304(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
    replay = _get(doc, "projection", "replay_status")
    avail = _get(doc, "provenance", "availability_verdict")
    if not isinstance(replay, str) or not isinstance(avail, str):
        return
    want = REPLAY_TO_AVAILABILITY.get(replay)
    if want is not None and avail != want:
        yield ("/provenance/availability_verdict",
               f"availability_verdict is {avail!r} but replay_status {replay!r} means {want!r}; "
               f"set availability_verdict: {want}")


def mc400(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
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
            if not CAPABILITY_RE.fullmatch(name):
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
            if name in both:
                yield (f"/capabilities/conflicts/{i}",
                       f"capability {name!r} is both provided and in conflicts; remove it from "
                       "one of them")


def mc401(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
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


def _strings(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """(pointer, string) for every string value below ``value`` (iterative; keys skipped)."""
    stack: list[tuple[Any, str]] = [(value, pointer)]
    while stack:
        v, p = stack.pop()
        if isinstance(v, str):
            yield (p, v)
        elif isinstance(v, dict):
            for k in reversed(list(v)):
                stack.append((v[k], f"{p}/{escape_pointer_token(k)}"))
        elif isinstance(v, list):
            for i in range(len(v) - 1, -1, -1):
                stack.append((v[i], f"{p}/{i}"))


# Fields holding identifiers or digests, not prose.
_MC500_SKIP = frozenset({
    "/payload/namespace", "/payload/controller", "/projection/prompt_sha256",
    "/projection/harness_compatibility", "/projection/replay_status",
})


def _texts(section: str, value: Any) -> Iterator[str]:
    """The strings ``_strings`` gives for a section, without building their pointers."""
    skip = _MC500_SKIP_KEYS.get(section, frozenset())
    # a skipped field's pointer is only that of its own value: strings below it count
    stack: list[Any] = [v for k, v in reversed(value.items())
                        if not (k in skip and isinstance(v, str))] \
        if isinstance(value, dict) else [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            stack.extend(reversed(v))


_MC500_SKIP_KEYS = {"payload": frozenset({"namespace", "controller"}),
                    "projection": frozenset({"prompt_sha256", "harness_compatibility",
                                             "replay_status"})}


def mc500(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
    # Fast path: when the strings joined by newlines look like prose, each one does
    # (every pattern match inside one string is a match in the joined text, since
    # the detector's anchors behave at a newline as at a string's start or end).
    joined = "\n".join(t for section in ("payload", "projection")
                       for t in _texts(section, doc.get(section)))
    if find_active_code(joined) is None:
        return
    strings = [
        (ptr, text)
        for section in ("payload", "projection")
        for ptr, text in _strings(doc.get(section), "/" + section)
        if ptr not in _MC500_SKIP
    ]
    for ptr, text in strings:
        why = find_active_code(text)
        if why is not None:
            yield (ptr, f"looks like active code ({why}); describe what it does in a "
                   "sentence instead of copying code or patterns")


def _blank(v: Any) -> bool:
    return not isinstance(v, str) or not v.strip()


def mc600(doc: dict[str, Any], cfg: ContractConfig) -> Iterator[Issue]:
    layers = _get(doc, "payload", "idea_layers")
    missing: list[str] = []
    situation = _get(layers, "situation")
    if not isinstance(situation, dict):
        missing.append("idea_layers.situation")
    else:
        missing += [f"situation.{k}" for k in SITUATION_FIELDS if _blank(situation.get(k))]
    core = _get(layers, "core")
    if not isinstance(core, dict):
        missing.append("idea_layers.core")
    else:
        missing += [f"core.{k}" for k in CORE_FIELDS if _blank(core.get(k))]
    inv = _get(doc, "payload", "invariants")
    if not isinstance(inv, list) or not any(isinstance(x, str) and x.strip() for x in inv):
        missing.append("payload.invariants")
    if missing:
        yield ("/payload", f"narrative incomplete: {', '.join(missing)} missing or empty; write "
               "them in the curator notes (notes/<component_id>.yaml)")


DOCUMENT_RULES: tuple[tuple[str, RuleFn], ...] = (
    ("MC101", mc101), ("MC102", mc102), ("MC103", mc103), ("MC105", mc105),
    ("MC200", mc200), ("MC201", mc201), ("MC300", mc300), ("MC301", mc301),
    ("MC302", mc302), ("MC303", mc303), ("MC304", mc304), ("MC400", mc400),
    ("MC401", mc401), ("MC500", mc500), ("MC600", mc600),
)


def effective_severity(rule: str, doc: Any, cfg: ContractConfig) -> str:
    """The severity after configuration (``off`` drops the finding)."""
    if rule == "MC600":
        if cfg.promotion_gate:
            return "error"  # the promotion gate cannot be configured away
        review = _get(doc, "provenance", "review_status")
        if review in NARRATIVE_REQUIRED_STATES:
            return "error" if cfg.severities.get(rule) != "off" else "off"
    return cfg.severities.get(rule, RULES[rule].severity)


def make_finding(rule: str, severity: str, message: str, file: str | None,
                 line: int | None, pointer: str) -> Finding:
    if severity == "warning":
        return Finding(rule, "warning", message, file=file, line=line, pointer=pointer)
    return Finding(rule, "error", message, file=file, line=line, pointer=pointer)
