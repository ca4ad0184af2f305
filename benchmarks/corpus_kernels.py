"""The kernels each public program of the corpus (numfuse_tests/corpus) plans into, without
running anything (no GPU, no compiler).

    python -m benchmarks.corpus_kernels [--out FILE.md]

Each program is traced and planned once at the corpus's argument sizes; a program that runs
with graph breaks, or is refused, is left out (its segments are planned only as it runs).
`numfuse` is whatever the import finds: run it from an older tree to count that one's.
"""

from __future__ import annotations

import argparse
import copy
import subprocess
import warnings
from pathlib import Path

import numpy as np

import numfuse
from numfuse_tests.corpus.programs import PROGRAMS
from numfuse_tests.corpus.runner import SEED


def counts() -> dict[str, int]:
    found = {}
    for prog in PROGRAMS:
        args = prog.make_args(np.random.default_rng(SEED))
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                plan = numfuse.jit(prog.fn, static_argnames=prog.static_argnames).plan(*copy.deepcopy(args))
        except Exception:  # noqa: BLE001 - graph breaks and refusals are left out
            continue
        found[prog.name] = len(plan.kernels)
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.corpus_kernels")
    parser.add_argument("--out", help="write the table (Markdown) here too")
    opts = parser.parse_args(argv)
    found = counts()
    tree = Path(numfuse.__file__).resolve().parent.parent
    sha = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip() or "unknown"
    lines = [f"Measured by `python -m benchmarks.corpus_kernels` with numfuse at {sha}: "
             f"{len(found)} programs planned as one graph, {sum(found.values())} kernels in all", "",
             "| program | kernels |", "|---|---|"]
    lines += [f"| {name} | {n} |" for name, n in sorted(found.items())]
    text = "\n".join(lines)
    print(text)
    if opts.out:
        Path(opts.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
