"""RA7xx: the module's toggles (``customModuleToggle``, a preset's
``customPromptTemplateToggle``): duplicate keys, malformed lines, unknown types, and toggle
globals read that the module itself got wrong (:class:`DeclaredToggles`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from risutools.analysis.seen import Hit, Seen, reads
from risutools.checks.registry import check
from risutools.printable import quoted


@check("RA701", "warning", "module", "toggle-duplicate")
@reads("toggles")
def ra701(seen: Seen) -> Iterator[Hit]:
    """Duplicate toggle key.

    Why: Two toggles with one key share one variable, so one of them does nothing.

    Fix: Give every toggle its own key.
    """
    if seen.toggles is None:
        return
    at, field, tp = seen.toggles
    for key, line in tp.duplicates:
        yield Hit(at, f"toggle key {quoted(key[:60])} is declared more than once; RisuAI keeps "
                  "one value for both", f"{field} line {line}")


@check("RA702", "info", "module", "toggle-malformed")
@reads("toggles")
def ra702(seen: Seen) -> Iterator[Hit]:
    """A malformed toggle line (skipped), or toggles past the scanner's bound (counted, not kept).

    Why: The line does not declare a toggle, so the user sees no control for it.

    Fix: Write the line as key=Label (optionally =select=A,B, =text, =textarea), with a key
    and a label that are not empty.
    """
    if seen.toggles is None:
        return
    at, field, tp = seen.toggles
    for line in tp.malformed:
        yield Hit(at, "a toggle line has no key=label form and was skipped", f"{field} line {line}")
    if tp.over_limit:
        yield Hit(at, f"{tp.over_limit} toggle line(s) past the first {len(tp.toggles)} toggles "
                  "were not read", field)


@check("RA703", "info", "module", "toggle-type-unknown")
@reads("toggles")
def ra703(seen: Seen) -> Iterator[Hit]:
    """Unknown toggle type (RisuAI shows a checkbox).

    Why: RisuAI knows the kinds select, text and textarea, matched exactly (no other case, no
    spaces); any other kind is shown as a checkbox, which may not be what was meant.

    Fix: Use checkbox (no type), select, text or textarea, spelled exactly so.
    """
    if seen.toggles is None:
        return
    at, field, tp = seen.toggles
    for kind, line in tp.unknown_types:
        yield Hit(at, f"unknown toggle type {quoted(kind)}; RisuAI shows a checkbox",
                  f"{field} line {line}")


@check("RA704", "info", "module", "toggle-undeclared")
@reads("toggles")
def ra704(seen: Seen) -> Iterator[Hit]:
    """`toggle_<key>` is read, no toggle of the module declares it, and it is the module's own
    mistake: a near miss of a key it declares, a key under its own prefix, or one of its own
    options under another prefix (any other undeclared toggle is a `required_toggles` fact:
    RisuAI merges the toggles of every enabled module).

    Why: No control sets the variable, so the code reads a constant.

    Fix: Declare the toggle in customModuleToggle, or fix the key.
    """
    if seen.toggles is None:
        return
    at, _field, tp = seen.toggles
    declared = {t.key for t in tp.toggles}
    index = DeclaredToggles(declared)
    for (scope, key), sk in sorted(seen.state.items()):
        name = key[len("toggle_"):]
        if scope != "global" or not key.startswith("toggle_") or name in declared:
            continue
        why = index.problem(name)
        if why:
            uses = sk.reads or sk.writes
            yield Hit(at, f"the global variable {quoted(key[:60])} is read but no "
                      f"toggle declares it ({why})", uses[0] if uses else "?")


class DeclaredToggles:
    """The keys a module declares, indexed once (folded, their prefixes, their options under
    each prefix), so that each undeclared read is judged in constant time
    (:meth:`problem`): a module of thousands of toggles and reads stays linear."""

    def __init__(self, declared: Iterable[str]) -> None:
        self.folded: dict[str, str] = {}
        self.prefixes: set[str] = set()
        self.options: dict[str, list[str]] = {}  # folded option -> keys with a prefix
        for k in sorted(declared):
            self.folded.setdefault(_fold(k), k)
            prefix = _toggle_prefix(k)
            if prefix:
                self.prefixes.add(prefix)
                self.options.setdefault(_fold(k[len(prefix):]), []).append(k)

    def problem(self, name: str) -> str:
        """Why reading the undeclared toggle ``name`` is a mistake of this module, or ""
        when it is a toggle another module may declare (RisuAI's toggles are global: the
        declarations of every enabled module are merged).  A mistake: a near miss of a key
        this module declares (case, spaces, ``-``/``_``), a key under a namespace its own
        keys use, or one of its own options under another namespace (``base.privacy``
        read, ``mine.privacy`` declared)."""
        near = self.folded.get(_fold(name))
        if near is not None:
            return f"a near miss of the declared key {quoted(near[:60])}"
        prefix = _toggle_prefix(name)
        if prefix and prefix in self.prefixes:
            return f"it uses this module's own prefix {quoted(prefix[:40])}"
        twins = [k for k in self.options.get(_fold(name[len(prefix):]), ())
                 if _toggle_prefix(k) != prefix]
        if prefix and twins:
            return (f"the option of its own key {quoted(twins[0][:60])} under another prefix: "
                    "a leftover of a copy or a rename, unless another module declares it")
        return ""


def _toggle_prefix(key: str) -> str:
    """The namespace of a toggle key: the text up to its first ``.`` (``lb-mini.mode`` ->
    ``lb-mini.``), or "" when it has none."""
    dot = key.find(".")
    return key[:dot + 1] if dot > 0 else ""


def _fold(key: str) -> str:
    return key.strip().lower().replace("_", "-")
