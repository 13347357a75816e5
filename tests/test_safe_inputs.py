"""Every JSON/YAML file risutools reads as data goes through the same guards
(contract.loaders.parse_value): replay fixtures, replay configurations, component files
and curator notes refuse YAML aliases, non-JSON tags, duplicate keys and NaN alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from risutools.errors import ConfigError, DocumentError, RisuError
from risutools.projection import load_notes
from risutools.replay.component import load_component
from risutools.replay.fixture import load_fixture
from risutools.settings.replay import read_replay_layer
from risutools.values import parse_value

ALIAS_BOMB = "a: &a [1, 2]\nb: [*a, *a]\n"
TAGGED = "a: !!python/object:os.system {}\n"
DUPLICATE = "a: 1\na: 2\n"


@pytest.mark.parametrize(
    ("text", "fmt", "needle"),
    [
        (ALIAS_BOMB, "yaml", "alias"),
        (TAGGED, "yaml", "tag"),
        (DUPLICATE, "yaml", "duplicate"),
        ('{"a": 1, "a": 2}', "json", "duplicate"),
        ('{"a": NaN}', "json", "NaN"),
        ("a: 1\n---\nb: 2\n", "yaml", "several"),
    ],
)
def test_parse_value_refuses(text: str, fmt: str, needle: str) -> None:
    with pytest.raises(DocumentError) as info:
        parse_value(text, "x", fmt)
    assert needle.lower() in info.value.why.lower()
    assert "\n" not in info.value.one_line()


def test_parse_value_accepts_plain_values() -> None:
    assert parse_value("a: [1, 2]\nb: 한국어\n", "x", "yaml") == {"a": [1, 2], "b": "한국어"}
    assert parse_value('{"a": [1, 2]}', "x", "json") == {"a": [1, 2]}
    assert parse_value("# only a comment\n", "x", "yaml") is None


def test_replay_fixture_refuses_yaml_alias(tmp_path: Path) -> None:
    p = tmp_path / "f.yaml"
    p.write_text(
        "fixture: conversation-v1\nname: x\nmessages: &m [{role: user, content: hi}]\n"
        "turns: [{append: *m}]\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as info:
        load_fixture(p)
    assert "alias" in info.value.one_line() and str(p) in info.value.one_line()


def test_replay_config_refuses_duplicate_key(tmp_path: Path) -> None:
    p = tmp_path / "c.yaml"
    p.write_text("max_context: 100\nmax_context: 200\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        read_replay_layer(p)
    assert "duplicate" in info.value.why


def test_component_file_refuses_nan(tmp_path: Path) -> None:
    p = tmp_path / "doc.json"
    p.write_text('{"component_id": "module.risu.1.x", "x": NaN}', encoding="utf-8")
    with pytest.raises(RisuError) as info:
        load_component(p)
    assert "NaN" in info.value.why


def test_notes_refuse_tags_and_aliases(tmp_path: Path) -> None:
    p = tmp_path / "n.yaml"
    p.write_text("notes: notes-v1\nslug: &s x\ntags: [*s]\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_notes(p)
    assert info.value.code == "notes-invalid" and "alias" in info.value.why


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ('{"append": [], "append": []}', "duplicate key 'append'"),
        ('{"metrics": {"used_pct": NaN}}', "NaN"),
    ],
)
def test_ndjson_fixture_lines_have_the_same_guards(tmp_path: Path, line: str, needle: str) -> None:
    p = tmp_path / "f.ndjson"
    p.write_text('{"fixture": "conversation-v1", "name": "x"}\n{}\n' + line + "\n",
                 encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_fixture(p)
    assert info.value.where == "line 3" and needle in info.value.why


def _fixture_file(tmp_path: Path, data: bytes) -> Path:
    p = tmp_path / "f.yaml"
    p.write_bytes(data)
    return p


def _config_file(tmp_path: Path, data: bytes) -> Path:
    p = tmp_path / "c.yaml"
    p.write_bytes(data)
    return p


def _component_file(tmp_path: Path, data: bytes) -> Path:
    p = tmp_path / "d.json"
    p.write_bytes(data)
    return p


def _notes_file(tmp_path: Path, data: bytes) -> Path:
    p = tmp_path / "n.yaml"
    p.write_bytes(data)
    return p


@pytest.mark.parametrize(
    ("make", "load"),
    [
        (_fixture_file, load_fixture),
        (_config_file, read_replay_layer),
        (_component_file, load_component),
        (_notes_file, load_notes),
    ],
)
def test_every_data_file_reports_bad_utf8_alike(tmp_path: Path, make, load) -> None:  # type: ignore[no-untyped-def]
    # one decoder for all: the byte, its offset and the fix, as `validate` says it
    with pytest.raises(RisuError) as info:
        load(make(tmp_path, b"a: 1\nb: \xff\n"))
    assert "not UTF-8: byte 0xff at byte offset 8" in info.value.why
    assert "\n" not in info.value.one_line()
    with pytest.raises(RisuError) as info:
        load(make(tmp_path, b"\xff\xfea\x00:\x00"))
    assert "UTF-16" in info.value.why


def test_empty_json_data_files_say_empty(tmp_path: Path) -> None:
    for name, load in (("f.json", load_fixture), ("c.json", read_replay_layer),
                       ("d.json", load_component)):
        p = tmp_path / name
        p.write_bytes(b"  \n")
        with pytest.raises(RisuError) as info:
            load(p)
        assert "empty" in info.value.why, name
