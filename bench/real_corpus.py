"""Read every file of the real corpus (../shared/corpus/real) and print what was found.

Not part of ``make test``: the corpus is third-party work that is not ours to publish, so it
is read in place, never copied.  Per file and component: hooks, entry points, button
callbacks, state keys, privileged APIs, dynamic code, Lua kept in the lorebook, findings by
id, and the CPU time taken (read, analyse); then the totals, and Lua analysis throughput.
A file that cannot be read is one line (its error code) and the run goes on.

When bench/real_corpus_facts.yaml is present (facts written by hand from reading the files,
not by risutools; see its header), each component is compared with them: per component the
facts missed (expected, not found) and the false finds, then a table per fact type (TP, FP,
FN, precision, recall), a total, and the findings scored over (component, RA id) pairs with
the false-alarm rate.  Module strings are compared as salted digests (the facts file may not
hold them): ``--clear`` prints the analyser's own names next to each false find.

Run: PYTHONPATH=. python bench/real_corpus.py [CORPUS_DIR] [--facts FILE] [--no-facts]
"""

from __future__ import annotations

import hashlib
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

from risutools.analysis import analyze
from risutools.errors import RisuError
from risutools.formats import read_path
from risutools.projection import project

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_corpus_facts as rcf

_REPO = Path(__file__).resolve().parents[1]
#: ../shared/corpus/real from a checkout; ../../shared/corpus/real from a worktree in wt/
CANDIDATES = [_REPO.parent / "shared" / "corpus" / "real",
              _REPO.parent.parent / "shared" / "corpus" / "real"]
FACTS = Path(__file__).resolve().parent / "real_corpus_facts.yaml"
SUFFIXES = {".risum", ".charx", ".json", ".risup", ".risupreset", ".jpg", ".jpeg", ".png"}


def _names(facts: list, limit: int = 8) -> str:  # type: ignore[type-arg]
    names = [f.name for f in facts]
    more = len(names) - limit
    return ", ".join(names[:limit]) + (f" (+{more})" if more > 0 else "") if names else "-"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _clear_names(a: object) -> dict[str, dict[str, str]]:
    """digest -> the analyser's own name, per digested fact type (shown with --clear only)."""
    out: dict[str, dict[str, str]] = {}
    for t in rcf.DIGESTED:
        out[t] = {}
    for s in a.state:  # type: ignore[attr-defined]
        for t, ok in (("chat_read", s.scope == "chat" and s.read_count),
                      ("chat_write", s.scope == "chat" and s.write_count),
                      ("global_read", s.scope == "global" and s.read_count)):
            if ok:
                out[t][rcf.encode(t, s.key)] = s.key
    for f in a.button_callbacks:  # type: ignore[attr-defined]
        out["buttons"][rcf.encode("buttons", f.name)] = f.name
    for tg in a.toggles:  # type: ignore[attr-defined]
        out["toggles_declared"][rcf.encode("toggles_declared", tg.key)] = tg.key
    return out


def main(argv: list[str]) -> int:
    args = [a for a in argv[1:] if not a.startswith("--")]
    facts_path: Path | None = FACTS
    if "--facts" in argv:
        i = argv.index("--facts")
        facts_path = Path(argv[i + 1])
        args = [a for a in args if a != argv[i + 1]]
    if "--no-facts" in argv:
        facts_path = None
    clear = "--clear" in argv
    facts: dict[tuple[str, str | None], rcf.ComponentFacts] = {}
    if facts_path is not None and facts_path.is_file():
        try:
            facts = {cf.key: cf for cf in rcf.load_facts(facts_path)}
        except ValueError as exc:
            print(f"facts file not read: {exc}")
            return 2
    results: list[rcf.ComponentResult] = []
    seen: set[tuple[str, str | None]] = set()
    found = [c for c in CANDIDATES if c.is_dir()]
    root = Path(args[0]) if args else (found[0] if found else CANDIDATES[0])
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
        sha = _sha256(path) if facts else ""
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
            key = (rel.as_posix(), m.source.member if m.source and m.source.member else None)
            cf = facts.get(key)
            if facts and cf is None:
                print("  facts:      none written for this component")
            elif cf is not None and not sha.startswith(cf.sha256):
                print(f"  facts:      stale (written for sha256 {cf.sha256}, file is {sha[:16]})")
            elif cf is not None:
                seen.add(key)
                res = rcf.compare_component(cf, rcf.found_facts(a), (f.rule for f in a.findings))
                results.append(res)
                names = _clear_names(a) if clear else {}
                lines = rcf.disagreements(res)
                for line in lines:
                    t = line.split(":", 1)[0]
                    if names.get(t):
                        for dg, nm in names[t].items():
                            line = line.replace(dg, f"{dg}={nm}")
                    print(f"  DIFF {line}")
                if not lines:
                    print("  facts:      all agree")
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
    if facts:
        print()
        print(f"Hand-written facts ({facts_path.name if facts_path else ''}): "
              f"{len(results)} of {len(facts)} components compared")
        for key in sorted(set(facts) - seen, key=str):
            print(f"  not compared (missing or stale): {key[0]}{'!' + key[1] if key[1] else ''}")
        for line in rcf.table(results):
            print(line)
    return 1 if tracebacks else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
