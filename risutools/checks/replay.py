"""Replay invariants R1-R8 of the context-cutter reference simulation (``docs/replay.md``).

Declared here so that ``risutools rule``, the docs and ``--select`` know them; the
checker (``risutools.replay.invariants``) still keys its verdicts by its own table
and is to be wired to these declarations when its rewrite lands.
"""

from __future__ import annotations

from risutools.checks.registry import declare

_WHY_CUT = "A cutter that breaks it loses or rewrites what the user wrote."

R1 = declare(
    "R1", "error", "replay", "protected-kept",
    summary="No protected message (system, tool, function roles) is dropped.",
    why="Protected messages carry instructions and tool results the model must keep seeing.",
    fix="Exclude protected roles from the removable set before cutting.")
R2 = declare(
    "R2", "error", "replay", "tail-kept",
    summary="The tail (the most recent messages) is never dropped.",
    why="The latest turns are what the reply answers; dropping them breaks the conversation.",
    fix="Keep the configured tail out of the removable set.")
R3 = declare(
    "R3", "error", "replay", "within-budget",
    summary="The final estimate is at most max_context, unless budget_unreachable (and "
    "then every removable message was dropped).",
    why="The cutter exists to fit the budget; over it, the request fails or is truncated "
    "by the host.",
    fix="Keep cutting removable messages until the estimate fits, or report "
    "budget_unreachable honestly.")
R4 = declare(
    "R4", "error", "replay", "only-removes",
    summary="The output is the input with messages removed: order and content untouched.",
    why=_WHY_CUT,
    fix="Remove whole messages only; never edit, merge or reorder them.")
R5 = declare(
    "R5", "error", "replay", "no-resurrection",
    summary="No resurrection: a message dropped at one request and still present at the "
    "next is dropped again (while enabled).",
    why="A message that comes back after being cut makes the context jump and confuses "
    "the model.",
    fix="Remember the cut point (the anchor) and start from it at the next request.")
R6 = declare(
    "R6", "error", "replay", "front-only",
    summary="Front only: the dropped messages are a prefix of the removable messages.",
    why="Cutting from the middle leaves a conversation with holes the model cannot see.",
    fix="Drop the oldest removable messages first, in order.")
R7 = declare(
    "R7", "error", "replay", "minimal-cut",
    summary="Minimal: keeping the last budget-dropped message would break the target.",
    why="Dropping more than needed throws away context for nothing.",
    fix="Stop cutting as soon as the estimate fits the target.")
R8 = declare(
    "R8", "error", "replay", "bounded-jump",
    summary="Bounded jump after an anchor loss: the number dropped differs from "
    "omitted_count only by what the budget step needs.",
    why="When the anchor is lost, restarting from zero would suddenly resend everything "
    "cut so far.",
    fix="Restart from the accumulated omitted_count when the anchor is lost.")
