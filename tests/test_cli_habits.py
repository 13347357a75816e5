"""ruff's habits and each command's small surprises (issue 13, items 3 and 4).

Commands run in-process through ``risutools.cli.main`` (the console entry point, with its
error mapping), so these tests stay fast.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from risutools import cli
from risutools.commands.checks import every_check as all_checks

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"
GOOD = ROOT / "fixtures" / "contract" / "good"
SOURCES = ROOT / "fixtures" / "sources"
GOOD_DIGEST = "sha256:05aaa73785840a4779ac10348d3e6f8df2acc480691f4f2facdcd362b59dfc1d"
STALE_DIGEST = "sha256:" + "ab" * 32


def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
        ) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.argv", ["risutools", *args])
    with pytest.raises(SystemExit) as exc:
        cli.main()
    out, err = capsys.readouterr()
    code = exc.value.code
    return (code if isinstance(code, int) else 0), out, err


# --------------------------------------------------------------------------- --fix


def _stale(text: str) -> str:
    """The seed with a stale prompt digest and a lineage out of step with review_status."""
    assert text.count(GOOD_DIGEST) == 1
    text = text.replace(GOOD_DIGEST, STALE_DIGEST)
    return re.sub(r"(promotion_status\"?: *\"?)candidate", r"\1approved", text, count=1)


def test_fixable_checks_are_declared_in_the_registry() -> None:
    assert {c.id for c in all_checks().values() if c.fixable} == {"MC103", "MC201"}


@pytest.mark.parametrize("name", ["doc.json", "doc.yaml", "doc-single-quoted.yaml"])
def test_fix_rewrites_only_the_fixed_values(name: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    src = SEED if name.endswith(".json") else GOOD / "context-cutter.yaml"
    good = src.read_text(encoding="utf-8")
    if name.endswith(".yaml"):
        good = "# curator's comment, kept\n" + good
    if "quoted" in name:
        good = good.replace(GOOD_DIGEST, f"'{GOOD_DIGEST}'")
    doc = tmp_path / name.replace("-single-quoted", "")
    doc.write_text(_stale(good), encoding="utf-8")
    code, out, err = run(capsys, monkeypatch, "validate", "-f", "concise", str(doc))
    assert code == 1 and "MC201" in out and "MC103" in out
    code, out, err = run(capsys, monkeypatch, "validate", "--fix", "-f", "concise", str(doc))
    assert code == 0, out + err
    assert "fixed 2 finding(s) in 1 file(s) (MC103 1, MC201 1)" in err
    assert doc.read_text(encoding="utf-8") == good  # byte for byte: comment, quotes, layout
    code, out, err = run(capsys, monkeypatch, "validate", "--fix", str(doc))
    assert code == 0 and "fixed 0 finding(s) in 0 file(s)" in err


def test_fix_ndjson_rewrites_lines_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    lines = (GOOD / "components.ndjson").read_text(encoding="utf-8").splitlines(keepends=True)
    row = json.loads(lines[1])
    right = row["projection"]["prompt_sha256"]
    lines[1] = lines[1].replace(right, STALE_DIGEST)
    cat = tmp_path / "components.ndjson"
    cat.write_text("".join(lines), encoding="utf-8")
    code, out, err = run(capsys, monkeypatch, "validate", "--fix", "-f", "concise", str(cat))
    assert code == 0, out + err
    assert cat.read_text(encoding="utf-8") == (GOOD / "components.ndjson").read_text("utf-8")


def test_fix_never_touches_a_reviewed_document(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    text = _stale(SEED.read_text(encoding="utf-8")).replace(
        '"review_status": "candidate"', '"review_status": "approved"')
    doc = tmp_path / "doc.json"
    doc.write_text(text, encoding="utf-8")
    code, _out, err = run(capsys, monkeypatch, "validate", "--fix", str(doc))
    assert code == 1 and doc.read_text(encoding="utf-8") == text
    assert "not fixed: review_status is 'approved'" in err


def test_fix_respects_select_and_stdin(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    doc = tmp_path / "doc.json"
    doc.write_text(_stale(SEED.read_text(encoding="utf-8")), encoding="utf-8")
    code, _out, err = run(capsys, monkeypatch, "validate", "--fix", "--select", "MC201",
                         "-f", "concise", str(doc))
    assert code == 0 and "(MC201 1)" in err
    text = doc.read_text(encoding="utf-8")
    assert GOOD_DIGEST in text and '"promotion_status": "approved"' in text  # MC103 left


def test_fix_conflict_leaves_the_newer_file(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from risutools.contract import fix as fixmod
    from risutools.contract.validate import validate_paths

    doc = tmp_path / "doc.json"
    doc.write_text(_stale(SEED.read_text(encoding="utf-8")), encoding="utf-8")
    result = validate_paths([str(doc)])
    real = fixmod._parse

    def edited_meanwhile(body: str, name: str, fmt: str | None, **kw: Any) -> list[fixmod._Doc]:
        docs = real(body, name, fmt, **kw)
        doc.write_text(body + " ", encoding="utf-8")  # someone saves the file now
        monkeypatch.setattr(fixmod, "_parse", real)
        return docs

    monkeypatch.setattr(fixmod, "_parse", edited_meanwhile)
    outcome = fixmod.fix_result(result)
    assert outcome.total == 0 and "changed since you read it" in outcome.notes[0]
    assert doc.read_text(encoding="utf-8").endswith(" ")


def test_json_string_span_finds_the_value_not_a_lookalike() -> None:
    from risutools.contract.fix import json_string_span

    text = '{"a": {"x": "\\"x\\": 1", "b": ["q", {"x": "here"}]}, "x": "top"}'
    s = json_string_span(text, "/a/b/1/x")
    assert s is not None and text[s[0]:s[1]] == '"here"'
    s = json_string_span(text, "/x")
    assert s is not None and text[s[0]:s[1]] == '"top"'
    assert json_string_span(text, "/a/b/5") is None
    assert json_string_span(text, "/a/b") is None  # not a string
    assert json_string_span(text, "/nope") is None


# --------------------------------------------------------------------------- exit, statistics


def test_exit_zero_and_statistics(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    doc = tmp_path / "doc.json"
    doc.write_text(_stale(SEED.read_text(encoding="utf-8")), encoding="utf-8")
    code, out, _ = run(capsys, monkeypatch, "validate", "--exit-zero", str(doc))
    assert code == 0 and "MC201" in out
    code, _, _ = run(capsys, monkeypatch, "validate", "--exit-zero", str(tmp_path / "missing"))
    assert code == 2  # could not run stays 2
    copy = tmp_path / "copy.json"
    copy.write_text(doc.read_text(encoding="utf-8").replace('"1.0.0"', '"1.0.1"'), "utf-8")
    code, out, _ = run(capsys, monkeypatch, "validate", "--statistics", str(doc), str(copy),
                       str(SEED))
    assert code == 1  # most frequent first, then by id; [*]: --fix fixes it
    assert out.splitlines() == ["2  MC103  [*] lineage-status", "2  MC201  [*] prompt-digest",
                                "1  MC104      duplicate-id",
                                "Found 5 findings (5 errors, 0 warnings).",
                                # both copies are candidates read from files: --fix fixes 4
                                "[*] 4 fixable with `risutools validate --fix`."]
    code, out, _ = run(capsys, monkeypatch, "validate", "--statistics", "-f", "json", str(doc))
    assert json.loads(out)[0] == {"code": "MC103", "name": "lineage-status", "count": 1,
                                  "fixable": True}
    code, _, err = run(capsys, monkeypatch, "validate", "--statistics", "-f", "sarif", str(doc))
    assert code == 2 and "--statistics prints" in err


# --------------------------------------------------------------------------- colours


@pytest.mark.parametrize(("env", "flag", "want"), [
    ({}, "auto", False),  # not a terminal
    ({"FORCE_COLOR": "1"}, "auto", True),
    ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, "auto", False),
    ({"NO_COLOR": "1"}, "always", True),
    ({"FORCE_COLOR": "1"}, "never", False),
])
def test_color_flag_and_environment(env: dict[str, str], flag: str, want: bool, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    doc = tmp_path / "doc.json"
    doc.write_text(_stale(SEED.read_text(encoding="utf-8")), encoding="utf-8")
    _, out, _ = run(capsys, monkeypatch, "validate", "--color", flag, str(doc))
    assert ("\x1b[" in out) is want
    _, out, _ = run(capsys, monkeypatch, "verify", "--color", flag, str(doc))
    assert ("\x1b[" in out) is want
    report = tmp_path / "r.txt"
    run(capsys, monkeypatch, "validate", "--color", flag, "-o", str(report), str(doc))
    assert "\x1b[" not in report.read_text(encoding="utf-8")


def test_color_refuses_other_values(capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = run(capsys, monkeypatch, "validate", "--color", "sometimes", str(SEED))
    assert code == 2 and "--color" in err and err.count("\n") == 1


# --------------------------------------------------------------------------- flags and help


def _commands(group: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Every leaf command of the click tree typer builds (typer may vendor click)."""
    out: list[tuple[str, Any]] = []
    for name, cmd in sorted(group.commands.items()):
        if hasattr(cmd, "commands"):
            out += _commands(cmd, f"{prefix}{name} ")
        else:
            out.append((f"{prefix}{name}", cmd))
    return out


def _root() -> Any:
    import typer.main

    return typer.main.get_command(cli.app)


def _is_option(p: Any) -> bool:
    return getattr(p, "param_type_name", "") == "option"


def test_each_short_flag_means_one_long_option_everywhere() -> None:
    meaning: dict[str, tuple[str, str]] = {}
    for name, cmd in _commands(_root()):
        for p in cmd.params:
            if not _is_option(p):
                continue
            shorts = [o for o in p.opts if not o.startswith("--")]
            longs = [o for o in p.opts if o.startswith("--")]
            for s in shorts:
                assert longs, f"{name}: {s} has no long name"
                if s in meaning:
                    assert meaning[s][0] == longs[0], (
                        f"{s} is {longs[0]} in `{name}` but {meaning[s][0]} in `{meaning[s][1]}`")
                else:
                    meaning[s] = (longs[0], name)
    assert meaning["-f"][0] == "--format" and meaning["-o"][0] == "--output"
    assert meaning["-x"][0] == "--fixture" and meaning["-q"][0] == "--quiet"


def test_help_shows_metavars_and_whole_sentences(capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for name, cmd in _commands(_root()):
        code, text, _ = run(capsys, monkeypatch, *name.split(), "-h")
        assert code == 0 and "Usage" in text
        for typename in ("TEXT", "INTEGER", "FLOAT", "<str>", "<int>", "<float>", "<bool>",
                         "list[str]", "BOOLEAN"):
            assert typename not in text, f"`{name} -h` shows {typename}"
        for p in cmd.params:
            if _is_option(p) and not p.is_flag:
                assert p.metavar, f"`{name}` {p.opts[0]} has no metavar"
        # plain help re-flows each paragraph of a docstring: a sentence is never cut by the
        # source's line breaks (a line of the summary ends a sentence or fills the width)
        body = text.split("\n\n")[1:]
        para = body[0].strip().splitlines() if body else []
        for line in para[:-1]:
            assert len(line) > 60, f"`{name} -h`: a short line mid-paragraph: {line!r}"


def test_command_lists_show_whole_sentences(capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    for args in (["-h"], ["replay", "-h"]):
        code, text, _ = run(capsys, monkeypatch, *args)
        commands = text.split("Commands:", 1)[1]
        assert code == 0 and "..." not in commands, commands  # never cut mid-sentence


def test_replay_fixture_keeps_its_long_name(capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = run(capsys, monkeypatch, "replay", "monitor", "-f", "x.yaml")
    assert code == 2 and "usage" in err  # -f is --format, not the fixture
    code, _, err = run(capsys, monkeypatch, "replay", "monitor", "-x", "nope.yaml")
    assert code == 2 and "nope.yaml" in err


# --------------------------------------------------------------------------- small surprises


def test_analyze_takes_several_files(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    a = str(SOURCES / "174678332_context-cutter.risum")
    b = str(SOURCES / "182004771_net-summarizer.risum")
    code, out, err = run(capsys, monkeypatch, "analyze", "--fail-on", "never", a, b)
    assert code == 0 and out.count("contents:") == 2 and a in out and b in out
    code, out, _ = run(capsys, monkeypatch, "analyze", "-f", "json", "--fail-on", "never", a, b)
    assert [x["file"] for x in json.loads(out)] == [a, b]
    code, out, _ = run(capsys, monkeypatch, "analyze", "-f", "concise", a, b)
    assert code == 1 and b in out  # the summarizer's RA warnings fail by default
    code, out, err = run(capsys, monkeypatch, "analyze", "--fail-on", "never", a,
                         str(tmp_path / "missing.risum"), b)
    assert code == 2 and out.count("contents:") == 2 and err.count("\n") == 1


def test_verify_without_sources_says_it_once(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(3):
        shutil.copy(SEED, tmp_path / f"d{i}.json")
        text = (tmp_path / f"d{i}.json").read_text(encoding="utf-8")
        (tmp_path / f"d{i}.json").write_text(text.replace('"1.0.0"', f'"1.0.{i}"'), "utf-8")
    code, out, err = run(capsys, monkeypatch, "verify", str(tmp_path))
    assert code == 0 and out.count("sources not checked") == 1 and "MC202" not in out
    assert "3 source digest(s) in 3 document(s) not verified" in out
    code, out, err = run(capsys, monkeypatch, "verify", "-f", "concise", str(tmp_path))
    assert err.count("sources not checked") == 1 and "MC202" not in out
    code, out, err = run(capsys, monkeypatch, "verify", "--require-sources", str(tmp_path))
    assert code == 2 and "Invalid value for --require-sources: needs a source store" in err
    code, out, err = run(capsys, monkeypatch, "verify", "--sources", str(SOURCES), str(tmp_path))
    assert "sources not checked" not in out + err


def test_hash_bare_hash_is_the_sha256_of_canonical_json(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run(capsys, monkeypatch, "hash", str(SEED), str(GOOD / "context-cutter.yaml"))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].endswith(f"  {SEED}") and lines[1].endswith("context-cutter.yaml")
    assert lines[0].split()[0] == lines[1].split()[0]  # same document, same hash
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    del doc["provenance"]["runtime_status"]  # the base hash: no runtime fields
    want = hashlib.sha256(json.dumps(doc, ensure_ascii=False, sort_keys=True,
                                     separators=(",", ":")).encode()).hexdigest()
    code, out, _ = run(capsys, monkeypatch, "hash", "-q", str(SEED))
    assert out == f"sha256:{want}\n"


def test_project_output_refuses_to_overwrite(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    out_file = tmp_path / "doc.json"
    src = str(SOURCES / "174678332_context-cutter.risum")
    code, _, _ = run(capsys, monkeypatch, "project", src, "-o", str(out_file))
    assert code == 0
    out_file.write_text("mine", encoding="utf-8")
    code, _, err = run(capsys, monkeypatch, "project", src, "-o", str(out_file))
    assert code == 2 and "target-exists" in err and "--force" in err
    assert out_file.read_text(encoding="utf-8") == "mine"
    code, _, _ = run(capsys, monkeypatch, "project", src, "-o", str(out_file), "--force")
    assert code == 0 and json.loads(out_file.read_text(encoding="utf-8"))["component_id"]


def test_pack_output_folder_and_existing_file(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    up = tmp_path / "up"
    code, _, _ = run(capsys, monkeypatch, "unpack", str(SOURCES / "183120336_asset-pack.risum"),
                     "-o", str(up))
    assert code == 0
    (tmp_path / "d").mkdir()
    code, _, err = run(capsys, monkeypatch, "pack", str(up), "-o", str(tmp_path / "d"))
    assert code == 2 and "not-a-file: is a folder, not a file" in err and err.count("\n") == 1
    target = tmp_path / "m.risum"
    assert run(capsys, monkeypatch, "pack", str(up), "-o", str(target))[0] == 0
    code, _, err = run(capsys, monkeypatch, "pack", str(up), "-o", str(target))
    assert code == 2 and "target-exists" in err


def test_unpack_counts_card_assets_and_shows_warnings(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run(capsys, monkeypatch, "unpack",
                         str(SOURCES / "184500112_heroine-card.charx"), "-o", str(tmp_path / "c"))
    assert code == 0
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text(encoding="utf-8"))
    n = sum(1 for a in manifest["card_assets"] if a["file"])
    assert n > 0 and f"{n} card asset file(s)" in out and "card.json" in out
    for w in manifest["anomalies"]:
        assert w["code"] in err


def test_fix_multi_document_yaml_fixes_the_one_reported(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    good = (GOOD / "context-cutter.yaml").read_text(encoding="utf-8")
    second = good.replace(GOOD_DIGEST, f'"{GOOD_DIGEST}"').replace("1.0.0", "1.0.1")
    assert second != good
    want = f"{good}---\n{second}"
    doc = tmp_path / "two.yaml"
    doc.write_text(f"{good}---\n{second.replace(GOOD_DIGEST, STALE_DIGEST)}", encoding="utf-8")
    code, out, err = run(capsys, monkeypatch, "validate", "--fix", "-f", "concise", str(doc))
    assert code == 0 and "(MC201 1)" in err, out + err
    assert doc.read_text(encoding="utf-8") == want  # double quotes kept, first document untouched


def test_fix_ndjson_several_lines_whose_length_changes(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    good = (GOOD / "components.ndjson").read_text(encoding="utf-8")
    lines = good.splitlines(keepends=True)
    assert all('"promotion_status":"candidate"' in ln for ln in lines)
    bad = [lines[0].replace('"promotion_status":"candidate"', '"promotion_status":"rejected"'),
           lines[1].replace(json.loads(lines[1])["projection"]["prompt_sha256"], STALE_DIGEST),
           lines[2].replace('"promotion_status":"candidate"', '"promotion_status":"approved"')]
    cat = tmp_path / "c.ndjson"
    cat.write_text("".join(bad), encoding="utf-8")
    code, out, err = run(capsys, monkeypatch, "validate", "--fix", "-f", "concise", str(cat))
    assert code == 0 and "fixed 3 finding(s) in 1 file(s) (MC103 2, MC201 1)" in err, out + err
    assert cat.read_text(encoding="utf-8") == good


@pytest.mark.parametrize("name", ["doc.json", "c.ndjson"])
def test_fix_that_would_not_read_back_leaves_the_file(name: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from risutools.contract import fix as fixmod

    if name.endswith(".json"):
        text = _stale(SEED.read_text(encoding="utf-8"))
    else:
        text = (GOOD / "components.ndjson").read_text(encoding="utf-8").replace(
            '"promotion_status":"candidate"', '"promotion_status":"approved"')
    doc = tmp_path / name
    doc.write_text(text, encoding="utf-8")
    monkeypatch.setattr(fixmod, "_literal", lambda value, style: '"not what was meant"')
    code, _, err = run(capsys, monkeypatch, "validate", "--fix", str(doc))
    assert code == 1 and "would not read back" in err
    assert doc.read_text(encoding="utf-8") == text
