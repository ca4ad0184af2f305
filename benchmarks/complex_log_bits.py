"""numfuse's complex np.log against NumPy's (glibc's clog) on millions of values, bit for bit:
near the unit circle (where clog computes log1p of an exactly summed |z|**2 - 1), on it, just
off it, and spread over every magnitude, for complex128 and complex64.

    python -m benchmarks.complex_log_bits [--target cpu] [--n 2000000] [--out NAME.md]

The template reduces glibc's x2y2m1 (a sort of five values by magnitude, then renormalizing
sums, each followed by a sort) to the five compare-and-swaps its branch's ordering needs; this
checks the whole function, as the user calls it, against NumPy.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).parent / "results"


def regimes(rng, n):
    theta = rng.uniform(-np.pi, np.pi, n)
    x = rng.uniform(0.7072, 0.99999, n)
    on = np.sqrt(1 - x * x)
    return {
        "near abs(z) = 1": (1 + rng.standard_normal(n) * np.exp(rng.uniform(-40, -1, n))) * np.exp(1j * theta),
        "on abs(z) = 1 (y = sqrt(1 - x**2))": x + 1j * on,
        "one ulp off it": x + 1j * np.nextafter(on, 2),
        "0.5 <= abs(z) < 1": rng.uniform(0.5, 1, n) * np.exp(1j * theta),
        "every magnitude": rng.standard_normal(n) * np.exp(rng.uniform(-700, 700, n))
        + 1j * rng.standard_normal(n) * np.exp(rng.uniform(-700, 700, n)),
    }


def main(argv=None) -> int:
    import numfuse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--n", type=int, default=2_000_000)
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    log = numfuse.jit(np.log, target=args.target)
    lines = [f"# complex np.log, numfuse (target={args.target}) against NumPy {np.__version__}, bit for bit", "",
             f"`python -m benchmarks.complex_log_bits --target {args.target} --n {args.n}`", "",
             "| values | dtype | count | parts that differ |", "|---|---|---:|---:|"]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for name, z in regimes(rng, args.n).items():
            for dtype in (np.complex128, np.complex64):
                zz = z.astype(dtype)
                got, expected = log(zz), np.log(zz)
                word = np.uint64 if dtype == np.complex128 else np.uint32
                differ = int(np.count_nonzero(got.view(word) != expected.view(word)))
                lines.append(f"| {name} | {np.dtype(dtype).name} | {zz.size} | {differ} |")
                print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        (RESULTS / args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
