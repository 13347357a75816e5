"""The review's own work done once instead of per document, or found from what is at hand
(issue 23, round 8): each shortcut gives what the way it replaces gives, on varied and odd
inputs -- the symbolic links of a folder from its listing, the status rules and the runtime
fields' paths taken once, the steps to ``approved`` made once a status, a risk row without
the work an empty analysis needs."""

from __future__ import annotations

import itertools
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from risutools.catalog import reals as reals_module
from risutools.catalog.board_path import _wanted, steps_to
from risutools.catalog.catalog import Catalog, Entry, head_label, head_of, source_part
from risutools.catalog.gates import (
    STATUS_RULES,
    GateContext,
    NewDocument,
    _new_doc_findings,
    _status_rules,
    gate_config,
    status_errors,
    status_findings,
)
from risutools.catalog.graph import Graph
from risutools.catalog.interactions import HOT, Facts, FactsStore, Index, Summary, _found
from risutools.catalog.promote import new_document
from risutools.catalog.review import _duplicates, _source_of
from risutools.catalog.review_interactions import risk
from risutools.contract import rules as mc
from risutools.contract.transitions import CatalogLog
from risutools.findings import Finding
from risutools.pathnames import fits_any
from risutools.pathnames import fits_wildcard as fits
from risutools.safeio import within
from risutools.settings import lifecycle
from risutools.settings.catalog import CatalogSettings
from risutools.settings.config import Settings

# --------------------------------------------------------------------------- Reals


def _reference_resolve(p: Path) -> tuple[str, bool]:
    """What ``Reals.resolve`` gave before: every file asked alone (``os.path.islink``), the
    file a ``Path`` (its text: what ``Reals`` gives now)."""
    text = os.fspath(p)
    folder, name = os.path.split(text)
    real = os.path.realpath(folder or ".")
    named = os.path.abspath(folder or ".")
    plain = real == named and within(named, os.getcwd())
    link = os.path.islink(text)
    out = Path(os.path.realpath(text)) if link or not name else Path(real) / name
    return os.fspath(out), plain and not link


def _odd_folder(root: Path) -> list[Path]:
    """A folder of regular files, links to files, a link to a link, a dangling link and a
    link to a folder, and a folder below it with more of them."""
    (root / "real").mkdir()
    (root / "real" / "target.json").write_text("{}")
    for i in range(6):
        (root / f"f{i}.json").write_text("{}")
    os.symlink("f0.json", root / "l-file.json")
    os.symlink("l-file.json", root / "l-link.json")
    os.symlink("missing.json", root / "l-dangling.json")
    os.symlink("real", root / "l-folder")
    os.symlink(root / "real" / "target.json", root / "l-absolute.json")
    (root / "sub").mkdir()
    (root / "sub" / "g.json").write_text("{}")
    os.symlink("../f1.json", root / "sub" / "l-up.json")
    names = ["f0.json", "l-file.json", "f1.json", "l-link.json", "l-dangling.json",
             "l-folder", "f2.json", "l-absolute.json", "f3.json", "sub/g.json",
             "sub/l-up.json", "f4.json", "f4.json", "sub/g.json", "real/target.json"]
    return [root / n for n in names]


@pytest.mark.parametrize("order", ["as listed", "links first", "reversed"])
@pytest.mark.parametrize("named", ["relative", "absolute", "via a linked folder"])
def test_links_from_the_listing_are_the_files_asked_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: str, named: str) -> None:
    root = tmp_path / "cat"
    root.mkdir()
    paths = _odd_folder(root)
    if order == "links first":
        paths.sort(key=lambda p: not p.name.startswith("l-"))
    elif order == "reversed":
        paths.reverse()
    if named == "relative":
        monkeypatch.chdir(tmp_path)
        paths = [p.relative_to(tmp_path) for p in paths]
    elif named == "via a linked folder":
        os.symlink(root, tmp_path / "via")
        monkeypatch.chdir(tmp_path)
        paths = [Path("via") / p.relative_to(root) for p in paths]
    reals = reals_module.Reals()
    for p in paths:
        assert reals.resolve(p) == _reference_resolve(p), p
    assert reals.links  # (the folders were listed: the shortcut ran)


def test_a_folder_that_cannot_be_listed_has_each_file_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _odd_folder(tmp_path)

    def refused(path: Any) -> Any:
        raise PermissionError(13, "refused", path)

    monkeypatch.setattr(reals_module.os, "scandir", refused)
    reals = reals_module.Reals()
    for p in paths:
        assert reals.resolve(p) == _reference_resolve(p), p
    assert set(reals.links.values()) == {None}


def test_the_links_of_a_folder_are_its_names_that_are_links(tmp_path: Path) -> None:
    _odd_folder(tmp_path)
    assert reals_module._links_in(str(tmp_path)) == {
        "l-file.json", "l-link.json", "l-dangling.json", "l-folder", "l-absolute.json"}
    assert reals_module._links_in(str(tmp_path / "gone")) is None


# --------------------------------------------------------------------------- status rules


def _reference_status_findings(new_doc: dict[str, Any], cfg: Settings) -> list[Finding]:
    """``status_findings`` as it ran before: every document rule looked at."""
    out = []
    for rule, fn in mc.DOCUMENT_RULES:
        if rule in STATUS_RULES:
            for ptr, msg in fn(new_doc, cfg):
                sev = mc.effective_severity(rule, new_doc, cfg)
                if sev != "off":
                    out.append(mc.make_finding(rule, sev, msg, None, None, ptr))
    return out


def _docs() -> list[dict[str, Any]]:
    whole = {"component_id": "m.1", "component_version": "1.0.0",
             "capabilities": {"provides": ["context.x"], "requires": []},
             "projection": {"replay_status": "not_run"},
             "provenance": {"review_status": "candidate", "runtime_status": "active",
                            "publishable": True, "availability_verdict": "untested"},
             "payload": {"idea_layers": {"lineage": {"promotion_status": "approved"},
                                         "situation": {}, "core": "x"},
                         "invariants": []}}
    narrated = {**whole, "payload": {"idea_layers": {
        "situation": {"who": "a", "when": "b", "where": "c", "what": "d"},
        "core": {"idea": "e", "mechanism": "f"}}, "invariants": ["g"]}}
    return [whole, narrated, {}, {"provenance": "candidate"},
            {"provenance": {"review_status": 3, "runtime_status": None}},
            {**whole, "provenance": {"review_status": "pending_human_review"}}]


@pytest.mark.parametrize("to", ["pending_human_review", "approved", "retired", "rejected"])
def test_status_findings_are_those_of_every_rule_looked_at(to: str) -> None:
    for cfg in (Settings(), Settings(severities={"MC600": "off", "MC301": "warning"})):
        gate = gate_config(cfg, to)
        for doc in _docs():
            new = new_document(doc, to)
            assert status_findings(new, gate) == _reference_status_findings(new, gate)
    assert any(status_findings(new_document(d, to), Settings()) for d in _docs())


def test_the_status_rules_are_taken_again_from_other_document_rules(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert [r for r, _fn in _status_rules()] == [r for r, _fn in mc.DOCUMENT_RULES
                                                 if r in STATUS_RULES]
    fewer = tuple((r, fn) for r, fn in mc.DOCUMENT_RULES if r != mc.mc600.id)
    monkeypatch.setattr(mc, "DOCUMENT_RULES", fewer)
    doc = new_document(_docs()[0], "pending_human_review")
    assert status_findings(doc, Settings()) == _reference_status_findings(doc, Settings())
    assert mc.mc600.id not in {r for r, _fn in _status_rules()}


# --------------------------------------------------------------------------- runtime fields


def _reference_without_runtime(doc: Any) -> Any:
    if not isinstance(doc, dict):
        return doc
    out = dict(doc)
    for ptr in lifecycle.RUNTIME_FIELDS:
        *path, key = ptr.split("/")[1:]
        parent: Any = out
        for k in path:
            child = parent.get(k)
            if not isinstance(child, dict):
                break
            parent[k] = child = dict(child)
            parent = child
        else:
            parent.pop(key, None)
    return out


def test_without_runtime_is_the_fields_pointers_followed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    docs: list[Any] = [*_docs(), [1], "x", None,
                       {"provenance": {"runtime_status": "active"}, "a": {"b": {"c": 1}}}]
    for fields in (lifecycle.RUNTIME_FIELDS, ("/a/b/c", "/provenance/runtime_status"),
                   ("/top",)):
        monkeypatch.setattr(lifecycle, "RUNTIME_FIELDS", fields)
        for doc in docs:
            before = repr(doc)
            assert lifecycle.without_runtime(doc) == _reference_without_runtime(doc)
            assert repr(doc) == before  # (never changed)
    monkeypatch.undo()
    assert "runtime_status" not in lifecycle.without_runtime(_docs()[0])["provenance"]


# --------------------------------------------------------------------------- the board


def test_the_actions_wanted_are_the_steps_to_approved() -> None:
    for status in (*lifecycle.STATES, "", "odd"):
        assert _wanted(status) == tuple(s.action for s in steps_to(status))
        assert _wanted(status) is _wanted(status)


# --------------------------------------------------------------------------- risk


def _reference_risk(ix: Index, s: Summary) -> dict[str, Any]:
    """``risk`` as it was before: every part worked out whatever the facts hold."""
    found = s.facts.get("findings") if s.facts else None
    rows = [f for f in found if isinstance(f, dict)] if isinstance(found, list) else []
    serious = [{"rule": str(f.get("rule")), "severity": str(f.get("severity")),
                "message": str(f.get("message"))} for f in rows
               if f.get("severity") in ("error", "warning")]
    infos = Counter(str(f.get("rule")) for f in rows if f.get("severity") == "info")
    return {
        "title": s.title,
        "low_level_access": bool(s.facts.get("low_level_access")) if s.facts else None,
        "privileged_apis": s.names("privileged_apis"),
        "hosts": s.names("hosts"),
        "dynamic_loading": _reference_loading(ix, s),
        "analysis_findings": serious,
        "analysis_infos": dict(sorted(infos.items())),
        "coverage": s.names("coverage") if s.facts else [s.facts_note],
    }


def _reference_loading(ix: Index, s: Summary) -> list[dict[str, str]]:
    """``_loading`` as it was before: the module's own entries read first, loads or not."""
    own = s.names("lorebook_entries")
    out = []
    for p in s.names("lorebook_loads"):
        ids, idset = ix.carrier_ids(p)
        holders = [c for c in ids[:5] if c != s.component_id][:4]
        more = len(ids) - (s.component_id in idset) > 4
        if any(fits(p, n) for n in own):
            where = "in this module"
        elif holders:
            where = "in " + ", ".join(holders) + (" ..." if more else "")
        else:
            where = "unresolved"
        out.append({"load": f"lorebook {p!r}", "resolves": where})
    n = s.number("lorebook_loads_unresolved")
    if n:
        out.append({"load": f"{n} lorebook lookup(s) with names computed at run time",
                    "resolves": "unresolved"})
    for name in s.names("dynamic_code"):
        if not out:
            out.append({"load": name, "resolves": "unresolved"})
    return out


_FINDINGS: list[Any] = [
    None, [], "x", 3, {}, [1, "a"],
    [{"rule": "RA1", "severity": "info"}, {"rule": "RA2", "severity": "warning",
                                            "message": "m"}, {"severity": "error"}],
    [{"rule": "RA9", "severity": "info"}, {"rule": "RA3", "severity": "info"}, 7,
     {"rule": "RA9", "severity": "info"}, {"rule": None, "severity": "debug"}],
]


def _summaries() -> list[Summary]:
    out = [Summary("m.none", "none.json", "T", "candidate", "inactive", (), (), None,
                   "no facts file (ingest writes facts/)")]
    for i, found in enumerate(_FINDINGS):
        facts = {"facts": "component-facts-v1", "findings": found,
                 "low_level_access": i % 2 == 0, "hosts": ["h", 1],
                 "privileged_apis": ["p"] if i % 3 else [],
                 "lorebook_loads": ["lore*", "x"] if i % 2 else [],
                 "lorebook_entries": ["lore1"] if i % 4 == 1 else ["other"],
                 "lorebook_loads_unresolved": i % 3, "dynamic_code": ["eval"] if i % 5 else [],
                 "coverage": ["c"]}
        out.append(Summary(f"m.{i}", f"m{i}.json", f"T{i}", "candidate", "inactive", (),
                           (), facts))
    return out


def test_a_risk_row_is_the_one_every_part_worked_out_gives() -> None:
    ix = Index.build(_summaries())
    for s in ix.summaries:
        assert risk(ix, s) == _reference_risk(ix, s), s.component_id
    assert any(risk(ix, s)["analysis_infos"] for s in ix.summaries)
    assert {d["resolves"] for s in ix.summaries for d in risk(ix, s)["dynamic_loading"]} \
        >= {"in this module", "unresolved"}


#: the members the risk facts read, each with a value that is not empty
_RISKY: dict[str, Any] = {
    "findings": [{"rule": "RA2", "severity": "warning", "message": "m"},
                 {"rule": "RA1", "severity": "info"}],
    "low_level_access": True, "privileged_apis": ["p"], "hosts": ["h"],
    "lorebook_loads": ["lore*"], "lorebook_loads_unresolved": 2, "dynamic_code": ["eval"],
    "coverage": ["c"]}


def test_a_risk_row_of_packed_facts_is_the_one_every_part_worked_out_gives() -> None:
    """Packed facts (pared of their empty members) that keep none of the members the risk
    facts read give the row of empty risk facts at once; any other gives the row worked
    out part by part, each member at hand, read back or left out."""
    store = FactsStore()
    out = []
    names = sorted(_RISKY)
    for mask in range(1 << len(names)):
        facts: dict[str, Any] = {"facts": "component-facts-v1", "title": "t",
                                 "lorebook_entries": ["lore1"] if mask % 3 else [],
                                 "state": [{"key": "k", "scope": "chat"}] if mask % 2 else []}
        for bit, name in enumerate(names):
            facts[name] = _RISKY[name] if mask >> bit & 1 else type(_RISKY[name])()
        blob, note, kept, values, empty = _found(facts, "", True)
        assert blob is not None
        out.append(Summary(f"m.{mask}", f"m{mask}.json", f"T{mask}", "candidate", "inactive",
                           (), (), store.adopt(blob, kept, values), note, empty=empty))
    ix = Index.build(out)
    quiet = 0
    for s in ix.summaries:
        got = risk(ix, s)
        assert got == _reference_risk(ix, s), s.component_id
        assert list(got) == list(_reference_risk(ix, s))
        quiet += isinstance(s.facts, Facts) and not set(_RISKY) & set(s.facts.schema)
    assert quiet == 1  # (the facts with every member empty)


# --------------------------------------------------------------------------- duplicates


class _Str(str):
    """A string of a subclass (no packing keeps it: the entry reads its head)."""


_REFS: list[Any] = [
    None, [], "x", [1], [{}], [{"sha256": 7}], [{"sha256": "sha256:a"}],
    [{"sha256": "sha256:a", "source_version": "x.charx!card.json"}],
    [{"sha256": "sha256:a", "source_version": "y.charx!module.risum"}],
    [{"sha256": "sha256:a", "source_version": "module.risum"}],
    [{"sha256": "sha256:a", "source_version": 3}, {"sha256": "sha256:b"}],
    [{"sha256": "sha256:b", "source_version": "a!b!card.json", "source_id": "risu:2"}],
    [{"sha256": "sha256:b", "source_version": "card.json"}],
    [{"sha256": _Str("sha256:b"), "source_version": "card.json"}],
    [{"sha256": "sha256:b", "source_version": _Str("z!card.json")}],
    {"sha256": "sha256:a"},
]


def _entries(labelled: bool) -> list[Entry]:
    out = []
    for i, refs in enumerate(_REFS * 2):
        doc = {"component_id": f"c{i % 7}", "component_version": "1",
               "provenance": {"source_refs": refs}}
        try:
            head = head_of(doc)
        except ValueError:  # (a subclass no packing keeps: the entry holds the document)
            out.append(Entry(Path(f"d{i}.json"), None, "json", doc, "h"))
            continue
        label = head_label(doc) if labelled else None
        out.append(Entry(Path(f"d{i}.json"), None, "json", None, "h", head=head,
                         reload=lambda doc=doc: doc, label=label))
    return out


def test_duplicates_from_the_labels_are_those_read_from_the_heads() -> None:
    fast, slow = _entries(True), _entries(False)
    assert [_source_of(e) for e in fast] == [_source_of(e) for e in slow]
    assert _duplicates(fast) == _duplicates(slow)
    assert len(_duplicates(fast)) >= 2
    for refs in _REFS:
        label = head_label({"provenance": {"source_refs": refs}})
        if isinstance(refs, list) and any(isinstance(r, dict) and _Str in map(type, r.values())
                                          for r in refs[:1]):
            assert label is None  # (the head is read)
        else:
            assert label is not None and label[2] == source_part(refs)


# --------------------------------------------------------------------------- status errors


_CONFIGS = [Settings(), Settings(severities={"MC600": "off", "MC301": "warning"}),
            Settings(severities={"MC103": "info", "MC302": "warning", "MC303": "off",
                                 "MC600": "error"}),
            Settings(severities={"MC301": "info", "MC600": "info"})]


@pytest.mark.parametrize("to", ["pending_human_review", "approved", "promoted", "retired",
                                "rejected"])
def test_status_errors_are_the_errors_of_the_status_findings(to: str) -> None:
    made = 0
    for cfg in _CONFIGS:
        gate = gate_config(cfg, to)
        for doc in _docs():
            new = new_document(doc, to)
            every = status_findings(new, gate)
            assert status_errors(new, gate) == [f for f in every if f.severity == "error"]
            made += len(every)
    assert made


def test_the_contract_gate_reads_the_same_of_the_errors_alone() -> None:
    base = [Finding("MC105", "warning", "w"), Finding("MC301", "error", "old", pointer="/x"),
            Finding("MC500", "error", "code", pointer="/payload")]
    for cfg in _CONFIGS:
        for doc in _docs():
            for to in ("pending_human_review", "approved"):
                new = new_document(doc, to)
                gate = gate_config(cfg, to)
                whole = _new_doc_findings_of(base, status_findings(new, gate), cfg, to)
                alone = _new_doc_findings_of(base, status_errors(new, gate), cfg, to)
                assert [f for f in whole if f.severity == "error"] == \
                    [f for f in alone if f.severity == "error"]
                assert len(whole) >= len(alone)


def _new_doc_findings_of(base: list[Finding], found: list[Finding], cfg: Settings,
                         to: str) -> list[Finding]:
    ctx = GateContext(Catalog(Path("."), cfg, CatalogSettings()), Entry(Path("x.json"), None,
                      "json", {}, "h"), to, NewDocument(dict), CatalogLog(Path(".")),
                      Graph([]), [], base_findings=base, status_found=found)
    return _new_doc_findings(ctx, gate_config(cfg, to))


# --------------------------------------------------------------------------- kept members


_KEPT: list[dict[str, Any]] = [
    {"facts": "component-facts-v1"},
    {"facts": "component-facts-v1", "state": [{"key": "k"}], "findings": [{"rule": "R"}],
     "lorebook_entries": ["a", "b"], "module_id": "m", "risu_buttons": 2, "hosts": ["h"]},
    {"facts": 1, "button_names": ["x", 3], "low_level_access": True, "coverage": {"a": 1},
     "title": "t", "source_sha256": "s", "unreached": ["function f"]},
    {"facts": "component-facts-v1", "toggles_read": ["t"], "toggles_declared": ["t"],
     "source_part": "card.json", "findings": "odd", "dynamic_code": ["eval"]},
]
_PROBES = sorted({*HOT, "state", "findings", "hosts", "coverage", "unreached", "title",
                  "low_level_access", "dynamic_code", "privileged_apis", "absent", "facts"})


def test_a_member_not_kept_is_answered_without_reading_the_facts_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    store = FactsStore()
    held = [store.facts(kept, exact=True) for kept in _KEPT]
    reads: list[int] = []
    real = store.read

    def counted(f: Facts) -> dict[str, Any]:
        reads.append(f.at)
        return real(f)

    monkeypatch.setattr(store, "read", counted)
    for kept, facts in zip(_KEPT, held, strict=True):
        as_dict = Summary("c", "c.json", "", "candidate", "inactive", (), (), kept)
        packed = Summary("c", "c.json", "", "candidate", "inactive", (), (), facts)
        for key in _PROBES:
            store._last = (None, {})  # (nothing at hand: a read back is counted)
            before = len(reads)
            got = packed.member(key)
            assert (len(reads) > before) == (key in kept and key not in HOT), key
            assert (list(got) if type(got) is tuple else got) == kept.get(key), key
            assert as_dict.names(key) == packed.names(key), key
            store._last = (None, {})
            before = len(reads)
            assert facts.get(key, "dflt") == kept.get(key, "dflt"), key
            assert (len(reads) > before) == (key in kept), key
        assert facts.whole() == kept


def test_found_facts_keep_every_member_name_hot_first(tmp_path: Path) -> None:
    found = _found(dict(_KEPT[2], findings=[], hosts=[]), "", True)
    blob, _note, names, values, empty = found
    assert blob is not None
    assert names[:len(values)] == tuple(k for k in HOT if k in _KEPT[2])
    assert set(names) == set(_KEPT[2]) and not {k for k, _ in empty} & set(names)
    held, _note2, _empty = FactsStore().found(found)
    assert held is not None and held.whole() == _KEPT[2]


# --------------------------------------------------------------------------- fits_any

#: every text of up to four of ``a``, ``b``, ``*`` (patterns, and names, some with a star)
_TEXTS = ["".join(t) for n in range(5) for t in itertools.product("ab*", repeat=n)]


@pytest.mark.parametrize("pattern", _TEXTS)
def test_fits_any_is_any_fits_wildcard(pattern: str) -> None:
    """``fits_any`` answers as ``any(fits_wildcard(pattern, n) for n in names)`` for every
    pattern and names of a small alphabet, as a list and as a set, empty, with the pattern
    itself among them (a name spelled with a star included) and without it."""
    groups = [[], _TEXTS, [n for n in _TEXTS if n != pattern], [pattern],
              [n for n in _TEXTS if "*" not in n], [n for n in _TEXTS if len(n) == 3]]
    for names in groups:
        want = any(fits(pattern, n) for n in names)
        assert fits_any(pattern, names) is want, (pattern, names)
        assert fits_any(pattern, set(names)) is want, (pattern, names)
