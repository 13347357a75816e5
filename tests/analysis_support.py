"""What the analysis tests share: a module of one Lua trigger, analysed."""

from __future__ import annotations

from risutools.analysis import analyze
from risutools.analysis.model import Analysis
from risutools.formats.model import Module


def lua(code: str) -> Analysis:
    """The analysis of a module whose one trigger (``start``) runs ``code``."""
    return analyze(Module({"name": "L", "id": "l", "trigger": [
        {"comment": "t", "type": "start", "conditions": [],
         "effect": [{"type": "triggerlua", "code": code}]}]}))
