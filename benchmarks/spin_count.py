"""How long OpenMP's workers spin after a parallel loop, against the corpus's programs that mix
numfuse's kernels with NumPy's BLAS (and some that run only kernels), on the CPU target.

    python -m benchmarks.spin_count [--only a,b] [--repeat 3] [--out NAME.md]

Each program runs as benchmarks.corpus_speed runs it (its own process, numfuse's plan timed
against NumPy alternately), once per setting of GOMP_SPINCOUNT: libgomp's own default (300,000),
numfuse's (targets/cpu/loader.py: the variable unset) and a shorter one. The table gives
NumPy's time over the plan's for each.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

from .corpus_speed import RESULTS, _run_child

PROGRAMS = ["mlp", "k2mm", "picogpt_ffn", "picogpt_attention", "cavity_flow", "jacobi_2d", "softmax", "gesummv"]
SETTINGS = [("libgomp's 300000", "300000"), ("numfuse's (unset: 10000)", None), ("1000", "1000")]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or PROGRAMS
    rows = []
    for name in names:
        cells = []
        for _, value in SETTINGS:
            env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
            if value is not None:
                env["GOMP_SPINCOUNT"] = value
            saved = dict(os.environ)
            os.environ.clear()
            os.environ.update(env)
            try:
                result = _run_child(name, "cpu", args.repeat, args.timeout)
            finally:
                os.environ.clear()
                os.environ.update(saved)
            if "error" in result or not result.get("plan_ms"):
                cells.append(result.get("error", "no plan"))
            else:
                cells.append(f"{result['numpy_ms'] / result['plan_ms']:.2f}x ({result['plan_ms']:.2f} ms)")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
        print(rows[-1], flush=True)
    lines = ["# GOMP_SPINCOUNT on the CPU target: NumPy's time over numfuse's plan", "",
             f"`python -m benchmarks.spin_count --repeat {args.repeat}`; {os.cpu_count()} CPU(s), "
             f"{platform.processor() or platform.machine()}. Each cell: NumPy ms / plan ms (the plan's ms).", "",
             "| program | " + " | ".join(s for s, _ in SETTINGS) + " |", "|---|" + "---:|" * len(SETTINGS), *rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        (RESULTS / args.out).write_text(text)


if __name__ == "__main__":
    sys.exit(main())
