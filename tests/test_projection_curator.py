"""Documents a curator can use (issue 11 item 8), each on fixtures of the project's own
(``fixtures/projection/``), positive and negative: one component for one card in two
containers, titles never taken from a pattern or code, slugs romanized without emoji or
versions, Korean particles chosen by the word before them, findings stated by id, count
and location."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from harness import FIXTURES, run_cli

from risutools.formats import read_path
from risutools.formats.model import Module, SourceInfo
from risutools.projection import project
from risutools.projection.identity import content_identity, without_container
from risutools.projection.naming import LEADING_FALLBACK

HERE = FIXTURES / "projection"
CARD = HERE / "lantern-card.card.json"
EDITED = HERE / "lantern-card-edited.card.json"
LANGS = ("en", "ko")


def charx_of(card_json: Path, target: Path) -> Path:
    """The same card in a .charx: its card.json is the export's bytes."""
    with zipfile.ZipFile(target, "w") as z:
        z.writestr("card.json", card_json.read_bytes())
    return target


def one(path: Path, lang: str = "en") -> dict[str, Any]:
    (m,) = read_path(str(path))
    return project(m, lang=lang)


def walk_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *walk_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in walk_strings(v)]
    return []


# -- one card, two containers ------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_card_export_and_charx_are_one_component(tmp_path: Path, lang: str) -> None:
    from_json = one(CARD, lang)
    from_charx = one(charx_of(CARD, tmp_path / "lantern.charx"), lang)
    assert from_json["component_type"] == "character"
    assert from_json["component_id"] == from_charx["component_id"]
    # the container still shows where it must: the file digest and the source version
    refs = [d["provenance"]["source_refs"][0] for d in (from_json, from_charx)]
    assert refs[0]["sha256"] != refs[1]["sha256"]
    assert (refs[0]["source_version"], refs[1]["source_version"]) == (
        "card.json", "lantern.charx!card.json")
    assert from_json != from_charx
    assert without_container(from_json) == without_container(from_charx)
    # a card's own content is controlled by the character, whatever carried it
    assert from_json["payload"]["controller"] == from_charx["payload"]["controller"] == \
        "character"


def test_card_identity_is_its_content_not_its_bytes(tmp_path: Path) -> None:
    (a,) = read_path(str(CARD))
    (b,) = read_path(str(charx_of(CARD, tmp_path / "x.charx")))
    (edited,) = read_path(str(EDITED))
    assert content_identity(a) == content_identity(b) is not None
    # one condition value changed: another component
    assert content_identity(edited) != content_identity(a)
    assert one(EDITED)["component_id"] != one(CARD)["component_id"]
    # the same card bytes re-indented are the same content
    again = tmp_path / "again.card.json"
    again.write_text(json.dumps(json.loads(CARD.read_text("utf-8")), indent=4), "utf-8")
    assert one(again)["component_id"] == one(CARD)["component_id"]
    # a post id in the file name still wins over the content
    named = tmp_path / "555_lantern.card.json"
    named.write_bytes(CARD.read_bytes())
    assert one(named)["component_id"] == "character.risu.555.deungbul-kadeu"


def test_module_and_preset_identity_unchanged() -> None:
    preset = Module({"name": "P"}, component_type="preset")
    assert content_identity(preset) is None  # a preset's file is its identity
    assert content_identity(Module({"name": "no id"})) is None
    assert content_identity(Module({"name": "m", "id": "x"})) is not None


def test_ingest_keeps_one_component_for_the_card_in_two_containers(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "lantern.card.json").write_bytes(CARD.read_bytes())
    charx_of(CARD, src / "lantern.charx")
    (src / "edited.card.json").write_bytes(EDITED.read_bytes())
    out = tmp_path / "catalog"
    run = run_cli("ingest", src, "-o", out, "-q", "--no-cache", "-j", "1")
    assert run.returncode == 0, run.stderr
    docs = sorted(p.name for p in out.glob("*.json"))
    assert len(docs) == 2, docs  # the card once, the edited card once
    assert "id-collision" not in run.stdout + run.stderr


# -- titles ------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", ["title-pattern.module.json", "title-code.module.json"])
def test_title_never_from_a_pattern_or_code(name: str, lang: str) -> None:
    doc = one(HERE / name, lang)
    (m,) = read_path(str(HERE / name))
    title = doc["projection"]["title"]
    assert title.startswith("Unnamed module h" if lang == "en" else "이름 없는 모듈 h")
    strings = walk_strings(doc)
    assert not any(m.name in s for s in strings)  # nor anywhere else
    assert doc["component_id"].split(".")[-1].startswith("m")  # nor the slug
    assert doc["component_version"] == "1.0.0"


@pytest.mark.parametrize("lang", LANGS)
def test_title_is_the_name_when_it_is_prose(lang: str) -> None:
    doc = one(HERE / "title-prose.module.json", lang)
    assert doc["projection"]["title"] == "📊 상태창 3.0"
    assert doc["projection"]["prompt"].startswith("📊 상태창 3.0: ")


# -- slugs and versions ------------------------------------------------------------------

def test_korean_slug_is_romanized_without_emoji_or_version() -> None:
    card = one(CARD)
    assert card["component_id"].endswith(".deungbul-kadeu")
    assert card["component_version"] == "2.1.0"
    prose = one(HERE / "title-prose.module.json")
    assert prose["component_id"].endswith(".sangtaechang")
    assert prose["component_version"] == "3.0.0"
    for doc in (card, prose):
        slug = doc["component_id"].rsplit(".", 1)[1]
        assert slug.isascii() and not any(ch.isdigit() for ch in slug)


def test_slug_keeps_a_latin_name_and_a_name_without_version() -> None:
    m = Module({"name": "등불 (Harbour Lantern)", "id": "x"})
    doc = project(m)
    assert doc["component_id"].endswith(".harbour-lantern")
    assert doc["component_version"] == "1.0.0"  # no version in the name


@pytest.mark.parametrize(("name", "slug", "version"), [
    ("🔦시점 선택지1.5", "sijeom-seontaegji", "1.5.0"),  # glued to Hangul: still a version
    ("상태창 V1.3-3.0.0 팝오버", "sangtaechang-pabobeo", "3.0.0"),  # the last one wins
    ("상태창 fix2", "sangtaechang-fix2", "1.0.0"),  # no dot, no v: not a version
    ("Board abc1.2", "board-abc1-2", "1.0.0"),  # glued to a Latin word: part of the name
])
def test_version_numbers_leave_the_slug(name: str, slug: str, version: str) -> None:
    doc = project(Module({"name": name, "id": "x"}))
    assert doc["component_id"].rsplit(".", 1)[1] == slug
    assert doc["component_version"] == version


# -- Korean particles --------------------------------------------------------------------

def test_particles_follow_the_trigger_number() -> None:
    rules = one(CARD, "ko")["payload"]["activation_rules"]
    assert rules[0].startswith("트리거 1은 ")
    assert rules[1].startswith("트리거 2는 ")
    many = Module({"name": "n", "trigger": [
        {"type": "output", "conditions": [{"type": "var", "var": "v", "value": "1",
                                           "operator": "="}], "effect": []}] * 10})
    got = [r.split(" ", 2)[1] for r in project(many, lang="ko")["payload"]["activation_rules"]
           if r.startswith("트리거")]
    assert got == ["1은", "2는", "3은", "4는", "5는", "6은", "7은", "8은", "9는", "10은"]


def _ko_documents(tmp_path: Path) -> list[dict[str, Any]]:
    paths = [*sorted(HERE.glob("*.json")), *sorted((FIXTURES / "sources").iterdir())]
    docs = []
    for p in paths:
        if p.suffix == ".md":
            continue
        docs.extend(project(m, lang="ko") for m in read_path(str(p)))
    return docs


def test_no_fallback_particle_in_any_generated_korean_sentence(tmp_path: Path) -> None:
    docs = _ko_documents(tmp_path)
    assert len(docs) >= 12
    for doc in docs:
        for s in walk_strings(doc["payload"]) + walk_strings(doc["projection"]):
            assert "(는)" not in s and "(가)" not in s and "(를)" not in s, s


def test_a_copied_value_is_never_rewritten() -> None:
    """The particle fix applies to the document's own words, not to the module's text: a
    label that itself says ``은(는)`` is copied as it is."""
    m = Module({"name": "n", "customModuleToggle": "a=표시은(는) 켜기\n"})
    parts = project(m, lang="ko")["payload"]["idea_layers"]["swappable_parts"]
    assert parts == {"a": "체크박스 \u201c표시은(는) 켜기\u201d"}
    assert LEADING_FALLBACK.match("은(는) x") and not LEADING_FALLBACK.match("x 은(는)")


# -- findings ----------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_document_states_the_findings_that_matter(lang: str) -> None:
    doc = one(HERE / "title-prose.module.json", lang)
    rules = [r for r in doc["payload"]["activation_rules"] if "RA1" in r]
    assert len(rules) == 2
    ra101, ra103 = rules
    assert "RA101" in ra101 and "privileged-without-lla" in ra101
    assert "RA103" in ra103 and "trigger[0].effect[0] line 2, trigger[0].effect[0] line 3" \
        in ra103
    assert ("2 at" in ra103) if lang == "en" else ("2건" in ra103)
    text = json.dumps(doc, ensure_ascii=False)
    for code in ("request(", "https://example.com", "function onStart", "[\\\\s\\\\S]"):
        assert code not in text, code


def test_quiet_module_states_no_finding() -> None:
    for path in (CARD, HERE / "title-pattern.module.json"):
        rules = one(path)["payload"]["activation_rules"]
        assert not any(r.startswith("Static analysis finding") for r in rules), rules
    # info findings (a bundler's require stubs) are not stated
    m = Module({"name": "n", "trigger": [{"type": "start", "conditions": [], "effect": [
        {"type": "triggerlua", "code": "local a = require('./a')\n"}]}]})
    rules = project(m)["payload"]["activation_rules"]
    assert not any("RA111" in r for r in rules)


def test_fixtures_are_read_without_anomalies() -> None:
    for p in sorted(HERE.glob("*.json")):
        (m,) = read_path(str(p))
        assert m.anomalies == [], (p.name, m.anomalies)
        assert isinstance(m.source, SourceInfo)
