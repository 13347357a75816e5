"""One configuration object for every command, layered: defaults < the configuration file
(``.risutools.yaml`` / ``pyproject.toml [tool.risutools]``, or ``--config FILE``) < the
command line.  Each command is shown reading each layer: a setting changes what it
reports, and the command line changes it back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from harness import FIXTURES, SEED, SOURCES, run_cli

from risutools.analysis.checks.code import ra103 as RA103
from risutools.analysis.checks.fields import ra802 as RA802
from risutools.catalog.gates import digests as G4
from risutools.catalog.review_checks import orphan_approval as RV305
from risutools.catalog.review_checks import stale_approval as RV304
from risutools.catalog.review_checks import unmet_requirement as RV101
from risutools.contract.checks_load import mc000 as MC000
from risutools.contract.rules import mc401 as MC401
from risutools.contract.rules import mc600 as MC600
from risutools.contract.verify import mc202 as MC202
from risutools.errors import ConfigError
from risutools.settings.config import Settings, load_settings_file

NET = SOURCES / "182004771_net-summarizer.risum"


def _repo(tmp: Path, config: str | None = None) -> Path:
    """A folder that stops the configuration search (it holds .git)."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / ".git").mkdir(exist_ok=True)
    if config is not None:
        (tmp / ".risutools.yaml").write_text(config, encoding="utf-8")
    return tmp


def _config(tmp: Path, text: str) -> Settings:
    p = tmp / ".risutools.yaml"
    p.write_text(text, encoding="utf-8")
    return load_settings_file(p)


def _doc(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(SEED.read_text(encoding="utf-8"))
    for k, v in changes.items():
        doc["capabilities"][k] = v
    return doc


def _rules(out: str) -> list[tuple[str, str]]:
    """(rule, severity) of every finding in a JSON report of validate/verify/analyze."""
    data = json.loads(out)
    found = data["findings"] if isinstance(data, dict) and "findings" in data else [
        f for d in (data if isinstance(data, list) else [data])
        for f in d.get("findings", [])]
    return sorted((f["rule"], f["severity"]) for f in found)


# --------------------------------------------------------------------------- the object


def test_rules_take_ids_and_prefixes_the_longest_wins(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "rules: {RA: off, RA1: warning, RA103: error, MC4: 'off'}\n")
    assert cfg.severities[RA103.id] == "error"
    assert cfg.severities["RA101"] == "warning" and cfg.severities[RA802.id] == "off"
    assert cfg.severities[MC401.id] == "off" and MC600.id not in cfg.severities
    assert MC000.id not in cfg.severities  # unreadable input is never graded
    assert RV101.id not in cfg.severities  # a family no key names keeps its defaults


@pytest.mark.parametrize(("rules", "code", "words"), [
    ("{ZZ1: off}", "unknown-rule", "ZZ1"),
    ("{MC0: off}", "config-bad-value", "cannot be changed"),  # MC000/MC001: load
    (f"{{{G4.id}: off}}", "config-bad-value", "cannot be changed"),  # a gate is a verdict
    ("{R1: off}", "config-bad-value", "cannot be changed"),  # a replay invariant
    ("{RA1: loud}", "config-bad-value", "loud"),
    ("{RA1: on}", "config-bad-value", "boolean"),  # YAML 1.1: on is true
    ("[RA1]", "config-bad-value", "mapping"),
])
def test_bad_rules_are_refused_with_their_name(tmp_path: Path, rules: str, code: str,
                                               words: str) -> None:
    with pytest.raises(ConfigError) as err:
        _config(tmp_path, f"rules: {rules}\n")
    assert err.value.code == code and words in err.value.one_line()


def test_every_key_has_a_reader_and_others_are_refused(tmp_path: Path) -> None:
    from risutools.settings.schema import KEYS, SECTIONS

    assert set(SECTIONS) <= set(KEYS) and all(KEYS.values())
    with pytest.raises(ConfigError) as err:
        _config(tmp_path, "select: [MC2]\n")
    assert err.value.code == "config-unknown-key" and "'select'" in err.value.why


def test_the_command_line_layer(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "rules: {RA1: off, RA8: error}\nexclude: [a/*]\nsources: s\n")
    assert cfg.with_options() == cfg  # nothing given: nothing changes
    cli = cfg.with_options(select=["RA103,RA8"], exclude=["b/*"], sources=str(tmp_path / "o"),
                           promotion=True)
    assert RA103.id not in cli.severities  # selected on the command line: back at default
    assert cli.severities["RA101"] == "off" and cli.severities[RA802.id] == "error"
    assert cli.exclude == ("b/*",) and cli.promotion_gate
    assert cli.source_store() == tmp_path / "o"  # the user's word: not bound to the root
    with pytest.raises(ConfigError, match="ZZ9"):
        cfg.with_options(ignore=["ZZ9"])


def test_apply_drops_and_regrades(tmp_path: Path) -> None:
    from risutools.findings import Finding

    fs = [Finding(RA103.id, "warning", "a"), Finding(RA802.id, "warning", "b"),
          Finding("RA101", "warning", "c")]
    cfg = _config(tmp_path, f"rules: {{{RA103.id}: error, {RA802.id}: off}}\n")
    assert [(f.rule, f.severity) for f in cfg.apply(fs)] == [(RA103.id, "error"),
                                                             ("RA101", "warning")]
    got = cfg.with_options(ignore=["RA1"]).apply(fs)
    assert got == []


# --------------------------------------------------------------------------- per command


def test_validate_default_file_cli(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    (repo / "doc.json").write_text(json.dumps(_doc(requires=["hook.edit_request",
                                                             "zz.unknown_thing"])))
    (repo / "drafts").mkdir()
    (repo / "drafts" / "bad.json").write_text('{"contract": "matrix-component-v1"}')

    def rules(*args: str) -> list[tuple[str, str]]:
        r = run_cli("validate", str(repo), "-f", "json", *args, cwd=repo)
        assert r.returncode in (0, 1), r.stderr
        return _rules(r.stdout)

    default = rules()
    assert (MC401.id, "warning") in default and any(f[0] == "MC100" for f in default)
    (repo / ".risutools.yaml").write_text("rules: {MC401: error}\nexclude: ['drafts/*']\n")
    assert rules() == [(MC401.id, "error")]  # the file: graded, drafts skipped
    assert rules("--ignore", MC401.id) == []  # the command line over the file
    assert any(f[0] == "MC100" for f in rules("--exclude", "none/*"))  # replaces exclude:
    (repo / ".risutools.yaml").write_text("rules: {MC4: off}\nexclude: ['drafts/*']\n")
    assert rules() == []
    assert rules("--select", MC401.id) == [(MC401.id, "warning")]  # back, at its default
    other = tmp_path / "other.yaml"
    other.write_text("rules: {MC401: error}\n")
    assert (MC401.id, "error") in rules("--config", str(other))  # --config: that file only


def test_verify_default_file_cli(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    shutil.copy(SEED, repo / "doc.json")
    (repo / "store").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def run(*args: str) -> Any:
        return run_cli("verify", str(repo / "doc.json"), "-f", "json", *args, cwd=repo)

    r = run()
    assert r.returncode == 0 and MC202.id not in r.stdout  # no store: nothing checked
    (repo / ".risutools.yaml").write_text("sources: store\n")
    assert (MC202.id, "warning") in _rules(run().stdout)  # the file's store: not at hand
    (repo / ".risutools.yaml").write_text(f"sources: {elsewhere}\n")
    r = run()
    assert r.returncode == 2 and "config-sources-outside" in r.stderr
    assert (MC202.id, "warning") in _rules(run("--sources", str(elsewhere)).stdout)  # CLI wins
    (repo / ".risutools.yaml").write_text(f"sources: store\nrules: {{{MC202.id}: off}}\n")
    assert MC202.id not in run().stdout
    assert (MC202.id, "warning") in _rules(run("--select", MC202.id).stdout)


def test_analyze_default_file_cli(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    shutil.copy(NET, repo / NET.name)

    def run(*args: str) -> Any:
        return run_cli("analyze", NET.name, "-f", "sarif", *args, cwd=repo)

    def rules(*args: str) -> list[tuple[str, str]]:
        r = run(*args)
        assert r.returncode in (0, 1), r.stderr
        found = json.loads(r.stdout)["runs"][0]["results"]
        return sorted((x["ruleId"], x["level"]) for x in found
                      if x["ruleId"] in (RA103.id, RA802.id))

    assert rules() == [(RA103.id, "warning"), (RA802.id, "warning")]
    assert run().returncode == 1
    (repo / ".risutools.yaml").write_text(f"rules: {{{RA103.id}: error, RA8: off}}\n")
    assert rules() == [(RA103.id, "error")]
    assert rules("--select", "RA103,RA802") == [(RA103.id, "error"), (RA802.id, "warning")]
    (repo / ".risutools.yaml").write_text("rules: {RA: off}\n")
    assert rules() == [] and run().returncode == 0  # off: not reported, does not fail
    r = run_cli("analyze", NET.name, "-f", "json", cwd=repo)
    assert r.returncode == 0 and '"RA103"' not in r.stdout and '"RA802"' not in r.stdout
    other = tmp_path / "other.yaml"
    other.write_text("{}\n")
    assert len(rules("--config", str(other))) == 2
    (repo / ".risutools.yaml").write_text("rules: {RA: loud}\n")
    r = run()
    assert r.returncode == 2 and "config-bad-value" in r.stderr and "\n" not in r.stderr[:-1]


def test_ingest_default_file_cli(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    src = repo / "src"
    src.mkdir()
    for f in SOURCES.iterdir():
        shutil.copy(f, src / f.name)
    out = repo / "cat"
    out.mkdir()

    def ingest(*args: str) -> dict[str, str]:
        r = run_cli("ingest", str(src), "-o", str(out), "-q", "-j", "1", *args,
                    cwd=repo)
        assert r.returncode == 0, r.stderr
        docs = {p.name: p.read_text("utf-8") for p in out.glob("*.json")}
        for p in out.glob("*.json"):
            p.unlink()
        return docs

    def net(docs: dict[str, str]) -> str:
        [text] = [t for n, t in docs.items() if "net-summarizer" in n]
        return text

    default = ingest()
    assert RA103.id in net(default) and RA802.id in net(default)
    (out / ".risutools.yaml").write_text(f"rules: {{{RA802.id}: off}}\nexclude: ['18[45]*']\n")
    graded = ingest()
    assert RA103.id in net(graded) and RA802.id not in net(graded)
    assert len(graded) < len(default)  # the excluded sources are not projected
    assert not any("heroine" in n or "story" in n for n in graded)
    cli = ingest("--select", RA802.id, "--exclude", "nothing")
    assert RA802.id in net(cli) and RA103.id not in net(cli) and len(cli) == len(default)
    assert ingest() == graded  # the cache key carries the settings (no stale document)


def test_review_default_file_cli(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    cat = repo / "cat"
    cat.mkdir()
    (cat / "doc.json").write_text(json.dumps(_doc(requires=["zz.unknown_thing"])))
    (cat / "approvals").mkdir()
    rec = {"component_id": "module.risu.174678332.context-cutter", "component_version": "1.0.0",
           "action": "request_review", "reviewer": "kim", "at": "2026-01-01T00:00:00+00:00",
           "base_sha256": "sha256:" + "0" * 64, "note": ""}
    (cat / "approvals" / "a.yaml").write_text(json.dumps(rec))

    def rules(*args: str) -> list[tuple[str, str]]:
        r = run_cli("review", str(cat), "-q", "-f", "json", *args, cwd=repo)
        assert r.returncode in (0, 1), r.stderr
        data = json.loads(r.stdout)
        found = data["file_findings"] + [f for d in data["documents"] for f in d["findings"]]
        return sorted((f["rule"], f["severity"]) for f in found
                      if f["rule"] in (MC401.id, RV304.id, RV305.id))

    assert rules() == [(MC401.id, "warning"), (RV304.id, "warning")]
    (cat / ".risutools.yaml").write_text(f"rules: {{{MC401.id}: error, RV3: off}}\n")
    assert rules() == [(MC401.id, "error")]
    assert rules("--select", "RV304") == [(RV304.id, "warning")]
    assert rules("--ignore", "MC4") == []
    (cat / ".risutools.yaml").write_text("capabilities: [zz.unknown_thing]\n")
    assert rules() == [(RV304.id, "warning")]  # the configuration's names are known
    (cat / ".risutools.yaml").write_text("exclude: ['doc.json']\n")
    # the only document is not read: no verdict (its record alone, an orphan, is no review)
    left_out = run_cli("review", str(cat), "-q", "-f", "json", cwd=repo)
    assert left_out.returncode == 2 and "no-documents" in left_out.stderr
    assert rules("--exclude", "none") == [(MC401.id, "warning"), (RV304.id, "warning")]


def test_promote_and_approve_default_file_cli(tmp_path_factory: pytest.TempPathFactory,
                                               tmp_path: Path) -> None:
    from test_catalog_support import CUTTER, fresh_catalog

    cat = fresh_catalog(tmp_path_factory, tmp_path)
    r = run_cli("approve", CUTTER, "--action", "request_review", "--reviewer", "kim",
                "--catalog", str(cat), cwd=cat)
    assert r.returncode == 0, r.stderr

    def dry(*args: str) -> Any:
        return run_cli("promote", CUTTER, "--to", "pending_human_review", "--dry-run",
                       "--json", "--catalog", str(cat), *args, cwd=cat)

    r = dry()
    assert r.returncode == 0, r.stdout + r.stderr  # default + the catalog's sources:
    strict = tmp_path / "strict.yaml"
    (tmp_path / "signers").write_text("")
    strict.write_text(f"sources: {SOURCES}\ncatalog: {{allowed_signers: {tmp_path / 'signers'},"
                      " require_signatures: true}\n")
    r = dry("--config", str(strict))  # --config replaces the catalog's file
    assert r.returncode == 1, r.stdout
    failed = [g["gate"] for g in json.loads(r.stdout)["gates"] if g["verdict"] == "fail"]
    assert failed == ["approval"]  # the record is unsigned
    shutil.copy(strict, cat / ".risutools.yaml")  # the catalog's own file now requires them
    assert dry().returncode == 1
    relaxed = tmp_path / "relaxed.yaml"
    relaxed.write_text(f"sources: {SOURCES}\n")
    assert dry("--config", str(relaxed)).returncode == 0  # the command line's file wins
    (cat / ".risutools.yaml").write_text("catalog: {require_signatures: yes}\n")
    r = dry()  # a bad file is refused by every command, before anything runs
    assert r.returncode == 2 and "allowed_signers" in r.stderr


def test_replay_run_layers(tmp_path: Path) -> None:
    """defaults < the catalog configuration's replay: < the fixture's config < --config."""
    repo = _repo(tmp_path / "repo")
    shutil.copy(SEED, repo / "doc.json")
    fixture = FIXTURES / "replay" / "anchor-edit.yaml"  # sets max_context, not debounce

    def config(*args: str) -> dict[str, Any]:
        out = repo / "r.json"
        r = run_cli("replay", "run", str(repo / "doc.json"), "-x", str(fixture), "-o", str(out),
                    *args, cwd=repo)
        assert r.returncode in (0, 1), r.stderr
        result: dict[str, Any] = json.loads(out.read_text("utf-8"))["config"]
        return result

    assert config()["debounce"] == 5 and config()["max_context"] == 100  # default, fixture
    (repo / ".risutools.yaml").write_text("replay: {debounce: 7, max_context: 5000}\n")
    got = config()
    assert got["debounce"] == 7 and got["max_context"] == 100  # the file; the fixture over it
    keys = repo / "keys.json"
    keys.write_text(json.dumps({"debounce": 9, "max_context": 6000}))
    got = config("--config", str(keys))
    assert got["debounce"] == 9 and got["max_context"] == 6000  # the command line's file
    (repo / ".risutools.yaml").write_text("replay: {debounce: -1}\n")
    r = run_cli("replay", "run", str(repo / "doc.json"), "-x", str(fixture), cwd=repo)
    assert r.returncode == 2 and "debounce" in r.stderr


def test_the_configuration_page_documents_every_key(tmp_path: Path) -> None:
    from harness import ROOT

    from risutools.settings.config import KEYS

    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(" `") for line in text.splitlines()
            if line.startswith("| `")}
    assert rows == set(KEYS)
    block = text.split("## Keys", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "risu-store").mkdir()
    cfg = _config(tmp_path, block)
    assert cfg.severities[MC401.id] == "error" and cfg.severities[RA103.id] == "warning"
    assert cfg.severities["RA101"] == "off" and set(cfg.sections) == {"catalog", "replay"}


def test_project_and_ingest_write_the_same_documents(tmp_path: Path) -> None:
    """`project` reads the configuration as `ingest` does: for the same source and the same
    file (`--config`, or found above the source), byte-identical documents."""
    repo = _repo(tmp_path / "repo")
    src = repo / "src"
    src.mkdir()
    for f in SOURCES.iterdir():
        shutil.copy(f, src / f.name)
    config = tmp_path / "settings.yaml"
    config.write_text(f"rules: {{{RA802.id}: 'off', {RA103.id}: error}}\n", encoding="utf-8")
    cat = repo / "cat"
    cat.mkdir()
    r = run_cli("ingest", str(src), "-o", str(cat), "-q", "-j", "1", "--config", str(config),
                cwd=repo)
    assert r.returncode == 0, r.stderr
    ingested = {p.name: p.read_bytes() for p in cat.glob("*.json")}
    [net] = [n for n in ingested if "net-summarizer" in n]
    assert RA802.id.encode() not in ingested[net] and RA103.id.encode() in ingested[net]

    def project(source: Path, out: Path, *args: str) -> dict[str, bytes]:
        out.mkdir()
        r = run_cli("project", str(source), "-o", f"{out}/", *args, cwd=repo)
        assert r.returncode == 0, r.stderr
        return {p.name: p.read_bytes() for p in out.glob("*.json")}

    projected: dict[str, bytes] = {}
    for i, source in enumerate(sorted(src.iterdir())):
        projected.update(project(source, tmp_path / f"p{i}", "--config", str(config)))
    assert projected == ingested
    # the file found above the source, as `analyze` finds it; the command line over it
    shutil.copy(config, src / ".risutools.yaml")
    assert project(src / NET.name, tmp_path / "found") == {net: ingested[net]}
    [selected] = project(src / NET.name, tmp_path / "sel", "--select", RA802.id).values()
    assert RA802.id.encode() in selected and RA103.id.encode() not in selected
    (src / ".risutools.yaml").write_text("rules: {RA8: loud}\n", encoding="utf-8")
    r = run_cli("project", str(src / NET.name), cwd=repo)
    assert r.returncode == 2 and "config-bad-value" in r.stderr and r.stdout == ""


def test_the_schema_is_the_table_of_keys_and_a_real_json_schema(tmp_path: Path) -> None:
    """docs/configuration.md lists the keys the schema holds; the schema is a JSON Schema
    that accepts what the loader accepts and refuses a key nothing reads."""
    import jsonschema
    from referencing import Registry, Resource

    from risutools.resources import load_schema
    from risutools.settings.schema import KEYS, REPLAY_SCHEMA, SETTINGS_SCHEMA

    table = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text(
        encoding="utf-8").split("| key | read by |", 1)[1].split("\n\n", 1)[0]
    assert [row.split("`")[1] for row in table.splitlines()[2:]] == list(KEYS)
    registry: Registry = Registry().with_resources(
        [(s["$id"], Resource.from_contents(s)) for s in (SETTINGS_SCHEMA, REPLAY_SCHEMA)])
    check = jsonschema.Draft202012Validator(SETTINGS_SCHEMA, registry=registry)
    jsonschema.Draft202012Validator.check_schema(load_schema("settings-v1.schema.json"))
    good = {"capabilities": ["my.cap"], "rules": {"MC401": "error", "RA1": False},
            "sources": "store", "exclude": ["a/*"], "replay": {"max_context": 9000},
            "catalog": {"require_signatures": False}}
    assert list(check.iter_errors(good)) == []
    _config(tmp_path, json.dumps(good))  # the loader takes it too
    for bad in ({"select": ["MC2"]}, {"rules": {"MC401": "fatal"}},
                {"replay": {"max_context": 0}}, {"catalog": {"signers": "x"}}):
        assert list(check.iter_errors(bad)), bad
        with pytest.raises(ConfigError):
            _config(tmp_path, json.dumps(bad))
