"""Evidence kept across a re-ingest.

Ingest replaces a candidate with a fresh projection, which knows nothing of the replays
recorded into it (``replay run --update``).  While the module's own bytes are unchanged (its
``source_refs[0]`` digest, MC102), the recorded verdict (``projection.replay_status``, the
``availability_verdict`` that follows it, MC304) and every ``replay:`` reference are carried
into the new document.  When the bytes changed, the verdict becomes ``stale`` (availability
``untested``) with the reason in the run's summary, the report references kept as the record
of what was replayed: a verdict is never silently reset to ``not_run``.
"""

from __future__ import annotations

import copy
from typing import Any

from risutools.contract.rules import REPLAY_TO_AVAILABILITY

KEPT, STALE = "kept", "stale"
REPLAY_PREFIX = "replay:"


def _refs(doc: dict[str, Any]) -> list[Any]:
    prov = doc.get("provenance")
    refs = prov.get("source_refs") if isinstance(prov, dict) else None
    return refs if isinstance(refs, list) else []


def _module_digest(doc: dict[str, Any]) -> Any:
    refs = _refs(doc)
    return refs[0].get("sha256") if refs and isinstance(refs[0], dict) else None


def _status(doc: dict[str, Any]) -> Any:
    proj = doc.get("projection")
    return proj.get("replay_status") if isinstance(proj, dict) else None


def carry(existing: Any, new: dict[str, Any]) -> tuple[dict[str, Any] | None, str, str]:
    """``new`` with the replay evidence of ``existing`` carried over: (document, ``kept`` or
    ``stale``, the reason); (None, '', '') when ``existing`` holds none."""
    if not isinstance(existing, dict):
        return None, "", ""
    status = _status(existing)
    replays = [r for r in _refs(existing) if isinstance(r, dict)
               and str(r.get("source_id", "")).startswith(REPLAY_PREFIX)]
    if (not isinstance(status, str) or status not in REPLAY_TO_AVAILABILITY
            or (status == "not_run" and not replays)):  # (a list: no key of the table)
        return None, "", ""
    if not isinstance(new.get("projection"), dict) or not isinstance(new.get("provenance"),
                                                                     dict):
        return None, "", ""
    before, now = _module_digest(existing), _module_digest(new)
    same = before is not None and before == now
    verdict = status if same or status == "not_run" else "stale"
    out = copy.deepcopy(new)
    out["projection"]["replay_status"] = verdict
    out["provenance"]["availability_verdict"] = REPLAY_TO_AVAILABILITY[verdict]
    refs = out["provenance"].setdefault("source_refs", [])
    ids = {r.get("source_id") for r in replays}
    refs[:] = [r for r in refs if not (isinstance(r, dict) and r.get("source_id") in ids)]
    refs.extend(copy.deepcopy(replays))
    if same or verdict == status:
        return out, KEPT, ""
    return out, STALE, (f"the module's bytes changed since the replay ({str(before)[:19]}… -> "
                        f"{str(now)[:19]}…); replay_status {status} -> stale: run `risutools "
                        "replay run ... --update` again")
