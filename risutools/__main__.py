"""The program: ``risutools`` (its console script) and ``python -m risutools``.

Its modules load with the cycle collector off, and are then set aside from its passes
(``gc.freeze``): they live as long as the program does, so a pass over them finds nothing
to free (the collector's passes while they loaded were ~6% of a one-file ``validate``).  At
the exit, what the run leaves alive is set aside the same way, so the interpreter's last
collection does not walk it (it is freed by reference counts as always: ~20 ms less after
10,000 documents; bench/RESULTS.md, round 13).  :func:`risutools.cli.main` itself (the
tests call it) leaves the collector as it was."""

import gc
import sys

gc.disable()  # (before the modules below load)

try:  # (Ctrl-C while the modules load: one line and 130, as later, never a traceback)
    from risutools.cli import main
except KeyboardInterrupt:
    sys.stderr.write("risutools: interrupted\n")
    raise SystemExit(130) from None


def run() -> None:
    gc.freeze()
    gc.enable()
    try:
        main()
    finally:
        gc.freeze()


if __name__ == "__main__":
    run()
