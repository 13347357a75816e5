"""``risutools unpack``: a container to ``module.json``, ``assets/`` (sanitised names) and
``manifest.json`` (``risutools pack`` is the way back)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from risutools.errors import RisuError
from risutools.formats.unpack import unpack
from risutools.targets import check_target


@dataclass(frozen=True)
class Options:
    file: str
    out: str
    force: bool = False

    def __post_init__(self) -> None:
        check_target(self.out, folder=True)


@dataclass
class Unpacked:
    kind: ClassVar[str] = "unpack"
    file: str
    out: str
    manifest: dict[str, Any]

    def exit_code(self) -> int:
        return 0


def run(opts: Options) -> Unpacked:
    try:
        manifest = unpack(opts.file, opts.out, force=opts.force)
    except RisuError as exc:
        raise exc.with_path(opts.file) from None
    return Unpacked(opts.file, opts.out, manifest)
