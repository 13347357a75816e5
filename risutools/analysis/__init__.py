"""risutools.analysis: static facts and findings about a module (no I/O, nothing executed).

``analyze(module) -> Analysis`` is the entry point; see ``docs/analysis.md``.
"""

from risutools.analysis.analyzer import analyze, vocabulary
from risutools.analysis.model import Analysis, Capability, Condition, Fact, StateKey
from risutools.formats.toggles import Toggle, parse_toggles

__all__ = [
    "Analysis",
    "Capability",
    "Condition",
    "Fact",
    "StateKey",
    "Toggle",
    "analyze",
    "parse_toggles",
    "vocabulary",
]
