"""``risutools inspect``: format (by content), SHA-256, size and structural counts of Risu
files -- never a line of code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from risutools.errors import RisuError
from risutools.formats.reader import read_path
from risutools.formats.summary import summarize


@dataclass(frozen=True)
class Options:
    files: tuple[str, ...]
    as_json: bool = False


@dataclass
class Inspected:
    """One file: its modules' summaries, or why it could not be read."""

    path: str
    summaries: list[dict[str, Any]] = field(default_factory=list)
    error: RisuError | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.error is not None:
            e = self.error
            return {"path": self.path, "ok": False,
                    "error": {"code": e.code, "where": e.where, "message": e.why}}
        return {"path": self.path, "ok": True, "modules": self.summaries}


@dataclass
class InspectResult:
    kind: ClassVar[str] = "inspect"
    files: list[Inspected]
    as_json: bool = False

    def exit_code(self) -> int:
        return 2 if any(f.error is not None for f in self.files) else 0


def run(opts: Options) -> InspectResult:
    out = []
    for path in opts.files:
        try:
            modules = read_path(path)
        except RisuError as exc:
            out.append(Inspected(path, error=exc.with_path(path)))
            continue
        out.append(Inspected(path, [summarize(m) for m in modules]))
    return InspectResult(out, opts.as_json)
