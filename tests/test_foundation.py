"""Tests for the shared primitives: errors, canonical hash, atomic writes."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from harness import SEED

from risutools.canonical import canonical, doc_sha256
from risutools.errors import FormatError, WriteConflict
from risutools.fsio import atomic_write, sha256_file
from risutools.resources import load_data_yaml


def test_error_one_line_has_path_where_code_why() -> None:
    err = FormatError("bad-magic", "expected 0x6F", where="offset 0").with_path("x.risum")
    assert err.one_line() == "x.risum: offset 0: bad-magic: expected 0x6F"
    assert "\n" not in str(err)


def test_canonical_sorted_compact_unicode() -> None:
    assert canonical({"b": 1, "a": "한"}) == '{"a":"한","b":1}'.encode()
    with pytest.raises(ValueError):
        canonical({"x": float("nan")})


def test_doc_sha256_matches_hashlib() -> None:
    doc = {"k": [1, 2, {"z": None}]}
    want = hashlib.sha256(b'{"k":[1,2,{"z":null}]}').hexdigest()
    assert doc_sha256(doc) == "sha256:" + want


def test_atomic_write_cas(tmp_path: Path) -> None:
    p = tmp_path / "doc.json"
    atomic_write(p, b"one", expect_absent=True)
    base = sha256_file(p)
    with pytest.raises(WriteConflict):
        atomic_write(p, b"x", expect_absent=True)
    p.write_bytes(b"changed by someone else")
    with pytest.raises(WriteConflict):
        atomic_write(p, b"two", expect_sha256=base)
    assert p.read_bytes() == b"changed by someone else"
    atomic_write(p, b"two", expect_sha256="sha256:" + sha256_file(p))
    assert p.read_bytes() == b"two"
    assert not [q for q in tmp_path.iterdir() if q.name.endswith(".tmp")]


def test_vocabulary_loads_and_names_are_well_formed() -> None:
    import re

    vocab = load_data_yaml("capabilities.yaml")["capabilities"]
    assert "hook.edit_request" in vocab and "context.token_budget" in vocab
    pat = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")
    for name, entry in vocab.items():
        assert pat.match(name), name
        assert entry["kind"] in {"requires", "provides"}
        assert entry["description"]


def test_seed_000_copy_is_intact() -> None:
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    assert doc["contract"] == "matrix-component-v1"
    # the seed's own prompt digest: proves the copy is byte-faithful in its text
    want = hashlib.sha256(doc["projection"]["prompt"].encode()).hexdigest()
    assert doc["projection"]["prompt_sha256"] == "sha256:" + want


def test_cli_version_and_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "risutools", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.startswith("risutools ")
    bad = subprocess.run(
        [sys.executable, "-m", "risutools", "no-such-command"], capture_output=True, text=True
    )
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr


def test_package_data_reads_the_same_with_either_yaml_parser() -> None:
    import yaml

    from risutools.resources import data_dir

    names = sorted(p.name for p in data_dir().glob("*.yaml"))
    assert names  # capabilities.yaml, lua_api.yaml
    for name in names:
        pure = yaml.load((data_dir() / name).read_text("utf-8"), Loader=yaml.SafeLoader)
        got = load_data_yaml(name)
        assert json.dumps(got, default=repr) == json.dumps(pure, default=repr), name
