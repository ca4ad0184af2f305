"""NUMBA_ENABLE_CUDASIM=1 python -m numfuse_tests.corpus [-v] [NAME ...]

One line per program (ran-and-matched / refused with the first line of the error / WRONG /
CRASH), then totals, and the refusals grouped by their first line. -v prints each WRONG or
CRASH case in full."""

from __future__ import annotations

import argparse
import collections
import re
import sys
import time

from .programs import BY_NAME, PROGRAMS
from .runner import CRASH, MATCHED, REFUSED, WRONG, run_program


def _cause(first_line: str) -> str:
    """A refusal's first line without the details that differ between programs."""
    return re.sub(r"\s+", " ", first_line).strip()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numfuse_tests.corpus")
    parser.add_argument("names", nargs="*", help="programs to run (default: all)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print WRONG and CRASH cases in full")
    opts = parser.parse_args(argv)
    programs = [BY_NAME[n] for n in opts.names] if opts.names else PROGRAMS
    outcomes = []
    start = time.perf_counter()
    for prog in programs:
        out = run_program(prog)
        outcomes.append(out)
        label = {MATCHED: "ran-and-matched", REFUSED: "refused", WRONG: "WRONG", CRASH: "CRASH"}[out.kind]
        detail = "" if out.kind == MATCHED else "  " + out.first_line
        print(f"{prog.name:28s} {label:16s} {out.seconds:6.1f}s{detail}", flush=True)
        if opts.verbose and out.kind in (WRONG, CRASH):
            print("    " + out.message.replace("\n", "\n    "))
    counts = collections.Counter(o.kind for o in outcomes)
    print()
    print(f"{len(outcomes)} programs: {counts[MATCHED]} matched, {counts[REFUSED]} refused, "
          f"{counts[WRONG]} WRONG, {counts[CRASH]} CRASH  ({time.perf_counter() - start:.0f}s)")
    causes = collections.Counter(_cause(o.first_line) for o in outcomes if o.kind == REFUSED)
    if causes:
        print("\nrefusals by first line:")
        for cause, n in causes.most_common():
            print(f"  {n:3d}  {cause}")
    return 0 if counts[WRONG] == counts[CRASH] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
