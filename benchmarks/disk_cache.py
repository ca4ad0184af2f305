"""The disk cache across processes (issue 5, part 4): a fresh process's first call with a cold
cache against one with a warm cache.

    python -m benchmarks.disk_cache [--out FILE.md]

Each measurement is a new Python process with NUMFUSE_CACHE_DIR set to a fresh directory
(cold) or to the directory a cold process just filled (warm). The process imports numfuse and
numba.cuda first (every process pays that, cache or not: it is reported on its own), then times
its first use of each workload:

- without a GPU: `jf.compile(*args)`, which traces, plans, generates and compiles every kernel
  to sm_90 PTX (numfuse's PTX cache);
- on a GPU: the first call `jf(*args)` on device arrays, synchronized (Numba's cache of the
  compiled, linked kernels; CUDA context creation is paid before the clock starts).

Target: warm at most 10% of cold.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

from benchmarks import workloads

CHILD = textwrap.dedent('''
    import json, sys, time
    start = time.perf_counter()
    import numpy as np
    import numfuse
    from numfuse.targets.cuda.device import compile_target
    target = compile_target()
    import numba.cuda
    if target == "gpu":
        numba.cuda.current_context()
        import cupy  # and CuPy's own start (its pool, its first kernel), outside the times
        cupy.asarray(np.ones(4, np.float32)).sum()
        cupy.cuda.get_current_stream().synchronize()
    setup = time.perf_counter() - start
    from benchmarks.disk_cache import WORKLOADS
    times = {}
    for name, (fn, make) in WORKLOADS.items():
        jf = numfuse.jit(fn, target="cuda")
        args = make()
        t = time.perf_counter()
        if target == "gpu":
            out = jf(*[cupy.asarray(a) for a in args])
            cupy.cuda.get_current_stream().synchronize()
        else:
            jf.compile(*args)
        times[name] = time.perf_counter() - t
    print(json.dumps({"target": target, "setup": setup, "times": times}))
''')


WORKLOADS = {
    "quickstart (elementwise + row sum)": (workloads.quickstart, lambda: (np.ones((256, 256), np.float32),
                                                                          np.ones((256, 256), np.float32))),
    "softmax": (workloads.softmax, lambda: (np.ones((256, 1000), np.float32),)),
    "layer norm": (workloads.layer_norm, lambda: (np.ones((256, 1000), np.float32), np.ones(1000, np.float32),
                                         np.ones(1000, np.float32))),
}


def _run_child(cache: str) -> dict:
    env = dict(os.environ, NUMFUSE_CACHE_DIR=cache)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"the measuring process failed (exit {out.returncode}):\n{out.stdout}{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure() -> tuple[str, list[tuple[str, float, float]], float]:
    with tempfile.TemporaryDirectory() as cache:
        cold = _run_child(cache)
        warm = _run_child(cache)
    rows = [(name, cold["times"][name], warm["times"][name]) for name in WORKLOADS]
    return cold["target"], rows, (cold["setup"] + warm["setup"]) / 2


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.disk_cache", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="also write the table to this markdown file")
    args = parser.parse_args(argv)
    target, rows, setup = measure()
    what = "first call `jf(*args)` on CuPy arrays" if target == "gpu" else "first `jf.compile(*args)` (sm_90 PTX)"
    lines = [f"| workload ({what}) | cold cache, s | warm cache, s | warm / cold | target ≤ 10% |",
             "|---|---|---|---|---|"]
    for name, cold, warm in rows:
        ratio = warm / cold
        lines.append(f"| {name} | {cold:.3f} | {warm:.3f} | {ratio:.1%} | {'met' if ratio <= 0.10 else 'missed'} |")
    total_cold, total_warm = sum(r[1] for r in rows), sum(r[2] for r in rows)
    lines.append(f"| all three | {total_cold:.3f} | {total_warm:.3f} | {total_warm / total_cold:.1%} | "
                 f"{'met' if total_warm <= 0.1 * total_cold else 'missed'} |")
    table = "\n".join(lines)
    note = (f"Every process first spends {setup:.2f} s importing numfuse and numba.cuda"
            + (" and creating the CUDA context and CuPy's" if target == "gpu" else "") + ", cache or not (not in the table).")
    print(table + "\n\n" + note)
    if args.out:
        with open(args.out, "w") as f:
            f.write(f"`python -m benchmarks.disk_cache` (target: {target})\n\n{table}\n\n{note}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
