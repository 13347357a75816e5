"""The comparison logic of bench/real_corpus.py (hand-written facts vs the analyser).

Synthetic facts and a module of our own only: the real corpus is never read here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import facts_digest  # noqa: E402
import real_corpus  # noqa: E402
import real_corpus_facts as rcf  # noqa: E402

LUA = """
local KEY = "unused"
function onStart(id)
  setChatVar(id, "score", "0")
end
listenEdit("editDisplay", function(id, data)
  local n = getChatVar(id, "score")
  return data
end)
"""


def _module() -> dict:
    return {"type": "risuModule", "name": "Bench facts sample", "id": "bench-facts-sample",
            "lowLevelAccess": False,
            "trigger": [{"comment": "", "type": "start", "conditions": [],
                         "effect": [{"type": "triggerlua", "code": LUA}]}],
            "regex": [{"comment": "r", "type": "editoutput", "in": "x",
                       "out": '{{getglobalvar::toggle_mode}}'
                              '<button risu-trigger="again">+</button>',
                       "ableFlag": False}],
            "lorebook": [], "customModuleToggle": "mode=Mode"}


def _facts(**over: object) -> dict:
    facts = {"hooks": ["hook.chat_start", "hook.edit_display", "hook.edit_output",
                       "hook.manual"],
             "entry_points": ["onStart"],
             "buttons": ["again"], "chat_read": ["score"], "chat_write": ["score"],
             "global_read": ["toggle_mode"], "toggles_declared": ["mode"],
             "privileged": [], "dynamic_code": [], "lorebook_code": [],
             "low_level_access": [], "findings": []}
    facts.update(over)  # type: ignore[arg-type]
    return facts


def _scratch(sha: str, **over: object) -> dict:
    return {"components": [{"path": "sample.module.json", "member": None, "sha256": sha,
                            "facts": _facts(**over)}]}


# -- digests --------------------------------------------------------------------------------

def test_digest_is_salted_sha256_prefix() -> None:
    import hashlib
    assert rcf.digest("score") == hashlib.sha256(b"risutools-facts:score").hexdigest()[:12]
    assert rcf.digest("score") != rcf.digest("Score")
    assert len(rcf.digest("")) == 12


def test_encode_digests_only_module_strings_and_folds_state_prefix() -> None:
    assert rcf.encode("hooks", "hook.manual") == "hook.manual"
    assert rcf.encode("privileged", "LLM") == "LLM"
    assert rcf.encode("chat_read", "k") == rcf.digest("k")
    # getState("k") is the chat variable "__k": both spellings are one fact
    assert rcf.encode("chat_write", "__k") == rcf.encode("chat_write", "k")
    # a global key keeps its "__" (only chat keys are folded)
    assert rcf.encode("global_read", "__k") == rcf.digest("__k")


def test_digest_script_never_writes_clear_module_strings(tmp_path: Path) -> None:
    names = ["secret-key-1", "toggle_hidden.mode", "btn-value-x", "hidden.mode"]
    scratch = {"components": [{"path": "a.risum", "member": None, "sha256": "ab" * 8,
                               "facts": _facts(chat_read=names[:1], global_read=names[1:2],
                                               buttons=names[2:3],
                                               toggles_declared=names[3:],
                                               lorebook_code=[10, 2]),
                               "uncertain": {"buttons": ["btn-maybe"]},
                               "absent": {"chat_write": ["not-a-key"]},
                               "partial": ["chat_write"], "notes": ["read by hand"]}]}
    src = tmp_path / "scratch.json"
    src.write_text(json.dumps(scratch), encoding="utf-8")
    header = tmp_path / "header.txt"
    header.write_text("method notes\nsecond line", encoding="utf-8")
    out = tmp_path / "facts.yaml"
    with out.open("w", encoding="utf-8") as fh:
        old, sys.stdout = sys.stdout, fh
        try:
            assert facts_digest.main(["x", str(src), str(header)]) == 0
        finally:
            sys.stdout = old
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# method notes\n# second line\n")
    for name in [*names, "btn-maybe", "not-a-key"]:
        assert name not in text
    data = yaml.safe_load(text)
    c = data["components"][0]
    assert c["facts"]["chat_read"] == [rcf.digest("secret-key-1")]
    assert c["facts"]["lorebook_code"] == ["2", "10"]  # numeric order, as text
    assert c["facts"]["hooks"] == sorted(_facts()["hooks"])  # vocabulary in clear
    assert c["uncertain"] == {"buttons": [rcf.digest("btn-maybe")]}
    assert c["partial"] == ["chat_write"]
    assert c["absent"] == {"chat_write": [rcf.digest("not-a-key")]}
    parsed = rcf.parse_facts(data)
    assert parsed[0].partial == {"chat_write"} and parsed[0].key == ("a.risum", None)
    assert parsed[0].absent == {"chat_write": {rcf.digest("not-a-key")}}


def test_digest_script_usage_without_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert facts_digest.main(["x"]) == 2
    assert "usage" in capsys.readouterr().out


# -- parsing --------------------------------------------------------------------------------

def test_load_facts_bad_files_are_one_line(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    cases = {"list.yaml": "- a\n- b\n", "broken.yaml": "components: [\n",
             "nopath.yaml": "components: [{facts: {}}]\n", "binary.yaml": None}
    for name, text in cases.items():
        path = tmp_path / name
        if text is None:
            path.write_bytes(b"\xff\xfe\x00bad")
        else:
            path.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=name):
            rcf.load_facts(path)
    root, _sha = _corpus(tmp_path)
    assert real_corpus.main(["x", str(root), "--facts", str(tmp_path / "list.yaml")]) == 2
    out = capsys.readouterr().out
    assert out.startswith("facts file not read: ") and out.count("\n") == 1


def test_parse_facts_refuses_bad_documents() -> None:
    base = {"components": [{"path": "p", "sha256": "00", "facts": {}}]}
    assert rcf.parse_facts(base)[0].facts["hooks"] == set()
    with pytest.raises(ValueError, match="salt"):
        rcf.parse_facts({**base, "salt": "other:"})
    with pytest.raises(ValueError, match="must be a list"):
        rcf.parse_facts({"components": [{"path": "p", "facts": {"hooks": "hook.manual"}}]})
    with pytest.raises(ValueError, match="unknown fact type"):
        rcf.parse_facts({"components": [{"path": "p", "uncertain": {"hookz": []}}]})
    with pytest.raises(ValueError, match="unknown fact type"):
        rcf.parse_facts({"components": [{"path": "p", "unscored": ["statez"]}]})
    with pytest.raises(ValueError, match="unknown fact type"):
        rcf.parse_facts({"components": [{"path": "p", "partial": ["x"]}]})
    with pytest.raises(ValueError, match="unknown fact type"):
        rcf.parse_facts({"components": [{"path": "p", "absent": {"x": []}}]})


# -- scoring --------------------------------------------------------------------------------

def test_compare_sets_counts_and_uncertain_and_partial() -> None:
    d = rcf.compare_sets({"a", "b", "c"}, {"b", "c", "d", "u"}, {"u"})
    assert (d.score.tp, d.score.fp, d.score.fn) == (2, 1, 1)
    assert d.missed == ["a"] and d.false == ["d"]
    assert d.score.precision == pytest.approx(2 / 3) and d.score.recall == pytest.approx(2 / 3)
    # an uncertain fact that is missing is not a miss either
    d = rcf.compare_sets({"a"}, set(), {"u"})
    assert (d.score.tp, d.score.fp, d.score.fn) == (0, 0, 1)
    # partial: false finds are not counted, misses are
    d = rcf.compare_sets({"a"}, {"x", "y"}, set(), partial=True)
    assert (d.score.tp, d.score.fp, d.score.fn) == (0, 0, 1) and d.false == []
    # ... unless the reading showed a found name is not a fact (absent)
    d = rcf.compare_sets({"a"}, {"a", "x", "y"}, set(), partial=True, absent={"y", "z"})
    assert (d.score.tp, d.score.fp, d.score.fn) == (1, 1, 0) and d.false == ["y"]
    # nothing expected, nothing found: no figure rather than a perfect one
    empty = rcf.compare_sets(set(), set(), set()).score
    assert empty.precision is None and empty.recall is None


def test_compare_component_findings_and_false_alarm_rate() -> None:
    cf = rcf.parse_facts({"components": [{
        "path": "p", "member": "card.json", "sha256": "00",
        "facts": {"hooks": ["hook.manual"], "findings": ["RA113"]},
        "uncertain": {"findings": ["RA704"]}, "unscored": ["chat_read"]}]})[0]
    found = {"hooks": {"hook.manual", "hook.chat_start"}, "chat_read": {"zz"},
             "findings": {"RA113", "RA110", "RA704"}}
    res = rcf.compare_component(cf, found, ["RA113", "RA110", "RA110", "RA704"])
    assert "chat_read" not in res.diffs  # unscored: no figure, no diff
    assert res.diffs["hooks"].false == ["hook.chat_start"]
    assert res.diffs["findings"].false == ["RA110"]
    assert (res.findings_reported, res.findings_false) == (4, 2)
    assert rcf.disagreements(res) == ["hooks: false hook.chat_start", "findings: false RA110"]
    lines = rcf.table([res])
    assert "| hooks | 1 | 1 | 0 | 0.50 | 1.00 |" in lines
    assert "| findings (component, RA id) | 1 | 1 | 0 | 0.50 | 1.00 |" in lines
    assert lines[-1] == "false alarms: 2 of 4 findings reported (1 in 2.0)"
    assert lines[-2] == "uncertain (not scored): 1 of 1 reported by the analyser"
    tot = rcf.totals([res, res])
    assert (tot["hooks"].tp, tot["hooks"].fp) == (2, 2)


def test_table_without_findings_says_so() -> None:
    cf = rcf.parse_facts({"components": [{"path": "p", "facts": {}}]})[0]
    res = rcf.compare_component(cf, {}, [])
    assert rcf.table([res])[-1] == "false alarms: 0 of 0 findings reported (no findings)"
    assert "| **all facts** | 0 | 0 | 0 | - | - |" in rcf.table([res])


def test_found_facts_maps_every_fact_type_from_an_analysis_object() -> None:
    fact = SimpleNamespace
    a = SimpleNamespace(
        hooks=[fact(name="hook.manual")], entry_points=[fact(name="onButtonClick")],
        button_callbacks=[fact(name="b1")],
        state=[SimpleNamespace(key="__s", scope="chat", read_count=1, write_count=0),
               SimpleNamespace(key="w", scope="chat", read_count=0, write_count=2),
               SimpleNamespace(key="toggle_t", scope="global", read_count=1, write_count=0)],
        toggles=[SimpleNamespace(key="t")], privileged=[fact(name="LLM")],
        dynamic_code=[fact(name="load")], lorebook_code=[3, 0],
        low_level_access=False, low_level_triggers=[0],
        findings=[SimpleNamespace(rule="RA113"), SimpleNamespace(rule="RA113")])
    f = rcf.found_facts(a)
    assert f["hooks"] == {"hook.manual"} and f["entry_points"] == {"onButtonClick"}
    assert f["buttons"] == {rcf.digest("b1")}
    assert f["chat_read"] == {rcf.digest("s")} and f["chat_write"] == {rcf.digest("w")}
    assert f["global_read"] == {rcf.digest("toggle_t")}
    assert f["toggles_declared"] == {rcf.digest("t")}
    assert f["privileged"] == {"LLM"} and f["dynamic_code"] == {"load"}
    assert f["lorebook_code"] == {"0", "3"} and f["low_level_access"] == {"yes"}
    assert f["findings"] == {"RA113"}


# -- the bench script end to end, on a corpus of our own ------------------------------------

def _corpus(tmp_path: Path) -> tuple[Path, str]:
    import hashlib
    root = tmp_path / "corpus"
    root.mkdir()
    data = json.dumps(_module()).encode("utf-8")
    (root / "sample.module.json").write_bytes(data)
    return root, hashlib.sha256(data).hexdigest()[:16]


def _facts_file(tmp_path: Path, scratch: dict) -> Path:
    path = tmp_path / "facts.yaml"
    path.write_text(yaml.safe_dump(facts_digest.convert(scratch)), encoding="utf-8")
    return path


def test_bench_agrees_with_correct_facts(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    root, sha = _corpus(tmp_path)
    facts = _facts_file(tmp_path, _scratch(sha))
    assert real_corpus.main(["x", str(root), "--facts", str(facts)]) == 0
    out = capsys.readouterr().out
    assert "facts:      all agree" in out
    assert "1 of 1 components compared" in out
    assert "| **all facts** | 10 | 0 | 0 | 1.00 | 1.00 |" in out
    assert "false alarms: 0 of 0 findings reported (no findings)" in out


def test_bench_reports_misses_and_false_finds(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root, sha = _corpus(tmp_path)
    # hand facts that disagree: an extra expected hook, a chat read the analyser cannot know,
    # and no button (so the analyser's button is a false find)
    facts = _facts_file(tmp_path, _scratch(sha, hooks=["hook.chat_start", "hook.edit_display",
                                                       "hook.edit_output", "hook.manual",
                                                       "hook.translation"],
                                           chat_read=["score", "elsewhere"], buttons=[],
                                           findings=["RA102"]))
    assert real_corpus.main(["x", str(root), "--facts", str(facts), "--clear"]) == 0
    out = capsys.readouterr().out
    assert "DIFF hooks: missed hook.translation" in out
    assert f"DIFF chat_read: missed {rcf.digest('elsewhere')}" in out
    # --clear names the analyser's own find next to its digest
    assert f"DIFF buttons: false {rcf.digest('again')}=again" in out
    assert "DIFF findings: missed RA102" in out
    assert "| hooks | 4 | 0 | 1 | 1.00 | 0.80 |" in out
    assert "| findings (component, RA id) | 0 | 0 | 1 | - | 0.00 |" in out


def test_bench_flags_stale_and_missing_facts(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    root, _sha = _corpus(tmp_path)
    stale = _facts_file(tmp_path, _scratch("0" * 16))
    assert real_corpus.main(["x", str(root), "--facts", str(stale)]) == 0
    out = capsys.readouterr().out
    assert "facts:      stale" in out
    assert "0 of 1 components compared" in out
    assert "not compared (missing or stale): sample.module.json" in out
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump(facts_digest.convert(
        {"components": [{"path": "elsewhere.risum", "sha256": "00", "facts": {}}]})),
        encoding="utf-8")
    assert real_corpus.main(["x", str(root), "--facts", str(other)]) == 0
    assert "facts:      none written for this component" in capsys.readouterr().out


def test_bench_without_facts_prints_no_table(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    root, sha = _corpus(tmp_path)
    facts = _facts_file(tmp_path, _scratch(sha))
    assert real_corpus.main(["x", str(root), "--facts", str(facts), "--no-facts"]) == 0
    out = capsys.readouterr().out
    assert "sample.module.json: module" in out
    assert "Hand-written facts" not in out and "DIFF" not in out


# -- the committed facts file stays in RisuAI's vocabulary and holds no module string ----------

def test_committed_facts_file_is_vocabulary_and_digests_only() -> None:
    import re

    from risutools.commands.checks import every_check as all_checks
    data_dir = Path(__file__).resolve().parents[1] / "risutools" / "data"
    caps = yaml.safe_load((data_dir / "capabilities.yaml").read_text(encoding="utf-8"))
    api = yaml.safe_load((data_dir / "lua_api.yaml").read_text(encoding="utf-8"))
    hooks = {c for c in caps["capabilities"] if c.startswith("hook.")}
    privileged = {n for n, f in api["functions"].items() if f["privileged"]}
    loaders = {n for n, f in api["functions"].items()
               if f.get("capability") == "script.dynamic_load"}
    checks = set(all_checks())
    allowed = {"hooks": hooks, "entry_points": set(api["entry_points"]),
               "privileged": privileged, "dynamic_code": loaders,
               "low_level_access": {"yes"}, "findings": checks}
    comps = rcf.load_facts(BENCH / "real_corpus_facts.yaml")
    assert len(comps) >= 20 and len({c.key for c in comps}) == len(comps)
    digest = re.compile(r"[0-9a-f]{12}")
    for c in comps:
        assert re.fullmatch(r"[0-9a-f]{16}", c.sha256), c.key
        for kind in (c.facts, c.uncertain, c.absent):
            for t, names in kind.items():
                for n in names:
                    if t in rcf.DIGESTED:
                        assert digest.fullmatch(n), (c.key, t, n)
                    elif t == "lorebook_code":
                        assert n.isdigit(), (c.key, n)
                    elif t == "findings" and kind is c.uncertain:
                        # an id another branch proposes may be listed as uncertain
                        assert re.fullmatch(r"RA\d{3}", n), (c.key, n)
                    else:
                        assert n in allowed[t], (c.key, t, n)
