"""A replay report replayed again (gate G6): the evidence a report names is run here, and
what it concluded must be what the reference simulation concludes now.

A replay report is a claim: ``replay run --update`` writes it and records its digest, and
MC203 proves only that the file is the one recorded and reads back as a report whose summary
follows from its own invariants.  A report written by hand, its invariants all "passed",
verifies as well as a real one.  When the fixture it names is at hand (a file of its digest
in the catalog's ``replays/``, where the spec keeps fixtures, or in the source store), the
gate runs the simulation the report names over it, with the configuration the report says
it ran with, and compares the verdicts: the report's verdict, and each invariant's
(passed, failed, warned, not-checked), must be what the run gives, else the gate fails and
says what the run found (an invariant claimed "passed" that nothing exercised is
"not-checked" when replayed).  Counts are not compared: a newer checker may count requests
another way.

Bounded as ``replay run`` is: the fixture is read under its bounds and replayed once, its
rows kept out of memory and not read back (only the verdicts are kept)."""

from __future__ import annotations

from typing import Any

from risutools.canonical import canonical
from risutools.contract.result import ReplayEvidence, verdicts_of
from risutools.errors import RisuError
from risutools.replay.fixture import stream_fixture
from risutools.replay.run import build_report, run_simulation
from risutools.settings.replay import ReplayConfig, build_config

#: the keys of a report's ``config`` that a configuration layer sets (the rest it derives:
#: ``tokens_per_char``, ``target_after_trim``, the ``profiles`` table)
_LAYER_KEYS = ("enabled", "tokenizer_profile", "max_context", "preserve_latest",
               "trim_percent", "protected_roles", "message_overhead", "warning_pct",
               "critical_pct", "debounce", "stale_s")


def _config_of(written: dict[str, Any]) -> ReplayConfig | None:
    """The configuration a report says it ran with, built again; None when it cannot be
    (a key missing, a value refused, or derived values this version derives otherwise)."""
    try:
        cfg = build_config({k: written[k] for k in _LAYER_KEYS if k in written})
    except RisuError:
        return None
    return cfg if cfg.to_dict() == written else None


def replayed_again(ev: ReplayEvidence, doc: dict[str, Any]) -> tuple[bool | None, str]:
    """(whether the run agrees with the report, what was found): True, it concludes what
    the report does; False, it does not (or the fixture is not what the report says it
    replayed); None, it could not be run (no fixture at hand, a configuration this version
    cannot build again): the report stands on its digest alone, and the words say so.
    ``doc``: the document the report is evidence for (the run's report names it)."""
    if ev.fixture_path is None:
        return None, (f"not replayed again: no file of its fixture's digest "
                      f"({ev.fixture_sha256[:19]}…, {ev.fixture_name!r}) in replays/ or the "
                      "source store")
    cfg = _config_of(ev.config)
    if cfg is None:
        return None, "not replayed again: its configuration cannot be built again here"
    key = (ev.fixture_path, ev.fixture_sha256, ev.simulation, canonical(ev.config))
    if key not in _RUNS:  # (many documents may name one fixture: each run once a process)
        if len(_RUNS) >= _MAX_RUNS:
            _RUNS.pop(next(iter(_RUNS)))
        _RUNS[key] = _run(ev, cfg, doc)
    return _compared(ev, _RUNS[key])


#: what a run found: the fixture's name and digest as read, its verdict, each invariant's
#: (by id), its requests
Ran = tuple[str, str, str, tuple[tuple[str, str], ...], int]
#: the runs made in this process: (fixture path, its digest, simulation, configuration) ->
#: what :func:`_run` found (bounded: the oldest let go past :data:`_MAX_RUNS`)
_RUNS: dict[tuple[str, str, str, bytes], Ran | str] = {}
_MAX_RUNS = 64


def _run(ev: ReplayEvidence, cfg: ReplayConfig, doc: dict[str, Any]) -> Ran | str:
    """(the fixture's name and digest as read, the run's verdict, each invariant's), or why
    the fixture cannot be replayed."""
    assert ev.fixture_path is not None
    try:
        fx = stream_fixture(ev.fixture_path)
        run = run_simulation(ev.simulation, fx, cfg, spool=True, readable=False)
        report = build_report(run, fx, cfg, doc)
    except RisuError as exc:
        return f"its fixture {ev.fixture_name!r} cannot be replayed: {exc}"
    except OSError as exc:  # (the rows' temporary folder full or unwritable)
        return (f"its fixture {ev.fixture_name!r} cannot be replayed here: the temporary "
                f"folder: {exc.strerror or exc}")
    summary = report["summary"]
    return (fx.name, fx.sha256, summary["verdict"], verdicts_of(report["invariants"]),
            summary["requests"])


def _compared(ev: ReplayEvidence, ran: Ran | str) -> tuple[bool | None, str]:
    """:func:`replayed_again`'s answer from what :func:`_run` found."""
    if isinstance(ran, str):
        return False, ran
    name, sha, verdict, got, requests = ran
    if sha != ev.fixture_sha256 or name != ev.fixture_name:
        return False, (f"the fixture found for it is not the one it names ({name!r}, "
                       f"{sha[:19]}…)")
    if (verdict, got) != (ev.verdict, ev.verdicts):
        said = dict(ev.verdicts)
        odd = [f"{i} {v} (the report: {said.get(i, 'absent')})" for i, v in got
               if said.get(i) != v] or [f"{len(ev.verdicts)} invariant(s) listed"]
        return False, (f"replaying its fixture {ev.fixture_name!r} here gives {verdict!r}, "
                       f"the report says {ev.verdict!r}; {', '.join(odd[:3])}: the report "
                       "is not what its fixture gives")
    return True, (f"replayed again over {ev.fixture_name!r}: {verdict}, each invariant as "
                  f"the report says ({requests} request(s))")
