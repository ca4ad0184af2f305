"""The CPU target's exp, tanh, log, sin and cos over every float32 input, against NumPy, in ULP.

    python -m benchmarks.vector_math_accuracy [--only sin cos] [--out benchmarks/results/DATE-vector-math.md]

Chunks of 2**24 bit patterns run through numfuse.jit(target="cpu") and NumPy; the largest ULP
error (where NumPy's result is finite) and any disagreement on inf, NaN or a zero's sign are
reported per function.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import numfuse

FUNCTIONS = {"exp": np.exp, "tanh": np.tanh, "log": np.log, "sin": np.sin, "cos": np.cos}
CHUNK = 1 << 24


def measure(names=None) -> dict:
    results = {}
    for name, fn in FUNCTIONS.items():
        if names and name not in names:
            continue
        jitted = numfuse.jit(lambda x, fn=fn: fn(x), target="cpu")
        worst, mismatched, start = 0.0, 0, time.perf_counter()
        for first in range(0, 1 << 32, CHUNK):
            x = np.arange(first, first + CHUNK, dtype=np.uint64).astype(np.uint32).view(np.float32)
            with np.errstate(all="ignore"):
                got, want = jitted(x), fn(x)
            finite = np.isfinite(want)
            special = ~finite
            mismatched += int(np.count_nonzero(~((got[special] == want[special]) |
                                                 (np.isnan(got[special]) & np.isnan(want[special])))))
            zero = want == 0
            mismatched += int(np.count_nonzero(np.signbit(got[zero]) != np.signbit(want[zero])))
            error = np.abs(got[finite].astype(np.float64) - want[finite]) / np.spacing(np.abs(want[finite]))
            worst = max(worst, float(error.max(initial=0.0)))
        results[name] = {"max_ulp": worst, "special_mismatches": mismatched, "seconds": time.perf_counter() - start}
        print(f"{name}: max {worst:.1f} ULP over all float32 inputs, {mismatched} special-value mismatches", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out")
    parser.add_argument("--only", nargs="+", choices=list(FUNCTIONS))
    args = parser.parse_args()
    results = measure(args.only)
    if args.out:
        only = f" --only {' '.join(args.only)}" if args.only else ""
        lines = ["`python -m benchmarks.vector_math_accuracy" + only + " --out " + args.out.split("/")[-1] + "`, all 2**32 "
                 "float32 inputs, against NumPy " + np.__version__ + ".", "",
                 "| function | max ULP | special-value mismatches |", "|---|---|---|"]
        lines += [f"| {n} | {r['max_ulp']:.1f} | {r['special_mismatches']} |" for n, r in results.items()]
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
