"""Turn hand-written facts in clear (kept OUTSIDE the repository) into the facts file.

The scratch file names a module's own strings (state keys, toggle keys, button values) in
clear; the facts file may not (the corpus is not ours to publish), so those are replaced by
``sha256("risutools-facts:" + name)[:12]``; RisuAI vocabulary stays in clear.

Run: python bench/facts_digest.py SCRATCH.json HEADER.txt > bench/real_corpus_facts.yaml

SCRATCH.json: {"components": [{"path", "member", "sha256", "facts": {type: [names]},
"uncertain": {type: [names]}, "absent": {type: [names]}, "unscored": [types], "partial": [types],
"notes": [sentences]}]}.  HEADER.txt: the method notes, written as the YAML comment at the top.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_corpus_facts import FACT_TYPES, FINDINGS, SALT, encode


def _enc(t: str, names: Any) -> list[str]:
    return sorted({encode(t, n) if t != FINDINGS else str(n) for n in names or []},
                  key=lambda s: (len(s), s) if t == "lorebook_code" else (0, s))


def convert(data: dict[str, Any]) -> dict[str, Any]:
    comps = []
    for c in data["components"]:
        out: dict[str, Any] = {"path": c["path"], "member": c.get("member"),
                               "sha256": c["sha256"]}
        out["facts"] = {t: _enc(t, c.get("facts", {}).get(t))
                        for t in (*FACT_TYPES, FINDINGS)}
        for kind in ("uncertain", "absent"):
            names = {t: _enc(t, v) for t, v in (c.get(kind) or {}).items() if v}
            if names:
                out[kind] = names
        for k in ("unscored", "partial"):
            if c.get(k):
                out[k] = sorted(c[k])
        if c.get("notes"):
            out["notes"] = list(c["notes"])
        comps.append(out)
    return {"version": 1, "salt": SALT, "digested": sorted(
        t for t in FACT_TYPES if t in {"buttons", "chat_read", "chat_write", "global_read",
                                       "toggles_declared"}), "components": comps}


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[0])
        print("usage: python bench/facts_digest.py SCRATCH.json HEADER.txt")
        return 2
    data = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    header = Path(argv[2]).read_text(encoding="utf-8")
    sys.stdout.write("".join(f"# {line}".rstrip() + "\n" for line in header.splitlines()))
    sys.stdout.write(yaml.safe_dump(convert(data), allow_unicode=True, sort_keys=False,
                                    default_flow_style=None, width=100))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
