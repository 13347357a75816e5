"""Analysis benchmarks: Lua throughput on realistic scripts, and the worst case we know of
each scanner (Lua, JS, CBS, toggles, regex checker) at n and 4n characters, each in a fresh
child process, with its peak memory (issue 8).

Run: PYTHONPATH=. python bench/bench_analysis.py
Compare the Lua throughput with an older checkout (a folder holding ``risutools/``):
     BENCH_BEFORE=/path/to/old/checkout PYTHONPATH=. python bench/bench_analysis.py
Quick run (the worst cases only at 1 MB / 4 MB): BENCH_QUICK=1
Only the per-small-module figure, or the start-up (A/B with BENCH_BEFORE): BENCH_ONLY=small,
BENCH_ONLY=startup
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from risutools.analysis import analyze
from risutools.analysis.analyzer import _KEEP_CALLS
from risutools.analysis.lua import scan_lua
from risutools.formats.model import Module

_BLOCK = '''
-- {n}: helper for the state machine; request("https://x") in a comment is ignored
local function step_{n}(id, messages)
  local hp = tonumber(getChatVar(id, "hp_{k}")) or 0
  local label <const> = "stage-{n}"
  local text = [[
    long text block {n} with "quotes" and {{getvar::x}}
  ]]
  for i = 1, #messages do
    local m = messages[i]
    if m.role ~= "system" and #m.content > 0x10 then
      hp = hp + (#m.content // 7) ~ 3
    end
  end
  setChatVar(id, "hp_{k}", tostring(hp))
  if getGlobalVar(id, "toggle_mode_{k}") == "1" then
    alertNormal(id, label .. ": " .. string.format("%d", hp))
  end
  return hp
end
'''


def make_script(size: int, seed: int = 1) -> str:
    rnd = random.Random(seed)
    parts: list[str] = ['listenEdit("editRequest", function(id, m) return m end)\n']
    total = len(parts[0])
    n = 0
    while total < size:
        block = _BLOCK.format(n=n, k=rnd.randrange(40))
        parts.append(block)
        total += len(block)
        n += 1
    return "".join(parts)


def module_for(code: str) -> Module:
    return Module({"name": "bench", "trigger": [{"type": "start", "conditions": [],
                                                 "effect": [{"type": "triggerlua",
                                                             "code": code}]}]})


def best_of(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    only = os.environ.get("BENCH_ONLY")
    if only in ("small", "startup"):
        (small_module if only == "small" else startup)(os.environ.get("BENCH_BEFORE"))
        return
    print("Lua analysis throughput (analyze() on one module holding one script)")
    for kb in (100, 250, 500):
        code = make_script(kb * 1024)
        m = module_for(code)
        secs = best_of(lambda m=m: analyze(m))
        # the scanner as analyze() runs it: keeping host calls, skipping what cannot matter
        lex = best_of(lambda code=code: scan_lua(code, _KEEP_CALLS))
        print(f"  {kb:>4} KB: analyze {len(code) / 1024 / secs:8.0f} KB/s ({secs * 1000:6.1f} ms)"
              f"   scanner alone {len(code) / 1024 / lex:8.0f} KB/s")
    one_line = 'x = getChatVar(id, "k") .. "s" ' * (5 * 1024 * 1024 // 32)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    a = analyze(module_for(one_line))
    secs = time.perf_counter() - t0
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    key = a.state_key("k")
    print(f"  5 MB on one line: {secs:.2f} s, {len(one_line) / 1024 / secs:.0f} KB/s, "
          f"peak RSS growth {(rss1 - rss0) / 1024:.1f} MiB (text itself "
          f"{len(one_line) / 2**20:.1f} MiB), reads counted {key.read_count if key else 0}")
    regex_check()
    before = os.environ.get("BENCH_BEFORE")
    small_module(before)
    startup(before)
    if before:
        lua_before_after(before)
    worst_cases()


# -- throughput before / after ---------------------------------------------------------------

_THROUGHPUT = """
import sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, sys.argv[2])
from bench_analysis import make_script, module_for
from risutools.analysis import analyze
code = make_script(500 * 1024)
m = module_for(code)
best = min((lambda t0: (analyze(m), time.perf_counter() - t0)[1])(time.perf_counter())
           for _ in range(3))
print(len(code) / best / 1e6)
"""


def lua_before_after(before: str) -> None:
    here = str(Path(__file__).resolve().parent)
    root = str(Path(__file__).resolve().parents[1])
    print("Lua analysis throughput, 500 KB realistic script (analyze(), best of 3)")
    for label, tree in (("before", before), ("after", root), ("before", before),
                        ("after", root)):
        out = subprocess.run([sys.executable, "-c", _THROUGHPUT, tree, here],
                             capture_output=True, text=True, check=True).stdout
        print(f"  {label:<6} {float(out):6.2f} MB/s  ({tree})")


# -- per small module (issue 12: ingest analyses thousands of them) --------------------------

_SMALL = """
import sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, sys.argv[2])
from risutools.analysis import analyze  # first: bench_ingest puts its own tree on sys.path
from risutools.formats.model import Module
from bench_ingest import _module
m = Module(_module(0, 0))
for _ in range(200):
    analyze(m)
n = 2000
best = min((lambda t0: ([analyze(m) for _ in range(n)], time.process_time() - t0)[1])(
    time.process_time()) for _ in range(int(sys.argv[3])))
print(best / n * 1e6, analyze.__module__ and sys.modules["risutools"].__file__)
"""


def small_module(before: str | None, rounds: int = 5) -> None:
    """analyze() per call on the module ingest's benchmark writes (bench_ingest._module: 5
    lorebook entries, 1 regex script, a trigger with a 6-line Lua listener), CPU time, best
    of ``rounds`` x 2,000 calls in a fresh process; with ``before``, the two trees in turn."""
    here = str(Path(__file__).resolve().parent)
    root = str(Path(__file__).resolve().parents[1])
    trees = [("before", before), ("after", root)] * 2 if before else [("this tree", root)]
    print("analyze() per small module (bench_ingest._module(0, 0)), CPU, best of "
          f"{rounds} x 2,000 calls")
    for label, tree in trees:
        out = subprocess.run([sys.executable, "-c", _SMALL, tree, here, str(rounds)],
                             capture_output=True, text=True, check=True).stdout
        per_call, imported = out.split()
        print(f"  {label:<9} {float(per_call):7.1f} us  ({Path(imported).parents[1]})")
    print("  load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


def startup(before: str | None, rounds: int = 20) -> None:
    """The imports of ``risutools analyze`` (``risutools.cli`` and
    ``risutools.commands.analyze``), wall time of a fresh interpreter, best of ``rounds``
    (bytecode written first, as an installed package has it); with ``before``, the two trees
    in turn."""
    code = "import risutools.cli, risutools.commands.analyze"
    root = str(Path(__file__).resolve().parents[1])
    trees = [("before", before), ("after", root)] if before else [("this tree", root)]
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    best = {label: float("inf") for label, _ in trees}
    with tempfile.TemporaryDirectory() as cwd:
        for _, tree in trees:
            subprocess.run([sys.executable, "-c", code], env=dict(env, PYTHONPATH=tree),
                           cwd=cwd, check=True)
        bare = float("inf")
        for _ in range(rounds):
            for label, tree in trees:
                t0 = time.perf_counter()
                subprocess.run([sys.executable, "-c", code], env=dict(env, PYTHONPATH=tree),
                               cwd=cwd, check=True)
                best[label] = min(best[label], time.perf_counter() - t0)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], cwd=cwd, check=True)
            bare = min(bare, time.perf_counter() - t0)
    print(f"start-up of `risutools analyze` (import risutools.cli, risutools.commands.analyze), "
          f"wall, best of {rounds}; a bare interpreter: {bare * 1000:.1f} ms")
    for label, tree in trees:
        print(f"  {label:<9} {best[label] * 1000:7.1f} ms  ({tree})")
    print("  load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


# -- the worst case of each scanner, n vs 4n, in a child process ----------------------------

_CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from hostile_analysis import CASES
from risutools.analysis import analyze
from risutools.formats.model import Module
build, _ = CASES[sys.argv[2]]
module = Module(build(int(sys.argv[3])))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
a = analyze(module)
secs = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"secs": secs, "peak_mib": peak / 1024, "growth_mib": (peak - base) / 1024,
                  "findings": len(a.findings)}))
"""


def worst_cases() -> None:
    tests = str(Path(__file__).resolve().parents[1] / "tests")
    quick = bool(os.environ.get("BENCH_QUICK"))
    print("Worst case of each scanner at n and 4n characters (analyze() in a fresh process;")
    sys.stdout.flush()
    print("peak = the child's peak RSS with the module built; growth = what analyze() added)")
    sys.path.insert(0, tests)
    from hostile_analysis import CASES

    for name, (_build, size) in CASES.items():
        if quick:
            size = min(size, 1 << 20)
        elif name.startswith(("lua-", "js-")) and name != "lua-calls":
            size = 64 << 20  # n = 16 MiB, 4n = 64 MiB: the main-block limit
        row = []
        for n in (size // 4, size):
            out = subprocess.run([sys.executable, "-c", _CHILD, tests, name, str(n)],
                                 capture_output=True, text=True)
            if out.returncode:
                row.append(f"n={n:>10,}: failed ({out.stderr.strip().splitlines()[-1:]})")
                continue
            r = json.loads(out.stdout)
            row.append(f"n={n:>10,}: {r['secs']:7.2f} s, peak {r['peak_mib']:6.1f} MiB "
                       f"(+{r['growth_mib']:5.1f})")
        print(f"  {name:<24} " + "   ".join(row), flush=True)


def regex_check() -> None:
    """The backtracking check on hostile patterns near the 100,000-character bound."""
    from risutools.analysis.regexcheck import RegexParseError, backtracking_risks

    print("Regex backtracking check (parse + check, never run) on hostile patterns")
    cases = {
        "40k distinct chars + 10k [^a] + 10k .": "".join(chr(0x4E00 + i) for i in range(40_000))
        + "[^a]" * 10_000 + "." * 10_000,
        "(x|y|...)* with 49,998 branches": "(" + "|".join(chr(0xAC00 + i)
                                                      for i in range(49_998)) + ")*",
        "(a*b*c*...)* 49,998 items": "(" + "".join(chr(0xAC00 + i) + "*"
                                                   for i in range(49_998)) + ")*",
    }
    for label, pattern in cases.items():
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.perf_counter()
        try:
            verdict = ",".join(r.shape for r in backtracking_risks(pattern)) or "safe"
        except RegexParseError as exc:
            verdict = f"not checked ({exc.why})"
        secs = time.perf_counter() - t0
        rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"  {label:<40} {len(pattern):>6} chars {secs * 1000:7.0f} ms, peak RSS growth "
              f"{(rss1 - rss0) / 1024:5.1f} MiB -> {verdict}")


if __name__ == "__main__":
    main()
