"""Bad input, the replay commands, the report files and ``--update``."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from harness import FIXTURES, ROOT, SEED, run_cli

from risutools.errors import ConfigError, RisuError, UsageError, WriteConflict
from risutools.replay.fixture import parse_fixture_bytes
from risutools.replay.run import verify_report_hash
from risutools.settings.replay import build_config

FIX = FIXTURES / "replay"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd or ROOT)


# ---- bad fixtures and configurations ---------------------------------------------


def fx(text: str, name: str = "f.yaml") -> Any:
    return parse_fixture_bytes(text.encode(), name)


HEAD = "fixture: conversation-v1\nname: t\n"


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (
            "turns:\n  - edit: {id: m99, content: x}\n",
            "turn 1: edit: unknown-id: no message with id m99",
        ),
        (
            "messages: [{role: user, content: a}]\nturns:\n  - {}\n  - delete: {id: m1}\n",
            "turn 2: delete: unknown-id: no message with id m1",
        ),
        ("turns:\n  - append: [{role: narrator, content: a}]\n", "unknown role 'narrator'"),
        ("turns:\n  - append: [{role: user}]\n", "content must be a string"),
        ("turns: []\n", "no turns"),
        ("turns:\n  - shout: true\n", "unknown operation 'shout'"),
        ("turns:\n  - toggle: 1\n", "toggle: bad-fixture: must be true or false"),
        ("turns:\n  - metrics: {age_s: -1}\n", "age_s: bad-fixture: must be a number"),
        (
            "messages: [{id: a, role: user, content: x}, {id: a, role: user, content: y}]\n"
            "turns: [{}]\n",
            "duplicate message id 'a'",
        ),
        # m1 is generated for the second message; an explicit m1 later collides
        (
            "messages: [{id: s, role: system, content: x}, {role: user, content: y}]\n"
            "turns:\n  - append: [{id: m1, role: user, content: z}]\n",
            "duplicate message id 'm1'",
        ),
        (
            "turns:\n  - delete: {id: m0}\n  - edit: {id: m0, content: x}\n".replace(
                "turns:", "messages: [{role: user, content: a}]\nturns:"
            ),
            "turn 2: edit: unknown-id: no message with id m0",
        ),
    ],
)
def test_bad_fixture_one_clear_line(body: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as exc:
        fx(HEAD + body)
    line = exc.value.one_line()
    assert fragment in line and "\n" not in line and line.startswith("f.yaml: ")


def test_ids_assigned_by_order_of_appearance() -> None:
    f = fx(
        HEAD + "messages: [{id: s0, role: system, content: a}, {role: user, content: b}]\n"
        "turns:\n  - append: [{role: assistant, content: c}, {id: x, role: tool, content: d},"
        " {role: user, content: e}]\n"
    )
    assert [m.id for m in f.messages] == ["s0", "m1"]
    assert [m.id for m in f.turns[0].append] == ["m2", "x", "m4"]


def test_ndjson_fixture_and_bad_line() -> None:
    good = (
        '{"fixture": "conversation-v1", "name": "n", '
        '"messages": [{"role": "user", "content": "a"}]}\n'
        "\n"
        '{"append": [{"role": "assistant", "content": "b"}]}\n'
        '{"edit": {"id": "m0", "content": "c"}}\n'
    )
    f = fx(good, "c.ndjson")
    assert len(f.turns) == 2 and f.turns[1].edit == [("m0", "c")]
    with pytest.raises(ConfigError, match="line 4: bad-fixture: not valid JSON"):
        fx(good.replace('{"edit"', "{edit"), "c.ndjson")
    with pytest.raises(ConfigError, match="empty file"):
        fx("\n\n", "c.ndjson")


@pytest.mark.parametrize(
    ("line", "why"),
    [
        # orjson would keep the second "append": the line is refused, as json's hook does
        ('{"append": [], "append": [{"role": "user", "content": "b"}]}',
         "line 3: bad-fixture: duplicate key 'append': a key may appear once per object"),
        ('{"append": [{"role": "user", "content": "a", "content": "b"}]}',
         "line 3: bad-fixture: duplicate key 'content'"),
        ('{"append": [{"role": "user", "content": "a", "c\\u006fntent": "b"}]}',
         "line 3: bad-fixture: duplicate key 'content'"),
        ('{"metrics": {"used_pct": NaN}}',
         "line 3: bad-fixture: NaN is not a JSON number"),
        # 1e999 reads as an infinity: refused as JSON, where it is
        ('{"metrics": {"used_pct": 1e999}}',
         "line 3: bad-fixture: 1e999 is out of a JSON number's range"),
        ('{"append": ' + "[" * 70 + "]" * 70 + "}", "line 3: bad-fixture: nested deeper than"),
        ('{"append": []} {"append": []}', "line 3: bad-fixture: not valid JSON: Extra data"),
        # (U+2028 in a string is text, not the end of a line: test_replay_hostile45.py)
    ],
)
def test_ndjson_refusals_name_the_line(line: str, why: str) -> None:
    head = '{"fixture": "conversation-v1", "name": "n"}\n\n'
    with pytest.raises(ConfigError) as exc:
        fx(head + line + "\n", "c.ndjson")
    assert why in str(exc.value), str(exc.value)
    # the line alone is a fine turn once the problem is gone
    assert len(fx(head + '{"append": []}\n', "c.ndjson").turns) == 1


def test_empty_history_is_fine() -> None:
    from risutools.replay.run import replay_cutter

    f = fx(HEAD + "turns: [{}, {toggle: false}]\n")
    run = replay_cutter(f, build_config())
    assert [r["tokens_out"] for r in run.rows] == [0, 0]
    assert run.checker is not None and run.checker.failed() == []


@pytest.mark.parametrize(
    ("layer", "fragment"),
    [
        ({"max_context": -5}, "max_context: must be an integer between 1 and 100000000, got -5"),
        ({"max_context": 10**12}, "max_context"),
        ({"max_context": True}, "max_context"),
        ({"trim_percent": 95}, "trim_percent: must be a number between 0 and 90"),
        ({"preserve_latest": -1}, "preserve_latest"),
        ({"tokenizer_profile": "gpt2"}, "tokenizer_profile: must be one of"),
        ({"tokenizer_profile": 0}, "tokenizer_profile"),
        ({"protected_roles": ["system", "narrator"]}, "protected_roles: unknown role"),
        ({"message_overhead": 1.5}, "message_overhead"),
        ({"critical_pct": 40}, "critical_pct: must not exceed warning_pct"),
        ({"stale_s": 0}, "stale_s"),
        ({"debounce": "5"}, "debounce"),
        ({"max_tokens": 5}, "config-unknown-key: max_tokens: unknown configuration key"),
    ],
)
def test_bad_config_names_the_key(layer: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ConfigError) as exc:
        build_config(layer)
    assert fragment in exc.value.one_line()


def test_profiles_and_exact_ratio() -> None:
    # 0.3 * 10 = 3.0000000000000004 in binary floating point; the estimate must be 3 + 4
    cfg = build_config({"tokenizer_profile": 0.3})
    from risutools.replay.cutter import ContextCutter

    assert ContextCutter(cfg).estimate("x" * 10) == 7
    assert ContextCutter(build_config({"tokenizer_profile": "claude"})).estimate("가" * 9) == 9
    assert build_config({"max_context": 999, "trim_percent": 12.5}).target == 874
    assert build_config().to_dict()["profiles"] == {
        "claude": "0.45",
        "deepseek": "0.40",
        "gemini": "0.35",
        "tiktoken": "0.40",
    }


# ---- the commands ----------------------------------------------------------------


def test_run_writes_three_deterministic_files_and_update(tmp_path: Path) -> None:
    comp = tmp_path / "seed.json"
    shutil.copy(SEED, comp)
    out = tmp_path / "rep" / "report.json"
    r = cli("replay", "run", str(comp), "--fixture", str(FIX / "duplicates.yaml"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    first = {p.suffix: p.read_bytes() for p in out.parent.iterdir()}
    assert sorted(first) == [".html", ".json", ".md"]
    update = ("replay", "run", str(comp), "--fixture", str(FIX / "duplicates.yaml"),
              "-o", str(out), "--update")
    r2 = cli(*update)
    assert r2.returncode == 0, r2.stderr
    assert {p.suffix: p.read_bytes() for p in out.parent.iterdir()} == first
    report = json.loads(first[".json"])
    assert verify_report_hash(report)
    assert report["component"]["component_id"] == "module.risu.174678332.context-cutter"
    seed_doc = json.loads(SEED.read_text(encoding="utf-8"))
    from risutools.settings.lifecycle import base_sha256

    assert report["component"]["doc_sha256"] == base_sha256(seed_doc)  # (the base hash)
    assert (
        report["fixture"]["sha256"]
        == "sha256:" + hashlib.sha256((FIX / "duplicates.yaml").read_bytes()).hexdigest()
    )
    assert report["config"]["max_context"] == 100 and report["config"]["tokens_per_char"] == "1"
    assert report["summary"]["verdict"] == "passed" and report["summary"]["requests"] == 4
    _schema_ok(report)
    # the component now records the replay (MC304 pairing, MC203 digest, MC102 order kept)
    doc = json.loads(comp.read_text(encoding="utf-8"))
    assert doc["projection"]["replay_status"] == "passed"
    assert doc["provenance"]["availability_verdict"] == "available"
    refs = doc["provenance"]["source_refs"]
    assert refs[0] == seed_doc["provenance"]["source_refs"][0]
    assert refs[1] == {
        "source_id": "replay:duplicates",
        "source_version": "replay-report-v1",
        "sha256": "sha256:" + hashlib.sha256(first[".json"]).hexdigest(),
    }
    # style kept: indent 1, non-ASCII as is; only the three fields changed
    text = comp.read_text(encoding="utf-8")
    assert text.startswith('{\n "contract"') and "컨텍스트" in text
    doc["projection"]["replay_status"] = "not_run"
    doc["provenance"]["availability_verdict"] = "untested"
    del refs[1]
    assert doc == seed_doc
    # running again replaces the entry instead of adding a second one
    r3 = cli(*update)
    assert r3.returncode == 0
    assert len(json.loads(comp.read_text(encoding="utf-8"))["provenance"]["source_refs"]) == 2
    html = first[".html"].decode()
    assert (
        "<script" not in html
        and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
        and "https://" not in html
    )
    assert "R1" in first[".md"].decode()


def _schema_ok(report: dict[str, Any]) -> None:
    import jsonschema

    from risutools.resources import load_schema

    jsonschema.Draft202012Validator(load_schema("replay-report-v1.schema.json")).validate(report)


def test_failed_replay_exit_1_and_update_marks_unavailable(tmp_path: Path) -> None:
    # a YAML component and a fixture whose duplicate anchors make the spec cutter resurrect
    comp = tmp_path / "c.yaml"
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    comp.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    fixture = tmp_path / "resurrect.yaml"
    fixture.write_text(
        "fixture: conversation-v1\nname: resurrect\n"
        "config: {tokenizer_profile: 1, message_overhead: 0, max_context: 40, preserve_latest: 1,"
        " trim_percent: 0}\n"
        "turns:\n"
        "  - append: [{role: user, content: aaaaaaaaaa}, {role: user, content: bbbbbbbbbb},"
        " {role: user, content: cccccccccc}, {role: user, content: dddddddddd},"
        " {role: user, content: eeeeeeeeee}]\n"  # 50 > 40: drop m0 -> anchor m1 (b)
        "  - edit: {id: m1, content: BBBBBBBBBB}\n"  # anchor lost: drop 1; anchor m1 (B)
        # the signature now lives only in dropped m0, and m1 shrinks to nothing: the
        # nearest-match rule finds m0, drops 0, and 40 <= 40 needs no cut: m0 comes back
        "  - edit: [{id: m0, content: BBBBBBBBBB}, {id: m1, content: ''}]\n",
        encoding="utf-8",
    )
    out = tmp_path / "r.json"
    r = cli("replay", "run", str(comp), "--fixture", str(fixture), "-o", str(out), "--update")
    assert r.returncode == 1, r.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["summary"]["failed_invariants"] == ["R5"]
    new = yaml.safe_load(comp.read_text(encoding="utf-8"))
    assert new["projection"]["replay_status"] == "failed"
    assert new["provenance"]["availability_verdict"] == "unavailable"
    assert "컨텍스트" in comp.read_text(encoding="utf-8")


def test_no_applicable_simulation_changes_nothing(tmp_path: Path) -> None:
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    doc["capabilities"]["provides"] = ["asset.bundle"]
    comp = tmp_path / "c.json"
    comp.write_text(json.dumps(doc), encoding="utf-8")
    before = comp.read_bytes()
    r = cli("replay", "run", str(comp), "--fixture", str(FIX / "toggle.yaml"), "--update")
    assert r.returncode == 0 and "no applicable simulation" in r.stdout
    assert comp.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]


def test_cli_errors_are_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(HEAD + "turns:\n  - {}\n  - edit: {id: m99, content: x}\n", encoding="utf-8")
    r = cli("replay", "run", str(SEED), "--fixture", str(bad), "-o", str(tmp_path / "r.json"))
    assert r.returncode == 2
    assert r.stderr.strip().endswith("turn 2: edit: unknown-id: no message with id m99")
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    cfg = tmp_path / "c.json"
    cfg.write_text('{"max_context": -1}', encoding="utf-8")
    r = cli("replay", "monitor", "--fixture", str(FIX / "monitor.yaml"), "--config", str(cfg))
    assert r.returncode == 2 and "max_context" in r.stderr and "Traceback" not in r.stderr


def test_update_is_compare_and_swap(tmp_path: Path) -> None:
    from risutools.replay.component import load_component, write_component_update

    comp = tmp_path / "c.json"
    shutil.copy(SEED, comp)
    cf = load_component(comp)
    theirs = comp.read_bytes() + b" "
    comp.write_bytes(theirs)  # someone else wrote in between
    with pytest.raises(WriteConflict):
        write_component_update(
            cf, passed=True, fixture_name="x", report_sha256="sha256:" + "a" * 64
        )
    assert comp.read_bytes() == theirs  # their bytes, untouched
    assert [p.name for p in tmp_path.iterdir() if p.name != ".risutools.lock"] == ["c.json"]


def test_update_race_during_the_replay_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The component changes while the simulation runs: --update refuses, file untouched."""
    import risutools.replay.api as api

    comp = tmp_path / "c.json"
    shutil.copy(SEED, comp)
    doc = json.loads(comp.read_text(encoding="utf-8"))
    doc["projection"]["title"] = "someone else's edit"
    theirs = (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode()
    real = api.run_simulation

    def racing(*args: Any, **kwargs: Any) -> Any:
        comp.write_bytes(theirs)
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "run_simulation", racing)
    with pytest.raises(WriteConflict) as exc:
        api.run_component(comp, FIX / "toggle.yaml", output=tmp_path / "r.json", update=True)
    assert "\n" not in exc.value.one_line() and str(comp) in exc.value.one_line()
    assert comp.read_bytes() == theirs
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_monitor_command_and_synth_determinism(tmp_path: Path) -> None:
    r = cli("replay", "monitor", "--fixture", str(FIX / "monitor.yaml"))
    assert r.returncode == 0 and r.stdout.count("ALERT") == 5
    a, b = tmp_path / "a.ndjson", tmp_path / "b.ndjson"
    for p in (a, b):
        r = cli(
            "replay",
            "synth",
            "--seed",
            "7",
            "--messages",
            "300",
            "--lang",
            "ko",
            "--edit-rate",
            "0.2",
            "--delete-rate",
            "0.1",
            "-o",
            str(p),
        )
        assert r.returncode == 0, r.stderr
    assert a.read_bytes() == b.read_bytes()
    f = parse_fixture_bytes(a.read_bytes(), "a.ndjson")
    n = len(f.messages) + sum(len(t.append) - len(t.delete) for t in f.turns)
    assert n == 300
    roles = {m.role for t in f.turns for m in t.append}
    assert roles == {"user", "assistant", "tool"}
    assert any("\uac00" <= ch <= "\ud7a3" for ch in f.turns[0].append[0].content)
    assert sum(bool(t.edit) for t in f.turns) > 0 and sum(bool(t.delete) for t in f.turns) > 0
    r = cli("replay", "synth", "--seed", "1", "--messages", "10", "--lang", "fr", "-o", str(a))
    assert r.returncode == 2 and "--lang" in r.stderr


def test_risu_errors_are_risu_error() -> None:
    assert issubclass(ConfigError, RisuError)


def test_updated_component_passes_contract_validate_and_verify(tmp_path: Path) -> None:
    contract = pytest.importorskip("risutools.contract.validate")
    from risutools.contract.verify import verify_paths

    cat = tmp_path / "catalog"
    cat.mkdir()
    comp = cat / "seed.json"
    shutil.copy(SEED, comp)
    # default report path: <component dir>/replays/<id>--<fixture>.json
    r = cli("replay", "run", str(comp), "--fixture", str(FIX / "anchor-edit.yaml"), "--update")
    assert r.returncode == 0, r.stderr
    assert (cat / "replays" / "module.risu.174678332.context-cutter--anchor-edit.json").exists()
    doc = json.loads(comp.read_text(encoding="utf-8"))
    errors = [f for f in contract.validate_document(doc, file=str(comp)) if f.severity == "error"]
    assert errors == []
    result = verify_paths([str(comp)])
    mc203 = [f for f in result.findings if f.rule == "MC203"]
    assert [f for f in mc203 if f.severity == "error"] == []
    # tamper with the report: the digest check now fails
    rep = cat / "replays" / "module.risu.174678332.context-cutter--anchor-edit.json"
    rep.write_bytes(rep.read_bytes().replace(b'"requests": 4', b'"requests": 5'))
    bad = [f for f in verify_paths([str(comp)]).findings if f.rule == "MC203"]
    assert any(f.severity == "error" for f in bad)


# ---- every bad input of the issue, through the CLI: one line, exit 2 ---------------

BAD_RUNS = [
    # (name, fixture text or None for the good toggle fixture, config text, expected line end)
    (
        "unknown-role",
        HEAD + "turns:\n  - append: [{role: narrator, content: a}]\n",
        None,
        "bad.yaml: turn 1: append[0]: bad-fixture: message m0: unknown role 'narrator' "
        "(accepted: system, user, assistant, tool, function)",
    ),
    (
        "edit-unknown-id",
        HEAD + "messages: [{role: user, content: a}]\nturns:\n  - {}\n"
        "  - edit: {id: m7, content: x}\n",
        None,
        "bad.yaml: turn 2: edit: unknown-id: no message with id m7",
    ),
    (
        "delete-unknown-id",
        HEAD + "messages: [{role: user, content: a}]\nturns:\n  - delete: {id: m0}\n"
        "  - {}\n  - delete: [{id: m0}]\n",
        None,
        "bad.yaml: turn 3: delete[0]: unknown-id: no message with id m0",
    ),
    ("no-turns", HEAD + "turns: []\n", None, "bad.yaml: turns: bad-fixture: the fixture has no "
     "turns: a replay needs at least one request"),
    ("empty-file", "", None, "bad.yaml: bad-fixture: empty file: no fixture in it"),
    (
        "negative-config",
        None,
        "max_context: -100\n",
        "c.yaml: config: config-bad-value: max_context: must be an integer between 1 and "
        "100000000, got -100",
    ),
    (
        "absurd-config",
        None,
        "preserve_latest: 100000000000\n",
        "c.yaml: config: config-bad-value: preserve_latest: must be an integer between 0 and "
        "10000000, got 100000000000",
    ),
    ("nan-config", None, "trim_percent: .nan\n", "line 1: config-invalid: .nan is not a "
     "JSON number (NaN/Infinity); write a number or null"),
    (
        "config-bad-value-in-fixture",
        HEAD + "config: {trim_percent: 95}\nturns: [{}]\n",
        None,
        "bad.yaml: config: config-bad-value: trim_percent: must be a number between 0 and 90, "
        "got 95",
    ),
]


@pytest.mark.parametrize(
    ("name", "fixture", "config", "end"), BAD_RUNS, ids=[b[0] for b in BAD_RUNS]
)
def test_bad_input_through_the_cli(
    tmp_path: Path, name: str, fixture: str | None, config: str | None, end: str
) -> None:
    comp = tmp_path / "c.json"
    shutil.copy(SEED, comp)
    before = comp.read_bytes()
    fpath = FIX / "toggle.yaml"
    if fixture is not None:
        fpath = tmp_path / "bad.yaml"
        fpath.write_text(fixture, encoding="utf-8")
    args = ["replay", "run", str(comp), "--fixture", str(fpath), "--update",
            "-o", str(tmp_path / "out" / "r.json")]
    if config is not None:
        (tmp_path / "c.yaml").write_text(config, encoding="utf-8")
        args += ["--config", str(tmp_path / "c.yaml")]
    r = cli(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("risutools: ") and lines[0].endswith(end), lines[0]
    assert comp.read_bytes() == before and not (tmp_path / "out").exists()
    if fixture is not None:  # the monitor reads fixtures the same way
        r = cli("replay", "monitor", "--fixture", str(fpath))
        assert r.returncode == 2 and r.stderr.strip().endswith(end), r.stderr


def test_missing_ids_are_assigned_through_the_cli(tmp_path: Path) -> None:
    f = tmp_path / "ids.yaml"
    f.write_text(
        HEAD + "config: {tokenizer_profile: 1, message_overhead: 0, max_context: 25,"
        " preserve_latest: 1, trim_percent: 0}\n"
        "messages: [{role: system, content: ssssssssss}, {id: u, role: user, content: aaaaa}]\n"
        "turns:\n  - append: [{role: assistant, content: bbbbb}, {role: user, content: ccccc}]\n"
        "  - edit: {id: m2, content: BBBBB}\n",
        encoding="utf-8",
    )
    out = tmp_path / "r.json"
    r = cli("replay", "run", str(SEED), "--fixture", str(f), "-o", str(out))
    assert r.returncode == 0, r.stderr
    rows = json.loads(out.read_text(encoding="utf-8"))["requests"]
    # 10 + 5 + 5 + 5 = 25 <= 25: nothing dropped; the edit of the generated id m2 applied
    assert [(x["tokens_in"], x["dropped"]) for x in rows] == [(25, 0), (25, 0)]
    # the anchor after request 1 is u (the first non-protected message, kept)
    assert rows[0]["state"]["anchor"]["length"] == 5 and rows[1]["anchor"] == "found"


def test_update_refused_before_anything_is_written(tmp_path: Path) -> None:
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    del doc["provenance"]
    comp = tmp_path / "c.json"
    comp.write_text(json.dumps(doc), encoding="utf-8")
    before = comp.read_bytes()
    out = tmp_path / "out" / "r.json"
    r = cli("replay", "run", str(comp), "--fixture", str(FIX / "toggle.yaml"), "-o", str(out),
            "--update")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    # a document the schema refuses is refused before anything runs (invalid-document)
    assert "c.json: invalid-document: not a valid matrix-component-v1 document: missing " \
        "required property 'provenance'" in r.stderr
    assert comp.read_bytes() == before and not out.parent.exists()


def test_unwritable_output_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    r = cli("replay", "run", str(SEED), "--fixture", str(FIX / "toggle.yaml"),
            "-o", str(tmp_path / "dir.json"))
    assert r.returncode == 2 and "internal error" not in r.stderr
    assert r.stderr.strip().endswith("dir.json: not-a-file: is a folder, not a file")


@pytest.mark.parametrize("name", sorted(p.name for p in FIX.glob("*.yaml")))
def test_every_report_matches_the_schema_and_is_deterministic(name: str) -> None:
    from risutools.replay.fixture import load_fixture
    from risutools.replay.render_html import render_html
    from risutools.replay.render_markdown import render_markdown
    from risutools.replay.run import (
        SIM_CUTTER,
        SIM_MONITOR,
        build_report,
        report_bytes,
        run_simulation,
    )
    from risutools.settings.replay import load_replay_config

    comp = json.loads(SEED.read_text(encoding="utf-8"))
    for sim, doc in ((SIM_CUTTER, comp), (SIM_MONITOR, None)):
        outs = []
        for _ in range(2):  # two independent runs from the file
            fxt = load_fixture(FIX / name)
            cfg = load_replay_config(None, fxt.config)
            rep = build_report(run_simulation(sim, fxt, cfg), fxt, cfg, doc)
            outs.append((report_bytes(rep), render_markdown(rep), render_html(rep)))
        assert outs[0] == outs[1]
        _schema_ok(rep)
        assert verify_report_hash(rep)
        assert str(ROOT) not in outs[0][0].decode()  # no absolute paths in the report


def test_schema_rejects_a_broken_report() -> None:
    import jsonschema

    from risutools.replay.api import run_monitor

    rep = run_monitor(FIX / "monitor.yaml")
    _schema_ok(rep)
    bad = json.loads(json.dumps(rep))
    bad["summary"]["verdict"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        _schema_ok(bad)
    bad = json.loads(json.dumps(rep))
    del bad["requests"][0]["monitor"]
    with pytest.raises(jsonschema.ValidationError):
        _schema_ok(bad)


def _hangul(text: str) -> int:
    return sum("\uac00" <= ch <= "\ud7a3" for ch in text)


def test_synth_languages_and_edit_window(tmp_path: Path) -> None:
    from risutools.replay.synth import synthesize

    def texts(lang: str) -> str:
        d = synthesize(3, 200, lang=lang)
        return " ".join(m["content"] for t in d["turns"] for m in t.get("append", []))

    en, ko, mixed = texts("en"), texts("ko"), texts("mixed")
    assert _hangul(en) == 0 and "the " in en
    assert _hangul(ko) > 1000 and "the " not in ko.replace("(calls", "")
    assert _hangul(mixed) > 100 and "the " in mixed
    # --edit-window: every edit and delete targets one of the 5 newest live messages
    d = synthesize(4, 400, edit_rate=1.0, delete_rate=1.0, edit_window=5)
    order: list[str] = [m["id"] for m in d["messages"]]
    alive = set(order)
    for t in d["turns"]:
        newest = [i for i in order if i in alive and i != "m0"][-5:]
        for e in t.get("edit", []):
            assert e["id"] in newest
        for m in t.get("append", []):
            order.append(m["id"])
            alive.add(m["id"])
        newest = [i for i in order if i in alive and i != "m0"][-6:-1]
        for x in t.get("delete", []):
            assert x["id"] in newest
            alive.discard(x["id"])
    with pytest.raises(UsageError, match="must be between 1 and"):
        synthesize(4, 400, edit_window=0)


def test_the_catalog_configuration_is_a_layer_below_the_fixture(tmp_path: Path) -> None:
    """defaults < the catalog's `replay:` section < the fixture's `config:` < --config."""
    comp = tmp_path / "seed.json"
    shutil.copy(SEED, comp)
    (tmp_path / ".risutools.yaml").write_text("replay: {debounce: 7, max_context: 7}\n",
                                              encoding="utf-8")
    out = tmp_path / "r.json"
    args = ("replay", "run", str(comp), "--fixture", str(FIX / "duplicates.yaml"), "-o", str(out))
    assert cli(*args).returncode == 0
    cfg = json.loads(out.read_text(encoding="utf-8"))["config"]
    assert cfg["debounce"] == 7  # from the catalog configuration
    assert cfg["max_context"] == 100  # the fixture's own config wins
    (tmp_path / "c.yaml").write_text("debounce: 3\n", encoding="utf-8")
    assert cli(*args, "--config", str(tmp_path / "c.yaml")).returncode == 0
    assert json.loads(out.read_text(encoding="utf-8"))["config"]["debounce"] == 3
