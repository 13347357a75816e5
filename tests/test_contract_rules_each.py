"""Every rule MC100-MC600, one at a time: a change to the seed that makes exactly that rule
fire (with its pointer, severity and a message that says what to do), and a near miss that
keeps it quiet.  Expected values are written by hand from the spec's rule table."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from risutools.contract import ContractConfig, validate_document, validate_paths, verify_paths
from risutools.contract.rules import RULES

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"
FX = ROOT / "fixtures" / "contract"

Doc = dict[str, Any]


def seed() -> Doc:
    d: Doc = json.loads(SEED.read_text(encoding="utf-8"))
    return d


def set_status(d: Doc, status: str) -> None:
    d["provenance"]["review_status"] = status
    d["payload"]["idea_layers"]["lineage"]["promotion_status"] = status


# --------------------------------------------------------------------------- fire


def f_mc100(d: Doc) -> None:
    d["projection"]["flagship"] = "yes"


def f_mc101(d: Doc) -> None:
    d["payload"]["namespace"] = "risu.preset"


def f_mc102(d: Doc) -> None:
    d["payload"]["idea_layers"]["evidence"]["source_post"] = "174678333"


def f_mc103(d: Doc) -> None:
    d["payload"]["idea_layers"]["lineage"]["promotion_status"] = "approved"


def f_mc105(d: Doc) -> None:
    d["provenance"]["source_kind"] = "risu_hub"


def f_mc200(d: Doc) -> None:
    d["provenance"]["source_refs"][0]["sha256"] = "sha256:pending"


def f_mc201(d: Doc) -> None:
    d["projection"]["prompt"] += "!"


def f_mc300(d: Doc) -> None:
    d["provenance"]["static_analysis_only"] = False


def f_mc301(d: Doc) -> None:
    d["provenance"]["runtime_status"] = "quarantined"


def f_mc302(d: Doc) -> None:
    set_status(d, "rejected")
    d["provenance"]["runtime_status"] = "active"


def _publishable(d: Doc, status: str) -> None:
    set_status(d, status)
    d["provenance"].update(publishable=True, availability_verdict="available")
    d["projection"]["replay_status"] = "passed"


def f_mc303(d: Doc) -> None:
    _publishable(d, "approved")


def f_mc304(d: Doc) -> None:
    d["projection"]["replay_status"] = "failed"


def f_mc400(d: Doc) -> None:
    d["capabilities"]["requires"].append("Hook.Edit")


def f_mc401(d: Doc) -> None:
    d["capabilities"]["requires"].append("hook.unknown_thing")


def f_mc500(d: Doc) -> None:
    d["payload"]["triggers"].append("local n = getChatVar('anchor')")


def f_mc600(d: Doc) -> None:
    del d["payload"]["idea_layers"]["situation"]


FIRE: dict[str, tuple[Callable[[Doc], None], str, str]] = {
    # rule: (change, pointer, severity)
    "MC100": (f_mc100, "/projection/flagship", "error"),
    "MC101": (f_mc101, "/payload/namespace", "error"),
    "MC102": (f_mc102, "/payload/idea_layers/evidence/source_post", "error"),
    "MC103": (f_mc103, "/payload/idea_layers/lineage/promotion_status", "error"),
    "MC105": (f_mc105, "/provenance/source_kind", "warning"),
    "MC200": (f_mc200, "/provenance/source_refs/0/sha256", "error"),
    "MC201": (f_mc201, "/projection/prompt_sha256", "error"),
    "MC300": (f_mc300, "/provenance/static_analysis_only", "error"),
    "MC301": (f_mc301, "/provenance/runtime_status", "error"),
    "MC302": (f_mc302, "/provenance/runtime_status", "error"),
    "MC303": (f_mc303, "/provenance/publishable", "error"),
    "MC304": (f_mc304, "/provenance/availability_verdict", "error"),
    "MC400": (f_mc400, "/capabilities/requires/2", "error"),
    "MC401": (f_mc401, "/capabilities/requires/2", "warning"),
    "MC500": (f_mc500, "/payload/triggers/1", "error"),
    "MC600": (f_mc600, "/payload", "warning"),
}


@pytest.mark.parametrize("rule", sorted(FIRE))
def test_rule_fires_alone(rule: str) -> None:
    change, pointer, severity = FIRE[rule]
    d = seed()
    change(d)
    [f] = validate_document(d)
    assert (f.rule, f.pointer, f.severity) == (rule, pointer, severity)
    # one sentence: what is wrong; what to do
    what, _, fix = f.message.partition("; ")
    assert what and fix, f.message
    assert "\n" not in f.message


def test_mc201_message_gives_the_real_digest() -> None:
    d = seed()
    f_mc201(d)
    want = "sha256:" + hashlib.sha256(d["projection"]["prompt"].encode("utf-8")).hexdigest()
    [f] = validate_document(d)
    assert want in f.message


# --------------------------------------------------------------------------- quiet (near misses)


def q_mc100(d: Doc) -> None:
    d["x-curator"] = {"anything": [1, None]}  # extensions are allowed


def q_mc101(d: Doc) -> None:
    d["component_type"] = "preset"
    d["component_id"] = "preset.risu.174678332.context-cutter"
    d["payload"]["namespace"] = "risu.preset"


def q_mc102(d: Doc) -> None:
    del d["payload"]["idea_layers"]["evidence"]["source_post"]  # "when present"


def q_mc103(d: Doc) -> None:
    del d["payload"]["idea_layers"]["lineage"]  # "when present"


def q_mc105(d: Doc) -> None:
    d["provenance"]["source_kind"] = "risu_json_export"


def q_mc200(d: Doc) -> None:
    d["provenance"]["source_refs"][0]["sha256"] = "sha256:" + "ab" * 32


def q_mc201(d: Doc) -> None:
    d["projection"]["prompt"] = "새 프롬프트."
    d["projection"]["prompt_sha256"] = (
        "sha256:" + hashlib.sha256("새 프롬프트.".encode()).hexdigest())


def q_mc300(d: Doc) -> None:
    d["provenance"]["active_code_policy"] = "sandbox_replay_approved"
    d["provenance"]["static_analysis_only"] = False


def q_mc301(d: Doc) -> None:
    set_status(d, "rejected")
    d["provenance"]["runtime_status"] = "quarantined"


def q_mc302(d: Doc) -> None:
    set_status(d, "approved")
    d["provenance"]["runtime_status"] = "active"


def q_mc303(d: Doc) -> None:
    _publishable(d, "promoted")


def q_mc304(d: Doc) -> None:
    d["projection"]["replay_status"] = "stale"  # stale -> untested, as the seed says


def q_mc400(d: Doc) -> None:
    d["capabilities"]["conflicts"] = ["hook.edit_display"]


def q_mc401(d: Doc) -> None:
    d["capabilities"]["requires"].append("hook.unknown_thing")


def q_mc500(d: Doc) -> None:
    d["payload"]["triggers"].append(
        "editRequest 훅에서 getChatVar로 앵커를 읽는다 (Lua/CJS 본문은 싣지 않는다).")


def q_mc600(d: Doc) -> None:
    d["payload"]["invariants"] = d["payload"]["invariants"][:1]  # one is enough


QUIET: dict[str, Callable[[Doc], None]] = {
    "MC100": q_mc100, "MC101": q_mc101, "MC102": q_mc102, "MC103": q_mc103,
    "MC105": q_mc105, "MC200": q_mc200, "MC201": q_mc201, "MC300": q_mc300,
    "MC301": q_mc301, "MC302": q_mc302, "MC303": q_mc303, "MC304": q_mc304,
    "MC400": q_mc400, "MC401": q_mc401, "MC500": q_mc500, "MC600": q_mc600,
}
QUIET_CONFIG = {"MC401": ContractConfig(extra_capabilities=frozenset({"hook.unknown_thing"}))}


@pytest.mark.parametrize("rule", sorted(QUIET))
def test_rule_quiet_on_near_miss(rule: str) -> None:
    d = seed()
    QUIET[rule](d)
    assert validate_document(d, config=QUIET_CONFIG.get(rule)) == []


# --------------------------------------------------------------------------- catalog and verify


def test_mc104_fires_and_quiet(tmp_path: Path) -> None:
    a = seed()
    b = seed()
    (tmp_path / "a.json").write_text(json.dumps(a), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps(b), encoding="utf-8")
    r = validate_paths([tmp_path])
    [f] = r.findings
    assert (f.rule, f.file.rsplit("/", 1)[-1], f.pointer) == ("MC104", "b.json", "/component_id")
    assert "a.json" in f.message and "; " in f.message
    b["component_version"] = "1.0.1"
    (tmp_path / "b.json").write_text(json.dumps(b), encoding="utf-8")
    assert validate_paths([tmp_path]).findings == []


def test_mc202_fires_and_quiet() -> None:
    r = verify_paths([FX / "verify" / "mismatch.json"], FX / "store")
    assert [(f.rule, f.severity) for f in r.findings] == [("MC202", "error")]
    assert "; " in r.findings[0].message
    r = verify_paths([FX / "verify" / "card-module.json"], FX / "store")
    assert r.findings == [] and [v.status for v in r.verifications] == ["verified"]


def test_mc203_fires_and_quiet(tmp_path: Path) -> None:
    r = verify_paths([FX / "verify" / "stale-report.json"], FX / "store")
    assert [(f.rule, f.severity) for f in r.findings] == [("MC203", "error")]
    r = verify_paths([FX / "verify" / "verified.json"], FX / "store")
    assert r.findings == []
    # the report goes missing from replays/: MC203 fires again
    cat = tmp_path / "cat"
    shutil.copytree(FX / "verify", cat)
    for p in (cat / "replays").iterdir():
        p.unlink()
    r = verify_paths([cat / "verified.json"], FX / "store")
    assert [f.rule for f in r.findings] == ["MC203"]


def test_mc305_fires_and_quiet() -> None:
    r = validate_paths([FX / "catalog" / "components" / "forged.json"])
    assert [(f.rule, f.severity) for f in r.findings] == [("MC305", "error")]
    assert "; " in r.findings[0].message
    r = validate_paths([FX / "catalog" / "components" / "approved-cutter.json"])
    assert r.findings == []


def test_every_spec_rule_has_a_fire_and_a_quiet_case() -> None:
    spec_rules = {r for r in RULES if r not in ("MC000", "MC001")}
    separate = {"MC104", "MC202", "MC203", "MC305"}  # the tests just above
    assert set(FIRE) | separate == spec_rules
    assert set(QUIET) | separate == spec_rules
    for info in RULES.values():
        assert info.summary.endswith(".") and info.fix.endswith(".")


# --------------------------------------------------------------------------- "$" and "\n"


@pytest.mark.parametrize(("path", "rule"), [
    (("component_id",), "MC100"),
    (("component_version",), "MC100"),
    (("payload", "namespace"), "MC100"),
    (("projection", "tags", 0), "MC100"),
    (("provenance", "source_refs", 0, "source_id"), "MC100"),
    (("provenance", "source_refs", 0, "sha256"), "MC200"),
    (("projection", "prompt_sha256"), "MC200"),
    (("capabilities", "requires", 0), "MC400"),
])
def test_trailing_newline_is_not_accepted(path: tuple[Any, ...], rule: str) -> None:
    """Python's ``$`` matches before a final newline; the patterns must not."""
    d = seed()
    node: Any = d
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] += "\n"
    rules = {f.rule for f in validate_document(d)}
    assert rule in rules, rules
