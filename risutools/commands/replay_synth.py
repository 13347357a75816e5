"""``risutools replay synth``: a long, seeded, deterministic conversation-v1 fixture (Korean,
English or both)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from risutools.commands.outputs import implicit_inputs
from risutools.commands.outputs import reads_file as reads_file  # (cli asks it)
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


def reads_before(params: dict[str, Any]) -> tuple[str, ...]:
    """The catalog the output would be written in, asked before the fixture is written: a
    fixture never replaces a file of it (its configuration, ``transitions.ndjson``,
    ``notes/``..., a component document, a Risu file: :func:`~risutools.commands.outputs.
    reads_file`), as a report never replaces a file its command reads."""
    output = params.get("output")
    return implicit_inputs([output], None) if isinstance(output, str) else ()


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
