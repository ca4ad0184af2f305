"""Time loops whose steps read the step before through concatenations (np.roll stencils, a
game of life, an RK4 integrator whose right-hand side is np.array([...rows])): the first
call's time (trace, plan, compile with an empty kernel cache) and a later call's, beside NumPy.

    python -m benchmarks.roll_loops [--target cpu] [--out benchmarks/results/DATE-cpu-roll-loops.md]

Each program runs in a subprocess of its own with a new kernel cache directory, so the first
call compiles everything it needs. Later calls: the best of 5 (time.perf_counter), NumPy's the
same way, in the same process. Select nesting (plan/select_nesting.py) keeps each kernel's
code bounded: before it, 4 steps of the roll stencil did not compile within 300 s and 2 steps
of the game of life took 131 s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from numfuse_tests.programs import jacobi_roll, life  # noqa: F401 (run by name)


def _lorenz(y):
    return np.array([10.0 * (y[1] - y[0]), y[0] * (28.0 - y[2]) - y[1], y[0] * y[1] - 8.0 / 3.0 * y[2]])


def rk4_lorenz(y, steps):
    """com-py/compy's RK4 (Program 2.4) on many Lorenz systems at once, h = 0.005."""
    h = 0.005
    for _ in range(steps):
        k1 = h * _lorenz(y)
        k2 = h * _lorenz(y + 0.5 * k1)
        k3 = h * _lorenz(y + 0.5 * k2)
        k4 = h * _lorenz(y + k3)
        y = y + (k1 + k4) / 6.0 + (k2 + k3) / 3.0
    return y


def _inputs(name):
    rng = np.random.default_rng(0)
    if name == "life":
        return rng.random((512, 512)) > 0.6
    if name == "rk4_lorenz":
        return rng.random((3, 4096)) * 10
    return rng.standard_normal((512, 512))


PROGRAMS = [("jacobi_roll", 4), ("jacobi_roll", 20), ("life", 2), ("life", 10), ("rk4_lorenz", 20)]


def _child(name: str, steps: int, target: str) -> dict:
    import numfuse

    fn = globals()[name]
    x = _inputs(name)
    jf = numfuse.jit(fn, static_argnums=1, target=target)
    start = time.perf_counter()
    got = jf(x, steps)
    first = time.perf_counter() - start
    later, numpy = [], []
    for _ in range(5):
        start = time.perf_counter()
        jf(x, steps)
        later.append(time.perf_counter() - start)
        start = time.perf_counter()
        want = fn(x, steps)
        numpy.append(time.perf_counter() - start)
    match = bool(np.array_equal(got, want) if got.dtype == bool else np.allclose(got, want, rtol=1e-12, atol=0))
    return {"first_s": first, "later_ms": min(later) * 1e3, "numpy_ms": min(numpy) * 1e3,
            "kernels": len(jf.plan(x, steps).kernels), "match": match}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--out")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child[0], int(args.child[1]), args.target)))
        return
    lines = [f"# Time loops through concatenations ({args.target} target)", "",
             "`python -m benchmarks.roll_loops --target " + args.target + "`: first call with an empty kernel cache; "
             "later calls and NumPy the best of 5.", "",
             "| program | steps | kernels | first call (s) | later call (ms) | NumPy (ms) | NumPy / numfuse | matches NumPy |",
             "|---|---|---|---|---|---|---|---|"]
    for name, steps in PROGRAMS:
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMFUSE_CACHE_DIR=cache, NUMFUSE_QUIET="1")
            out = subprocess.run([sys.executable, "-m", "benchmarks.roll_loops", "--target", args.target,
                                  "--child", name, str(steps)], env=env, capture_output=True, text=True, timeout=1800)
        if out.returncode:
            raise SystemExit(out.stderr)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        lines.append(f"| {name} | {steps} | {r['kernels']} | {r['first_s']:.1f} | {r['later_ms']:.2f} | "
                     f"{r['numpy_ms']:.2f} | {r['numpy_ms'] / r['later_ms']:.2f} | {r['match']} |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
