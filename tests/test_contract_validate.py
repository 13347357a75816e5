"""validate_document / validate_paths / loaders: good input, bad input, rules, catalog rules."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from harness import ROOT, SEED

from risutools.commands.checks import every_check
from risutools.contract.loaders import load_bytes, load_documents
from risutools.contract.validate import RuleFilter, validate_document, validate_paths
from risutools.errors import ConfigError, DocumentError
from risutools.settings.config import Settings, load_settings
from risutools.values import MAX_DEPTH, MAX_DOCUMENT_BYTES

FX = ROOT / "fixtures" / "contract"


def seed() -> dict:
    return json.loads(SEED.read_text(encoding="utf-8"))


def rules_of(findings: list) -> list[str]:
    return sorted(f.rule for f in findings)


# --------------------------------------------------------------------------- the seed


def test_seed_is_fully_clean() -> None:
    assert validate_document(seed()) == []
    r = validate_paths([SEED])
    assert r.findings == [] and r.exit_code(strict=True) == 0


def test_seed_prompt_digest_really_matches() -> None:
    import hashlib

    d = seed()
    got = "sha256:" + hashlib.sha256(d["projection"]["prompt"].encode()).hexdigest()
    assert got == d["projection"]["prompt_sha256"]


def test_good_folder_yaml_ndjson_bom_all_clean() -> None:
    r = validate_paths([FX / "good"])
    assert r.findings == []
    assert len(r.documents) == 5  # yaml + 3 ndjson + bom.json
    assert [s.endswith("mkdocs.yml") for s in r.skipped] == [True]
    nd = [d for d in r.documents if d.file.endswith(".ndjson")]
    assert [d.line for d in nd] == [1, 2, 3]


def test_yaml_seed_hashes_like_json_seed() -> None:
    from risutools.canonical import doc_sha256

    y = load_documents(FX / "good" / "context-cutter.yaml").documents[0].doc
    assert doc_sha256(y) == doc_sha256(seed())


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("name", "line", "pointer", "words"),
    [
        ("not-json.json", 2, "", "not valid JSON"),
        ("dup-key.json", 5, "/payload/namespace", "duplicate key 'namespace'"),
        ("nan.json", 3, "/x-score", "NaN"),
        ("latin1.json", None, "", "byte offset 49"),
        ("utf16.json", None, "", "UTF-16"),
        ("empty.json", None, "", "empty file"),
        ("yaml-alias.yaml", 3, "", "alias *b"),
        ("yaml-python.yaml", 1, "/contract", "python/object"),
        ("yaml-binary.yaml", 2, "/blob", "binary"),
        ("yaml-set.yaml", 2, "/tags", "set"),
        ("yaml-dup.yaml", 4, "/payload/a", "duplicate key 'a' (first at line 3)"),
        ("yaml-nan.yaml", 2, "/x-score", "NaN"),
        ("yaml-intkey.yaml", 2, "", "not a string"),
        ("yaml-syntax.yaml", 2, "", "not valid YAML"),
    ],
)
def test_bad_file_is_one_mc000_finding(name: str, line: int | None, pointer: str,
                                       words: str) -> None:
    out = load_documents(FX / "bad" / name)
    assert out.documents == []
    assert len(out.problems) == 1
    p = out.problems[0]
    assert (p.rule, p.severity, p.line, p.pointer) == ("MC000", "error", line, pointer)
    assert words in p.message
    assert p.file is not None and p.file.endswith(name)


def test_latin1_offset_is_the_real_byte() -> None:
    data = (FX / "bad" / "latin1.json").read_bytes()
    assert data[49] == 0xE9


def test_ndjson_broken_line_others_still_validated() -> None:
    r = validate_paths([FX / "bad" / "broken-line.ndjson"])
    assert [d.line for d in r.documents] == [1, 3, 4]
    assert all(d.findings == [] for d in r.documents)
    [p] = r.file_findings
    assert (p.rule, p.line) == ("MC000", 2)
    assert r.exit_code() == 1


def test_ndjson_non_utf8_line_reports_file_offset(tmp_path: Path) -> None:
    good = json.dumps(seed(), ensure_ascii=False).encode()
    f = tmp_path / "c.ndjson"
    f.write_bytes(good + b"\n" + b'{"a": "\xff"}\n')
    out = load_documents(f)
    assert len(out.documents) == 1
    [p] = out.problems
    assert p.line == 2 and f"byte offset {len(good) + 1 + 7}" in p.message


def test_yaml_timestamp_stays_a_string() -> None:
    out = load_bytes(b"contract: matrix-component-v1\nat: 2025-01-02\n", "t.yaml", fmt="yaml")
    assert out.documents[0].doc["at"] == "2025-01-02"


def test_yaml_merge_key_refused() -> None:
    out = load_bytes(b"a: 1\n<<: {b: 2}\n", "m.yaml", fmt="yaml")
    assert out.problems and "merge key" in out.problems[0].message


def test_yaml_alias_bomb_refused_quickly() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 12):
        lines.append(f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join(
            [f"*{chr(96 + i)}"] * 9) + "]")
    out = load_bytes("\n".join(lines).encode(), "bomb.yaml", fmt="yaml")
    assert out.problems[0].rule == "MC000" and "alias" in out.problems[0].message


def test_deeply_nested_json_and_yaml_refused() -> None:
    deep = "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5)
    out = load_bytes(deep.encode(), "deep.json", fmt="json")
    assert "nested deeper" in out.problems[0].message
    very = "[" * 100_000 + "]" * 100_000
    out = load_bytes(very.encode(), "deeper.json", fmt="json")
    assert "nested deeper" in out.problems[0].message
    ydeep = "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, MAX_DEPTH + 5)) + \
        "  " * (MAX_DEPTH + 5) + "v\n"
    out = load_bytes(ydeep.encode(), "deep.yaml", fmt="yaml")
    assert "nested deeper" in out.problems[0].message
    out = load_bytes(("[" * 50_000).encode(), "deep2.yaml", fmt="yaml")
    assert out.problems and out.problems[0].rule == "MC000"


def test_huge_document_refused_without_reading_it(tmp_path: Path) -> None:
    f = tmp_path / "huge.json"
    with open(f, "wb") as fh:
        fh.truncate(MAX_DOCUMENT_BYTES + 1)
    out = load_documents(f)
    assert "bound" in out.problems[0].message


def test_huge_ndjson_line_skipped_others_kept(tmp_path: Path) -> None:
    good = json.dumps(seed(), ensure_ascii=False).encode()
    f = tmp_path / "big.ndjson"
    with open(f, "wb") as fh:
        fh.write(good + b"\n")
        fh.write(b'{"x": "' + b"a" * (MAX_DOCUMENT_BYTES + 10) + b'"}\n')
        fh.write(good + b"\n")
    out = load_documents(f)
    assert [d.line for d in out.documents] == [1, 3]
    assert out.problems[0].line == 2 and "bound" in out.problems[0].message


def test_unpaired_surrogate_refused() -> None:
    out = load_bytes(b'{"a": "\\ud800"}', "s.json", fmt="json")
    assert "surrogate" in out.problems[0].message


def test_huge_integer_is_a_finding_not_a_crash() -> None:
    out = load_bytes(b'{"a": ' + b"9" * 5000 + b"}", "i.json", fmt="json")
    assert out.problems and out.problems[0].rule == "MC000"


def test_stdin_json_and_ndjson_sniffed() -> None:
    one = json.dumps(seed(), ensure_ascii=False).encode()
    out = load_documents("-", stdin=io.BytesIO(one))
    assert len(out.documents) == 1 and out.documents[0].file == "-"
    out = load_documents("-", stdin=io.BytesIO(one + b"\n" + one + b"\n"))
    assert [d.line for d in out.documents] == [1, 2]
    y = (FX / "good" / "context-cutter.yaml").read_bytes()
    out = load_documents("-", stdin=io.BytesIO(y))
    assert out.documents[0].fmt == "yaml"


def test_missing_path_is_mc001_exit_2(tmp_path: Path) -> None:
    r = validate_paths([SEED, tmp_path / "nope.json"])
    assert [f.rule for f in r.file_findings] == ["MC001"]
    assert len(r.documents) == 1 and r.exit_code() == 2


def test_folder_without_documents_cannot_run(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("hi")
    with pytest.raises(DocumentError) as ei:
        validate_paths([tmp_path])
    assert ei.value.code == "no-documents"


# --------------------------------------------------------------------------- MC100


def test_schema_invalid_every_error_listed_with_pointers() -> None:
    r = validate_paths([FX / "bad" / "schema-invalid.json"])
    got = {(f.rule, f.pointer) for f in r.findings}
    want = {
        ("MC100", "/component_version"),
        ("MC100", "/component_type"),
        ("MC100", "/provenance"),  # publishable missing
        ("MC100", "/provenance/review_status"),
        ("MC100", "/capabilities/requires"),
        ("MC100", "/projection/tags"),  # duplicate
        ("MC100", "/projection/tags/0"),  # not kebab-case
        ("MC100", "/projection/flagship"),
        ("MC100", "/payload/colour"),
    }
    assert want <= got
    # the x- extension is allowed, and nothing else is reported
    assert not any("x-curator" in f.pointer for f in r.findings)
    assert got - want == set()
    missing = [f for f in r.findings if f.pointer == "/provenance"]
    assert "publishable" in missing[0].message
    # every finding has a line in the file
    assert all(f.line and f.line > 1 for f in r.findings)


def test_non_object_document() -> None:
    [f] = validate_document([1, 2])
    assert f.rule == "MC100" and "object" in f.message


def test_x_extension_keys_allowed_everywhere_known() -> None:
    d = seed()
    d["x-top"] = {"any": [1, 2]}
    d["provenance"]["x-note"] = "ok"
    d["projection"]["x-ui"] = True
    assert validate_document(d) == []


# --------------------------------------------------------------------------- rules


def test_rules_fixture_each_rule_fires_where_expected() -> None:
    r = validate_paths([FX / "bad" / "rules.json"])
    got = sorted((f.rule, f.pointer) for f in r.findings)
    assert got == sorted([
        ("MC101", "/payload/namespace"),
        ("MC102", "/payload/idea_layers/evidence/source_post"),
        ("MC103", "/payload/idea_layers/lineage/promotion_status"),
        ("MC200", "/provenance/source_refs/0/sha256"),
        ("MC201", "/projection/prompt_sha256"),
        ("MC300", "/payload/idea_layers/evidence/code_executed"),
        ("MC301", "/provenance/runtime_status"),
        ("MC302", "/provenance/runtime_status"),
        ("MC304", "/provenance/availability_verdict"),
        ("MC400", "/capabilities/conflicts/0"),
        ("MC400", "/capabilities/conflicts/1"),
        ("MC401", "/capabilities/conflicts/2"),
        ("MC500", "/payload/triggers/1"),
        ("MC600", "/payload"),
    ])
    sev = {f.rule: f.severity for f in r.findings}
    assert sev["MC401"] == "warning" and sev["MC600"] == "warning" and sev["MC201"] == "error"


@pytest.mark.parametrize("digest", [
    "sha256:pending", "sha256:" + "0" * 64, "TODO", "", "sha256:", "sha256:TODO",
    "sha256:" + "A" * 64, "sha256:" + "a" * 63, "0c95062f010a58321ec3b55fdf62c046537e28a3fb86472d"
    "3fb60d43bf567780", "sha256:" + "g" * 64,
])
def test_mc200_refuses_placeholders_and_bad_forms(digest: str) -> None:
    d = seed()
    d["provenance"]["source_refs"][0]["sha256"] = digest
    assert rules_of(validate_document(d)) == ["MC200"]


def test_mc102_source_key_h_form_and_non_risu_first_ref() -> None:
    d = seed()
    d["component_id"] = "module.risu.h0123456789ab.context-cutter"
    d["provenance"]["source_refs"][0]["source_id"] = "risu:h0123456789ab"
    d["payload"]["idea_layers"]["evidence"]["source_post"] = "h0123456789ab"
    assert validate_document(d) == []
    d["provenance"]["source_refs"][0]["source_id"] = "replay:x"
    assert rules_of(validate_document(d)) == ["MC102"]


def test_mc303_publishable_gate() -> None:
    d = seed()
    d["provenance"]["publishable"] = True
    fs = validate_document(d)
    assert rules_of(fs).count("MC303") == 3  # not promoted, replay not passed, not available
    assert "MC301" in rules_of(fs)
    d["provenance"].update(review_status="promoted", availability_verdict="available")
    d["payload"]["idea_layers"]["lineage"]["promotion_status"] = "promoted"
    d["projection"]["replay_status"] = "passed"
    assert rules_of(validate_document(d)) == []


def test_mc600_error_once_approved_and_under_gate() -> None:
    d = seed()
    del d["payload"]["invariants"]
    d["payload"]["idea_layers"]["core"]["core_idea"] = " "
    [f] = validate_document(d)
    assert (f.rule, f.severity) == ("MC600", "warning")
    assert "payload.invariants" in f.message and "core.core_idea" in f.message
    [f] = validate_document(d, config=Settings().with_promotion_gate())
    assert f.severity == "error"
    off = Settings(severities={"MC600": "off"})
    assert validate_document(d, config=off) == []
    # the gate cannot be configured away
    [f] = validate_document(d, config=off.with_promotion_gate())
    assert f.severity == "error"
    d["provenance"]["review_status"] = "approved"
    d["payload"]["idea_layers"]["lineage"]["promotion_status"] = "approved"
    assert [(f.rule, f.severity) for f in validate_document(d)] == [("MC600", "error")]


def test_mc105_unknown_source_kind_is_a_warning() -> None:
    d = seed()
    d["provenance"]["source_kind"] = "risu_hub"
    [f] = validate_document(d)
    assert (f.rule, f.severity) == ("MC105", "warning")


def test_config_extra_capabilities_and_severities() -> None:
    d = seed()
    d["capabilities"]["provides"].append("context.extra_local")
    [f] = validate_document(d)
    assert f.rule == "MC401" and f.severity == "warning"
    cfg = Settings(extra_capabilities=frozenset({"context.extra_local"}))
    assert validate_document(d, config=cfg) == []
    up = Settings(severities={"MC401": "error"})
    assert validate_document(d, config=up)[0].severity == "error"


def test_select_and_ignore_by_prefix() -> None:
    r = validate_paths([FX / "bad" / "rules.json"], rule_filter=RuleFilter(select=["MC3"]))
    assert {f.rule for f in r.findings} == {"MC300", "MC301", "MC302", "MC304"}
    r = validate_paths([FX / "bad" / "rules.json"], rule_filter=RuleFilter(ignore=["MC4", "MC600"]))
    assert not {f.rule for f in r.findings} & {"MC400", "MC401", "MC600"}
    with pytest.raises(ConfigError):
        RuleFilter(select=["XX1"])


def test_strict_makes_warnings_fail() -> None:
    d = seed()
    del d["payload"]["idea_layers"]["situation"]
    r = validate_paths([FX / "bad" / "rules.json"])
    assert r.exit_code() == 1
    r2 = validate_paths([FX / "good" / "context-cutter.yaml"])
    assert r2.exit_code(strict=True) == 0


# --------------------------------------------------------------------------- catalog rules


def test_mc104_duplicates_across_files(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(SEED.read_text(encoding="utf-8"), encoding="utf-8")
    line = json.dumps(seed(), ensure_ascii=False)
    (tmp_path / "b.ndjson").write_text(line + "\n" + line + "\n", encoding="utf-8")
    r = validate_paths([tmp_path])
    dup = [f for f in r.findings if f.rule == "MC104"]
    assert [(f.file.rsplit("/", 1)[-1], f.line) for f in dup] == [("b.ndjson", 1), ("b.ndjson", 2)]
    assert "a.json" in dup[0].message


def test_mc305_catalog_chain() -> None:
    r = validate_paths([FX / "catalog"], load_settings(FX / "catalog"))
    by_file = {d.file.rsplit("/", 1)[-1]: d for d in r.documents}
    assert by_file["approved-cutter.json"].findings == []
    assert by_file["candidate.json"].findings == []
    [f] = by_file["forged.json"].findings
    assert f.rule == "MC305" and "records no transition" in f.message


def copy_catalog(tmp_path: Path) -> Path:
    import shutil

    dst = tmp_path / "catalog"
    shutil.copytree(FX / "catalog", dst)
    return dst


def mc305_messages(cat: Path) -> list[str]:
    r = validate_paths([cat / "components" / "approved-cutter.json"])
    return [f.message for f in r.findings if f.rule == "MC305"]


def test_mc305_edit_after_transition(tmp_path: Path) -> None:
    cat = copy_catalog(tmp_path)
    p = cat / "components" / "approved-cutter.json"
    d = json.loads(p.read_text(encoding="utf-8"))
    d["projection"]["title"] += "!"
    p.write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
    [m] = mc305_messages(cat)
    assert "changed after its last recorded transition" in m


def test_mc305_tampered_approval(tmp_path: Path) -> None:
    cat = copy_catalog(tmp_path)
    a = cat / "approvals" / "0002-approve.yaml"
    a.write_text(a.read_text().replace("reviewer: kim", "reviewer: bot"))
    msgs = mc305_messages(cat)
    assert any("changed after it was recorded" in m for m in msgs)


def test_mc305_missing_approval_and_broken_log(tmp_path: Path) -> None:
    cat = copy_catalog(tmp_path)
    (cat / "approvals" / "0001-request_review.yaml").unlink()
    with open(cat / "transitions.ndjson", "a") as f:
        f.write("{broken\n")
    r = validate_paths([cat / "components"])
    msgs = [f.message for f in r.findings if f.rule == "MC305"]
    assert any("is missing" in m for m in msgs)
    assert any(f.file and f.file.endswith("transitions.ndjson") and f.line == 3
               for f in r.findings)


def test_mc305_skipped_chain_step(tmp_path: Path) -> None:
    cat = copy_catalog(tmp_path)
    t = cat / "transitions.ndjson"
    t.write_text(t.read_text().splitlines()[1] + "\n")
    assert any("expected 'candidate'" in m for m in mc305_messages(cat))


def test_mc305_no_catalog_at_all(tmp_path: Path) -> None:
    d = seed()
    d["provenance"]["review_status"] = "pending_human_review"
    d["payload"]["idea_layers"]["lineage"]["promotion_status"] = "pending_human_review"
    (tmp_path / ".git").mkdir()
    (tmp_path / "d.json").write_text(json.dumps(d), encoding="utf-8")
    r = validate_paths([tmp_path / "d.json"])
    assert [f.rule for f in r.findings] == ["MC305"]


# --------------------------------------------------------------------------- config


def test_config_yaml_and_pyproject(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.risutools]\ncapabilities = ["my.cap"]\nrules = { MC401 = "off" }\n')
    sub = tmp_path / "docs"
    sub.mkdir()
    cfg = load_settings(sub)
    assert cfg.extra_capabilities == {"my.cap"} and cfg.severities == {"MC401": "off"}
    (tmp_path / ".risutools.yaml").write_text("sources: store\nexclude: ['drafts/*']\n")
    cfg = load_settings(sub)
    assert cfg.sources == (tmp_path / "store").resolve() and cfg.exclude == ("drafts/*",)


@pytest.mark.parametrize("text", [
    "colour: red\n", "rules: {MC999: error}\n", "rules: {MC401: loud}\n",
    "capabilities: [Bad-Name]\n", "rules: {MC000: off}\n", "[1, 2]\n", "sources: 3\n",
    "contract: [unclosed\n",
])
def test_bad_config_is_config_error(tmp_path: Path, text: str) -> None:
    from risutools.settings.config import load_settings_file

    p = tmp_path / ".risutools.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as ei:
        load_settings_file(p)
    assert "\n" not in ei.value.one_line()


def test_a_section_nothing_reads_is_refused_by_name(tmp_path: Path) -> None:
    from risutools.settings.config import load_settings_file

    p = tmp_path / ".risutools.yaml"
    p.write_text("ingest: {workers: 2}\n")
    with pytest.raises(ConfigError) as ei:
        load_settings_file(p)
    assert ei.value.code == "config-unknown-key" and "'ingest'" in ei.value.why
    p.write_text("catalog: {require_signatures: false}\nreplay: {max_context: 900}\n")
    assert set(load_settings_file(p).sections) == {"catalog", "replay"}


@pytest.mark.parametrize(("text", "want"), [("off", "off"), ("no", "off"), ("false", "off"),
                                            ("'off'", "off"), ("warning", "warning")])
def test_yaml_11_booleans_in_rules_are_understood(tmp_path: Path, text: str, want: str) -> None:
    from risutools.settings.config import load_settings_file

    p = tmp_path / ".risutools.yaml"
    p.write_text(f"rules:\n  MC105: {text}\n")
    assert load_settings_file(p).severities == {"MC105": want}


@pytest.mark.parametrize("text", ["on", "yes", "true"])
def test_yaml_11_true_in_rules_is_refused_with_the_fix(tmp_path: Path, text: str) -> None:
    from risutools.settings.config import load_settings_file

    p = tmp_path / ".risutools.yaml"
    p.write_text(f"rules:\n  MC105: {text}\n")
    with pytest.raises(ConfigError) as ei:
        load_settings_file(p)
    assert ei.value.code == "config-bad-value" and "write error or warning" in ei.value.why


def test_every_rule_documented() -> None:
    doc = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    rules = [c for c in every_check().values() if c.family == "MC"]
    assert len(rules) == 24
    for info in rules:
        assert f"| {info.id} | {info.severity} |" in doc, info.id


def test_validate_document_does_not_mutate() -> None:
    d = seed()
    before = copy.deepcopy(d)
    validate_document(d)
    assert d == before


@pytest.mark.parametrize(("value", "kind"), [([1, 2], "an array"), ("text", "a string"),
                                             (3, "an integer"), (None, "null")])
def test_non_object_document_says_json_type(value: object, kind: str) -> None:
    [f] = validate_document(value)
    assert f.rule == "MC100" and f.message.startswith(f"the document is {kind}, not a JSON object;")


def test_config_capability_with_trailing_newline_refused(tmp_path: Path) -> None:
    from risutools.settings.config import load_settings_file

    p = tmp_path / ".risutools.yaml"
    p.write_text('capabilities: ["my.cap\\n"]\n')
    with pytest.raises(ConfigError):
        load_settings_file(p)


def test_schema_has_id_and_every_property_is_described() -> None:
    schema = json.loads((ROOT / "schemas" / "matrix-component-v1.schema.json").read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith("/matrix-component-v1.schema.json")
    missing = []

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            for name, sub in node.get("properties", {}).items():
                if not (sub.get("description") or sub.get("title")):
                    missing.append(f"{where}/{name}")
            for k, v in node.items():
                walk(v, f"{where}/{k}")
        elif isinstance(node, list):
            for v in node:
                walk(v, where)

    walk(schema, "")
    assert missing == []


def test_wheel_ships_the_schema() -> None:
    """pyproject maps schemas/ into the package, where resources looks first."""
    from risutools import resources

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    py = tomllib.loads((ROOT / "pyproject.toml").read_text())
    force = py["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert force["schemas"] == "risutools/schemas"
    assert resources.schemas_dir().name == "schemas"
    assert (resources.schemas_dir() / "matrix-component-v1.schema.json").is_file()


@pytest.mark.parametrize(("text", "code", "name"), [
    ("replay: {max_tokens: 5}\n", "config-unknown-key", "max_tokens"),
    ("replay: {max_context: -1}\n", "config-bad-value", "max_context"),
    ("catalog: {allowed_signer: x}\n", "config-unknown-key", "allowed_signer"),
    ("catalog: {require_signatures: maybe}\n", "config-bad-value", "require_signatures"),
])
def test_sections_are_validated_when_the_configuration_is_loaded(
        tmp_path: Path, text: str, code: str, name: str) -> None:
    """A typo in a section another command reads is refused by every command (validate
    here), one line naming it."""
    from harness import run_cli

    (tmp_path / ".risutools.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "a.json").write_bytes(SEED.read_bytes())
    r = run_cli("validate", "a.json", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "", r
    assert r.stderr.count("\n") == 1 and code in r.stderr and name in r.stderr, r.stderr


# --------------------------------------------------------------------------- selection


def test_a_rule_left_out_by_select_or_ignore_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """--select/--ignore leave a rule out before it runs, not after its findings are made:
    a rule the filter does not keep is never called (MC100 still runs when MC600 does)."""
    import risutools.contract.validate as v

    called: list[str] = []

    def spy(rule: str, fn):  # type: ignore[no-untyped-def]
        def run(doc, cfg):  # type: ignore[no-untyped-def]
            called.append(rule)
            return fn(doc, cfg)
        return rule, run

    monkeypatch.setattr(v, "DOCUMENT_RULES", tuple(spy(r, f) for r, f in v.DOCUMENT_RULES))
    doc = seed()
    every = [r for r, _ in v.DOCUMENT_RULES]
    for select, ignore, ran in [
        ((), (), every),
        (("MC100",), (), ["MC100"]),
        (("MC600",), (), ["MC100", "MC600"]),  # (MC600 is silent where the schema fails)
        (("MC5",), (), ["MC500"]),
        ((), ("MC600",), [r for r in every if r != "MC600"]),
        # (MC100 runs for MC600's sake, its findings not kept)
        ((), ("MC1",), ["MC100"] + [r for r in every if not r.startswith("MC1")]),
        ((), ("MC1", "MC600"), [r for r in every if r[:3] not in ("MC1", "MC6")]),
    ]:
        called.clear()
        validate_document(doc, keep=RuleFilter(select, ignore).keep, every_rule=True)
        assert called == ran, (select, ignore)
    called.clear()
    validate_document(doc, every_rule=True)  # (no filter: every rule)
    assert called == every


def test_select_and_ignore_find_what_the_whole_run_kept() -> None:
    """The findings of a filtered run are those of the whole run its filter keeps, on a
    document with findings of many rules, one that fails the schema (MC600 then silent,
    MC100 not selected) and one that does not (MC600 speaks)."""
    broken = json.loads((FX / "bad" / "rules.json").read_text(encoding="utf-8"))
    schema_bad = json.loads((FX / "bad" / "schema-invalid.json").read_text(encoding="utf-8"))
    thin = seed()
    thin["payload"]["invariants"] = []
    both = copy.deepcopy(thin)  # (narrative incomplete and the schema failed: MC600 silent)
    both["component_version"] = 1
    docs = [broken, schema_bad, thin, both]
    whole = [validate_document(d) for d in docs]
    assert "MC600" in rules_of(whole[2]) and "MC100" not in rules_of(whole[2])
    assert "MC100" in rules_of(whole[3]) and "MC600" not in rules_of(whole[3])
    for select, ignore in [(("MC600",), ()), (("MC100",), ()), ((), ("MC600",)),
                           ((), ("MC100",)), (("MC1", "MC6"), ("MC101",)), (("MC4",), ())]:
        flt = RuleFilter(select, ignore)
        for d, w in zip(docs, whole, strict=True):
            assert validate_document(d, keep=flt.keep) == [f for f in w if flt.keep(f.rule)]


def test_a_run_without_a_filter_finds_what_a_filter_keeping_everything_finds() -> None:
    """No filter (no rule asked whether it is kept) and a filter that keeps every rule
    (each asked) give the same findings, on documents with findings of many rules."""
    assert RuleFilter().keeps_all
    assert not RuleFilter(["MC2"]).keeps_all and not RuleFilter((), ["MC2"]).keeps_all
    paths = [FX / "bad" / "rules.json", FX / "bad" / "schema-invalid.json", SEED]
    whole = validate_paths(paths)
    every = validate_paths(paths, rule_filter=RuleFilter(["MC"]))
    assert whole.findings and whole.findings == every.findings


def test_the_preconditions_are_asked_only_where_one_of_their_rules_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``quiet_rules`` reads a document for MC101-MC401; a selection that runs none of them
    does not ask it (and finds what the whole run keeps), one that runs any does."""
    import risutools.contract.validate as v

    asked: list[int] = []
    real = v.quiet_rules

    def counted(doc: dict) -> set[str]:  # type: ignore[type-arg]
        asked.append(1)
        return real(doc)

    monkeypatch.setattr(v, "quiet_rules", counted)
    doc = json.loads((FX / "bad" / "rules.json").read_text(encoding="utf-8"))
    whole = validate_document(doc)
    assert asked
    for select, ask in [(("MC100",), False), (("MC5", "MC6"), False), (("MC2",), True),
                        (("MC4",), True), (("MC101",), True), ((), True)]:
        asked.clear()
        flt = RuleFilter(select)
        assert validate_document(doc, keep=flt.keep) == [f for f in whole if flt.keep(f.rule)]
        assert bool(asked) is ask, select


def test_the_prose_is_looked_at_only_where_mc500_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader's test of the documents' prose (for MC500) runs only where MC500 does; the
    findings are those of the whole run the filter keeps."""
    import risutools.contract.loaders as loaders

    asked: list[int] = []
    real = loaders.known_prose

    def counted(*a: Any, **k: Any) -> bool:
        asked.append(1)
        return real(*a, **k)

    monkeypatch.setattr(loaders, "known_prose", counted)
    paths = [FX / "bad" / "rules.json", SEED]
    whole = validate_paths(paths).findings
    assert asked and "MC500" in rules_of(whole)
    for select, ignore, ask in [(("MC5",), (), True), ((), ("MC500",), False),
                                (("MC1", "MC6"), (), False), (("MC500", "MC2"), (), True)]:
        asked.clear()
        flt = RuleFilter(select, ignore)
        got = validate_paths(paths, rule_filter=flt).findings
        assert got == [f for f in whole if flt.keep(f.rule)], (select, ignore)
        assert bool(asked) is ask, (select, ignore)
