"""The tenth pass over the readers and the batch commands (stop 64).

- One file that runs out of memory ended the whole batch with an internal error:
  ``analyze a b`` printed nothing for ``b``, ``ingest -j 1`` wrote no catalog (``-j 2``
  already said ``worker-failed`` and went on).  Now the file is one ``too-large`` line and
  the others go on.
- ``unpack --force`` wrote over the file it unpacked (an asset landing at its path, or its
  ``manifest.json``); now a usage line.
- An empty path ``''`` was read as the current folder (``unpack -o ''``, ``pack ''``,
  ``ingest -o ''``, ``hash ''``): now a usage line, for every path parameter.
- A control character in YAML gave PyYAML's own text and no line; now one line, at its line.
- A preset's non-string keys were named as Python writes them (``1.0``, ``True``), where
  RisuAI's object names them as JavaScript does (``1``, ``true``), so what a reviewer saw
  was not what RisuAI loads.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from harness import ROOT, run_cli

SOURCES = ROOT / "fixtures" / "sources"
CUTTER = SOURCES / "174678332_context-cutter.risum"
MOOD = SOURCES / "186123400_mood-tracker.json"


def test_analyze_goes_on_past_a_file_out_of_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    import risutools.commands.analyze as cmd

    real = cmd.analyze_result

    def flaky(path: str, *a: Any, **k: Any) -> Any:
        if path == str(CUTTER):
            raise MemoryError
        return real(path, *a, **k)

    monkeypatch.setattr(cmd, "analyze_result", flaky)
    r = run_cli("analyze", "--exit-zero", "-f", "json", CUTTER, MOOD)
    assert r.returncode == 2, r.stderr
    assert "too-large: not enough memory" in r.stderr and "Traceback" not in r.stderr
    assert "mood" in r.stdout.lower()  # (the other file's report)


def test_ingest_in_process_goes_on_past_a_file_out_of_memory(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import risutools.catalog.pool as pool

    real = pool.process_file

    def flaky(path: str, *a: Any, **k: Any) -> Any:
        if Path(path).name == CUTTER.name:
            raise MemoryError
        return real(path, *a, **k)

    monkeypatch.setattr(pool, "process_file", flaky)
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(CUTTER, src)
    shutil.copy(MOOD, src)
    r = run_cli("ingest", src, "-o", tmp_path / "cat", "-j", "1", "--no-cache")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "too-large: not enough memory" in r.stdout + r.stderr
    assert any("mood-tracker" in p.name for p in (tmp_path / "cat").iterdir())


# ---- unpack never writes over the file it unpacks -----------------------------------------

def test_unpack_force_never_writes_over_its_input(tmp_path: Path) -> None:
    x = tmp_path / "x"
    (x / "assets").mkdir(parents=True)
    src = x / "assets" / "smile.png"  # (the asset pack's own asset lands there)
    shutil.copy(SOURCES / "183120336_asset-pack.risum", src)
    before = src.read_bytes()
    r = run_cli("unpack", src, "-o", x, "--force")
    assert r.returncode == 2 and "over the file being unpacked" in r.stderr
    assert src.read_bytes() == before
    w = tmp_path / "w"
    w.mkdir()
    shutil.copy(MOOD, w / "manifest.json")
    r = run_cli("unpack", w / "manifest.json", "-o", w, "--force")
    assert r.returncode == 2 and (w / "manifest.json").read_bytes() == MOOD.read_bytes()


# ---- an empty path is no path ----------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("unpack", str(SOURCES / "183120336_asset-pack.risum"), "-o", ""),
    ("pack", "", "-o", "out.risum"),
    ("ingest", str(SOURCES), "-o", ""),
    ("hash", ""),
    ("validate", ""),
    ("inspect", ""),
    ("analyze", ""),
    ("validate", str(ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"), "-o", ""),
    ("review", str(ROOT / "fixtures" / "documents"), "-o", ""),
])
def test_an_empty_path_is_refused(tmp_path: Path, args: tuple[str, ...]) -> None:
    r = run_cli(*args, cwd=tmp_path)
    assert r.returncode == 2 and "empty path" in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []  # (nothing written into the current folder)


# ---- a YAML control character: its line, one line of ours ---------------------------------

@pytest.mark.parametrize("ch", ["\x01", "\x00", "\x1b"])
def test_a_yaml_control_character_is_named_at_its_line(tmp_path: Path, ch: str) -> None:
    (tmp_path / "ctl.yaml").write_text(f'component_id: x\nz: "{ch}"\n', "utf-8")
    r = run_cli("hash", "ctl.yaml", cwd=tmp_path)
    assert r.returncode == 2
    assert "ctl.yaml:2:" in r.stderr and "not allowed in YAML" in r.stderr
    assert "<unicode string>" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


# ---- a preset's keys as RisuAI's object names them ----------------------------------------

def test_preset_keys_are_named_as_javascript_names_them() -> None:
    import msgpack

    from risutools.formats.risup import _unpack

    pairs = [(1.0, "float-one"), ("1", "string-one"), (True, "t"), (None, "n"), (b"k", "b"),
             (2.5, "x"), (1e21, "big")]
    data = b"\x87" + b"".join(msgpack.packb(k, use_bin_type=True) + msgpack.packb(v)
                              for k, v in pairs)
    assert _unpack(data, "preset") == {"1": "string-one", "true": "t", "null": "n", "107": "b",
                                       "2.5": "x", "1e+21": "big"}


@pytest.mark.parametrize(("x", "text"), [
    (1.0, "1"), (-2.0, "-2"), (1e21, "1e+21"), (1e20, "100000000000000000000"),
    (1.234e-7, "1.234e-7"), (1e-6, "0.000001"), (0.000123, "0.000123"), (0.1, "0.1"),
    (5e-324, "5e-324"), (-0.0, "0"), (float("nan"), "NaN"), (float("-inf"), "-Infinity"),
])
def test_js_number_text(x: float, text: str) -> None:
    from risutools.jsontypes import js_number_text

    assert js_number_text(x) == text


# ---- Python 3.10 reads any integer's digits: every json reading bounds them ----------------

def test_bounded_int_refuses_past_the_default_bound_with_the_known_words() -> None:
    import json

    from risutools.jsonplaces import DEFAULT_INT_DIGITS, bounded_int, int_too_long

    assert json.loads("[-123, 4]", parse_int=bounded_int) == [-123, 4]
    assert bounded_int("9" * DEFAULT_INT_DIGITS) == int("9" * DEFAULT_INT_DIGITS)
    with pytest.raises(ValueError) as info:
        json.loads('{"n": ' + "9" * (DEFAULT_INT_DIGITS + 1) + "}", parse_int=bounded_int)
    assert int_too_long(info.value) is not None


def test_a_reader_refuses_a_long_integer_where_python_has_no_bound(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import risutools.formats.jsonsafe as jsonsafe
    from risutools.errors import FormatError
    from risutools.jsonplaces import bounded_int

    monkeypatch.setattr(jsonsafe, "PARSE_INT", bounded_int)  # (as on Python 3.10)
    with pytest.raises(FormatError) as info:
        jsonsafe.loads_object(('{"n": ' + "7" * 5000 + "}").encode(), where="module.json")
    assert "more than" in str(info.value) and "digits" in str(info.value)
