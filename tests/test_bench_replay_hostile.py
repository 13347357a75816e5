"""``bench/bench_replay_hostile.py`` writes each hostile shape as a fixture ``replay``
reads, of the shape it names, and times ``replay run`` on it (docs/replay.md, Bounds)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from risutools.replay.fixture import load_fixture

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "bench_replay_hostile.py"


def _script(monkeypatch: pytest.MonkeyPatch, base: Path) -> ModuleType:
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("bench_replay_hostile", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "BASE", base)
    return module


def test_each_shape_is_the_fixture_it_names(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    bench = _script(monkeypatch, tmp_path)
    n = 25
    for shape in bench.SHAPES:
        fx = load_fixture(bench.fixture(shape, n))
        turns = fx.turns
        appended = [m for t in turns for m in t.append]
        deletes = [mid for t in turns for mid in t.delete]
        edits = [mid for t in turns for mid, _ in t.edit]
        texts = {m.content for m in appended}
        if shape.startswith("oldest-first"):
            assert deletes == [f"m{i}" for i in range(n)], shape
            assert len(texts) == (1 if shape.endswith("one-text") else n), shape
        elif shape == "results-newest-first":
            assert [m.role for m in appended] == ["assistant"] + ["tool"] * n
            assert deletes == [f"m{i}" for i in reversed(range(n))]
        elif shape == "edits-into-one-text":
            assert edits == [f"m{i}" for i in reversed(range(n))]
            assert {c for t in turns for _, c in t.edit} == {"ok"}
        elif shape == "random-deletes-few-texts":
            assert sorted(deletes) == sorted(f"m{i}" for i in range(n)) != deletes
            assert len(texts) == 4
        else:
            assert len(edits) == n and len(texts) == 4 and not deletes, shape
        assert all(len(t.delete) + len(t.edit) <= 1 for t in turns if not t.append), shape


def test_a_run_is_timed_and_a_bad_call_is_its_usage(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    bench = _script(monkeypatch, tmp_path)
    assert bench.main(["--messages", "40", "results-newest-first"]) == 0
    row = capsys.readouterr().out.splitlines()[-1].split(" | ")
    assert row[0].strip() == "results-newest-first" and row[1] == "42"  # (1 + 40 + 1 turns)
    assert float(row[3]) > 0 and "exit" not in row[4]
    assert bench.main(["no-such-shape"]) == 2
    assert "shapes: oldest-first" in capsys.readouterr().err
