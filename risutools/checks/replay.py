"""Replay invariants R1-R8 (the context cutter) and M1-M3 (the monitor), ``docs/replay.md``.

The checkers (``risutools.replay.invariants``, ``risutools.replay.monitor_checks``) key
their verdicts by these declarations; ``REPORT_TEXT`` is the short line a replay report
prints next to each verdict (reports are hashed into the catalog, so it stays as it was).
"""

from __future__ import annotations

from risutools.checks.registry import Check, declare

_WHY_CUT = "A cutter that breaks it loses or rewrites what the user wrote."

R1 = declare(
    "R1", "error", "replay", "protected-kept",
    summary="No protected message (system, tool, function roles) is dropped: every protected "
    "input message is in the output.",
    why="Protected messages carry instructions and tool results the model must keep seeing.",
    fix="Exclude protected roles from the removable set before cutting.")
R2 = declare(
    "R2", "error", "replay", "tail-kept",
    summary="The tail (the most recent messages) is never dropped: every tail message is in "
    "the output.",
    why="The latest turns are what the reply answers; dropping them breaks the conversation.",
    fix="Keep the configured tail out of the removable set.")
R3 = declare(
    "R3", "error", "replay", "within-budget",
    summary="The output estimate is at most max_context, or the request says "
    "budget_unreachable and every removable message is dropped; claiming budget_unreachable "
    "within budget also fails.",
    why="The cutter exists to fit the budget; over it, the request fails or is truncated "
    "by the host.",
    fix="Keep cutting removable messages until the estimate fits, or report "
    "budget_unreachable honestly.")
R4 = declare(
    "R4", "error", "replay", "only-removes",
    summary="The output is a subsequence of the input with the same ids, roles and content; "
    "with the module off it equals the input.",
    why=_WHY_CUT,
    fix="Remove whole messages only; never edit, merge or reorder them.")
R5 = declare(
    "R5", "error", "replay", "no-resurrection",
    summary="No resurrection: a message dropped at the previous enabled request and still "
    "present is dropped again, unless it is now protected or in the tail (R1/R2 come first, "
    "e.g. after deletes shrink the history).",
    why="A message that comes back after being cut makes the context jump and confuses "
    "the model.",
    fix="Remember the cut point (the anchor) and start from it at the next request.")
R6 = declare(
    "R6", "error", "replay", "front-only",
    summary="Front only: the dropped messages are exactly the first k of the removable "
    "messages R.",
    why="Cutting from the middle leaves a conversation with holes the model cannot see.",
    fix="Drop the oldest removable messages first, in order.")
R7 = declare(
    "R7", "error", "replay", "minimal-cut",
    summary="Minimal: drops beyond the continuity step happen only when the estimate after "
    "continuity exceeds max_context, and keeping the last one would exceed the target.",
    why="Dropping more than needed throws away context for nothing.",
    fix="Stop cutting as soon as the estimate fits the target.")
R8 = declare(
    "R8", "error", "replay", "bounded-jump",
    summary="Bounded jump: when the anchor is lost, the number dropped is at least "
    "min(omitted_count, len(R)) and any more were needed by the budget step (R7's test).",
    why="When the anchor is lost, restarting from zero would suddenly resend everything "
    "cut so far.",
    fix="Restart from the accumulated omitted_count when the anchor is lost.")

M1 = declare(
    "M1", "error", "replay", "monitor-level",
    summary="On requests with fresh metrics, used_pct is 100 * tokens / max_context (or the "
    "turn's figure) to 4 decimals, remaining_pct is 100 - used_pct, and the level follows the "
    "thresholds on that share.",
    why="A monitor that misreads the usage warns too late or cries wolf.",
    fix="Compute the share from the usage fed and compare it with the configured thresholds.")
M2 = declare(
    "M2", "error", "replay", "monitor-alerts",
    summary="On requests with fresh metrics, an alert fires exactly when the level is "
    "WARNING/CRITICAL and it is the first alert, or above the last alert's level, or "
    "`debounce` requests have passed since the last alert.",
    why="Missing alerts hide a full context; repeated ones train the user to ignore them.",
    fix="Keep the last alert's request and level, and debounce as the spec says.")
M3 = declare(
    "M3", "error", "replay", "monitor-stale",
    summary="On requests with stale or missing metrics: no level, no usage, no alert.",
    why="A figure computed from stale metrics reports a usage that is not the current one.",
    fix="Report nothing until fresh metrics arrive.")

CUTTER: tuple[Check, ...] = (R1, R2, R3, R4, R5, R6, R7, R8)
MONITOR: tuple[Check, ...] = (M1, M2, M3)

#: the line a replay report prints next to each verdict
REPORT_TEXT: dict[Check, str] = {
    R1: "no protected message is dropped",
    R2: "the tail is never dropped",
    R3: "final estimate <= max_context, unless budget_unreachable "
    "(and then every removable message was dropped)",
    R4: "the output is the input with messages removed: order and content untouched",
    R5: "no resurrection: a message dropped at one request and still present at the "
    "next is dropped again (while enabled)",
    R6: "front only: the dropped messages are a prefix of R",
    R7: "minimal: keeping the last budget-dropped message would break the target",
    R8: "bounded jump after an anchor loss: the number dropped differs from "
    "S.omitted_count only by what the budget step needs",
    M1: "the level follows the thresholds on the usage the monitor was fed",
    M2: "alerts: the first WARNING/CRITICAL at once, a later one only after `debounce` "
    "requests or on a rise in severity, none at NORMAL",
    M3: "stale or missing metrics: no level, no usage, no alert",
}
