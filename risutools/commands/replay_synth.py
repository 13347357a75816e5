"""``risutools replay synth``: a long, seeded, deterministic conversation-v1 fixture (Korean,
English or both)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from risutools.replay.synth import synthesize, write_synth
from risutools.targets import check_target


@dataclass(frozen=True)
class Options:
    seed: int
    messages: int
    output: str
    turns: int | None = None
    edit_rate: float = 0.05
    delete_rate: float = 0.02
    tool_rate: float = 0.1
    lang: str = "mixed"
    name: str | None = None
    edit_window: int | None = None

    def __post_init__(self) -> None:
        check_target(self.output, folder=False)


@dataclass
class Synthesized:
    kind: ClassVar[str] = "replay-synth"
    output: str
    data: dict[str, Any]
    messages: int
    size: int

    def exit_code(self) -> int:
        return 0


def run(opts: Options) -> Synthesized:
    data = synthesize(opts.seed, opts.messages, turns=opts.turns, edit_rate=opts.edit_rate,
                      delete_rate=opts.delete_rate, tool_rate=opts.tool_rate, lang=opts.lang,
                      name=opts.name, edit_window=opts.edit_window)
    return Synthesized(opts.output, data, opts.messages, write_synth(data, opts.output))
