"""Lua analysis throughput on generated, realistic 100-500 KB scripts, and 5 MB on one line.

Run: PYTHONPATH=. python bench/bench_analysis.py
"""

from __future__ import annotations

import random
import resource
import time

from risutools.analysis import analyze
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
    print("Lua analysis throughput (analyze() on one module holding one script)")
    for kb in (100, 250, 500):
        code = make_script(kb * 1024)
        m = module_for(code)
        secs = best_of(lambda m=m: analyze(m))
        lex = best_of(lambda code=code: scan_lua(code))
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
