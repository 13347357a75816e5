"""``risutools pack``: an unpacked folder (or a module JSON) back into a ``.risum``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from risutools.errors import RisuError
from risutools.formats.unpack import pack
from risutools.targets import check_target


def reads_file(path: str) -> bool:
    """Whether packing the folder that holds ``path`` may read it (cli asks it): any file of
    it (its manifest names the module and asset files anywhere in it; a folder without one
    gives ``module.json`` and the assets it lists), so ``pack DIR -o DIR/assets/a.png
    --force`` never replaces an asset it packs."""
    return True


@dataclass(frozen=True)
class Options:
    src: str
    out: str
    force: bool = False

    def __post_init__(self) -> None:
        check_target(self.out, folder=False)


@dataclass
class Packed:
    kind: ClassVar[str] = "pack"
    src: str
    out: str
    size: int

    def exit_code(self) -> int:
        return 0


def run(opts: Options) -> Packed:
    try:
        size = pack(opts.src, opts.out, force=opts.force)
    except RisuError as exc:
        raise (exc.with_path(opts.src) if exc.path is None else exc) from None
    return Packed(opts.src, opts.out, size)
