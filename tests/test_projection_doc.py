"""project(): ids, provenance, sentences, notes merge, determinism, contract, no code."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from harness import ROOT

from risutools.canonical import canonical
from risutools.errors import ConfigError, UsageError
from risutools.formats.model import Module, SourceInfo
from risutools.projection import Notes, load_notes, post_id_from_name, project, slugify
from risutools.projection.project import module_identity

sys.path.insert(0, str(ROOT / "fixtures" / "analysis"))
from make_fixtures import context_cutter

SEED = json.loads((ROOT / "fixtures/documents/seed-000-context-cutter.json").read_text("utf-8"))
NOTES = ROOT / "fixtures/notes/module.risu.174678332.context-cutter.yaml"
SHA = "0c95062f010a58321ec3b55fdf62c046537e28a3fb86472d3fb60d43bf567780"


def cutter(path: str = "cat/174678332_context-cutter.risum", fmt: str = "risum",
           member: str | None = None) -> Module:
    return Module(context_cutter(), source=SourceInfo(path, fmt, 1234, SHA, member))


def test_ids_provenance_and_defaults() -> None:
    doc = project(cutter())
    assert doc["component_id"] == "module.risu.174678332.context-cutter"
    prov = doc["provenance"]
    assert prov["source_refs"] == [{"source_id": "risu:174678332",
                                    "source_version": "module.risum",
                                    "sha256": "sha256:" + SHA}]
    assert (prov["review_status"], prov["runtime_status"], prov["availability_verdict"]) == (
        "candidate", "inactive", "untested")
    assert prov["source_kind"] == "risu_attachment" and prov["static_analysis_only"] is True
    assert prov["active_code_policy"] == "static_preserve_no_execute"
    assert prov["fixture_kind"] == "parsed_risu_projection" and prov["publishable"] is False
    ev = doc["payload"]["idea_layers"]["evidence"]
    assert ev == {"source_post": "174678332", "source_format": "module.risum",
                  "lead_id": "risu.static.module.174678332",
                  "analysis_mode": "static_projection_read", "code_executed": False}
    lin = doc["payload"]["idea_layers"]["lineage"]
    assert lin == {"promotion_status": "candidate", "origin": "risu_static_ingest",
                   "reverse_translation": "module.risum -> matrix-component-v1(module)"}
    proj = doc["projection"]
    assert proj["prompt_sha256"] == "sha256:" + hashlib.sha256(
        proj["prompt"].encode()).hexdigest()
    assert (proj["harness_compatibility"], proj["replay_status"]) == ("display_only", "not_run")
    assert proj["flagship"] is False and proj["core"] is False
    assert doc["payload"]["namespace"] == "risu.module"
    assert doc["payload"]["controller"] == "user"
    assert doc["capabilities"]["requires"] == ["hook.edit_request", "chat_state_kv",
                                               "global_state_kv"]
    assert set(doc["payload"]["state_effects"]) == {"omitted_count", "anchor",
                                                    "estimated_tokens"}
    assert list(doc["payload"]["idea_layers"]["swappable_parts"]) == [
        "enabled", "tokenizer_profile", "max_context", "preserve_latest", "trim_percent"]
    for tag in proj["tags"]:
        assert tag == tag.lower() and " " not in tag
    assert len(set(proj["tags"])) == len(proj["tags"])


def test_post_id_rules() -> None:
    assert post_id_from_name("174678332_context-cutter.risum") == "174678332"
    assert post_id_from_name("dir/99-x.charx") == "99"
    assert post_id_from_name("context-cutter.risum") is None
    assert post_id_from_name("174678332.risum") is None
    doc = project(cutter("x/context.risum"))
    ident = module_identity(cutter())  # the module's own id + content, not the file's bytes
    assert ident is not None
    assert doc["component_id"] == f"module.risu.h{ident[:12]}.context-cutter"
    assert doc["provenance"]["source_refs"][0]["source_id"] == f"risu:h{ident[:12]}"
    assert doc["payload"]["idea_layers"]["evidence"]["source_post"] == f"h{ident[:12]}"
    assert doc["provenance"]["source_refs"][0]["sha256"] == f"sha256:{SHA}"
    assert project(cutter(), post_id="42")["component_id"] == "module.risu.42.context-cutter"
    with pytest.raises(UsageError) as exc:
        project(cutter(), post_id="12a")
    assert exc.value.code == "usage" and exc.value.where == "--post-id"


def test_slug_rules() -> None:
    assert slugify("Context Cutter!") == "context-cutter"
    assert slugify("Café  Über--Mode") == "cafe-uber-mode"
    assert slugify("컨텍스트 커터") == "keontegseuteu-keoteo"  # romanized (anyascii)
    m = Module({"name": "컨텍스트 커터"}, source=SourceInfo("a.risum", "risum", 1, SHA))
    assert project(m)["component_id"] == f"module.risu.h{SHA[:12]}.keontegseuteu-keoteo"  # no id
    m = Module({"name": "🔦📚"}, source=SourceInfo("a.risum", "risum", 1, SHA))
    assert project(m)["component_id"] == f"module.risu.h{SHA[:12]}.m{SHA[:8]}"
    notes = Notes.from_dict({"slug": "my-cutter"})
    assert project(cutter(), notes=notes)["component_id"].endswith(".my-cutter")


def test_charx_json_and_sourceless() -> None:
    doc = project(cutter("cards/184500112_heroine.charx", "charx", "module.risum"))
    assert doc["provenance"]["source_refs"][0]["source_version"] == \
        "184500112_heroine.charx!module.risum"
    assert doc["payload"]["controller"] == "character"
    assert doc["component_id"].startswith("module.risu.184500112.")
    doc = project(cutter("186123400_m.json", "json-module"))
    assert doc["provenance"]["source_kind"] == "risu_json_export"
    plain = Module(context_cutter())
    a, b = project(plain), project(Module(context_cutter()))
    assert a == b and a["component_id"].startswith("module.risu.h")


def test_deterministic_and_languages() -> None:
    en1, en2 = canonical(project(cutter())), canonical(project(cutter()))
    assert en1 == en2
    ko = project(cutter(), lang="ko")
    assert ko["payload"]["triggers"] == ["요청을 보낼 때마다(editRequest) 전송 직전의 메시지 "
                                         "열을 받는다."]
    assert "모듈" in ko["projection"]["summary"]
    with pytest.raises(UsageError):
        project(cutter(), lang="fr")


def test_notes_reproduce_seed_narrative() -> None:
    notes = load_notes(NOTES)
    doc = project(cutter(), notes=notes, lang="ko")
    assert doc["provenance"]["source_refs"][1] == {
        "source_id": "risu:174678332", "source_version": "notes.yaml",
        "sha256": "sha256:" + hashlib.sha256(NOTES.read_bytes()).hexdigest()}
    sp, dp = SEED["payload"], doc["payload"]
    for key in ("triggers", "state_effects", "activation_rules", "invariants", "boundaries",
                "namespace", "controller"):
        assert dp[key] == sp[key], key
    for key in ("situation", "core", "lineage", "evidence"):
        assert dp["idea_layers"][key] == sp["idea_layers"][key], key
    # notes add parts; the generated "enabled" toggle stays
    parts = dp["idea_layers"]["swappable_parts"]
    assert {k: parts[k] for k in sp["idea_layers"]["swappable_parts"]} == \
        sp["idea_layers"]["swappable_parts"]
    assert doc["projection"] == SEED["projection"]  # incl. prompt_sha256
    assert doc["capabilities"]["provides"] == SEED["capabilities"]["provides"]
    assert doc["component_id"] == SEED["component_id"]


def test_notes_change_changes_document(tmp_path: Path) -> None:
    p = tmp_path / "n.yaml"
    p.write_text("projection:\n  title: A\n", encoding="utf-8")
    d1 = project(cutter(), notes=load_notes(p))
    p.write_text("projection:\n  title: B\n", encoding="utf-8")
    d2 = project(cutter(), notes=load_notes(p))
    assert d1["provenance"]["source_refs"][1] != d2["provenance"]["source_refs"][1]
    assert d2["projection"]["title"] == "B"
    # a generated prompt follows the merged title; its digest is recomputed
    assert d2["projection"]["prompt"].startswith("B:")


@pytest.mark.parametrize(("text", "field"), [
    ("bogus: 1\n", "bogus"),
    ("payload:\n  trigers: []\n", "payload.trigers"),
    ("payload:\n  triggers: hello\n", "payload.triggers"),
    ("payload:\n  triggers: [ok, 3]\n", "payload.triggers[1]"),
    ("payload:\n  state_effects: [a]\n", "payload.state_effects"),
    ("payload:\n  state_effects:\n    k: {a: 1}\n", "payload.state_effects.k"),
    ("projection:\n  flagship: 'yes'\n", "projection.flagship"),
    ("projection:\n  tags: [Not Kebab]\n", "projection.tags[0]"),
    ("projection:\n  prompt_sha256: x\n", "projection.prompt_sha256"),
    ("capabilities:\n  provides: [Bad-Name]\n", "capabilities.provides[0]"),
    ("capabilities:\n  requires: [Bad-Name]\n", "capabilities.requires[0]"),
    ("capabilities:\n  provides: [a.b]\n  conflicts: [a.b]\n", "capabilities.conflicts"),
    ("slug: Not A Slug\n", "slug"),
    ("idea_layers:\n  evidence:\n    code_executed: true\n", "idea_layers.evidence.code_executed"),
    ("idea_layers:\n  situation:\n    concrete_scene: 5\n", "idea_layers.situation.concrete_scene"),
    ("payload:\n  controller: robot\n", "payload.controller"),
    ("- a\n- b\n", "(top)"),
    ("payload:\n  triggers: ['setChatVar(id, \"x\", 1)']\n", "payload.triggers[0]"),
    ("projection:\n  summary: 'matches (?:\\d+) then [^<]*'\n", "projection.summary"),
])
def test_notes_errors_name_the_field(tmp_path: Path, text: str, field: str) -> None:
    p = tmp_path / "notes.yaml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_notes(p)
    assert exc.value.code == "notes-invalid"
    assert exc.value.where == field
    line = exc.value.one_line()
    assert "\n" not in line and str(p) in line


def test_notes_bad_yaml_and_duplicates(tmp_path: Path) -> None:
    p = tmp_path / "n.yaml"
    p.write_text("slug: a\nslug: b\n", encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_notes(p)
    assert "duplicate" in exc.value.why and exc.value.where == "line 2"
    p.write_text("a: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        load_notes(p)
    p.write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError):
        load_notes(p)
    with pytest.raises(ConfigError):
        load_notes(tmp_path / "missing.yaml")
    p.write_text("", encoding="utf-8")
    assert load_notes(p).data == {}


def _walk_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_walk_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _walk_strings(v)]
    return []


def test_never_pending_review_or_later() -> None:
    bad = {"pending_human_review", "approved", "promoted", "retired", "rejected"}
    doc = project(cutter(), notes=load_notes(NOTES))
    assert doc["provenance"]["review_status"] == "candidate"
    assert doc["payload"]["idea_layers"]["lineage"]["promotion_status"] == "candidate"
    assert not bad & set(_walk_strings(doc["provenance"]))


def _fixture_modules() -> list[Module]:
    """Every module the fixtures hold: readable files anywhere under fixtures/ (also the
    readable ones in broken/), plus the bare module dicts of fixtures/modules/."""
    from risutools.errors import RisuError
    from risutools.formats import read_path

    out: list[Module] = []
    for p in sorted((ROOT / "fixtures").glob("*/*")):
        if not p.is_file() or p.suffix in (".py", ".lua", ".yaml", ".md"):
            continue
        if p.parent.name == "modules" and p.suffix == ".json":
            data = json.loads(p.read_text("utf-8"))
            if isinstance(data, dict) and "name" in data and "type" not in data:
                out.append(Module(data, source=SourceInfo(str(p), "json-module", 1, SHA)))
                continue
        try:
            out.extend(read_path(str(p)))
        except RisuError:
            continue
    return out


def _code_lines(m: Module) -> list[str]:
    lines: list[str] = []
    for t in m.trigger:
        if isinstance(t, dict) and isinstance(t.get("effect"), list):
            for e in t["effect"]:
                if isinstance(e, dict) and isinstance(e.get("code"), str):
                    lines.extend(x.strip() for x in e["code"].splitlines())
    lines.extend(x.strip() for x in m.cjs.splitlines())
    return [x for x in lines if len(x) > 10]


def test_fixture_set_is_not_empty() -> None:
    names = {m.name for m in _fixture_modules()}
    # the readers' fixtures, the analysis fixtures and the bare modules are all covered
    assert len(_fixture_modules()) >= 20
    assert "Context Cutter" in names and any("Net Summarizer" in n for n in names)


def test_every_fixture_document_is_valid_and_carries_no_code() -> None:
    from risutools.contract.validate import validate_document

    for m in _fixture_modules():
        patterns = [r["in"] for r in m.regex if isinstance(r, dict)
                    and isinstance(r.get("in"), str) and len(r["in"]) >= 3]
        lines = _code_lines(m)
        for lang in ("en", "ko"):
            doc = project(m, lang=lang)
            errors = [f for f in validate_document(doc) if f.severity == "error"]
            assert errors == [], (m.name, lang, errors)
            assert canonical(project(m, lang=lang)) == canonical(doc)  # deterministic
            text = canonical(doc).decode("utf-8")
            raw = "\n".join(_walk_strings(doc))
            for pat in patterns:
                assert pat not in text and pat not in raw, (m.name, pat)
            for line in lines:
                assert line not in text and line not in raw, (m.name, line)


HOSTILE = ROOT / "fixtures/analysis/hostile-names.module.json"


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_hostile_names_labels_and_values_do_not_leak_code(lang: str) -> None:
    """Module name, toggle keys/labels/options, variable names and condition values that
    are code or patterns are withheld; the harmless ones are still copied."""
    from risutools.formats import read_path

    (m,) = read_path(str(HOSTILE))
    doc = project(m, lang=lang)
    raw = "\n".join(_walk_strings(doc))
    for needle in ("load(", "request(", "setChatVar(", "alertNormal", "then request",
                   "x == 1", "[^", "(\\d+)", "require(", "<script", "{{setvar", "eval",
                   "onStart", "fetch"):
        assert needle not in raw, needle
    proj = doc["projection"]
    assert proj["title"].startswith("Unnamed module h" if lang == "en" else "이름 없는 모듈 h")
    # a name that is code does not make the slug either: the slug falls back to the
    # content identity (the same in every container), never to the file's digest
    sha = m.source.sha256 if m.source else ""
    key = module_identity(m) or sha
    assert key != sha
    assert doc["component_id"] == f"module.risu.h{key[:12]}.m{key[:8]}"
    parts = doc["payload"]["idea_layers"]["swappable_parts"]
    assert list(parts) == ["safe", "mode", "local x", "label"]
    assert "Show the <hp> bar" in parts["safe"]  # prose is kept
    assert "\u201cmode\u201d" in parts["mode"]  # a pattern label falls back to the key
    assert "calm" in parts["mode"] and "angry" in parts["mode"]
    assert "\u201clabel\u201d" in parts["label"]
    effects = doc["payload"]["state_effects"]
    assert sorted(effects) == ["hp", "mood", "withheld-key-2"]
    withheld = "(withheld: looks like code)" if lang == "en" else "(코드로 보여 생략)"
    assert withheld in parts["mode"]
    assert any(withheld in r for r in doc["payload"]["activation_rules"])


def test_harmless_names_are_copied_as_they_are() -> None:
    m = Module({"name": "기분 추적기 (Mood Tracker) v2.1", "customModuleToggle":
                "show_hp=HP 표시 (beta)\nstyle=Style=select=밝게,어둡게\n",
                "trigger": [{"type": "output", "conditions": [
                    {"type": "var", "var": "기분", "value": "좋음", "operator": "="}],
                    "effect": [{"type": "setvar", "var": "turn.count", "value": "1"}]}]},
               source=SourceInfo("1_a.json", "json-module", 1, SHA))
    doc = project(m, lang="ko")
    assert doc["projection"]["title"] == "기분 추적기 (Mood Tracker) v2.1"
    parts = doc["payload"]["idea_layers"]["swappable_parts"]
    assert parts == {"show_hp": "체크박스 \u201cHP 표시 (beta)\u201d",
                     "style": "선택 \u201cStyle\u201d: 밝게, 어둡게"}
    assert list(doc["payload"]["state_effects"]) == ["turn.count"]
    assert "트리거 1은 채팅 변수 기분 = 좋음일 때에만 실행된다." in \
        doc["payload"]["activation_rules"]


def test_cli_project(tmp_path: Path) -> None:
    src = ROOT / "fixtures" / "sources" / "174678332_context-cutter.risum"
    env = {"PYTHONPATH": str(ROOT)}
    out = tmp_path / "doc.json"
    run = subprocess.run([sys.executable, "-m", "risutools", "project", str(src), "--lang", "ko",
                          "--notes", str(NOTES), "-o", str(out)], capture_output=True,
                         text=True, env=env)
    assert run.returncode == 0, run.stderr
    doc = json.loads(out.read_text("utf-8"))
    assert doc["projection"]["prompt_sha256"] == SEED["projection"]["prompt_sha256"]
    run2 = subprocess.run([sys.executable, "-m", "risutools", "project", str(src), "--lang",
                           "ko", "--notes", str(NOTES)], capture_output=True, text=True, env=env)
    assert run2.stdout == out.read_text("utf-8")  # byte-identical
    bad = tmp_path / "bad.yaml"
    bad.write_text("payload:\n  invariants: 3\n", encoding="utf-8")
    run3 = subprocess.run([sys.executable, "-m", "risutools", "project", str(src), "--notes",
                           str(bad)], capture_output=True, text=True, env=env)
    assert run3.returncode == 2 and "payload.invariants" in run3.stderr
    assert "Traceback" not in run3.stderr
