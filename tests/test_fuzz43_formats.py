"""Fuzzing pass 43 over the format readers: each defect it found, as a class."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from harness import run_cli

from risutools.formats import read_path
from risutools.formats.risup import encode_preset


def _strict_json(text: str) -> Any:
    """``json.loads`` that refuses NaN and the infinities (as every JSON reader but Python's)."""
    def refuse(token: str) -> Any:
        raise ValueError(f"not JSON: {token}")
    return json.loads(text, parse_constant=refuse)


# ----------------------------------------------------------------- presets: non-finite numbers

NONFINITE = [float("nan"), float("inf"), float("-inf")]


@pytest.mark.parametrize("rpacked", [True, False])
@pytest.mark.parametrize("bad", NONFINITE, ids=["nan", "inf", "-inf"])
def test_a_preset_number_json_cannot_hold_reads_as_null(tmp_path: Path, bad: float,
                                                        rpacked: bool) -> None:
    preset = {"name": "p", "temperature": bad, "list": [1, bad, {"a/b~": bad}],
              "deep": {"x": [[bad]]}, "ok": 0.5}
    p = tmp_path / ("p.risup" if rpacked else "p.risupreset")
    p.write_bytes(encode_preset(preset, rpacked=rpacked))
    [m] = read_path(p)
    assert m.data["temperature"] is None and m.data["ok"] == 0.5
    assert m.data["list"] == [1, None, {"a/b~": None}] and m.data["deep"] == {"x": [[None]]}
    _strict_json(json.dumps(m.data, allow_nan=False))
    [note] = m.anomalies
    assert note.code == "non-finite-number" and note.where == "/temperature"
    assert "4 number(s)" in note.message
    assert "/temperature, /list/1, /list/2/a~1b~0" in note.message  # the first three


def test_a_preset_with_non_finite_numbers_unpacks_and_prints_json(tmp_path: Path) -> None:
    p = tmp_path / "p.risup"
    p.write_bytes(encode_preset({"name": "p", "temperature": float("nan"),
                                 "top_p": float("inf")}))
    done = run_cli("unpack", p, "-o", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "non-finite-number" in done.stderr
    module = _strict_json((tmp_path / "out" / "module.json").read_text("utf-8"))
    assert module["temperature"] is None and module["top_p"] is None
    _strict_json((tmp_path / "out" / "manifest.json").read_text("utf-8"))
    for args in (("inspect", "--json"), ("analyze", "-f", "json"), ("analyze", "-f", "sarif")):
        done = run_cli(*args, p)
        assert done.returncode in (0, 1), done.stderr
        _strict_json(done.stdout)
    done = run_cli("project", p, "--post-id", "1", "-o", tmp_path / "doc.json")
    assert done.returncode == 0, done.stderr
    _strict_json((tmp_path / "doc.json").read_text("utf-8"))


def test_a_preset_without_non_finite_numbers_has_no_note(tmp_path: Path) -> None:
    p = tmp_path / "p.risup"
    p.write_bytes(encode_preset({"name": "p", "temperature": 1e308, "n": -0.0}))
    [m] = read_path(p)
    assert m.anomalies == [] and m.data["temperature"] == 1e308
