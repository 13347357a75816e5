"""A replay's report streamed from spools (``replay/spool.py``) is the report held whole.

The references are ``json`` itself (``json.dumps(..., indent=1, sort_keys=True)`` for the
file, the separators of the canonical form for the hash) and, for the renderings and the
rows chosen for their tables, the same report with its rows in a plain list: the spool
only changes where the rows wait."""

from __future__ import annotations

import errno
import hashlib
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

from risutools.errors import RisuError
from risutools.fsio import atomic_write
from risutools.replay import api as api_mod
from risutools.replay import spool as spool_mod
from risutools.replay.api import run_component, write_report_files
from risutools.replay.fixture import build_fixture, load_fixture
from risutools.replay.render_html import render_html
from risutools.replay.render_markdown import interesting, pick_rows, render_markdown
from risutools.replay.run import (
    build_report,
    replay_cutter,
    replay_monitor,
    report_bytes,
    verify_report_hash,
)
from risutools.replay.spool import Spool, canonical_pieces, indented_pieces
from risutools.replay.synth import synthesize
from risutools.settings.replay import build_config, load_replay_config

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"


def _json_file(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode()


def _json_hash(report: dict[str, Any]) -> str:
    rest = {k: v for k, v in report.items() if k != "report_sha256"}
    data = json.dumps(rest, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                      allow_nan=False).encode()
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _plain(report: dict[str, Any]) -> dict[str, Any]:
    """The report with its spools read back into lists."""
    return {k: list(v) if isinstance(v, Spool) else v for k, v in report.items()}


def _both(fx_path: Path, monitor: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    fx = load_fixture(fx_path)
    cfg = load_replay_config(None, fx.config)
    sim = replay_monitor if monitor else replay_cutter
    return (build_report(sim(fx, cfg), fx, cfg, None),
            build_report(sim(fx, cfg, spool=True), fx, cfg, None))


@pytest.mark.parametrize("batch", [1, 2, 3, 512])
@pytest.mark.parametrize("name", ["anchor-edit.yaml", "toggle.yaml", "monitor.yaml",
                                  "budget-unreachable.yaml", "anchor-delete.yaml",
                                  "protected-tools.yaml"])
def test_a_spooled_report_is_the_report_held_whole(name: str, batch: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spool_mod, "BATCH", batch)
    whole, spooled = _both(FIX / name, monitor=name == "monitor.yaml")
    assert isinstance(spooled["requests"], Spool) and isinstance(spooled["alerts"], Spool)
    plain = _plain(spooled)
    assert plain == whole
    assert report_bytes(spooled) == _json_file(plain) == report_bytes(whole)
    assert spooled["report_sha256"] == _json_hash(plain) == whole["report_sha256"]
    assert verify_report_hash(spooled)
    assert render_markdown(spooled) == render_markdown(whole)
    assert render_html(spooled) == render_html(whole)


def test_a_long_run_in_many_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the HTML table's and the Markdown list's caps, with the chart's lines and
    markers grouped: the streamed renderings are those of the rows in a list."""
    monkeypatch.setattr(spool_mod, "BATCH", 64)
    monkeypatch.setattr(spool_mod, "IN_MEMORY", 4096)  # the files move to the temp folder
    fx = build_fixture(synthesize(3, 3000, edit_rate=0.05, delete_rate=0.02, tool_rate=0.15))
    cfg = build_config({"max_context": 8000, "preserve_latest": 8, "trim_percent": 10})
    whole = build_report(replay_cutter(fx, cfg), fx, cfg, None)
    spooled = build_report(replay_cutter(fx, cfg, spool=True), fx, cfg, None)
    assert len(spooled["requests"]) == len(fx.turns) > 1000
    assert report_bytes(spooled) == _json_file(_plain(spooled)) == report_bytes(whole)
    assert spooled["report_sha256"] == whole["report_sha256"]
    assert render_markdown(spooled) == render_markdown(whole)
    assert render_html(spooled) == render_html(whole)


def test_the_fallback_writer_for_values_orjson_spells_otherwise() -> None:
    """A float ``repr`` writes with an exponent, and an integer past 64 bits, in a batch:
    that batch is written by ``json``, the others by orjson; the bytes are json's."""
    sp = Spool()
    rows: list[dict[str, Any]] = [{"request": i, "x": {"pct": 0.5, "n": [i, None, True]}}
                                  for i in range(1200)]
    rows[5]["x"]["pct"] = 1e-05
    rows[700]["x"]["n"] = [2**70]
    for r in rows:
        sp.append(r)
    doc = {"a": 1, "requests": sp, "z": {"k": "값"}, "alerts": Spool()}
    ref = {"a": 1, "requests": rows, "z": {"k": "값"}, "alerts": []}
    assert b"".join(indented_pieces(doc)) == _json_file(ref)
    canon = json.dumps(ref, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    assert b"".join(canonical_pieces(doc)) == canon.encode()
    assert list(sp) == rows and len(sp) == 1200
    assert sp[5] == rows[5] and sp[-1] == rows[-1] and sp[10:13] == rows[10:13]
    with pytest.raises(IndexError):
        sp[1200]


@pytest.mark.parametrize("batch", [1, 2, 3, 64])
def test_rows_of_every_shape_are_written_as_json_writes_them(
        batch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch is indented inside a list (its rows two levels deep, as in the report) and
    halved in one pass, or level by level when a string holds two spaces: rows of random
    shapes (empty and nested containers, strings with runs of spaces, newlines, tabs,
    quotes, non-ASCII; a float spelled otherwise by orjson now and then) come out as
    ``json`` writes them, in either form."""
    monkeypatch.setattr(spool_mod, "BATCH", batch)
    rng = random.Random(23)
    texts = ["", "a  b", "   ", "x\ny", "\t", 'q"u', "값  값", "a b", "\\  ", "  :  ,"]

    def value(depth: int) -> Any:
        pick = rng.randrange(9 if depth < 4 else 5)
        if pick == 0:
            return rng.choice(texts)
        if pick == 1:
            return rng.randrange(-10**6, 10**6)
        if pick == 2:
            return rng.choice([True, False, None])
        if pick == 3:
            return rng.choice([0.5, 97.8625, 0.0, 1e-05]) if rng.random() < 0.1 else 2.25
        if pick == 4:
            return rng.choice(texts) + str(rng.random())
        if pick in (5, 6):
            return {rng.choice(texts) + str(i): value(depth + 1)
                    for i in range(rng.randrange(4))}
        return [value(depth + 1) for _ in range(rng.randrange(4))]

    rows = [{"request": i, "v": value(0), "w": {"x": value(1)}} for i in range(300)]
    sp = Spool()
    for r in rows:
        sp.append(r)
    doc = {"alerts": Spool(), "requests": sp, "z": 1}
    ref = {"alerts": [], "requests": rows, "z": 1}
    assert b"".join(indented_pieces(doc)) == _json_file(ref)
    canon = json.dumps(ref, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    assert b"".join(canonical_pieces(doc)) == canon.encode()


def test_a_spool_keeps_one_batch_of_rows() -> None:
    sp = Spool()
    for i in range(3 * spool_mod.BATCH + 7):
        sp.append({"request": i})
        assert len(sp._pending) < spool_mod.BATCH
    assert len(sp) == 3 * spool_mod.BATCH + 7


def _reference_pick(rows: list[dict[str, Any]], failing: set[int], cap: int
                    ) -> tuple[list[dict[str, Any]], int]:
    """What the renderings did with the rows whole (the code before the spool)."""
    chosen = [r for r in rows if r["request"] in failing or interesting(r)]
    total = len(chosen)
    chosen.sort(key=lambda r: (r["request"] not in failing, r["request"]))
    return sorted(chosen[:cap], key=lambda r: r["request"]), total


def test_pick_rows_is_filter_sort_and_cut() -> None:
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randrange(0, 200)
        rows = [{"request": i + 1, "budget_dropped": int(rng.random() < 0.3),
                 "monitor": {"alert": rng.random() < 0.2}} for i in range(n)]
        rng.shuffle(rows)  # any order: the choice is by request number
        failing = {rng.randrange(1, 201) for _ in range(rng.randrange(4))}
        cap = rng.choice([1, 3, 10, 60])
        assert pick_rows(iter(rows), failing, cap) == _reference_pick(rows, failing, cap)


def test_the_write_path_takes_pieces(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    atomic_write(target, (bytes([i]) * 1000 for i in range(40)))
    assert target.read_bytes() == b"".join(bytes([i]) * 1000 for i in range(40))
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


class _FullDisk(io.BytesIO):
    def write(self, data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_temporary_folder_is_one_line(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spool_mod, "BATCH", 1)
    monkeypatch.setattr(spool_mod, "_temp", _FullDisk)
    doc = Path(__file__).resolve().parents[1] / "fixtures" / "documents" / \
        "seed-000-context-cutter.json"
    with pytest.raises(RisuError) as exc:
        run_component(doc, FIX / "anchor-edit.yaml", output=tmp_path / "r.json")
    line = exc.value.one_line()
    assert "\n" not in line and "unwritable" in line and "No space left" in line
    assert not list(tmp_path.iterdir())


def test_a_full_temporary_folder_is_unwritable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A replay's spool that the temporary folder cannot hold is the error ``unwritable``
    (one line, exit 2), never a bug report."""

    def full(*_a: object, **_k: object) -> None:
        raise OSError(28, "No space left on device")

    s = spool_mod.Spool()
    monkeypatch.setattr(s._back, "write", full)
    with pytest.raises(RisuError) as err:
        for i in range(spool_mod.BATCH):
            s.append({"i": i})
    assert err.value.code == "unwritable" and "No space left" in err.value.why


def test_a_write_only_spool_writes_the_same_forms() -> None:
    """A spool whose rows are not kept to be read back (what ``replay run`` uses, its
    renderings gathered as the rows are made) writes the very bytes of one that is; its
    rows read back are refused, never made up."""
    rows: list[dict[str, Any]] = [{"request": i, "ops": {"b": i, "a": None}, "p": 0.25}
                                  for i in range(1100)]
    rows[3]["p"] = 1e-05
    kept, bare = Spool(), Spool(readable=False)
    for r in rows:
        kept.append(r)
        bare.append(r)
    assert len(bare) == len(kept) == 1100
    assert b"".join(bare.canonical_body()) == b"".join(kept.canonical_body())
    assert b"".join(bare.indented_body()) == b"".join(kept.indented_body())
    with pytest.raises(RuntimeError, match="not kept"):
        list(bare)
    bare.close()


def test_views_that_do_not_fit_run_the_replay_again(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``replay run`` keeps no rows to read back; if its gathered views did not fit the
    report, it would run again with its rows kept: the files are the same either way."""
    from risutools.replay.row_views import RowViews

    fixture = tmp_path / "f.ndjson"
    fixture.write_text('{"fixture": "conversation-v1", "name": "n"}\n' + "".join(
        f'{{"append": [{{"role": "user", "content": "{"x" * (i % 40)}"}}]}}\n'
        for i in range(900)))
    comp = Path(__file__).parents[1] / "fixtures" / "documents" / "seed-000-context-cutter.json"
    run_component(comp, fixture, output=tmp_path / "a.json", keep_rows=False)
    calls: list[bool] = []
    fits = RowViews.fits

    def once_not(self: RowViews, report: dict[str, Any]) -> bool:
        calls.append(True)
        return len(calls) > 1 and fits(self, report)

    monkeypatch.setattr(RowViews, "fits", once_not)
    outcome = run_component(comp, fixture, output=tmp_path / "b.json", keep_rows=False)
    assert len(calls) > 1 and outcome.report is not None
    assert len(list(outcome.report["requests"])) == 900  # (the second run's, kept)
    for ext in ("json", "md", "html"):
        a, b = (tmp_path / f"{n}.{ext}" for n in "ab")
        assert a.read_bytes() == b.read_bytes(), ext


@pytest.mark.parametrize(("toggled", "plain", "kept"), [
    (450, 0, True),  # every row worth a look: the page lists them all, read back
    (1100, 300, False),  # past two batches, then rows that are not: the page picks
    (0, 900, False),  # none worth a look from the first
])
def test_a_page_of_every_row_has_its_rows_kept_in_one_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toggled: int, plain: int,
        kept: bool) -> None:
    """``replay run`` keeps its rows to be read back while every row so far is worth a
    look (a toggle at each request): past 400 such rows the page lists them all, read
    from the rows; once one is not, it lets them go.  One run either way (a page of every
    row ran the replay twice), and the files of a run that kept its rows from the start."""
    fixture = tmp_path / "f.ndjson"
    toggles = (["true", "false", "true"] * toggled)[:toggled]
    fixture.write_text('{"fixture": "conversation-v1", "name": "n"}\n' + "".join(
        f'{{"append": [{{"role": "user", "content": "x{i}"}}], "toggle": {t}}}\n'
        for i, t in enumerate(toggles)) + "".join(
        f'{{"append": [{{"role": "user", "content": "y{i}"}}]}}\n' for i in range(plain)))
    comp = Path(__file__).parents[1] / "fixtures" / "documents" / "seed-000-context-cutter.json"
    runs: list[Any] = []
    real = api_mod.run_simulation

    def counted(*args: Any, **kw: Any) -> Any:
        runs.append(real(*args, **kw))
        return runs[-1]

    monkeypatch.setattr(api_mod, "run_simulation", counted)
    run_component(comp, fixture, output=tmp_path / "a.json", keep_rows=False)
    assert len(runs) == 1 and runs[0].rows.readable is kept
    run_component(comp, fixture, output=tmp_path / "b.json")
    for ext in ("json", "md", "html"):
        a, b = (tmp_path / f"{n}.{ext}" for n in "ab")
        assert a.read_bytes() == b.read_bytes(), ext
    rows = (tmp_path / "a.html").read_text().count("<tr")
    assert rows > 450 if kept else rows < 450


def test_a_spool_keeps_its_rows_while_told() -> None:
    """A spool given a function keeps its rows to be read back while it says so, asked at
    each batch; once not, they are let go (read back: refused), and :meth:`Spool.hold`
    keeps them as they are from then on."""
    rows = [{"request": i} for i in range(1600)]
    answers: list[bool] = []

    def keep() -> bool:
        answers.append(len(answers) < 2)
        return answers[-1]

    told = Spool(readable=keep)
    for r in rows:
        told.append(r)
    assert answers == [True, True, False] and not told.readable
    with pytest.raises(RuntimeError, match="not kept"):
        list(told)
    held = Spool(readable=lambda: False)
    held.extend(rows[:100])
    held.hold()  # (before its first batch: kept, the function never asked)
    held.extend(rows[100:])
    assert held.readable and list(held) == rows
    told.close()
    held.close()


def test_the_report_files_are_the_same_hashed_or_not(tmp_path: Path) -> None:
    """The JSON file's digest is taken only when asked (an update records it): the files
    written are the same either way, and the digest is the written file's."""
    fx = load_fixture(FIX / "anchor-edit.yaml")
    cfg = load_replay_config(None, fx.config)
    written: dict[bool, list[bytes]] = {}
    for hashed in (True, False):
        report = build_report(replay_cutter(fx, cfg, spool=True), fx, cfg, None)
        paths, digest = write_report_files(report, tmp_path / f"{hashed}" / "r.json",
                                           hashed=hashed)
        written[hashed] = [p.read_bytes() for p in paths]
        if hashed:
            assert digest == "sha256:" + hashlib.sha256(written[hashed][0]).hexdigest()
        else:
            assert digest is None
    assert written[True] == written[False]
