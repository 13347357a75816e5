"""Replay benchmark: the reference cutter over a long conversation, and LangChain's
``trim_messages`` side by side on the same requests.

* 1,000 requests over a history that grows to 10,000 messages (``replay synth``,
  seed 5, mixed Korean/English, tool calls, edits and deletes): total time, time per
  request, and the mean of the first 100 against the last 100 requests (the per-request
  cost must not grow with the history).
* ``trim_messages(strategy="last", include_system=True, start_on="human",
  token_counter=<the same per-message estimate>, max_tokens=max_context)`` at every
  request.  LangChain is never a dependency: when ``langchain_core`` is not importable the
  script makes ``.venv-bench`` in the repository root (``pip install langchain-core`` and
  the project's own dependencies, again when they change) and re-runs that half there with
  ``PYTHONPATH`` set to the repository.
* The invariant checker R1-R8 runs over both outputs; orphaned tool results (a kept
  tool result whose calling assistant message was dropped) are counted for both.
* Two scenarios: ``growth`` (the figures above; edits land anywhere in a long history, so
  the anchor is practically never hit) and ``anchor-loss`` (``edit_window=16`` and a small
  budget: the anchor is edited or deleted dozens of times, so R8 is exercised; the report
  prints how many requests R8 was checked on).

* The invariant checker's own cost per request at 1,000 / 10,000 / 100,000 messages
  (``--checker-only`` runs just that part): it must stay flat.

* ``replay run``, the whole command, a request against the cutter's own cost a request
  (issue 23, goal 4: at most 2x), at 10,000 and 100,000 messages (``replay synth --seed 1``,
  as YAML and as NDJSON), with the command's peak RSS beside that of the fixture's parse
  alone (``--run-only`` runs just that part; ``--quick``: 10,000 only).  The cutter's own
  cost is taken two ways: in process (the fixture loaded beforehand, best of 3: the strict
  figure) and as a whole process (``bench/cutter_alone.py``: the fixture read as the
  command reads it, then the cutter; the issue's measure, whole processes side by side).
  A third ratio puts both sides in one process: the command as the CLI runs it
  (``commands.replay_run.run``, less its run on a one-request fixture), best of 3, against
  the in-process cutter (it tells the command's own work from a cold process's costs).
  The command, the cutter's process and each one's start-up are run in turn
  :data:`RUN_ROUNDS` times (``--rounds N``): each figure is the median of the rounds'
  (program less start-up), the range of the rounds' ratios beside it (one round's CPU time
  moves by 10-30 % on a shared machine: bench/RESULTS.md, round 26).

Usage: ``python bench/bench_replay.py [--quick] [--rounds N] [--checker-only | --run-only]``.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from workload import spawned  # noqa: E402

from risutools.collector import cycles_paused  # noqa: E402
from risutools.commands import replay_run  # noqa: E402
from risutools.replay.checker import InvariantChecker  # noqa: E402
from risutools.replay.cutter import ContextCutter  # noqa: E402
from risutools.replay.fixture import Fixture, Message, build_fixture, load_fixture  # noqa: E402
from risutools.replay.invariants import FAMILY  # noqa: E402
from risutools.replay.mirror import Step  # noqa: E402
from risutools.replay.run import apply_turn, iterate_cutter  # noqa: E402
from risutools.replay.synth import synthesize  # noqa: E402
from risutools.replay.verdicts import invariants_of  # noqa: E402
from risutools.settings.replay import (  # noqa: E402
    ReplayConfig,
    build_config,
    load_replay_config,
)

MESSAGES, TURNS = 10_000, 1_000
CONFIG = {"max_context": 32_000, "preserve_latest": 8, "trim_percent": 10}

# name -> (synthesize arguments, quick variant, configuration)
SCENARIOS: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    # the growth figure: 1,000 requests over a history growing to 10,000 messages
    "growth": (
        {"seed": 5, "messages": MESSAGES, "turns": TURNS, "edit_rate": 0.05,
         "delete_rate": 0.02, "tool_rate": 0.15},
        {"messages": 2_000, "turns": 200},
        CONFIG,
    ),
    # anchor losses: edits and deletes among the 16 newest messages and a budget of
    # ~30 messages, so the anchor (the oldest survivor) is edited or deleted often and R8
    # is exercised; about two messages per turn, so the fallback (not the budget) decides
    "anchor-loss": (
        {"seed": 11, "messages": 2_000, "turns": 1_000, "edit_rate": 0.6,
         "delete_rate": 0.4, "tool_rate": 0.15, "edit_window": 16},
        {"messages": 600, "turns": 300},
        {"max_context": 1_000, "preserve_latest": 4, "trim_percent": 20},
    ),
}


def make_fixture(name: str, quick: bool) -> tuple[Fixture, ReplayConfig]:
    args, small, config = SCENARIOS[name]
    kw = {**args, **(small if quick else {})}
    seed, messages = kw.pop("seed"), kw.pop("messages")
    return build_fixture(synthesize(seed, messages, **kw)), build_config(config)


def orphans(out: list[Message]) -> int:
    """Kept tool/function results whose calling assistant message is not in ``out``."""
    kept = {m.id for m in out}
    return sum(
        1
        for m in out
        if m.role in ("tool", "function") and m.id in CALLER and CALLER[m.id] not in kept
    )


CALLER: dict[str, str] = {}


def index_callers(fx: Fixture) -> None:
    last: Message | None = None
    for m in fx.messages + [m for t in fx.turns for m in t.append]:
        if m.role in ("tool", "function"):
            if last is not None and last.role == "assistant":
                CALLER[m.id] = last.id
        else:
            last = m


def run_cutter(fx: Fixture, cfg: ReplayConfig) -> dict[str, Any]:
    cutter = ContextCutter(cfg)
    for m in fx.messages:
        cutter.append(m)
    times: list[float] = []
    results = []
    sizes = []
    for turn in fx.turns:
        t0 = time.perf_counter()
        apply_turn(cutter, turn)
        res = cutter.request(True)
        times.append(time.perf_counter() - t0)
        results.append(res)
        sizes.append(res.messages_in)
    # the invariant check over the same run, timed apart (see checker_cost for its
    # per-request figures); the checker's input is rebuilt from the fixture by
    # iterate_cutter, not read from the cutter
    checker = InvariantChecker(cfg)
    orph = 0
    t0 = time.perf_counter()
    for _, res, step in iterate_cutter(fx, cfg):
        assert step is not None
        orph += res.orphaned_tool_results > 0
        checker.check(step)
    check_s = time.perf_counter() - t0
    return {
        "times": times,
        "sizes": sizes,
        "cuts": sum(1 for r in results if r.budget_dropped),
        "anchor_losses": sum(1 for r in results if r.anchor == "lost"),
        "kept": {k: not v.failures for k, v in checker.verdicts.items()},
        "r8_checked": checker.verdicts["R8"].checked,
        "orphan_requests": orph,
        "check_s": check_s,
    }


def run_langchain(fx: Fixture, cfg: ReplayConfig) -> dict[str, Any]:
    from langchain_core.messages import (  # type: ignore[import-not-found]
        AIMessage,
        BaseMessage,
        FunctionMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
        trim_messages,
    )

    ratio = (
        Fraction(str(cfg.tokenizer_profile))
        if not isinstance(cfg.tokenizer_profile, str)
        else cfg.ratio
    )
    cache: dict[str, int] = {}

    def est(msg: BaseMessage) -> int:
        text = msg.content if isinstance(msg.content, str) else str(msg.content)
        got = cache.get(text)
        if got is None:
            got = math.ceil(len(text) * ratio) + cfg.message_overhead
            cache[text] = got
        return got

    def counter(msgs: list[BaseMessage]) -> int:
        return sum(est(m) for m in msgs)

    def to_lc(m: Message) -> BaseMessage:
        if m.role == "system":
            return SystemMessage(content=m.content, id=m.id)
        if m.role == "user":
            return HumanMessage(content=m.content, id=m.id)
        if m.role == "assistant":
            return AIMessage(content=m.content, id=m.id)
        if m.role == "tool":
            return ToolMessage(content=m.content, id=m.id, tool_call_id=f"call-{m.id}")
        return FunctionMessage(content=m.content, id=m.id, name="fn")

    hist: dict[str, Message] = {m.id: m for m in fx.messages}
    lc: dict[str, BaseMessage] = {m.id: to_lc(m) for m in fx.messages}
    checker = InvariantChecker(cfg)
    times: list[float] = []
    orph = 0
    for turn in fx.turns:
        for m in turn.append:
            hist[m.id] = m
            lc[m.id] = to_lc(m)
        for mid, content in turn.edit:
            old = hist[mid]
            hist[mid] = Message(mid, old.role, content)
            lc[mid] = to_lc(hist[mid])
        for mid in turn.delete:
            del hist[mid], lc[mid]
        msgs = list(lc.values())
        t0 = time.perf_counter()
        kept = trim_messages(
            msgs,
            max_tokens=cfg.max_context,
            token_counter=counter,
            strategy="last",
            include_system=True,
            start_on="human",
            allow_partial=False,
        )
        times.append(time.perf_counter() - t0)
        inp = list(hist.values())
        out = [hist[str(k.id)] for k in kept]
        orph += orphans(out) > 0
        checker.check(Step(turn.number, True, inp, out, False))
    return {
        "times": times,
        "kept": {k: not v.failures for k, v in checker.verdicts.items()},
        "first_failures": {k: v.first_detail for k, v in checker.verdicts.items() if v.failures},
        "failures": {k: v.failures for k, v in checker.verdicts.items()},
        "r8_checked": checker.verdicts["R8"].checked,
        "orphan_requests": orph,
    }


def project_dependencies() -> list[str]:
    """The requirements of ``[project] dependencies`` in pyproject.toml (what the checkout's
    code imports, run from another environment with ``PYTHONPATH`` set to it)."""
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    return re.findall(r'^\s*"([^"]+)"', block.group(1), re.M) if block else []


def _langchain_elsewhere(name: str, quick: bool) -> dict[str, Any] | str:
    venv = ROOT / ".venv-bench"
    py = venv / "bin" / "python"
    # langchain-core beside everything the checkout's code imports (risutools is run from
    # the checkout there): installed again when the project's dependencies change
    want = ["langchain-core", *project_dependencies()]
    stamp = venv / "risutools-bench-requirements.txt"
    if not py.exists() or not stamp.exists() or stamp.read_text("utf-8").split() != want:
        print("setting up .venv-bench with langchain-core and risutools' dependencies "
              "(bench only) ...", flush=True)
        try:
            if not py.exists():
                subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(py), "-m", "pip", "install", "-q", *want], check=True,
                           timeout=600)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
            return f"could not set up .venv-bench: {exc}"
        stamp.write_text("\n".join(want) + "\n", "utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [str(py), str(Path(__file__).resolve()), "--langchain-json", name] + (
        ["--quick"] if quick else []
    )
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0:
        return f"langchain run failed: {proc.stderr.strip().splitlines()[-1:]}"
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def ms(xs: list[float]) -> str:
    return f"{1000 * statistics.fmean(xs):.3f} ms"


def med(xs: list[float]) -> str:
    return f"{1000 * statistics.median(xs):.3f} ms"


CHECKER_SIZES = (1_000, 10_000, 100_000)


def checker_cost(n: int) -> dict[str, Any]:
    """The checker alone, per request, on a run whose history grows to ``n`` messages.

    ``synthesize(seed=7, n, turns=n/2)``: two messages per request, 5 % edits, 2 % deletes,
    15 % tool calls.  Times ``InvariantChecker.check`` only (the harness and the cutter are
    outside the timer); first and last 10 % of the requests are reported apart, so a cost
    that grew with the history would show.
    """
    fx = build_fixture(synthesize(7, n, edit_rate=0.05, delete_rate=0.02, tool_rate=0.15))
    cfg = build_config(CONFIG)
    checker = InvariantChecker(cfg)
    times: list[float] = []
    sizes: list[int] = []
    for _, res, obs in iterate_cutter(fx, cfg):
        assert obs is not None
        t0 = time.perf_counter()
        checker.check(obs)
        times.append(time.perf_counter() - t0)
        sizes.append(res.messages_in)
    assert checker.failed() == [], checker.failed()
    k = max(1, len(times) // 10)
    return {"n": n, "requests": len(times), "times": times, "k": k,
            "first_size": sizes[k // 2], "last_size": sizes[-k // 2]}


def print_checker_costs(quick: bool) -> None:
    print("\n=== invariant checker cost per request (InvariantChecker.check only)")
    print("  history | requests | median | 90th pct | mean | first 10 % median | last 10 % median")
    for n in CHECKER_SIZES[:2] if quick else CHECKER_SIZES:
        r = checker_cost(n)
        t, k = r["times"], r["k"]
        print(
            f"  {n:>7,} | {r['requests']:>8,} | {1e6 * statistics.median(t):.1f} us | "
            f"{1e6 * sorted(t)[len(t) * 9 // 10]:.1f} us | {1e6 * statistics.fmean(t):.1f} us | "
            f"{1e6 * statistics.median(t[:k]):.1f} us "
            f"(~{r['first_size']:,} msgs) | {1e6 * statistics.median(t[-k:]):.1f} us "
            f"(~{r['last_size']:,} msgs)",
            flush=True,
        )


RUN_SIZES = (10_000, 100_000)
#: rounds of the command and its start-up in turn (``--rounds N``)
RUN_ROUNDS = 5
RUN_DOC = ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"


def _child_cost(args: list[str]) -> tuple[float, float]:
    """(CPU seconds, user + system, and peak RSS in MiB) of one child process, started by
    ``workload.spawned``'s small helper: started from this process, which loads the
    fixtures, its peak would count this one's (bench/RESULTS.md, round 29)."""
    cpu, _wall, peak, code = spawned(args, None, {**os.environ, "PYTHONPATH": str(ROOT)})
    if code != 0:
        raise SystemExit(f"{' '.join(args)} exited {code}")
    return cpu, peak


def _cutter_ms(fixture: Path) -> tuple[int, float]:
    """The cutter's own cost a request, in process: ``iterate_cutter`` without the checker
    (the fixture already loaded), CPU time, best of 3, with the cycle collector paused as
    ``replay run`` pauses it for its replay (``cycles_paused``): with it running, its passes
    over the cutter's growing history are a third of the cutter's time at 100,000 messages,
    which made the command look cheaper beside it than it is (2.3x where it is 3.4x at
    100,000 NDJSON messages: bench/RESULTS.md, round 22)."""
    fx = load_fixture(fixture)
    cfg = load_replay_config(None, None, fx.config)
    best = math.inf
    for _ in range(3):
        with cycles_paused():
            t0 = time.process_time()
            for _turn in iterate_cutter(fx, cfg, observe=False):
                pass
            best = min(best, time.process_time() - t0)
    return len(fx.turns), 1000 * best / len(fx.turns)


def _command_ms(fixture: Path, tiny: Path, out: Path, requests: int) -> float:
    """``replay run`` in this process as the CLI runs it (``commands.replay_run.run``, its
    report written to ``out``), less its run on the one-request fixture ``tiny``: CPU time
    a request, the best of 3 of each (its code warm, as the in-process cutter's)."""
    def best(fx: Path) -> float:
        times = []
        for _ in range(3):
            t0 = time.process_time()
            replay_run.run(replay_run.Options(str(RUN_DOC), str(fx), output=str(out)))
            times.append(time.process_time() - t0)
        return min(times)

    return 1000 * (best(fixture) - best(tiny)) / requests


def print_run_costs(quick: bool, rounds: int = RUN_ROUNDS) -> None:
    """``replay run`` a request against the cutter's own cost a request (issue 23, goal 4:
    <= 2x), at 10,000 and 100,000 messages, and the command's peak memory.  The cutter's
    cost two ways, both printed:

    * in process (:func:`_cutter_ms`): the cutter alone over the fixture loaded beforehand,
      best of 3 (its memory already faulted in, its code warm): the strict figure;
    * as a whole process (``bench/cutter_alone.py``): the fixture read as the command reads
      it, then the cutter, nothing else; the issue's own measure (whole-process CPU, side
      by side, the same files).

    The command, the cutter's process and each one's start-up (the same program on a
    one-request fixture) in turn, ``rounds`` times: each figure the median of (program less
    its start-up), the range of the rounds' ratios beside it."""
    print("\n=== replay run (whole process, CPU user+sys, less the same command's start-up on "
          "a 1-request fixture: median of "
          f"{rounds} rounds) vs the cutter alone: in process (iterate_cutter, the fixture "
          "loaded, best of 3) and as a whole process (bench/cutter_alone.py: the fixture "
          "read as the command reads it, then the cutter; less its start-up likewise)")
    print(f"  workload: risutools replay synth --seed 1 --messages N -o fx.<yaml|ndjson>; "
          f"risutools replay run {RUN_DOC.relative_to(ROOT)} -x fx -o r.json")
    py = [sys.executable, "-m", "risutools"]
    alone = [sys.executable, str(ROOT / "bench" / "cutter_alone.py")]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)

        def run(fx: Path) -> tuple[float, float]:
            return _child_cost([*py, "replay", "run", str(RUN_DOC), "-x", str(fx),
                                "-o", str(d / "r.json")])

        for ext in ("yaml", "ndjson"):  # (each format's start-up: its own 1-request run)
            _child_cost([*py, "replay", "synth", "--seed", "1", "--messages", "2", "-o",
                         str(d / f"tiny.{ext}")])
        print("  messages | fixture | requests | cutter ms/req in process | as a process | "
              "replay run ms/req | ratio to in process (rounds' range) | ratio to the "
              "process (range) | both in process | peak RSS | the fixture's parse alone")
        for n in RUN_SIZES[:1] if quick else RUN_SIZES:
            for ext in ("yaml", "ndjson"):
                fx, tiny = d / f"fx{n}.{ext}", d / f"tiny.{ext}"
                _child_cost([*py, "replay", "synth", "--seed", "1", "--messages", str(n),
                             "-o", str(fx)])
                requests, cut_ms = _cutter_ms(fx)
                both = _command_ms(fx, tiny, d / "in.json", requests) / cut_ms
                costs, alone_costs, rss = [], [], 0.0
                for _ in range(rounds):
                    cpu, rss = run(fx)
                    costs.append(cpu - run(tiny)[0])
                    alone_costs.append(_child_cost([*alone, str(fx)])[0]
                                       - _child_cost([*alone, str(tiny)])[0])
                run_ms = 1000 * statistics.median(costs) / requests
                proc_ms = 1000 * statistics.median(alone_costs) / requests
                spread = [1000 * c / requests / cut_ms for c in (min(costs), max(costs))]
                ratios = sorted(c / a for c, a in zip(costs, alone_costs, strict=True))
                _, parse_rss = _child_cost([sys.executable, "-c", "import sys; from risutools."
                                            "replay.fixture import load_fixture; "
                                            "load_fixture(sys.argv[1])", str(fx)])
                print(f"  {n:>8,} | {ext:7} | {requests:>8,} | {cut_ms:24.4f} | "
                      f"{proc_ms:12.4f} | {run_ms:17.4f} | {run_ms / cut_ms:5.2f}x "
                      f"({spread[0]:.2f}-{spread[1]:.2f}) | {run_ms / proc_ms:5.2f}x "
                      f"({ratios[0]:.2f}-{ratios[-1]:.2f}) | {both:5.2f}x | {rss:5.0f} MiB | "
                      f"{parse_rss:5.0f} MiB", flush=True)


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    if "--checker-only" in argv:
        print_checker_costs(quick)
        return 0
    rounds = RUN_ROUNDS
    if "--rounds" in argv:
        at = argv.index("--rounds") + 1
        if at >= len(argv) or not argv[at].isdigit() or int(argv[at]) < 1:
            print("--rounds N: N a whole number, 1 or more", file=sys.stderr)
            return 2
        rounds = int(argv[at])
    if "--run-only" in argv:
        print_run_costs(quick, rounds)
        return 0
    if "--langchain-json" in argv:
        name = argv[argv.index("--langchain-json") + 1]
        fx, cfg = make_fixture(name, quick)
        index_callers(fx)
        print(json.dumps(run_langchain(fx, cfg)))
        return 0
    for name in SCENARIOS:
        scenario(name, quick)
    print_checker_costs(quick)
    print_run_costs(quick, rounds)
    return 0


def scenario(name: str, quick: bool) -> None:
    fx, cfg = make_fixture(name, quick)
    CALLER.clear()
    index_callers(fx)
    n = len(fx.turns)
    print(f"\n=== scenario {name}")
    print(
        f"fixture: {n} requests, history {len(fx.messages)} -> "
        f"{len(fx.messages) + sum(len(t.append) - len(t.delete) for t in fx.turns)} messages; "
        f"synthesize {SCENARIOS[name][0]}; config {SCENARIOS[name][2]}"
    )
    cut = run_cutter(fx, cfg)
    t = cut["times"]
    k = max(1, n // 10)
    print("\nreference cutter (incremental):")
    print(
        f"  total {sum(t):.3f} s for {n} requests; mean {ms(t)}, "
        f"median {1000 * statistics.median(t):.3f} ms per request (ops + request)"
    )
    print(
        f"  first {k} requests (history ~{cut['sizes'][k // 2]}): mean {ms(t[:k])}, median "
        f"{med(t[:k])}; last {k} (history ~{cut['sizes'][-k // 2]}): mean {ms(t[-k:])}, "
        f"median {med(t[-k:])}"
    )
    print(
        f"  cuts {cut['cuts']}, anchor losses {cut['anchor_losses']} (R8 checked on "
        f"{cut['r8_checked']}), requests with an orphaned tool result {cut['orphan_requests']}"
    )
    print(f"  replay with the invariant checker over the same run: {cut['check_s']:.2f} s")
    try:
        import langchain_core  # type: ignore[import-not-found]  # noqa: F401

        lc: dict[str, Any] | str = run_langchain(fx, cfg)
    except ImportError:
        lc = _langchain_elsewhere(name, quick)
    print("\nLangChain trim_messages (strategy=last, include_system, start_on=human):")
    if isinstance(lc, str):
        print(f"  skipped: {lc}")
    else:
        lt = lc["times"]
        print(
            f"  total {sum(lt):.3f} s; mean {ms(lt)} per request; first {k}: {ms(lt[:k])}; "
            f"last {k}: {ms(lt[-k:])}"
        )
        print(
            f"  requests with an orphaned tool result {lc['orphan_requests']}; anchor losses "
            f"the checker saw in its output (R8 checked on) {lc['r8_checked']}"
        )
    print("\ninvariants kept over the whole run (failing requests in brackets):")
    print("  id  | reference cutter | trim_messages | invariant")
    for c in invariants_of(FAMILY):
        rid, text = c.id, c.report_text
        if isinstance(lc, str):
            other = "-"
        else:
            other = "kept" if lc["kept"][rid] else f"BROKEN ({lc['failures'][rid]})"
        mine = "kept" if cut["kept"][rid] else "BROKEN"
        print(f"  {rid}  | {mine:16} | {other:13} | {text[:60]}")
    if not isinstance(lc, str) and lc["first_failures"]:
        print("\ntrim_messages, first failure of each broken invariant:")
        for rid, detail in lc["first_failures"].items():
            print(f"  {rid}: {detail}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
