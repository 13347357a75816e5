"""Pass 45 over replay inputs, the configuration loader and report outputs: each defect
found, as a class, with the same input in every spelling a fixture has (YAML, JSON, NDJSON)."""

from __future__ import annotations

import json
import re
import shutil
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
from harness import run_cli

from risutools.pathnames import excluded
from risutools.printable import markdown_value
from risutools.replay.api import run_component
from risutools.replay.fixture import load_fixture
from risutools.replay.render_markdown import render_markdown

ROOT = Path(__file__).parents[1]
DOC = ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"
#: an integer past a float's range (``math.isfinite`` of it raised OverflowError)
HUGE = 10**400


def _doc(tmp_path: Path) -> Path:
    doc = tmp_path / "doc.json"
    shutil.copyfile(DOC, doc)
    return doc


def _fixture(tmp_path: Path, kind: str, turn: dict[str, Any],
             config: dict[str, Any] | None = None) -> Path:
    """A one-turn fixture written as ``kind`` (yaml, json, ndjson)."""
    header: dict[str, Any] = {"fixture": "conversation-v1", "name": "h45"}
    if config is not None:
        header["config"] = config
    path = tmp_path / f"f.{kind}"
    if kind == "ndjson":
        path.write_text(json.dumps(header) + "\n" + json.dumps(turn) + "\n", "utf-8")
    else:  # YAML is a superset of this JSON
        path.write_text(json.dumps({**header, "turns": [turn]}), "utf-8")
    return path


def _refused(done: Any, code: str, *parts: str) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    [line] = done.stderr.splitlines()
    assert f": {code}: " in line and "internal error" not in line, line
    for part in parts:
        assert part in line, line
    return str(line)


HI = {"role": "user", "content": "hi"}


@pytest.mark.parametrize("kind", ["yaml", "json", "ndjson"])
@pytest.mark.parametrize("key", ["used_pct", "remaining_pct", "age_s", "timestamp",
                                 "remaining_percentage"])
@pytest.mark.parametrize("command", ["run", "monitor"])
def test_an_integer_past_a_float_s_range_in_metrics_is_refused(tmp_path: Path, kind: str,
                                                               key: str, command: str) -> None:
    fixture = _fixture(tmp_path, kind, {"append": [HI], "metrics": {key: HUGE}})
    done = run_cli("replay", command, _doc(tmp_path), "-x", fixture,
                   "-o", tmp_path / "out" / "r.json")
    _refused(done, "bad-fixture", "turn 1", f"metrics.{key}", "must be a number")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", ["yaml", "ndjson"])
@pytest.mark.parametrize("key", ["trim_percent", "warning_pct", "critical_pct", "stale_s",
                                 "tokenizer_profile"])
@pytest.mark.parametrize("sign", [1, -1])
def test_an_integer_past_a_float_s_range_in_the_config_is_refused(tmp_path: Path, kind: str,
                                                                  key: str, sign: int) -> None:
    fixture = _fixture(tmp_path, kind, {"append": [HI]}, config={key: sign * HUGE})
    done = run_cli("replay", "run", _doc(tmp_path), "-x", fixture,
                   "-o", tmp_path / "out" / "r.json")
    _refused(done, "config-bad-value", f"{key}: must be")
    config = tmp_path / "c.json"
    config.write_text(json.dumps({key: sign * HUGE}), "utf-8")
    done = run_cli("replay", "monitor", "-x", _fixture(tmp_path, kind, {"append": [HI]}),
                   "--config", config, "-o", tmp_path / "out" / "r.json")
    _refused(done, "config-bad-value", f"{key}: must be")


@pytest.mark.parametrize("data", [b"", b"\n", b" \r\n\t\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf\n \n"])
@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".json", ".ndjson", ".jsonl"])
@pytest.mark.parametrize("command", ["run", "monitor"])
def test_a_blank_fixture_is_one_error_whatever_its_spelling(tmp_path: Path, data: bytes,
                                                            suffix: str, command: str) -> None:
    """A file of nothing but blanks was 'the fixture is empty' as YAML, 'empty file: no
    document in it; write a document or remove the file' as JSON (the catalog loader's
    words) and 'empty file: no fixture header' as NDJSON: one defect, one line."""
    fixture = tmp_path / ("f" + suffix)
    fixture.write_bytes(data)
    done = run_cli("replay", command, _doc(tmp_path), "-x", fixture,
                   "-o", tmp_path / "out" / "r.json")
    line = _refused(done, "bad-fixture")
    assert line == f"risutools: {fixture}: bad-fixture: empty file: no fixture in it"


@pytest.mark.parametrize("kind", ["yaml", "ndjson"])
@pytest.mark.parametrize("role", [1, True, ["user"], {"r": "user"}])
def test_a_role_of_the_wrong_type_is_not_called_missing(tmp_path: Path, kind: str,
                                                        role: Any) -> None:
    fixture = _fixture(tmp_path, kind, {"append": [{"role": role, "content": "x"}]})
    done = run_cli("replay", "monitor", "-x", fixture, "-o", tmp_path / "out" / "r.json")
    line = _refused(done, "bad-fixture", "turn 1: append[0]", f"unknown role {role!r}")
    assert "missing" not in line


# ---- the configuration loader --------------------------------------------------------


def test_an_exclude_list_past_its_bound_is_refused(tmp_path: Path) -> None:
    """Every file of a folder walk was matched against every glob, one ``fnmatch`` call
    each, recompiled once ``fnmatch``'s cache was outgrown: 20,000 globs over 200 files
    took 16 s.  The schema bounds the list (``maxItems``), and the globs are one
    expression."""
    (tmp_path / ".git").mkdir()
    shutil.copyfile(DOC, tmp_path / "doc.json")
    (tmp_path / ".risutools.yaml").write_text(
        json.dumps({"exclude": [f"x{i}*" for i in range(1001)]}), "utf-8")
    done = run_cli("validate", tmp_path)
    line = _refused(done, "config-bad-value", "exclude", "1001", "1000")
    assert ".risutools.yaml" in line
    (tmp_path / ".risutools.yaml").write_text(
        json.dumps({"exclude": [f"x{i}*" for i in range(999)] + ["doc.*"]}), "utf-8")
    done = run_cli("validate", tmp_path)
    assert done.returncode == 2 and "no-documents" in done.stderr, done.stderr


@pytest.mark.parametrize("pattern", ["*", "*.json", "d?c.json", "[a-d]oc.json", "[!x]oc.json",
                                     "sub/*", "*/*", "**", "[", "a[", "x|y", "(doc).json",
                                     "doc.json\\", ".*", "^doc", "doc$", "*a*a*a*a*a*b"])
@pytest.mark.parametrize("rel", ["doc.json", "sub/doc.json", "(doc).json", "x|y", "a[",
                                 "sub/deep/doc.json", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                                 "doc.json\n", "[", ".hidden.json"])
def test_the_globs_match_as_fnmatch_does(pattern: str, rel: str) -> None:
    name = rel.rsplit("/", 1)[-1]
    want = fnmatch(rel, pattern) or fnmatch(name, pattern)
    assert excluded((pattern,), rel, name) is want
    assert excluded(("zz", pattern, "yy"), rel, name) is want


# ---- a fixture read whole: the values' memory -----------------------------------------

#: more containers than YAML's bound of the values' memory allows (256 bytes each, 160 MiB)
_MANY = 700_000
_TOO_MANY = "bad-fixture: too many values: more than the memory bound allows"


@pytest.mark.parametrize("suffix", [".json", ".ndjson"])
def test_a_fixture_read_whole_is_held_to_the_values_bound(tmp_path: Path, suffix: str) -> None:
    """YAML's values were bounded (160 MiB estimated) and JSON's were not: a 64 MiB JSON
    fixture of ``{}`` turns built 8 GB of objects.  An NDJSON fixture that cannot be
    streamed (a line ended by a lone carriage return) is read whole too (``replay run``
    and ``replay monitor`` stream any other).  Each is one line, the same."""
    fixture = tmp_path / ("f" + suffix)
    if suffix == ".ndjson":
        head = json.dumps({"fixture": "conversation-v1", "name": "m",
                           "messages": [{"role": "user", "content": "a"}]})
        fixture.write_text(head + "\r" + "{}\n" * _MANY, "utf-8")
    else:
        fixture.write_text('{"fixture": "conversation-v1", "name": "m", "turns": ['
                           + ",".join(["{}"] * _MANY) + "]}", "utf-8")
    done = run_cli("replay", "monitor", "-x", fixture, "-o", tmp_path / "out" / "r.json")
    line = _refused(done, "bad-fixture")
    assert _TOO_MANY in line
    assert not (tmp_path / "out").exists()


def test_punctuation_inside_strings_does_not_count(tmp_path: Path) -> None:
    """The first count takes every ``,`` ``:`` ``{`` ``[`` for a value (an upper bound); a
    text past it is counted again without its strings: commas and braces in a message's
    content, escaped quotes and backslashes included, are text (and the same turns as
    values are refused)."""
    content = '\\"{[,:' * 600_000 + "\\\\"
    fixture = tmp_path / "f.json"
    fixture.write_text('{"fixture": "conversation-v1", "name": "m", "turns": [{"append": '
                       '[{"role": "user", "content": "' + content + '"}]}]}', "utf-8")
    done = run_cli("replay", "monitor", "-x", fixture, "-o", tmp_path / "out" / "r.json")
    assert done.returncode == 0, done.stderr
    fixture.write_text('{"fixture": "conversation-v1", "name": "m", "turns": [{"append": '
                       '[{"role": "user", "content": "x"}]}' + ', {}' * _MANY + "]}", "utf-8")
    done = run_cli("replay", "monitor", "-x", fixture, "-o", tmp_path / "out" / "r.json")
    assert _TOO_MANY in _refused(done, "bad-fixture")


def test_an_alias_is_refused_in_words_true_of_every_yaml_file(tmp_path: Path) -> None:
    """A fixture or a configuration is no catalog document: the alias refusal said 'not
    allowed in a catalog document ;' (a space before the semicolon) for every YAML file."""
    fixture = tmp_path / "f.yaml"
    fixture.write_text("fixture: conversation-v1\nname: a\nx: &a [1]\nturns: *a\n", "utf-8")
    done = run_cli("replay", "monitor", "-x", fixture, "-o", tmp_path / "out" / "r.json")
    line = _refused(done, "bad-fixture", "line 4", "YAML alias *a is not allowed; write the "
                    "value out instead")
    assert "catalog document" not in line and " ;" not in line
    (tmp_path / ".git").mkdir()
    (tmp_path / ".risutools.yaml").write_text("exclude: &e [a]\ncapabilities: *e\n", "utf-8")
    shutil.copyfile(DOC, tmp_path / "doc.json")
    done = run_cli("validate", tmp_path)
    line = _refused(done, "config-invalid", "line 2", "YAML alias *e is not allowed")
    assert "catalog document" not in line


# ---- Markdown: no link, mention or emoji GitHub makes of a value's bare text ---------

#: what GitHub turns into a link (GFM's autolinks), a notification or an emoji, and emphasis
LINKY = ("see https://evil.example/x?q=1 and HTTP://evil.example, www.evil.example, "
         "WWW.evil.example, mail a@evil.example, ping @org/team, :warning: _em_ __b__")


def _gfm_marks(md: str) -> list[str]:
    """The bits of ``md`` (code spans left out) GitHub would make a link, mention, emoji or
    emphasis of: a scheme's ``:``, ``www.``, an ``@``, ``:name:``, ``_x_``, unescaped."""
    prose = re.sub(r"`[^`\n]*`", "`code`", md)
    found = re.findall(r"(?i)https?:|(?<![\w\\])www\.|(?<!\\)@\w|(?<!\\):warning(?<!\\):"
                       r"|(?<![\w\\])_em(?<!\\)_|(?<!\\)__b", prose)
    return found


def test_markdown_makes_no_link_mention_or_emoji_of_a_value() -> None:
    assert _gfm_marks(LINKY) != []  # (the detector sees them all)
    shown = markdown_value(LINKY)
    assert _gfm_marks(shown) == [], shown
    # a backslash before ASCII punctuation is only that character: the text reads the same
    assert re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", shown) == LINKY
    assert markdown_value("awww.x snake_case_name") == "awww.x snake\\_case\\_name"


def test_a_replay_report_s_markdown_links_nothing(tmp_path: Path) -> None:
    fixture = ROOT / "fixtures" / "replay" / "anchor-edit.yaml"
    report = run_component(_doc(tmp_path), fixture, output=tmp_path / "r.json").report
    assert report is not None
    report["config"]["tokenizer_profile"] = LINKY
    report["monitor_notes"] = [LINKY]
    md = render_markdown(report)
    assert "evil.example" in md
    assert _gfm_marks(md) == [], _gfm_marks(md)


# ---- NDJSON lines: where they end -----------------------------------------------------


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("command", ["run", "monitor"])
def test_a_line_separator_inside_a_message_is_text(tmp_path: Path, char: str, newline: str,
                                                   command: str) -> None:
    """JSON lets a string hold U+2028, U+2029 and U+0085 as they are (``json.dumps(...,
    ensure_ascii=False)`` and orjson write them so); an NDJSON fixture holding one in a
    message was read whole and split there: 'line 2: not valid JSON: Unterminated string
    starting at at column 41' (for a valid file)."""
    content = f"a{char}b"
    lines = [json.dumps({"fixture": "conversation-v1", "name": "ls"}),
             json.dumps({"append": [{"role": "user", "content": content}]},
                        ensure_ascii=False),
             json.dumps({"append": [{"role": "user", "content": "c"}]})]
    fixture = tmp_path / "f.ndjson"
    fixture.write_bytes(newline.join(lines).encode("utf-8") + newline.encode())
    out = tmp_path / "out" / "r.json"
    done = run_cli("replay", command, _doc(tmp_path), "-x", fixture, "-o", out)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text("utf-8"))["summary"]["requests"] == 2
    assert load_fixture(fixture).turns[0].append[0].content == content


@pytest.mark.parametrize(("text", "why"), [
    ('{"a": "b', "Unterminated string starting at line 1 column 7;"),
    ('{"a": "b\x01"}', "Invalid control character at line 1 column 9;"),
])
def test_a_json_syntax_error_says_at_once(tmp_path: Path, text: str, why: str) -> None:
    """``json``'s 'Unterminated string starting at' was followed by ' at line ...'."""
    fixture = tmp_path / "f.json"
    fixture.write_text(text, "utf-8")
    done = run_cli("replay", "monitor", "-x", fixture, "-o", tmp_path / "out" / "r.json")
    line = _refused(done, "bad-fixture", "not valid JSON: " + why)
    assert " at at " not in line


@pytest.mark.parametrize(("name", "data", "why"), [
    ("c.yaml", b"max_context: 100\n---\nx: 1\n", "line 3: config-invalid: several YAML"),
    ("c.yaml", b"max_context: [\n", "config-invalid: not valid YAML"),
    ("c.json", b'{"max_context": 1,}', "config-invalid: not valid JSON"),
    ("c.yaml", b"max_context: 5\nmax_context: 6\n", "line 2: config-invalid: duplicate key"),
    ("c.yaml", b"a: \xff", "config-invalid: not UTF-8"),
    ("c.yaml", b"x: &a 1\ny: *a\n", "line 2: config-invalid: YAML alias *a"),
])
@pytest.mark.parametrize("command", ["run", "monitor"])
def test_a_replay_config_that_cannot_be_parsed_is_config_invalid(
        tmp_path: Path, name: str, data: bytes, why: str, command: str) -> None:
    """The settings file's parse errors were ``config-invalid``, the replay's ``--config``
    file's ``config-bad-value`` (a value of the wrong type or out of range)."""
    config = tmp_path / name
    config.write_bytes(data)
    fixture = _fixture(tmp_path, "yaml", {"append": [HI]})
    done = run_cli("replay", command, _doc(tmp_path), "-x", fixture, "--config", config,
                   "-o", tmp_path / "out" / "r.json")
    line = _refused(done, "config-invalid", why)
    assert line.startswith(f"risutools: {config}: ")


@pytest.mark.parametrize("kind", ["yaml", "ndjson"])
@pytest.mark.parametrize("value", [False, 0, "", {}])
def test_messages_that_are_no_list_are_refused(tmp_path: Path, kind: str, value: Any) -> None:
    """``messages: false`` (or 0, "", {}) was taken for an empty history (``or []``)."""
    header: dict[str, Any] = {"fixture": "conversation-v1", "name": "m", "messages": value}
    turn = json.dumps({"append": [HI]})
    fixture = tmp_path / f"f.{kind}"
    if kind == "ndjson":
        fixture.write_text(json.dumps(header) + "\n" + turn + "\n", "utf-8")
    else:
        fixture.write_text(json.dumps({**header, "turns": [{"append": [HI]}]}), "utf-8")
    done = run_cli("replay", "monitor", "-x", fixture, "-o", tmp_path / "out" / "r.json")
    _refused(done, "bad-fixture", "messages: bad-fixture: must be a list")


# ---- layered replay configurations: a rule between two keys is the merged one's ------


def _layers(tmp_path: Path, catalog: dict[str, Any] | None, fixture: dict[str, Any] | None,
            config: dict[str, Any] | None) -> Any:
    """``replay run`` with the catalog's ``replay:`` section, the fixture's ``config`` and a
    ``--config`` file as given (None: absent)."""
    (tmp_path / ".git").mkdir(exist_ok=True)
    settings = tmp_path / ".risutools.yaml"
    settings.unlink(missing_ok=True)
    if catalog is not None:
        settings.write_text(json.dumps({"replay": catalog}), "utf-8")
    fx = _fixture(tmp_path, "yaml", {"append": [HI]}, config=fixture)
    args: list[Any] = ["replay", "run", _doc(tmp_path), "-x", fx]
    if config is not None:
        (tmp_path / "c.json").write_text(json.dumps(config), "utf-8")
        args += ["--config", tmp_path / "c.json"]
    return run_cli(*args, "-o", tmp_path / "out" / "r.json")


@pytest.mark.parametrize(("catalog", "fixture", "config"), [
    ({"critical_pct": 10}, {"warning_pct": 20}, None),
    ({"warning_pct": 20}, {"critical_pct": 10}, None),
    ({"warning_pct": 20}, None, {"critical_pct": 10}),
    (None, {"warning_pct": 20}, {"critical_pct": 10}),
])
def test_a_layer_is_checked_against_the_layers_below_it(
        tmp_path: Path, catalog: dict[str, Any] | None, fixture: dict[str, Any] | None,
        config: dict[str, Any] | None) -> None:
    """A fixture's ``warning_pct: 20`` was refused against the default ``critical_pct``
    (25) though the catalog set ``critical_pct: 10``; a catalog's ``warning_pct: 20`` was
    refused by every command, validate too, though each fixture may set ``critical_pct``."""
    done = _layers(tmp_path, catalog, fixture, config)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "out" / "r.json").read_text("utf-8"))
    assert (report["config"]["warning_pct"], report["config"]["critical_pct"]) == (20, 10)
    if catalog is not None:
        assert run_cli("validate", tmp_path / "doc.json").returncode == 0


@pytest.mark.parametrize(("catalog", "fixture", "config", "blamed"), [
    ({"warning_pct": 20}, None, None, ".risutools.yaml"),
    ({"warning_pct": 20}, {"critical_pct": 10}, {"critical_pct": 30}, "c.json"),
    ({"warning_pct": 20}, {"critical_pct": 30}, {"debounce": 3}, "f.yaml"),
])
def test_a_broken_rule_between_keys_names_the_last_file_setting_one(
        tmp_path: Path, catalog: dict[str, Any] | None, fixture: dict[str, Any] | None,
        config: dict[str, Any] | None, blamed: str) -> None:
    """(The catalog's section alone is no error: validate reads it.)"""
    done = _layers(tmp_path, catalog, fixture, config)
    line = _refused(done, "config-bad-value", "critical_pct: must not exceed warning_pct (20)")
    assert line.split(": ")[1].endswith(blamed), line
    assert run_cli("validate", tmp_path / "doc.json").returncode == 0


@pytest.mark.parametrize("value", ["a\x00b", "loop"])
@pytest.mark.parametrize("command", ["validate", "review"])
def test_a_signers_path_the_system_cannot_resolve_is_one_line(tmp_path: Path, value: str,
                                                              command: str) -> None:
    """``catalog.allowed_signers`` with a NUL byte (or a symbolic link loop) was an internal
    error (ValueError: embedded null byte); ``sources:`` said why in one line, as it does."""
    (tmp_path / ".git").mkdir()
    shutil.copyfile(DOC, tmp_path / "doc.json")
    (tmp_path / "loop").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop")
    (tmp_path / ".risutools.yaml").write_text(
        json.dumps({"catalog": {"allowed_signers": value}}), "utf-8")
    done = run_cli(command, tmp_path / "doc.json" if command == "validate" else tmp_path)
    _refused(done, "config-bad-value", "catalog.allowed_signers",
             "allowed_signers: cannot resolve the path")


@pytest.mark.parametrize("link", ["loop", "nowhere"])
@pytest.mark.parametrize("command", ["replay", "validate"])
def test_a_link_above_an_output_that_leads_nowhere_is_not_called_a_file(
        tmp_path: Path, link: str, command: str) -> None:
    """``-o lp/r.json`` where ``lp`` is a symbolic link loop (or a link to nothing) said
    'lp is a file, not a folder'."""
    (tmp_path / "lp").symlink_to("lp" if link == "loop" else "nowhere")
    out = tmp_path / "lp" / "r.json"
    if command == "replay":
        done = run_cli("replay", "run", _doc(tmp_path), "-x",
                       ROOT / "fixtures" / "replay" / "anchor-edit.yaml", "-o", out)
    else:
        done = run_cli("validate", DOC, "-f", "json", "-o", out)
    line = _refused(done, "unwritable", "lp: unwritable: cannot write: ")
    assert "is a file" not in line
