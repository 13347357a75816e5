"""The generated sentences of a document, each built from facts the analyser found.

One function per field: :func:`triggers`, :func:`state_effects`, :func:`swappable_parts`,
:func:`summary`, :func:`activation_rules` (toggles, trigger conditions, lowLevelAccess,
code kept in the lorebook, findings), :func:`tags`.  Text copied from the module (names,
labels, values) passes the :class:`~risutools.projection.guard.CopyGuard` first; where it
may not be copied a neutral word stands in.  Locations are copied, code never.
"""

from __future__ import annotations

from functools import lru_cache

from risutools.analysis import Analysis
from risutools.analysis.checks.code import ra114
from risutools.analysis.model import HOOK_TAGS, HOOK_WORDS, StateKey
from risutools.checks.registry import registered_checks
from risutools.formats.model import Module
from risutools.formats.toggles import Toggle
from risutools.projection.guard import CopyGuard
from risutools.projection.naming import fold
from risutools.projection.text import (
    CAPABILITY_TAGS,
    HOOK_SENTENCES,
    OPERATORS,
    summary_sentence,
    t,
)

_MAX_EVIDENCE_IN_SENTENCE = 3
#: at most this many finding sentences (warnings and errors, and RA114: code in the lorebook)
_MAX_FINDING_SENTENCES = 8
_MAX_CONDITION_TRIGGERS = 10
_MAX_CONDITIONS = 5


# -- copying module text -----------------------------------------------------------------

def copied(guard: CopyGuard, text: str, limit: int) -> str | None:
    """``text`` folded to one line and cut to ``limit``, or None when it may not be copied."""
    s = fold(text)[:limit].strip()
    return s if s and guard.allow(text) and guard.allow(s) else None


def name(guard: CopyGuard, text: str, limit: int) -> str | None:
    """Like :func:`copied`, for names (keys, variables): name characters only."""
    s = copied(guard, text, limit)
    return s if s is not None and guard.allow_name(s) and guard.allow_name(text) else None


def where_list(lang: str, items: list[str], total: int) -> str:
    """The first few locations, then "and N more"."""
    shown = items[:_MAX_EVIDENCE_IN_SENTENCE]
    text = ", ".join(shown)
    more = total - len(shown)
    if more > 0:
        text += t(lang, "more", n=more)
    return text


def _plural(n: int) -> dict[str, str]:
    return {"s": "" if n == 1 else "s", "ies": "y" if n == 1 else "ies"}


# -- payload -----------------------------------------------------------------------------

def triggers(lang: str, a: Analysis) -> list[str]:
    """One sentence per hook, or the "hooks no event" sentence."""
    table = HOOK_SENTENCES[lang]
    return [table[h] for h in a.hook_names() if h in table] or [t(lang, "no_hooks")]


def state_effects(lang: str, a: Analysis, guard: CopyGuard) -> dict[str, str]:
    """Each chat variable written -> where it is written (and read)."""
    out: dict[str, str] = {}
    for n, sk in enumerate((sk for sk in a.state if sk.scope == "chat" and sk.writes), 1):
        out[name(guard, sk.key, 80) or f"withheld-key-{n}"] = _state_sentence(lang, sk)
    return out


def _state_sentence(lang: str, sk: StateKey) -> str:
    writes = where_list(lang, sk.writes, sk.write_count)
    if sk.reads:
        return t(lang, "state_wr", writes=writes,
                 reads=where_list(lang, sk.reads, sk.read_count))
    return t(lang, "state_w", writes=writes)


def swappable_parts(lang: str, a: Analysis, guard: CopyGuard) -> dict[str, str]:
    """Each toggle (key) -> its type, label, options and group."""
    return {_part_key(guard, tg, n): _part_sentence(lang, tg, guard, n)
            for n, tg in enumerate(a.toggles, 1)}


def _part_key(guard: CopyGuard, tg: Toggle, ordinal: int) -> str:
    return name(guard, tg.key, 80) or f"toggle-{ordinal}"


def _part_sentence(lang: str, tg: Toggle, guard: CopyGuard, ordinal: int) -> str:
    label = copied(guard, tg.label, 120) or _part_key(guard, tg, ordinal)
    if tg.type == "select":
        withheld = t(lang, "withheld")
        options = ", ".join(copied(guard, o, 40) or withheld for o in tg.options[:12])
        s = t(lang, "part_select", label=label, options=options)
    elif tg.type == "text":
        s = t(lang, "part_text", label=label)
    else:
        s = t(lang, "part_checkbox", label=label)
    group = copied(guard, tg.group, 60) if tg.group else None
    if group:
        s += t(lang, "part_group", group=group)
    return s


# -- activation rules --------------------------------------------------------------------

def activation_rules(lang: str, a: Analysis, guard: CopyGuard) -> list[str]:
    """Toggles read, trigger conditions, lowLevelAccess, code kept in the lorebook,
    findings: each a sentence."""
    rules = _toggle_rules(lang, a, guard)
    rules.extend(_condition_rules(lang, a, guard))
    rules.append(_access_rule(lang, a))
    code = a.lorebook_code
    if code:
        shown = where_list(lang, [f"lorebook[{i}]" for i in code], len(code))
        rules.append(t(lang, "lorebook_code", n=len(code), where=shown))
    rules.extend(finding_sentences(lang, a))
    return rules


def _toggle_rules(lang: str, a: Analysis, guard: CopyGuard) -> list[str]:
    """The toggles the code reads (global ``toggle_<key>``), else how many it offers."""
    declared = {tg.key for tg in a.toggles}
    read = [s.key[len("toggle_"):] for s in a.state
            if s.scope == "global" and s.key.startswith("toggle_") and s.reads]
    named = [k for k in read if k in declared] or read
    if named:
        withheld = t(lang, "withheld")
        names = [name(guard, k, 60) or withheld for k in named[:10]]
        return [t(lang, "toggles_read", names=", ".join(names))]
    if a.toggles:
        return [t(lang, "toggles_offered", n=len(a.toggles), **_plural(len(a.toggles)))]
    return []


def _condition_rules(lang: str, a: Analysis, guard: CopyGuard) -> list[str]:
    """One sentence per trigger with conditions: "Trigger N runs only when ..."."""
    by_trigger: dict[int, list[str]] = {}
    for c in a.conditions:
        if c.type in ("var", "value") and c.var:
            withheld = t(lang, "withheld")
            op = OPERATORS.get(c.operator, "=" if not c.operator else "?")
            value = (copied(guard, c.value, 80) or withheld) if c.value else "''"
            what = t(lang, "cond_var", var=name(guard, c.var, 80) or withheld, op=op,
                     value=value)
        elif c.type == "exists":
            what = t(lang, "cond_exists")
        elif c.type == "chatindex":
            what = t(lang, "cond_chatindex", value=copied(guard, c.value, 20) or "?")
        else:
            what = t(lang, "cond_other", type=c.type)
        by_trigger.setdefault(c.trigger, []).append(what)
    # ko: "…일 때, …일 때에만" reads naturally as a list of conditions
    joiner = " and " if lang == "en" else ", "
    return [t(lang, "condition", n=idx + 1, what=joiner.join(by_trigger[idx][:_MAX_CONDITIONS]))
            for idx in sorted(by_trigger)[:_MAX_CONDITION_TRIGGERS]]


def _access_rule(lang: str, a: Analysis) -> str:
    """Whether it asks for lowLevelAccess, and the privileged APIs it calls."""
    apis = ", ".join(f.name for f in a.privileged[:6])
    if a.low_level_access:
        return t(lang, "lla_yes", apis=apis) if apis else t(lang, "lla_yes_none")
    return t(lang, "lla_no_but", apis=apis) if apis else t(lang, "lla_no")


@lru_cache(maxsize=1)
def _check_titles() -> dict[str, str]:
    return {cid: c.title for cid, c in registered_checks().items()}


def finding_sentences(lang: str, a: Analysis) -> list[str]:
    """One sentence per finding id that matters (warnings, errors and RA114): id, name,
    count and where (locations only, never the module's text)."""
    groups: dict[str, list[str]] = {}
    for f in a.findings:
        if f.severity in ("warning", "error") or f.rule == ra114.id:
            groups.setdefault(f.rule, []).append(f.evidence or "-")
    if not groups:
        return []
    titles = _check_titles()
    return [t(lang, "finding", id=rule, name=titles.get(rule, rule), n=len(groups[rule]),
              where=where_list(lang, groups[rule], len(groups[rule])))
            for rule in sorted(groups)[:_MAX_FINDING_SENTENCES]]


# -- projection --------------------------------------------------------------------------

def summary(lang: str, a: Analysis, type_word: str) -> str:
    """One sentence: what kind of component, its hooks, state, toggles, contents, APIs."""
    parts: list[str] = []
    hooks = [HOOK_WORDS[h] for h in a.hook_names() if h in HOOK_WORDS]
    if hooks:
        parts.append(t(lang, "summary_hooks", hooks=", ".join(hooks)))
    written = sum(1 for s in a.state if s.scope == "chat" and s.writes)
    for n, key in ((written, "summary_state"), (len(a.toggles), "summary_toggles"),
                   (a.counts.get("lorebook", 0), "summary_lore"),
                   (a.counts.get("regex", 0), "summary_regex"),
                   (a.counts.get("assets", 0), "summary_assets")):
        if n:
            parts.append(t(lang, key, n=n, **_plural(n)))
    if a.privileged:
        parts.append(t(lang, "summary_priv", apis=", ".join(f.name for f in a.privileged[:5])))
    return summary_sentence(lang, type_word, parts)


def tags(a: Analysis, module: Module, embedded: bool) -> list[str]:
    """Tags from the hooks, the capabilities required and what the module carries."""
    out = [HOOK_TAGS[h] for h in a.hook_names() if h in HOOK_TAGS]
    req = set(a.requires_names())
    out.extend(tag for cap, tag in CAPABILITY_TAGS if cap in req)
    for present, tag in ((a.counts.get("lua_bytes"), "lua"), (a.toggles, "toggles"),
                         (a.counts.get("lorebook"), "lorebook"), (a.counts.get("regex"), "regex"),
                         (module.background_embedding.strip(), "background-html"),
                         (a.counts.get("assets"), "assets"), (embedded, "character-embedded")):
        if present:
            out.append(tag)
    return list(dict.fromkeys(out))
