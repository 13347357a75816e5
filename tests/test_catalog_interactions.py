"""The review relates the catalog's components (issue 19): interactions (RV401-RV408),
families, versions and reposts (RV501-RV502), each row's risk facts, the facts ingest
writes, and a catalog found from inside it.  On our own fixtures
(``fixtures/interactions``: a backend, an extension in two versions, a repost of the
backend); on the real corpus when it is at hand (read, never copied)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import zipfile
from html import unescape as html_unescape
from pathlib import Path
from typing import Any

import pytest
from harness import ROOT, browser_or_skip, run_browser, run_cli

from risutools.catalog.catalog import Catalog
from risutools.catalog.interaction_checks import shared_state
from risutools.catalog.interactions import Index, Summary, fits
from risutools.catalog.review import review_catalog
from risutools.catalog.review_interactions import relate, risk
from risutools.report.review_html import render_review_html
from risutools.report.review_text import render_review_markdown, render_review_text

FIX = ROOT / "fixtures" / "interactions"
REPOST = ROOT / "fixtures" / "interactions-repost"
REAL = ROOT.parent / "shared" / "corpus" / "real"
CORE, NEWS, NEWS2, CORE2 = (f"module.risu.{n}" for n in (
    "300000001.board-core", "300000002.board-news", "300000005.board-news",
    "300000007.board-core"))


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cat = tmp_path_factory.mktemp("board") / "catalog"
    assert run_cli("ingest", FIX, "-o", cat, "-q").returncode == 0
    assert run_cli("ingest", REPOST, "-o", cat, "-q").returncode == 0
    return cat


def _data(cat: Path) -> dict[str, Any]:
    return review_catalog(Catalog.open(cat), jobs=1).data


def _rows(data: dict[str, Any], rule: str) -> list[dict[str, Any]]:
    return [r for r in [*data["interactions"]["relations"], *data["lineage"]["relations"]]
            if r["rule"] == rule]


def test_ingest_writes_each_documents_facts(board: Path) -> None:
    names = sorted(p.name for p in (board / "facts").iterdir())
    assert names == [f"{c}.json" for c in (CORE, NEWS, NEWS2, CORE2)]
    facts = json.loads((board / "facts" / f"{NEWS}.json").read_text(encoding="utf-8"))
    assert facts["facts"] == "component-facts-v1"
    assert facts["lorebook_loads"] == ["board-prelude"]
    assert facts["toggles_read"] == ["board.diversity", "board.thoughts"]
    assert facts["risu_buttons"] == 1 and "onButtonClick" not in facts["entry_points"]
    assert "local" not in json.dumps(facts)  # names and flags, never code


def test_dependencies_unsatisfied_toggles_and_the_family(board: Path) -> None:
    d = _data(board)
    deps = {(r["component_id"], tuple(r["targets"]), tuple(r["keys"]))
            for r in _rows(d, "RV403")}
    assert (NEWS, (CORE,), ("board-prelude",)) in deps
    assert (NEWS2, (CORE,), ("board-prelude",)) in deps
    toggles = {(r["component_id"], tuple(r["targets"])) for r in _rows(d, "RV405")}
    assert (NEWS, (CORE,)) in toggles
    unsat = {(r["component_id"], tuple(r["keys"])) for r in _rows(d, "RV406")}
    assert unsat == {(NEWS, ("toggle_board.diversity",)), (NEWS2, ("toggle_board.diversity",))}
    assert all(r["severity"] == "warning" for r in _rows(d, "RV406"))
    buttons = {r["component_id"]: r["targets"] for r in _rows(d, "RV407")}
    assert buttons[NEWS] == [CORE, CORE2]
    [family] = d["interactions"]["families"]
    assert family["backend"] == CORE and family["title"] == "Board Core"
    assert set(family["members"]) == {CORE, NEWS, NEWS2, CORE2}


def test_shared_state_and_edit_order(board: Path) -> None:
    d = _data(board)
    state = {(r["component_id"], r["targets"][0], tuple(r["keys"])) for r in _rows(d, "RV401")}
    assert (CORE, NEWS, ("chat:board_log",)) in state
    # two versions of one module are not said to share state with each other
    assert not [s for s in state if {s[0], s[1]} == {NEWS, NEWS2}]
    [display] = [r for r in _rows(d, "RV402") if r["keys"] == ["hook.edit_display"]]
    assert {display["component_id"], *display["targets"]} == {CORE, NEWS, NEWS2, CORE2}


def test_repost_and_version_pair_with_their_drift(board: Path) -> None:
    d = _data(board)
    [repost] = _rows(d, "RV501")
    assert (repost["component_id"], repost["targets"]) == (CORE2, [CORE])
    [version] = _rows(d, "RV502")
    assert (version["component_id"], version["targets"]) == (NEWS2, [NEWS])
    [news] = [g for g in d["lineage"]["lineages"] if g["name"] == "Board News"]
    [sup] = news["supersedes"]
    assert sup["drift"]["hosts"] == {"added": ["news.example.org"], "removed": []}
    assert sup["drift"]["privileged_apis"] == {"added": ["request"], "removed": []}
    assert "state" not in sup["drift"] and "toggles" not in sup["drift"]


def test_every_row_carries_its_risk(board: Path) -> None:
    d = _data(board)
    risk = {doc["component_id"]: doc["risk"] for doc in d["documents"]}
    assert risk[NEWS2]["title"] == "Board News"
    assert risk[NEWS2]["low_level_access"] is True
    assert risk[NEWS2]["hosts"] == ["news.example.org"]
    assert risk[NEWS2]["privileged_apis"] == ["request"]
    assert risk[NEWS]["dynamic_loading"] == [
        {"load": "lorebook 'board-prelude'", "resolves": f"in {CORE}, {CORE2}"}]
    assert {f["rule"] for f in risk[NEWS2]["analysis_findings"]} == {"RA103", "RA113"}
    assert risk[NEWS]["coverage"] == ["RA113: code is loaded from lorebook entries"]
    assert risk[CORE]["dynamic_loading"] == [] and risk[CORE]["low_level_access"] is False


def test_every_format_shows_the_sections(board: Path) -> None:
    rv = review_catalog(Catalog.open(board), jobs=1)
    text = render_review_text(rv)
    assert "family Board Core: backend module.risu.300000001.board-core" in text
    assert "unsatisfied (2):" in text and "'toggle_board.diversity'" in text
    assert f"{NEWS2} supersedes {NEWS}:" in text and "+ hosts: news.example.org" in text
    assert f"repost: {CORE2} has the same bytes as {CORE}" in text
    assert 'module.risu.300000005.board-news "Board News": lowLevelAccess' in text
    md = render_review_markdown(rv)
    assert "## Interactions" in md and "## Versions and reposts" in md and "## Risk" in md
    page = render_review_html(rv)
    assert '<table id="families">' in page and '<table id="interactions">' in page
    assert 'class="k-unsatisfied"' in page and 'class="k-dependencies"' in page
    assert '<table id="lineage">' in page and "news.example.org" in page
    sarif = run_cli("review", board, "-q", "-f", "sarif")
    assert "RV406" in sarif.stdout


def test_a_catalog_ingest_made_is_found_from_inside(board: Path) -> None:
    r = run_cli("review", "-q", cwd=board)
    assert r.returncode == 0, r.stderr
    assert "family Board Core" in r.stdout


def test_facts_that_do_not_belong_are_not_used(tmp_path: Path, board: Path) -> None:
    cat = tmp_path / "cat"
    cat.mkdir()
    for p in board.glob("*.json"):
        (cat / p.name).write_bytes(p.read_bytes())
    (cat / "facts").mkdir()
    good = json.loads((board / "facts" / f"{NEWS}.json").read_text(encoding="utf-8"))
    (cat / "facts" / f"{NEWS}.json").write_text(json.dumps({**good, "source_sha256": "x"}))
    (cat / "facts" / f"{CORE}.json").write_text("{not json")
    (cat / "facts" / f"{CORE2}.json").write_text(json.dumps({**good}))  # another component's
    os.symlink("/dev/zero", cat / "facts" / f"{NEWS2}.json")
    d = _data(cat)
    notes = {doc["component_id"]: doc["risk"]["coverage"] for doc in d["documents"]}
    assert notes[NEWS] == ["facts of another source (re-run ingest)"]
    assert notes[CORE][0].startswith("facts file unreadable")
    assert notes[CORE2] == ["facts file is not this component's component-facts-v1"]
    assert notes[NEWS2][0].startswith("facts file unreadable")
    assert d["interactions"]["without_facts"] == 4 and d["interactions"]["relations"] == []


def test_cached_ingest_writes_the_facts_again(tmp_path: Path) -> None:
    cat = tmp_path / "cat"
    assert run_cli("ingest", FIX, "-o", cat, "-q").returncode == 0
    first = (cat / "facts" / f"{NEWS}.json").read_bytes()
    for p in (cat / "facts").iterdir():
        p.unlink()
    assert run_cli("ingest", FIX, "-o", cat, "-q").returncode == 0
    assert (cat / "facts" / f"{NEWS}.json").read_bytes() == first


BUTTONS = ROOT / "fixtures" / "interactions-buttons"
HOST, LUA, NAMED, CARD = ("module.risu.310000001.button-host", "module.risu.310000002.button-lua",
                          "module.risu.310000003.button-named",
                          "character.risu.310000004.button-card")


@pytest.fixture(scope="module")
def buttons(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cat = tmp_path_factory.mktemp("buttons") / "catalog"
    assert run_cli("ingest", BUTTONS, "-o", cat, "-q").returncode == 0
    return cat


def test_the_facts_carry_what_the_reader_follows(buttons: Path) -> None:
    def facts(cid: str) -> dict[str, Any]:
        return dict(json.loads((buttons / "facts" / f"{cid}.json").read_text("utf-8")))

    assert facts(LUA)["code_buttons"] == ["pick;*"]
    assert facts(LUA)["computed_state"] == [
        {"key": "score_*", "scope": "chat", "read": False, "write": True}]
    assert facts(NAMED)["button_names"] == ["BoardPick", "board_refresh"]
    # the host's manual trigger and Lua globals; a global nothing of its own calls is
    # reached all the same (RisuAI calls any Lua global a manual trigger names)
    assert facts(HOST)["button_targets"] == ["BoardPick", "board_refresh", "onButtonClick",
                                             "onOutput"]
    assert not facts(HOST).get("unreached")
    assert facts(CARD)["group_chat_writes"] == ["picked"]


def test_buttons_and_reader_facts_relate_components(buttons: Path) -> None:
    d = _data(buttons)
    rows = {(r["rule"], r["component_id"], tuple(r["targets"])): r
            for r in d["interactions"]["relations"]}
    # risu-btn values the Lua writes, handled by the backend it loads its code from
    lua = rows[("RV407", LUA, (HOST,))]
    assert lua["keys"] == ["pick;*"] and lua["dependency"] is True
    assert lua["message"] == (f"shows risu-btn buttons ('pick;*') whose clicks reach "
                              f"onButtonClick of {HOST}")
    # buttons that call names only the host defines
    named = rows[("RV407", NAMED, (HOST,))]
    assert named["keys"] == ["BoardPick", "board_refresh"] and named["dependency"] is True
    assert named["message"] == (
        f"shows buttons that call 'BoardPick', 'board_refresh', defined by {HOST} (a manual "
        f"trigger or a Lua function of that name)")
    # a key built at run time, and a greeting's setvar (group chats only)
    assert rows[("RV401", LUA, (HOST,))]["keys"] == ["chat:score_alice (computed 'score_*')"]
    assert rows[("RV401", CARD, (HOST,))]["keys"] == ["chat:picked (group chats only)"]
    [family] = d["interactions"]["families"]
    assert family["backend"] == HOST and set(family["members"]) == {HOST, LUA, NAMED}


def _summary(i: int, state: list[dict[str, Any]]) -> Summary:
    return Summary(f"m.{i:05d}", f"m{i}.json", "", "candidate", "inactive", (), (),
                   {"state": state}, "", "1.0.0", f"risu:{i}")


def test_a_key_shared_by_many_is_one_row_not_every_pair() -> None:
    users = [_summary(i, [{"key": "hub", "scope": "chat", "read": True, "write": i == 0}])
             for i in range(500)]
    ix = Index.build(users)
    rows = list(shared_state(ix))
    assert len(rows) == 1 and len(rows[0].targets) == 499
    assert "500 components use the chat variable 'hub'" in rows[0].message


def test_a_key_built_at_run_time_counts_each_component_once() -> None:
    """A pattern fits keys HUB components use, each writing one and reading another: it
    is a use of those keys (its components counted once each, whether they write or
    read), and each use by name keeps whether it writes."""
    from risutools.catalog.interactions import HUB, state_user, state_uses

    users = [_summary(i, [{"key": "p_count_a", "scope": "chat", "read": False, "write": True},
                          {"key": "p_count_b", "scope": "chat", "read": True, "write": False}])
             for i in range(HUB)]
    builder = _facts_summary(HUB, {"computed_state": [
        {"key": "p_count_*", "scope": "chat", "read": True, "write": False}]})
    ix = Index.build([*users, builder])
    assert [state_user(u) for u in state_uses(ix.state["chat"]["p_count_a"])] == [
        (i, True) for i in range(HUB)]
    assert [state_user(u) for u in state_uses(ix.state["chat"]["p_count_b"])] == [
        (i, False) for i in range(HUB)]
    for key in ("p_count_a", "p_count_b"):
        assert ix.state_extra[("chat", key)] == [(HUB, True, False, "computed 'p_count_*'")]
    one_more = [*users, _summary(HUB + 1, [{"key": "p_count_c", "scope": "chat",
                                            "read": True, "write": False}]), builder]
    assert not Index.build(one_more).state_extra  # (past HUB: it says nothing of which)


def test_the_index_is_made_when_asked_and_the_state_let_go_after_rv401() -> None:
    """Nothing of the index is made until a unit asks for it (the lineages come first);
    RV401 lets the state keys' part go when it is done, and what it says is what it says
    with that part made beforehand; asked again, the part is made again, the same."""
    from risutools.catalog.interactions import state_user, state_uses

    users = [_summary(i, [{"key": "k", "scope": "chat", "read": True, "write": i == 0},
                          {"key": f"own{i}", "scope": "chat", "read": True, "write": True}])
             for i in range(3)]
    ix = Index.build(users)
    assert ix.made() == ()  # (sorting the summaries made nothing)
    rows = list(shared_state(ix))
    assert ix.made() == ()  # (let go; the other kinds never asked)
    eager = Index.build(users)
    made = dict(eager.state)  # (made before the unit runs)
    assert [r.message for r in shared_state(eager)] == [r.message for r in rows] and rows
    assert [state_user(u) for u in state_uses(ix.state["chat"]["k"])] == [
        (0, True), (1, False), (2, False)]
    # a key one use names is held as that use's number alone (the writer's complement)
    assert ix.state["chat"]["own1"] == ~1 and state_uses(ix.state["chat"].get("none")) == []
    assert ix.state == made
    assert ix.made() == ("state", "state_extra")
    assert ix.transforms == {} and ix.made() == ("state", "state_extra", "transforms")
    assert ix.button_targets.find("x") == {}  # (each of the other kinds made alone)
    assert ix.made() == ("state", "state_extra", "transforms", "button_targets")
    ix.release_kinds()
    assert ix.made() == ("state", "state_extra")


def test_each_part_of_the_other_kinds_is_made_by_its_own_adder() -> None:
    """Every part of the other kinds is made alone, by what each summary adds to it, and
    only that part: the table of adders and the parts are one list."""
    from risutools.catalog import interactions as ia

    assert set(ia._KIND_ADDS) == set(ia._KIND_PARTS)
    s = _facts_summary(0, {"transforms": ["editInput"], "toggles_declared": ["t"],
                           "lorebook_entries": ["e"], "button_targets": ["b"],
                           "entry_points": ["onButtonClick"]}, ("cap.p",), ("cap.c",))
    for part in ia._KIND_PARTS:
        made = ia.Kinds.build([s], part)
        for other in ia._KIND_PARTS:
            value = getattr(made, other)
            held = value.table if isinstance(value, ia.Names) else value
            assert bool(held) == (other == part), (part, other)


def test_the_other_kinds_let_go_after_each_unit_and_risk_reads_the_same() -> None:
    """The review lets the other kinds' parts go after each RV4xx unit; the carriers of
    every load a summary names are found before the lorebook's entries go, so each
    component's risk says where its loads resolve without making them again; a load no
    summary names makes them again when asked, and finds the same as with them held."""
    carrier = _facts_summary(0, {"lorebook_entries": ["libA.core", "libA.util"]})
    loader = _facts_summary(1, {"lorebook_loads": ["libA.*"]})
    held = Index.build([carrier, loader])
    want = [held.carrier_ids(p) for p in ("libA.*", "libA.core", "libB.*")]
    inter = relate([carrier, loader])
    ix = inter.index
    assert ix.made() == ()  # (nothing of the index is held once the units are done)
    assert ix.carrier_memo["libA.*"] == want[0] == (["m.00000"], frozenset({"m.00000"}))
    assert risk(ix, ix.summaries[1])["dynamic_loading"] == [
        {"load": "lorebook 'libA.*'", "resolves": "in m.00000"}]
    assert ix.made() == ()  # (the risk read the carriers found, not the entries)
    assert [ix.carrier_ids(p) for p in ("libA.*", "libA.core", "libB.*")] == want
    assert "lore" in ix.made()  # (a load no summary names: made again when asked)


def test_shared_state_rows_in_the_order_of_scope_then_key() -> None:
    """RV401's rows come sorted by scope, then key, whatever order the components name
    them in, with keys of both scopes and keys only a greeting writes (group chats)."""
    def uses(*keys: tuple[str, str, bool]) -> list[dict[str, Any]]:
        return [{"key": k, "scope": sc, "read": True, "write": w} for sc, k, w in keys]

    a = _summary(0, uses(("global", "zz", True), ("chat", "b", True), ("chat", "a", True)))
    b = _summary(1, uses(("chat", "a", False), ("global", "zz", False), ("chat", "b", False),
                         ("global", "aa", True)))
    c = _summary(2, uses(("global", "aa", False), ("chat", "only", True)))
    rows = list(shared_state(Index.build([a, b, c])))
    assert [(r.source, r.targets, r.keys) for r in rows] == [
        (0, (1,), ("chat:a", "chat:b", "global:zz")), (1, (2,), ("global:aa",))]


def _facts_summary(i: int, facts: dict[str, Any], provides: tuple[str, ...] = (),
                   conflicts: tuple[str, ...] = ()) -> Summary:
    return Summary(f"m.{i:05d}", f"m{i}.json", "", "candidate", "inactive", provides,
                   conflicts, facts, "", "1.0.0", f"risu:{i}")


def test_a_toggle_entry_or_capability_many_use_is_one_row_per_key() -> None:
    # 400 components read the toggle 'hub.t' and load lorebook entries 'hub-*' that 40 of
    # them declare and carry; 40 conflict with 'ui.x', which all provide: one row per key,
    # not 400 x 40 rows, and no family (a key many use says nothing about who needs whom)
    many = [_facts_summary(i, {"toggles_read": ["hub.t"], "lorebook_loads": ["hub-*"],
                               "toggles_declared": ["hub.t"] if i % 10 == 0 else [],
                               "lorebook_entries": [f"hub-{i}"] if i % 10 == 0 else []},
                           ("ui.x",), ("ui.x",) if i % 10 == 0 else ())
            for i in range(400)]
    inter = relate(many)
    by = {r.kind: r for r in inter.relations}
    assert sorted(r.kind for r in inter.relations) == [
        "capability-conflict", "lorebook-dependency", "toggle-dependency"]
    assert by["toggle-dependency"].message.startswith(
        "360 component(s) read the toggle 'hub.t', which 40 components declare: m.00000, ")
    assert by["lorebook-dependency"].message.startswith(
        "360 component(s) load code from lorebook entries 'hub-*', which 40 components "
        "carry: m.00000, ")
    assert by["capability-conflict"].message.startswith(
        "40 component(s) conflict with 'ui.x', which 400 components provide: ")
    assert all(len(r.targets) == 399 and not r.dependency for r in inter.relations)
    assert inter.families == []
    # at HUB (12) declarers the pairs are still listed: a row per reader and declarer
    # (the declarers read their own toggle: no row), at most HUB a reader
    few = [_facts_summary(i, {"toggles_read": ["t"], "toggles_declared": ["t"] if i < 12
                              else []}) for i in range(30)]
    rows = [r for r in relate(few).relations if r.kind == "toggle-dependency"]
    assert len(rows) == 18 * 12 and all(r.dependency for r in rows)


@pytest.mark.parametrize(("pattern", "name", "fit"), [
    ("board-prelude", "board-prelude", True), ("board-prelude", "board-prelude2", False),
    ("lib/*.lua", "lib/a.lua", True), ("lib/*.lua", "lib/.lua", True),
    ("lib/*.lua", "lib.lua", False), ("a*b*c", "abc", True), ("a*b*c", "acb", False),
])
def test_lorebook_name_patterns(pattern: str, name: str, fit: bool) -> None:
    assert fits(pattern, name) is fit


@pytest.mark.skipif(not REAL.is_dir(), reason="the real corpus is not at hand")
def test_the_real_corpus_review_shows_families_toggles_and_shared_state(
        tmp_path: Path) -> None:
    cat = tmp_path / "real"
    run_cli("ingest", REAL, "-o", cat, "-q")
    text = run_cli("review", cat, "-q").stdout
    page = run_cli("review", cat, "-q", "-f", "html").stdout
    for shown in (text, page):
        assert "module.risu.h6802a616d6ab.laiteubodeu" in shown  # the LightBoard backend
        assert "toggle_lb-hn.diversity" in shown
        assert "helltrain-runtime also uses" in shown and "chat:gameSetupV1.authority" in shown
    assert "with 10 extension(s)" in text
    families = page[page.index('<table id="families"'):]
    families = families[:families.index("</table>")]
    assert families.count("module.risu.") == 11  # the backend and its ten extensions


def test_packets_carry_risk_and_full_packets_the_real_relations(board: Path,
                                                                tmp_path: Path) -> None:
    out = tmp_path / "packets"
    for lane in ("light", "full"):
        r = run_cli("packet", NEWS2, "--lane", lane, "--catalog", board, "-o", out)
        assert r.returncode == 0, r.stderr
    light = json.loads(next(out.glob("*--light--*.json")).read_text(encoding="utf-8"))
    risk = light["permission_facts"]["risk"]
    assert risk["hosts"] == ["news.example.org"] and risk["title"] == "Board News"
    reasons = {x["reason"] for x in light["needs_full_context"]}
    assert {"dependency", "unsatisfied"} <= reasons
    assert "relations" not in light
    full = json.loads(next(out.glob("*--full--*.json")).read_text(encoding="utf-8"))
    rel = full["relations"]
    assert {r["rule"] for r in rel["dependencies"]} == {"RV403", "RV405", "RV407"}
    assert rel["family"]["backend"] == CORE
    assert [r["rule"] for r in rel["versions"]] == ["RV502"]
    assert {r["component_id"] for r in rel["shared_state"]} == {CORE, CORE2}
    md = next(out.glob("*--light--*.md")).read_text(encoding="utf-8")
    assert "| hosts | news.example.org |" in md
    core = run_cli("packet", CORE, "--lane", "full", "--catalog", board, "-o", out)
    assert core.returncode == 0
    full_core = json.loads(next(out.glob(f"{CORE}--full--*.json")).read_text(encoding="utf-8"))
    assert {r["component_id"] for r in full_core["relations"]["dependents"]} >= {NEWS, NEWS2}


def test_a_cards_own_module_is_not_a_shared_source(tmp_path: Path) -> None:
    src, cat = tmp_path / "src", tmp_path / "cards"
    src.mkdir()
    with zipfile.ZipFile(src / "300000009_lantern.charx", "w") as z:
        z.writestr("card.json", (ROOT / "fixtures" / "projection" / "lantern-card.card.json"
                                 ).read_bytes())
        z.writestr("module.risum", (ROOT / "fixtures" / "sources" /
                                    "174678332_context-cutter.risum").read_bytes())
    assert run_cli("ingest", src, "-o", cat, "-q").returncode == 0
    ids = [p.stem for p in cat.glob("*.json")]
    assert len(ids) == 2  # the card's own content and its module
    out = tmp_path / "p"
    for cid in ids:
        assert run_cli("packet", cid, "--lane", "light", "--catalog", cat, "-o", out
                       ).returncode == 0
    for p in out.glob("*.json"):
        packet = json.loads(p.read_text(encoding="utf-8"))
        assert "shared-source" not in {x["reason"] for x in packet["needs_full_context"]}


def test_the_ingest_summary_says_why_components_became_fewer_documents(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for p in [*FIX.glob("*.json"), *REPOST.glob("*.json")]:
        (src / p.name).write_bytes(p.read_bytes())
    r = run_cli("ingest", src, "-o", tmp_path / "cat", "--color", "never")
    assert r.returncode == 0, r.stderr
    assert ("4 component(s) became 3 document(s): 1 in files with the same bytes as another "
            "(kept the newest post), 0 the same component in another container, "
            "0 id collision(s)") in r.stdout


def test_the_board_shows_each_path_to_approved_and_groups_identical_rows(board: Path) -> None:
    rv = review_catalog(Catalog.open(board), jobs=1)
    b = {x["component_id"]: x for x in rv.data["board"]}[NEWS]
    assert [(p["part"], p["state"]) for p in b["path"]] == [
        ("narrative", "missing"), ("replay", "n/a"), ("digests", "missing"),
        ("approvals", "missing")]
    assert b["path"][3]["detail"] == "0 of 2: missing request_review, approve"
    text = render_review_text(rv)
    assert ("  4 components candidate -> pending_human_review  blocked by approval: "
            f"{CORE}, {NEWS}, {NEWS2}, {CORE2}") in text
    assert "`risutools approve <component> --action request_review" in text
    assert "path to approved: narrative missing" in text
    assert "  transition log: 0 entries, 0 problem(s)" in text


def test_the_page_puts_decisions_first_and_groups_findings(board: Path) -> None:
    page = render_review_html(review_catalog(Catalog.open(board), jobs=1))
    assert page.index('id="decide"') < page.index('id="findings-h"') < \
        page.index('id="interactions-h"') < page.index('id="board-h"')
    assert "2 unsatisfied</a>" in page
    # four MC600 warnings, one row with its count
    assert page.count("<td>MC600</td>") == 1
    assert "<td>MC600</td><td>warning</td><td>4</td>" in page
    assert 'class="blocked b-approval"' in page and "Transition log: 0 entries" in page
    assert '<ul class="path">' in page and "<th>path to approved</th>" in page


def test_review_takes_statistics_exit_zero_and_color(board: Path, tmp_path: Path) -> None:
    stats = run_cli("review", board, "-q", "--statistics")
    assert stats.returncode == 0
    lines = stats.stdout.splitlines()
    assert lines[0].split() == ["4", "MC600", "narrative"]
    assert any(x.split()[:2] == ["2", "RV406"] for x in lines)
    js = json.loads(run_cli("review", board, "-q", "--statistics", "-f", "json").stdout)
    assert {"code": "RV501", "name": "repost", "count": 1, "fixable": False} in js
    bad = run_cli("review", board, "-q", "--statistics", "-f", "html")
    assert bad.returncode == 2 and "--statistics prints" in bad.stderr
    coloured = run_cli("review", board, "-q", "--color", "always").stdout
    assert "\x1b[" in coloured and "interactions (" in coloured
    assert "\x1b[" not in run_cli("review", board, "-q", "--color", "never").stdout
    cat = tmp_path / "cat"
    cat.mkdir()
    for p in board.glob("*.json"):
        (cat / p.name).write_bytes(p.read_bytes())
    doc = cat / f"{NEWS}.json"
    doc.write_text(doc.read_text(encoding="utf-8").replace('"prompt_sha256": "sha256:',
                                                             '"prompt_sha256": "sha256:0'))
    assert run_cli("review", cat, "-q").returncode == 1
    assert run_cli("review", cat, "-q", "--exit-zero").returncode == 0


def _printed_commands(out: str) -> list[list[str]]:
    board = json.loads(out)["board"]
    cmds = []
    for b in board:
        for g in b["gates"]:
            if g["verdict"] == "fail" and "`risutools approve" in g["reason"]:
                text = g["reason"].split("`")[1].replace("NAME", "kim")
                cmds.append(shlex.split(text)[1:])
    return cmds


@pytest.mark.parametrize("where", ["inside", "parent"])
def test_the_commands_the_board_prints_run_as_printed(tmp_path: Path, where: str) -> None:
    cat = tmp_path / "catalog"
    assert run_cli("ingest", FIX, "-o", cat, "-q").returncode == 0
    cwd, args = (cat, ()) if where == "inside" else (tmp_path, ("catalog",))
    r = run_cli("review", *args, "-q", "-f", "json", cwd=cwd)
    assert r.returncode == 0, r.stderr
    cmds = _printed_commands(r.stdout)
    assert len(cmds) == 3
    assert all(("--catalog" in c) == (where == "parent") for c in cmds)
    for c in cmds:
        done = run_cli(*c, cwd=cwd)
        assert done.returncode == 0, (c, done.stderr)
    assert len(list((cat / "approvals").iterdir())) == 3


def test_the_live_only_filter_in_chromium(board: Path, tmp_path: Path) -> None:
    browser = browser_or_skip("the review page")
    cat = tmp_path / "cat"
    shutil.copytree(board, cat)
    for cid in (CORE, NEWS):  # promoted by hand: live (the review says MC305 too)
        p = cat / f"{cid}.json"
        p.write_text(p.read_text(encoding="utf-8").replace(
            '"review_status": "candidate"', '"review_status": "promoted"'), encoding="utf-8")
    page = tmp_path / "review.html"
    page.write_text(render_review_html(review_catalog(Catalog.open(cat), jobs=1)),
                    encoding="utf-8")
    r = run_browser(browser, tmp_path, "--dump-dom", page.as_uri() + "#live=1")
    assert r.returncode == 0, r.stderr[-2000:]
    body = r.stdout[r.stdout.index('<table id="interactions"'):]
    rows = re.findall(r"<tr [^>]*data-live=[^>]*>", body[:body.index("</tbody>")])
    live = [x for x in rows if 'data-live="1"' in x]
    shown = [x for x in rows if " hidden" not in x]
    assert live and len(live) < len(rows) and shown == live
    assert f'id="interactions-shown">{len(live)}<' in r.stdout


def test_the_text_review_takes_live_only_with_the_pages_meaning(board: Path,
                                                              tmp_path: Path) -> None:
    cat = tmp_path / "cat"
    shutil.copytree(board, cat)
    for cid in (CORE, NEWS):  # promoted by hand: live (the review says MC305 too)
        p = cat / f"{cid}.json"
        p.write_text(p.read_text(encoding="utf-8").replace(
            '"review_status": "candidate"', '"review_status": "promoted"'), encoding="utf-8")

    def section(out: str) -> list[str]:
        lines = out.splitlines()
        start = next(i for i, x in enumerate(lines) if x.startswith("interactions"))
        end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("  "))
        return lines[start:end]

    every = section(run_cli("review", cat, "-q", "--exit-zero").stdout)
    live = section(run_cli("review", cat, "-q", "--exit-zero", "--live-only").stdout)
    # the one live pair: News (promoted) reads Core's (promoted) toggle and loads its code;
    # its unsatisfied toggle (no other side) is live too; its buttons' row also names the
    # repost of Core (a candidate): not live
    assert live[0] == "interactions between live components (4; 0 families):"
    rows = [x for x in live if x.startswith("    RV")]
    assert rows == [
        f"    RV406 {NEWS}: reads toggles no component of the catalog declares: "
        "'toggle_board.diversity'",
        f"    RV403 {NEWS}: loads code from lorebook entries only {CORE} carries: "
        "'board-prelude'",
        f"    RV405 {NEWS}: reads toggles {CORE} declares: 'board.thoughts'",
        f"    RV401 {CORE}: writes 1 variable(s) that {NEWS} also uses: 'chat:board_log'"]
    assert len(every) > len(live) and any(NEWS2 in x for x in every)
    assert not any(NEWS2 in x or CORE2 in x for x in live)
    data = json.loads(run_cli("review", cat, "-q", "--exit-zero", "-f", "json",
                              "--live-only").stdout)
    assert data["interactions"]["live_only"] is True
    assert len(data["interactions"]["relations"]) == 4
    assert all(r["live"] for r in data["interactions"]["relations"])
    plain = json.loads(run_cli("review", cat, "-q", "--exit-zero", "-f", "json").stdout)
    assert "live_only" not in plain["interactions"]
    md = run_cli("review", cat, "-q", "--exit-zero", "-f", "markdown", "--live-only").stdout
    assert "## Interactions between live components\n" in md and NEWS2 not in md.split(
        "## Interactions")[1].split("## Versions")[0]


#: measures, as Chromium lays the page out, whether it is wider than the window and which
#: cells of the narrow columns (kind, rule, count, severity) wrap to a second line
WIDTH_PROBE = """
(function () {
  var doc = document.documentElement, wrapped = [];
  document.querySelectorAll("td, th").forEach(function (c) {
    var t = (c.textContent || "").trim();
    if (/^(RV|MC|RA)[0-9]{3}$|^[0-9]+$|^(info|warning|error)$/.test(t)) {
      var lh = parseFloat(getComputedStyle(c).lineHeight) || 20;
      var r = document.createRange(); r.selectNodeContents(c);
      if (r.getClientRects().length > 1 || r.getBoundingClientRect().height > 1.6 * lh)
        wrapped.push(t);
    }
  });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify({scroll: doc.scrollWidth, view: window.innerWidth,
                                    wrapped: wrapped});
  document.body.appendChild(pre);
})();
"""


@pytest.mark.parametrize("width", [800, 1400])
def test_the_page_reads_well_at_800_and_1400_px(board: Path, buttons: Path, tmp_path: Path,
                                                width: int) -> None:
    browser = browser_or_skip("the review page's width")
    cat = tmp_path / "cat"
    shutil.copytree(board, cat)
    for p in (buttons / "facts").iterdir():  # more rows, and long ids, in one page
        shutil.copy(p, cat / "facts" / p.name)
    for p in buttons.glob("*.json"):
        shutil.copy(p, cat / p.name)
    html = render_review_html(review_catalog(Catalog.open(cat), jobs=1))

    def measure(page_html: str) -> dict[str, Any]:
        page = tmp_path / "review.html"
        page.write_text(page_html.replace("</body>", f"<script>{WIDTH_PROBE}</script></body>"),
                        encoding="utf-8")
        r = run_browser(browser, tmp_path, f"--window-size={width},1000", "--dump-dom",
                        page.as_uri())
        assert r.returncode == 0, r.stderr[-2000:]
        start = r.stdout.index('<pre id="probe">') + len('<pre id="probe">')
        got: dict[str, Any] = json.loads(html_unescape(
            r.stdout[start:r.stdout.index("</pre>", start)]))
        assert got["view"] == width
        return got

    got = measure(html)
    assert got["scroll"] <= width, got  # no sideways scrolling
    assert got["wrapped"] == [], got
    # the same measures fail on a page made too wide, and on one whose cells are squeezed
    wide = measure(html.replace("</style>", "table{min-width:2000px}</style>", 1))
    assert wide["scroll"] > width, wide
    squeeze = ("table{table-layout:fixed;width:100px} "
               "td,th{white-space:normal!important;word-break:break-all}</style>")
    squeezed = measure(html.replace("</style>", squeeze, 1))
    assert squeezed["wrapped"], squeezed


def test_one_module_in_two_containers_is_a_repost_not_a_version(tmp_path: Path) -> None:
    cat = tmp_path / "cat"
    assert run_cli("ingest", ROOT / "fixtures" / "sources", "-o", cat, "-q").returncode == 0
    d = _data(cat)
    [seorin] = d["lineage"]["lineages"]
    assert seorin["reposts"] == [{"component_id": "module.risu.184500113.seorin-module",
                                  "same_as": "module.risu.184500112.seorin-module",
                                  "same": "facts"}]
    assert seorin["supersedes"] == []


def test_hostile_facts_are_shown_escaped(board: Path, tmp_path: Path) -> None:
    cat = tmp_path / "cat"
    shutil.copytree(board, cat)
    p = cat / "facts" / f"{NEWS}.json"
    facts = json.loads(p.read_text(encoding="utf-8"))
    facts["toggles_read"] = ["evil\x1b[2J\x07", "<script>alert(1)</script>"]
    facts["hosts"] = ["<img src=x onerror=alert(1)>", "h\x1b]0;t\x07"]
    facts["state"] = [{"key": "k\x1b[31m", "scope": "chat", "read": True, "write": True},
                      {"key": 7, "scope": "chat"}, "not a row"]
    facts["lorebook_loads"] = {"not": "a list"}
    p.write_text(json.dumps(facts), encoding="utf-8")
    rv = review_catalog(Catalog.open(cat), jobs=1)
    text, md, page = render_review_text(rv), render_review_markdown(rv), render_review_html(rv)
    for out in (text, md):
        assert "\x1b" not in out and "\x07" not in out
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    keys = [k for r in rv.data["interactions"]["relations"] for k in r["keys"]]
    assert "toggle_<script>alert(1)</script>" in keys  # the data keeps it; every view escapes


def test_log_entries_are_counted(tmp_path_factory: pytest.TempPathFactory,
                                 tmp_path: Path) -> None:
    from test_catalog_support import fresh_catalog, to_promoted

    cat = fresh_catalog(tmp_path_factory, tmp_path)
    to_promoted(cat)  # three transitions
    rv = review_catalog(Catalog.open(cat), jobs=1)
    assert rv.data["counts"]["log_entries"] == 3
    assert "  transition log: 3 entries, 0 problem(s)" in render_review_text(rv)
    assert "Transition log: 3 entries, 0 problem(s)" in render_review_html(rv)


def test_the_net_summarizers_light_packet_names_its_hosts(tmp_path: Path) -> None:
    cat = tmp_path / "cat"
    assert run_cli("ingest", ROOT / "fixtures" / "sources", "-o", cat, "-q").returncode == 0
    out = tmp_path / "p"
    r = run_cli("packet", "module.risu.182004771.net-summarizer", "--lane", "light",
                "--catalog", cat, "-o", out)
    assert r.returncode == 0, r.stderr
    packet = json.loads(next(out.glob("*.json")).read_text(encoding="utf-8"))
    risk = packet["permission_facts"]["risk"]
    assert risk["hosts"] == ["api.example.com", "mcp.example.com"]
    assert {f["rule"] for f in risk["analysis_findings"]} == {"RA103", "RA802"}
    assert "api.example.com" in next(out.glob("*.md")).read_text(encoding="utf-8")


def test_a_facts_folder_leading_outside_the_catalog_is_not_read(board: Path,
                                                                 tmp_path: Path) -> None:
    cat = tmp_path / "cat"
    cat.mkdir()
    for p in board.glob("*.json"):
        (cat / p.name).write_bytes(p.read_bytes())
    shutil.copytree(board / "facts", tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", cat / "facts")
    d = _data(cat)
    notes = {doc["risk"]["coverage"][0] for doc in d["documents"]}
    assert notes == {"facts file unreadable: outside-catalog"}
    assert d["interactions"]["relations"] == []


def test_ingest_never_writes_facts_outside_the_catalog(tmp_path: Path) -> None:
    cat, elsewhere = tmp_path / "cat", tmp_path / "elsewhere"
    cat.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, cat / "facts")
    r = run_cli("ingest", FIX, "-o", cat, "-q")
    assert r.returncode == 2 and "outside-catalog" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert list(elsewhere.iterdir()) == []


def test_pared_facts_read_as_the_whole_facts(board: Path, buttons: Path) -> None:
    """A summary keeps its facts pared down (empty members apart, as shared (name, repr)
    pairs): every reader of a summary answers as with the whole facts, and a repost is
    still found by the content of the whole facts."""
    import dataclasses

    from risutools.catalog.interactions import facts_content, pared
    from risutools.catalog.review_interactions import risk

    files = sorted((board / "facts").glob("*.json")) + sorted((buttons / "facts").glob("*.json"))
    assert len(files) >= 8
    whole = [json.loads(f.read_text(encoding="utf-8")) for f in files]
    whole.append({**whole[0], "hosts": [], "low_level_access": False, "findings": [],
                  "state": [], "risu_buttons": 0, "title": ""})  # every kind of empty member
    full = [_facts_summary(i, f) for i, f in enumerate(whole)]
    kept = [dataclasses.replace(s, facts=pared(f)[0], empty=pared(f)[1])
            for s, f in zip(full, whole, strict=True)]
    assert sum(len(s.facts or {}) for s in kept) < sum(len(f) for f in whole)
    assert len({id(s.empty) for s in kept[:-1]}) < len(kept) - 1  # the empty sets shared
    keys = {k for f in whole for k in f}
    ix_full, ix_kept = Index.build(full), Index.build(kept)
    for a, b in zip(full, kept, strict=True):
        assert b.facts  # never empty
        for k in keys:
            assert a.names(k) == b.names(k) and a.text(k) == b.text(k)
            assert a.number(k) == b.number(k)
        assert list(a.state()) == list(b.state())
        assert a.computed_state(3) == b.computed_state(3)
        assert risk(ix_full, a) == risk(ix_kept, b)
        assert facts_content(a) == facts_content(b)
    # a repost: the same facts but those naming the copy, and only those
    copy = _facts_summary(99, {**whole[0], "component_id": "other", "source_part": "card.json"})
    assert facts_content(copy) == facts_content(full[0])
    moved = _facts_summary(99, {**whole[0], "hosts": ["x.example"]})
    assert facts_content(moved) != facts_content(full[0])
    # an empty member is not a missing one (the whole facts differ)
    less = {k: v for k, v in whole[-1].items() if k != "hosts"}
    assert facts_content(_facts_summary(98, less)) != facts_content(full[-1])
    facts, empty = pared(less)
    assert facts_content(dataclasses.replace(kept[-1], facts=facts, empty=empty)) \
        != facts_content(kept[-1])


def _odd_facts() -> dict[str, Any]:
    """Facts whose members are not what they should be (a hand-edited file): a member the
    units read of every summary as a number, a list of other things, a text as a list."""
    return {"facts": "component-facts-v1", "component_id": "m.odd", "module_id": ["x"],
            "source_sha256": 7, "source_part": None, "lorebook_entries": ["a", 1, {"b": 2}],
            "lorebook_loads": "a*", "toggles_read": [["t"]], "toggles_declared": ["t", "t"],
            "button_names": {"n": 1}, "risu_buttons": True, "hosts": ["h"],
            "state": [{"key": "k", "scope": "chat", "write": True}, {"key": 1}],
            "big": 2 ** 70, "ratio": 0.5, "nested": {"z": 1, "a": [1.5, None]}}


def test_equal_lists_of_names_are_kept_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lists of names summaries keep at hand are one tuple for all that are equal (a
    version or a repost names what its original names), up to a bound; each answers the
    same either way."""
    from risutools.catalog import interactions
    from risutools.catalog.interactions import FactsStore, pared

    facts = {"facts": "component-facts-v1", "lorebook_entries": ["a.lore", "b.lore"],
             "toggles_declared": ["t.one"], "findings": []}
    store = FactsStore()
    one, two = (store.facts(pared(dict(facts))[0], exact=True) for _ in range(2))
    assert one.member("lorebook_entries") == ("a.lore", "b.lore")
    assert one.member("lorebook_entries") is two.member("lorebook_entries")
    assert one.member("toggles_declared") is two.member("toggles_declared")
    monkeypatch.setattr(interactions, "TUPLES_MAX", 1)  # (one kept: the other its own)
    store = FactsStore()
    one, two = (store.facts(pared(dict(facts))[0], exact=True) for _ in range(2))
    assert one.member("lorebook_entries") is two.member("lorebook_entries")
    assert one.member("toggles_declared") == two.member("toggles_declared") == ("t.one",)
    assert one.member("toggles_declared") is not two.member("toggles_declared")


def test_packed_facts_read_as_the_facts(board: Path, buttons: Path) -> None:
    """The review keeps each summary's facts packed (:class:`FactsStore`: the pared facts
    in a temporary file, the members every unit reads at hand): every reader answers as
    with the facts in a dict, hand-edited members included, and the interactions, families,
    lineages and risks made of them are the same."""
    import dataclasses

    from risutools.catalog.interactions import HOT, Facts, FactsStore, facts_content, pared
    from risutools.catalog.review_interactions import risk, risks

    files = sorted((board / "facts").glob("*.json")) + sorted((buttons / "facts").glob("*.json"))
    whole = [json.loads(f.read_text(encoding="utf-8")) for f in files] + [_odd_facts()]
    store = FactsStore()
    plain, packed = [], []
    for i, f in enumerate(whole):
        kept, empty = pared(f)
        s = dataclasses.replace(_facts_summary(i, kept), empty=empty)
        exact = i < len(whole) - 1  # (the odd facts hold what orjson does not read back)
        plain.append(s)
        packed.append(dataclasses.replace(s, facts=store.facts(kept, exact=exact)))
    keys = {k for f in whole for k in f} | set(HOT)
    ix_plain, ix_packed = Index.build(plain), Index.build(packed)
    for a, b in zip(plain, packed, strict=True):
        assert isinstance(b.facts, Facts) and b.facts
        for k in keys:
            assert a.names(k) == b.names(k) and a.text(k) == b.text(k)
            assert a.number(k) == b.number(k)
            assert b.facts.get(k) == (a.facts or {}).get(k)  # as the dict has it
        assert list(a.state()) == list(b.state())
        assert a.computed_state(3) == b.computed_state(3)
        assert risk(ix_plain, a) == risk(ix_packed, b)
        assert facts_content(a) == facts_content(b)
        assert b.facts.whole() == a.facts
    odd = packed[-1].facts
    assert isinstance(odd, Facts)
    assert odd.get("big") == 2 ** 70 and odd.get("ratio") == 0.5  # read back exactly
    got = odd.whole()
    assert odd.whole() is got  # the last read kept
    one, other = relate(plain), relate(packed)
    assert one.rows() == other.rows() and one.families == other.families
    assert list(one.lineage.groups) == list(other.lineage.groups)
    assert one.rows(one.versions) == other.rows(other.versions)
    assert risks(one) == risks(other)


def test_groups_join_places_under_their_smallest() -> None:
    """The lineages' and families' groups: joined in any order, each group's root is its
    smallest place, its members in order, the groups in their roots' order."""
    from risutools.catalog.interactions import Groups

    g = Groups(7)
    for a, b in ((5, 3), (6, 1), (3, 6), (4, 4)):
        g.join(a, b)
    assert g.members() == {0: [0], 1: [1, 3, 5, 6], 2: [2], 4: [4]}
    assert [g.root(i) for i in range(7)] == [0, 1, 2, 1, 4, 1, 1]
    assert Groups(0).members() == {}
