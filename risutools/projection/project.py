"""``project(module) -> dict``: the matrix-component-v1 document of a module.

Mechanical fields come from :func:`risutools.analysis.analyze`; narrative
fields may come from curator notes (:mod:`risutools.projection.notes`), merged
deterministically (notes win; lists in notes replace generated lists; objects
of sentences merge key by key).  The document never carries code or regex
patterns, and its review status is always ``candidate``.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
from typing import Any

from risutools.analysis import Analysis, analyze
from risutools.analysis.model import HOOK_TAGS, HOOK_WORDS, StateKey, scrub
from risutools.analysis.toggles import Toggle
from risutools.checks import all_checks
from risutools.checks.analysis import RA114
from risutools.contract.canonical import canonical
from risutools.errors import ConfigError
from risutools.formats.model import Module
from risutools.projection import naming
from risutools.projection.guard import CopyGuard, fold
from risutools.projection.notes import Notes
from risutools.projection.text import (
    HOOK_SENTENCES,
    LANGS,
    OPERATORS,
    TYPE_WORDS,
    summary_sentence,
    t,
)

CONTRACT = "matrix-component-v1"
COMPONENT_VERSION = "1.0.0"
ORIGIN = "risu"
_POST_ID = re.compile(r"^[0-9]{1,20}$")
_POST_ID_IN_NAME = re.compile(r"^([0-9]{1,20})[_-]")
_MAX_EVIDENCE_IN_SENTENCE = 3


def post_id_from_name(name: str) -> str | None:
    """The post id a catalog file name carries: leading digits before ``_`` or ``-``.

    ``174678332_context-cutter.risum`` -> ``"174678332"``; otherwise None.
    """
    m = _POST_ID_IN_NAME.match(os.path.basename(name))
    return m.group(1) if m else None


def slugify(name: str) -> str:
    """ASCII, lowercase, kebab-case; Hangul romanized, emoji and version numbers dropped;
    "" when nothing is left (see :mod:`risutools.projection.naming`)."""
    return naming.slugify(name)


#: fields that differ between the containers of one module (JSON export vs .risum)
_CONTAINER_FIELDS = ("type", "assets")


def module_identity(module: Module) -> str | None:
    """SHA-256 hex of a module's own ``id`` and content, the same whichever container
    carried it (a JSON export and a ``.risum`` of one module give one identity); None for
    a module without an id, and for presets and cards (their file is their identity)."""
    if module.component_type != "module" or not module.id:
        return None
    content = {k: v for k, v in module.data.items() if k not in _CONTAINER_FIELDS}
    blob = canonical(_jsonable({"id": module.id, "content": content}))
    return hashlib.sha256(blob).hexdigest()


def without_container(doc: dict[str, Any]) -> dict[str, Any]:
    """A projected document less what only names the container it was read from (the
    source reference, the source kind, the evidence's source format and the lineage's
    reverse translation): two documents equal here are the same module carried by two
    containers (a JSON export and a ``.risum``), which ingest keeps once."""
    out = copy.deepcopy(doc)
    prov = out.get("provenance")
    if isinstance(prov, dict):
        prov.pop("source_refs", None)
        prov.pop("source_kind", None)
    layers = out.get("payload", {}).get("idea_layers", {}) if isinstance(
        out.get("payload"), dict) else {}
    if isinstance(layers, dict):
        if isinstance(layers.get("evidence"), dict):
            layers["evidence"].pop("source_format", None)
        if isinstance(layers.get("lineage"), dict):
            layers["lineage"].pop("reverse_translation", None)
    return out


def _source_facts(module: Module) -> tuple[str, str, str, str, str | None]:
    """(sha256 hex, source_version, source_format, source_kind, card file name)."""
    src = module.source
    if src is None:
        digest = hashlib.sha256(canonical(_jsonable(module.data))).hexdigest()
        return digest, "module.risum", "module.risum", "risu_attachment", None
    fmt = (src.format or "").lower()
    base = os.path.basename(src.path.replace("\\", "/")) or "source"
    sha = src.sha256.lower()
    if fmt.startswith("charx"):
        member = src.member or "module.risum"
        kind = "card.json" if member == "card.json" else "module.risum"
        return sha, f"{base}!{member}", kind, "risu_attachment", base
    if fmt == "json-card":
        return sha, "card.json", "card.json", "risu_json_export", None
    if fmt.startswith("json"):
        return sha, "module.json", "module.json", "risu_json_export", None
    if fmt in ("risup", "risupreset"):
        return sha, f"preset.{fmt}", f"preset.{fmt}", "risu_attachment", None
    if fmt == "risum" or not fmt:
        return sha, "module.risum", "module.risum", "risu_attachment", None
    return sha, fmt, fmt, "risu_attachment", None


def _jsonable(value: Any) -> Any:
    """A JSON-safe copy (for hashing module data that was built in code)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if (isinstance(value, float) and value != value) or value in (float("inf"), float("-inf")):
        return str(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        if isinstance(value, str):
            return value.encode("utf-8", "replace").decode("utf-8")
        return value
    if isinstance(value, bytes):
        return value.hex()
    return repr(value)


def _where_list(lang: str, items: list[str], total: int) -> str:
    shown = items[:_MAX_EVIDENCE_IN_SENTENCE]
    text = ", ".join(shown)
    more = total - len(shown)
    if more > 0:
        text += t(lang, "more", n=more)
    return text


def _state_sentence(lang: str, sk: StateKey) -> str:
    writes = _where_list(lang, sk.writes, sk.write_count)
    if sk.reads:
        return t(lang, "state_wr", writes=writes,
                 reads=_where_list(lang, sk.reads, sk.read_count))
    return t(lang, "state_w", writes=writes)


def _copied(guard: CopyGuard, text: str, limit: int) -> str | None:
    """``text`` folded to one line and cut to ``limit``, or None when it may not be copied."""
    s = fold(text)[:limit].strip()
    return s if s and guard.allow(text) and guard.allow(s) else None


def _name(guard: CopyGuard, text: str, limit: int) -> str | None:
    """Like :func:`_copied`, for names (keys, variables): name characters only."""
    s = _copied(guard, text, limit)
    return s if s is not None and guard.allow_name(s) and guard.allow_name(text) else None


def _part_key(guard: CopyGuard, tg: Toggle, ordinal: int) -> str:
    return _name(guard, tg.key, 80) or f"toggle-{ordinal}"


def _part_sentence(lang: str, tg: Toggle, guard: CopyGuard, ordinal: int) -> str:
    label = _copied(guard, tg.label, 120) or _part_key(guard, tg, ordinal)
    if tg.type == "select":
        withheld = t(lang, "withheld")
        options = ", ".join(_copied(guard, o, 40) or withheld for o in tg.options[:12])
        s = t(lang, "part_select", label=label, options=options)
    elif tg.type == "text":
        s = t(lang, "part_text", label=label)
    else:
        s = t(lang, "part_checkbox", label=label)
    group = _copied(guard, tg.group, 60) if tg.group else None
    if group:
        s += t(lang, "part_group", group=group)
    return s


def _plural(n: int) -> dict[str, str]:
    return {"s": "" if n == 1 else "s", "ies": "y" if n == 1 else "ies"}


def _summary(lang: str, a: Analysis, type_word: str) -> str:
    parts: list[str] = []
    hooks = [HOOK_WORDS[h] for h in a.hook_names() if h in HOOK_WORDS]
    if hooks:
        parts.append(t(lang, "summary_hooks", hooks=", ".join(hooks)))
    written = [s for s in a.state if s.scope == "chat" and s.writes]
    for n, key in ((len(written), "summary_state"), (len(a.toggles), "summary_toggles"),
                   (a.counts.get("lorebook", 0), "summary_lore"),
                   (a.counts.get("regex", 0), "summary_regex"),
                   (a.counts.get("assets", 0), "summary_assets")):
        if n:
            parts.append(t(lang, key, n=n, **_plural(n)))
    if a.privileged:
        parts.append(t(lang, "summary_priv", apis=", ".join(f.name for f in a.privileged[:5])))
    return summary_sentence(lang, type_word, parts)


def _activation_rules(lang: str, a: Analysis, guard: CopyGuard) -> list[str]:
    rules: list[str] = []
    withheld = t(lang, "withheld")
    declared = {tg.key: tg for tg in a.toggles}
    read_toggles = [s.key[len("toggle_"):] for s in a.state
                    if s.scope == "global" and s.key.startswith("toggle_") and s.reads]
    named = [k for k in read_toggles if k in declared] or read_toggles
    if named:
        names = [_name(guard, k, 60) or withheld for k in named[:10]]
        rules.append(t(lang, "toggles_read", names=", ".join(names)))
    elif a.toggles:
        rules.append(t(lang, "toggles_offered", n=len(a.toggles), **_plural(len(a.toggles))))
    by_trigger: dict[int, list[str]] = {}
    for c in a.conditions:
        if c.type in ("var", "value") and c.var:
            op = OPERATORS.get(c.operator, "=" if not c.operator else "?")
            value = (_copied(guard, c.value, 80) or withheld) if c.value else "''"
            what = t(lang, "cond_var", var=_name(guard, c.var, 80) or withheld, op=op,
                     value=value)
        elif c.type == "exists":
            what = t(lang, "cond_exists")
        elif c.type == "chatindex":
            what = t(lang, "cond_chatindex", value=_copied(guard, c.value, 20) or "?")
        else:
            what = t(lang, "cond_other", type=c.type)
        by_trigger.setdefault(c.trigger, []).append(what)
    for idx in sorted(by_trigger)[:10]:
        joiner = " and " if lang == "en" else ", "
        whats = by_trigger[idx][:5]
        if lang == "ko":
            # "…일 때, …일 때에만" reads naturally as a list of conditions
            rules.append(t(lang, "condition", n=idx + 1, what=joiner.join(whats)))
        else:
            rules.append(t(lang, "condition", n=idx + 1, what=joiner.join(whats)))
    apis = ", ".join(f.name for f in a.privileged[:6])
    if a.low_level_access or a.low_level_triggers:
        rules.append(t(lang, "lla_yes", apis=apis) if apis else t(lang, "lla_yes_none"))
    elif apis:
        rules.append(t(lang, "lla_no_but", apis=apis))
    else:
        rules.append(t(lang, "lla_no"))
    code = a.lorebook_code
    if code:
        shown = _where_list(lang, [f"lorebook[{i}]" for i in code], len(code))
        rules.append(t(lang, "lorebook_code", n=len(code), where=shown))
    rules.extend(_finding_sentences(lang, a))
    return rules


#: findings shown in a document: warnings and errors, and RA114 (code kept in the lorebook)
_MAX_FINDING_SENTENCES = 8


def _finding_sentences(lang: str, a: Analysis) -> list[str]:
    """One sentence per finding id that matters: id, name, severity, count and where
    (locations only, never the module's text)."""
    checks = all_checks()
    groups: dict[str, list[str]] = {}
    for f in a.findings:
        if f.severity in ("warning", "error") or f.rule == RA114.id:
            groups.setdefault(f.rule, []).append(f.evidence or "-")
    out = []
    for rule in sorted(groups)[:_MAX_FINDING_SENTENCES]:
        evs = groups[rule]
        check = checks.get(rule)
        out.append(t(lang, "finding", id=rule, name=check.title if check else rule,
                     n=len(evs), where=_where_list(lang, evs, len(evs))))
    return out


def _tags(a: Analysis, module: Module, charx: bool) -> list[str]:
    tags: list[str] = []
    for h in a.hook_names():
        if h in HOOK_TAGS:
            tags.append(HOOK_TAGS[h])
    req = set(a.requires_names())
    for cap, tag in (("chat_state_kv", "chat-state"), ("global_state_kv", "global-state"),
                     ("chat.write", "chat-edit"), ("llm.call", "llm-call"),
                     ("network.request", "network"), ("image.generate", "image-generation"),
                     ("script.dynamic_load", "dynamic-code"), ("script.legacy_js", "legacy-js"),
                     ("mcp.server", "mcp")):
        if cap in req:
            tags.append(tag)
    if a.counts.get("lua_bytes"):
        tags.append("lua")
    if a.toggles:
        tags.append("toggles")
    if a.counts.get("lorebook"):
        tags.append("lorebook")
    if a.counts.get("regex"):
        tags.append("regex")
    if module.background_embedding.strip():
        tags.append("background-html")
    if a.counts.get("assets"):
        tags.append("assets")
    if charx:
        tags.append("character-embedded")
    out: list[str] = []
    for tg in tags:
        if tg not in out:
            out.append(tg)
    return out


def project(module: Module, *, post_id: str | None = None, notes: Notes | None = None,
            lang: str = "en", analysis: Analysis | None = None) -> dict[str, Any]:
    """The matrix-component-v1 document for ``module`` (deterministic; never executes code).

    ``post_id`` (digits) overrides the one found in the source file name; without
    either the source key is ``h`` + 12 hex of the source's SHA-256.  ``lang`` is
    ``en`` or ``ko``.  Raises ConfigError for a bad ``post_id`` or ``lang``.
    """
    if lang not in LANGS:
        raise ConfigError("bad-lang", f"language must be one of {', '.join(LANGS)}, not {lang!r}",
                          where="--lang")
    if post_id is not None:
        post_id = str(post_id).strip()
        if not _POST_ID.match(post_id):
            raise ConfigError("bad-post-id", f"post id must be digits, not {post_id[:40]!r}",
                              where="--post-id")
    a = analysis if analysis is not None else analyze(module)
    guard = CopyGuard(module)
    ctype = str(module.component_type or "module")
    sha, source_version, source_format, source_kind, card_name = _source_facts(module)
    if post_id is None and module.source is not None:
        post_id = post_id_from_name(card_name or module.source.path)
    source_key = post_id if post_id else "h" + (module_identity(module) or sha)[:12]
    slug = (notes.slug if notes is not None and notes.slug else None) \
        or (slugify(module.name) if guard.allow(module.name) else "") or "m" + sha[:8]
    charx = card_name is not None
    type_word = TYPE_WORDS[lang].get(ctype, ctype)

    triggers = [HOOK_SENTENCES[lang][h] for h in a.hook_names() if h in HOOK_SENTENCES[lang]]
    if not triggers:
        triggers = [t(lang, "no_hooks")]
    state_effects: dict[str, str] = {}
    for n, sk in enumerate((sk for sk in a.state if sk.scope == "chat" and sk.writes), 1):
        state_effects[_name(guard, sk.key, 80) or f"withheld-key-{n}"] = \
            _state_sentence(lang, sk)
    swappable = {_part_key(guard, tg, n): _part_sentence(lang, tg, guard, n)
                 for n, tg in enumerate(a.toggles, 1)}
    title = _copied(guard, module.name, 160) \
        or t(lang, "untitled", type=type_word, key=source_key)
    summary = _summary(lang, a, type_word)
    activation = _activation_rules(lang, a, guard)

    doc: dict[str, Any] = {
        "contract": CONTRACT,
        "component_id": f"{ctype}.{ORIGIN}.{source_key}.{slug}",
        "component_version": (naming.split_version(module.name)[1] if guard.allow(module.name)
                              else None) or COMPONENT_VERSION,
        "component_type": ctype,
        "provenance": {
            "review_status": "candidate",
            "runtime_status": "inactive",
            "availability_verdict": "untested",
            "source_refs": [{
                "source_id": f"risu:{source_key}",
                "source_version": source_version,
                "sha256": "sha256:" + sha,
            }],
            "source_kind": source_kind,
            "static_analysis_only": True,
            "active_code_policy": "static_preserve_no_execute",
            "fixture_kind": "parsed_risu_projection",
            "publishable": False,
        },
        "capabilities": {
            "provides": a.provides_names(),
            "requires": a.requires_names(),
            "conflicts": [],
        },
        "payload": {
            "namespace": f"risu.{ctype}",
            "controller": "character" if charx else "user",
            "triggers": triggers,
            "state_effects": state_effects,
            "activation_rules": activation,
            "invariants": [],
            "boundaries": [t(lang, "boundary_code"), t(lang, "boundary_human"),
                           t(lang, "boundary_candidate")],
            "idea_layers": {
                "evidence": {
                    "source_post": source_key,
                    "source_format": source_format,
                    "lead_id": f"risu.static.{ctype}.{source_key}",
                    "analysis_mode": "static_projection_read",
                    "code_executed": False,
                },
                "swappable_parts": swappable,
                "lineage": {
                    "promotion_status": "candidate",
                    "origin": "risu_static_ingest",
                    "reverse_translation": f"{source_format} -> {CONTRACT}({ctype})",
                },
            },
        },
        "projection": {
            "title": title,
            "prompt": "",
            "prompt_sha256": "",
            "summary": summary,
            "tags": _tags(a, module, charx),
            "flagship": False,
            "core": False,
            "content_labels": [f"risu-{ctype}", "static-analysis"],
            "harness_compatibility": "display_only",
            "replay_status": "not_run",
        },
    }
    generated_prompt = True
    if notes is not None:
        generated_prompt = "prompt" not in (notes.data.get("projection") or {})
        _merge_notes(doc, notes)
        doc["provenance"]["source_refs"].append({
            "source_id": f"risu:{source_key}",
            "source_version": "notes.yaml",
            "sha256": "sha256:" + notes.sha256,
        })
    doc = scrub(doc)
    proj = doc["projection"]
    if generated_prompt:
        proj["prompt"] = _prompt(lang, doc)
    proj["prompt_sha256"] = "sha256:" + hashlib.sha256(proj["prompt"].encode("utf-8")).hexdigest()
    return doc


def _prompt(lang: str, doc: dict[str, Any]) -> str:
    """A descriptive prompt built from the (merged) document's own sentences."""
    payload = doc["payload"]
    proj = doc["projection"]
    parts = [t(lang, "prompt_intro", title=proj["title"], summary=proj["summary"])]
    parts.extend(payload["triggers"])
    parts.extend(payload["activation_rules"])
    parts.extend(payload.get("invariants") or [])
    parts.append(t(lang, "prompt_outro"))
    return " ".join(p.strip() for p in parts if p.strip())


def _merge_notes(doc: dict[str, Any], notes: Notes) -> None:
    data = copy.deepcopy(notes.data)
    caps = data.get("capabilities") or {}
    for key in ("provides", "conflicts"):
        if key in caps:
            doc["capabilities"][key] = list(caps[key])
    payload = data.get("payload") or {}
    for key in ("controller", "triggers", "activation_rules", "invariants", "boundaries"):
        if key in payload:
            doc["payload"][key] = payload[key]
    if "state_effects" in payload:
        merged = dict(doc["payload"]["state_effects"])
        merged.update(payload["state_effects"])
        doc["payload"]["state_effects"] = merged
    layers = notes.idea_layers()
    target = doc["payload"]["idea_layers"]
    if "evidence" in layers:
        target["evidence"].update(layers["evidence"])
    if "lineage" in layers:
        target["lineage"].update(layers["lineage"])
    for key in ("situation", "core"):
        if key in layers:
            merged_layer = dict(target.get(key) or {})
            merged_layer.update(layers[key])
            target[key] = merged_layer
    if "swappable_parts" in layers:
        parts = dict(target["swappable_parts"])
        parts.update(layers["swappable_parts"])
        target["swappable_parts"] = parts
    proj = data.get("projection") or {}
    for key in ("title", "prompt", "summary", "tags", "flagship", "core", "content_labels",
                "harness_compatibility"):
        if key in proj:
            doc["projection"][key] = proj[key]
    # keep the key order of the seed document inside idea_layers
    order = ["evidence", "situation", "core", "swappable_parts", "lineage"]
    doc["payload"]["idea_layers"] = {k: target[k] for k in order if k in target}
