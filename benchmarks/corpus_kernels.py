"""The kernels each public program of the corpus (numfuse_tests/corpus) plans into, without
running anything (no GPU, no compiler).

    python -m benchmarks.corpus_kernels [--target cpu|cuda] [--out FILE.md]

Each program is traced and planned once at the corpus's argument sizes; a program that runs
with graph breaks, or is refused, is left out (its segments are planned only as it runs).
Beside the kernels, the distinct codes among them (rendered for the target, not compiled): a
first call compiles each code once, so they, not the kernels, are what a first call waits for.
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


def counts(target: str) -> dict[str, tuple[int, int]]:
    """(kernels, distinct codes) of each program planned as one graph."""
    found = {}
    for prog in PROGRAMS:
        args = prog.make_args(np.random.default_rng(SEED))
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                sources = numfuse.jit(prog.fn, static_argnames=prog.static_argnames, target=target) \
                    .kernel_sources(*copy.deepcopy(args))
        except Exception:  # noqa: BLE001 - graph breaks and refusals are left out
            continue
        found[prog.name] = (len(sources), len({s.code_digest for s in sources}))
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.corpus_kernels")
    parser.add_argument("--target", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--out", help="write the table (Markdown) here too")
    opts = parser.parse_args(argv)
    found = counts(opts.target)
    tree = Path(numfuse.__file__).resolve().parent.parent
    sha = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip() or "unknown"
    kernels = sum(k for k, _ in found.values())
    codes = sum(c for _, c in found.values())
    lines = [f"Measured by `python -m benchmarks.corpus_kernels --target {opts.target}` with numfuse at "
             f"{sha}: {len(found)} programs planned as one graph, {kernels} kernels of {codes} distinct "
             f"codes in all", "",
             "| program | kernels | distinct codes |", "|---|---|---|"]
    lines += [f"| {name} | {k} | {c} |" for name, (k, c) in sorted(found.items())]
    text = "\n".join(lines)
    print(text)
    if opts.out:
        Path(opts.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
