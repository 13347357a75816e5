"""Read every file of the real corpus (../shared/corpus/real) and print what was found.

Not part of ``make test``: the corpus is third-party work that is not ours to publish, so it
is read in place, never copied.  Per file and component: hooks, entry points, button
callbacks, state keys, privileged APIs, dynamic code, Lua kept in the lorebook, findings by
id, and the CPU time taken (read, analyse); then the totals, and Lua analysis throughput.
A file that cannot be read is one line (its error code) and the run goes on.

Run: PYTHONPATH=. python bench/real_corpus.py [CORPUS_DIR]
"""

from __future__ import annotations

import sys
import time
import traceback
from collections import Counter
from pathlib import Path

from risutools.analysis import analyze
from risutools.errors import RisuError
from risutools.formats import read_path
from risutools.projection import project

_REPO = Path(__file__).resolve().parents[1]
#: ../shared/corpus/real from a checkout; ../../shared/corpus/real from a worktree in wt/
CANDIDATES = [_REPO.parent / "shared" / "corpus" / "real",
              _REPO.parent.parent / "shared" / "corpus" / "real"]
SUFFIXES = {".risum", ".charx", ".json", ".risup", ".risupreset", ".jpg", ".jpeg", ".png"}


def _names(facts: list, limit: int = 8) -> str:  # type: ignore[type-arg]
    names = [f.name for f in facts]
    more = len(names) - limit
    return ", ".join(names[:limit]) + (f" (+{more})" if more > 0 else "") if names else "-"


def main(argv: list[str]) -> int:
    found = [c for c in CANDIDATES if c.is_dir()]
    root = Path(argv[1]) if len(argv) > 1 else (found[0] if found else CANDIDATES[0])
    if not root.is_dir():
        print(f"no corpus at {root}; nothing to do")
        return 0
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
    totals: Counter[str] = Counter()
    lua_bytes = 0
    lua_seconds = 0.0
    tracebacks = 0
    for path in files:
        rel = path.relative_to(root)
        t0 = time.process_time()
        try:
            modules = read_path(path)
        except RisuError as exc:
            print(f"{rel}: not read: {exc.code}: {exc}")
            totals["unreadable"] += 1
            continue
        except Exception:  # a bug: counted and shown, the run goes on
            tracebacks += 1
            print(f"{rel}: TRACEBACK\n{traceback.format_exc()}")
            continue
        t_read = time.process_time() - t0
        totals["files"] += 1
        if not modules:
            print(f"{rel}: 0 components ({t_read * 1000:.0f} ms)")
        for m in modules:
            try:
                t1 = time.process_time()  # CPU time: the machine is shared
                a = analyze(m)
                t_an = time.process_time() - t1
                project(m, analysis=a)
                project(m, analysis=a, lang="ko")
            except Exception:
                tracebacks += 1
                print(f"{rel}: TRACEBACK\n{traceback.format_exc()}")
                continue
            totals["components"] += 1
            lua = a.counts.get("lua_bytes", 0)
            if lua:
                lua_bytes += lua
                lua_seconds += t_an
            member = f"!{m.source.member}" if m.source and m.source.member else ""
            found = Counter(f.rule for f in a.findings)
            state_chat = sum(1 for s in a.state if s.scope == "chat")
            state_global = sum(1 for s in a.state if s.scope == "global")
            print(f"{rel}{member}: {m.component_type} ({t_read * 1000:.0f} ms read, "
                  f"{t_an * 1000:.0f} ms analyse, CPU; Lua {lua} chars)")
            print(f"  hooks:      {_names(a.hooks)}")
            print(f"  entries:    {_names(a.entry_points)};  buttons: {_names(a.button_callbacks)}")
            print(f"  state:      {state_chat} chat, {state_global} global;  "
                  f"toggles: {len(a.toggles)}")
            print(f"  privileged: {_names(a.privileged)};  lowLevelAccess: "
                  f"{'yes' if a.low_level_access or a.low_level_triggers else 'no'}")
            print(f"  dynamic:    {_names(a.dynamic_code)};  lorebook code: "
                  f"{len(a.lorebook_code)} entr{'y' if len(a.lorebook_code) == 1 else 'ies'}")
            print("  findings:   " + (", ".join(f"{k}x{v}" for k, v in sorted(found.items()))
                                      or "none"))
            totals["hooks"] += len(a.hooks)
            totals["state keys"] += len(a.state)
            totals["privileged"] += len(a.privileged)
            totals["dynamic"] += len(a.dynamic_code)
            totals["lorebook code entries"] += len(a.lorebook_code)
            totals["findings"] += len(a.findings)
    print()
    print(f"files: {len(files)} found, {totals['files']} read, {totals['unreadable']} not read; "
          f"components: {totals['components']}; tracebacks: {tracebacks}")
    print("totals: " + ", ".join(f"{k} {totals[k]}" for k in
                                 ("hooks", "state keys", "privileged", "dynamic",
                                  "lorebook code entries", "findings")))
    if lua_seconds:
        print(f"Lua analysis throughput: {lua_bytes / lua_seconds / 1e6:.2f} MB/s "
              f"({lua_bytes} characters in {lua_seconds:.2f} s, whole analysis of the "
              "components that carry Lua)")
    return 1 if tracebacks else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
