"""The public programs of the corpus (numfuse_tests/corpus) at large sizes, numfuse against NumPy.

    python -m benchmarks.corpus_speed [--target cpu] [--only a,b] [--repeat 5] [--out NAME.md]

The suite's workloads (benchmarks/workloads.py) are ours; these are other people's programs
(npbench's kernels, picoGPT's layers), as a new user would time them: each at a size where
NumPy takes a few to a few hundred milliseconds, its result checked against NumPy's (as the
corpus test checks it), then NumPy and numfuse timed alternately, one call each per round, in
one process, so that both see the same machine. Each program runs in its own subprocess with a
time limit (a first call that compiles many kernels can take a while). The table gives each
program's times, NumPy's time over numfuse's, the geometric mean and the slowest program.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import math
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from numfuse.numpy_fallback import ROUNDS

RESULTS = Path(__file__).parent / "results"

# Keyword arguments of each program's make_args for a large run (npbench's presets, scaled so that
# NumPy takes tens of milliseconds on a 2-core machine); a callable builds the arguments itself.
SIZES = {
    "azimint_hist": dict(N=2_000_000, npt=1000),
    "azimint_naive": lambda m, rng: m._azimint_args(rng, 400_000, 100),
    "cavity_flow": dict(ny=201, nx=201, nt=10, nit=20),
    "channel_flow": dict(ny=101, nx=101, nit=20),
    "compute": dict(M=2000, N=2000),
    "contour_integral": dict(NR=50, NM=150, slab_per_bc=2, num_int_pts=32),
    "conv2d_bias": dict(C_in=3, C_out=16, H=64, K=5, N=8, W=64),
    "lenet": dict(N=16, H=28, W=28),
    "mlp": dict(C_in=3, N=2048, S0=1000, S1=500, S2=100),
    "resnet": dict(N=8, W=28, H=28, C1=64, C2=16),
    "softmax": lambda m, rng: (rng.random((16, 16, 128, 128), dtype=np.float32),),
    "go_fast": lambda m, rng: (rng.random((2000, 2000), dtype=np.float64),),
    "mandelbrot1": lambda m, rng: (-1.75, 0.25, -1.00, 1.00, 500, 400, 40, 2.0),
    "mandelbrot2": lambda m, rng: (-2.00, 0.50, -1.25, 1.25, 500, 400, 40, 2.0),
    "nbody": dict(N=400, tEnd=1.0, dt=0.05),
    "adi": dict(TSTEPS=5, N=200),
    "atax": dict(M=4000, N=4000),
    "bicg": dict(M=4000, N=4000),
    "cholesky": lambda m, rng: (m._spd_init(100),),
    "cholesky2": lambda m, rng: (m._spd_init(1000),),
    "correlation": dict(M=500, N=600),
    "covariance": dict(M=500, N=600),
    "covariance2": dict(M=500, N=600),
    "durbin": lambda m, rng: (np.fromfunction(lambda i: 500 + 1 - i, (500, ), dtype=np.float64),),
    "deriche": dict(W=720, H=480),
    "doitgen": dict(NR=60, NQ=60, NP=128),
    "fdtd_2d": dict(TMAX=20, NX=500, NY=600),
    "floyd_warshall": dict(N=300),
    "gemm": dict(NI=1000, NJ=1100, NK=1200),
    "gemver": dict(N=2000),
    "gesummv": dict(N=4000),
    "gramschmidt": dict(M=240, N=200),
    "heat_3d": dict(TSTEPS=20, N=70),
    "jacobi_1d": dict(TSTEPS=100, N=200_000),
    "jacobi_2d": dict(TSTEPS=50, N=500),
    "k2mm": dict(NI=800, NJ=900, NK=1000, NL=1100),
    "k3mm": dict(NI=800, NJ=900, NK=1000, NL=1100, NM=1200),
    "lu": lambda m, rng: (m._spd_init(60),),
    "ludcmp": dict(N=60),
    "mvt": dict(N=4000),
    "nussinov": dict(N=40),
    "seidel_2d": dict(TSTEPS=3, N=40),
    "symm": dict(M=400, N=500),
    "syr2k": dict(M=300, N=400),
    "syrk": dict(M=300, N=400),
    "trisolv": dict(N=2000),
    "trmm": dict(M=400, N=500),
    "arc_distance": dict(N=2_000_000),
    "crc16": lambda m, rng: (rng.integers(0, 256, size=(200, ), dtype=np.uint8),),
    "scattering_self_energies": dict(Nkz=2, NE=10, Nqz=2, Nw=2, N3D=2, NA=6, NB=4, Norb=4),
    "stockham_fft": dict(R=4, K=8),
    "spmv": dict(M=4096, N=4096, nnz=100_000),
    "hdiff": dict(I=256, J=256, K=80),
    "vadv": dict(I=128, J=128, K=80),
    "picogpt_gelu": lambda m, rng: (m._f32(rng, 1024, 3072, scale=2.0),),
    "picogpt_layer_norm": lambda m, rng: (m._f32(rng, 2048, 768), 1.0 + m._f32(rng, 768, scale=0.1),
                                          m._f32(rng, 768, scale=0.1)),
    "picogpt_attention": dict(n_q=512, n_k=512, d_k=64, d_v=64),
    "picogpt_ffn": dict(n_seq=256, n_embd=768),
    "picogpt_mha": dict(n_seq=256, n_embd=768, n_head=12),
    "picogpt_mha_auto_static": dict(n_seq=256, n_embd=768, n_head=12),
    "picogpt_transformer_block": dict(n_seq=256, n_embd=768, n_head=12),
}


def _large_args(prog, rng):
    from numfuse_tests.corpus import programs

    size = SIZES[prog.name]
    if callable(size):
        return size(programs, rng)
    return prog.make_args(rng, **size)


def _find(name):
    from numfuse_tests.corpus.programs import BY_NAME

    return BY_NAME[name]


def measure(name: str, target: str, repeat: int) -> dict:
    """One program, in this process: check it, then time NumPy and numfuse alternately."""
    import numfuse
    from numfuse_tests.corpus.runner import SEED, compare

    prog = _find(name)
    args = _large_args(prog, np.random.default_rng(SEED))
    # The corpus's tolerance is for its tiny sizes; a reduction here adds up to the longest axis's
    # points (summed in another order than NumPy's where a reduction is split).
    longest = max((max(a.shape, default=1) for a in args if isinstance(a, np.ndarray)), default=1)
    prog = dataclasses.replace(prog, reduced=max(prog.reduced, longest))
    # What a user gets: numfuse's plan, or the plain function where timing both chose it
    # (numfuse/numpy_fallback.py; the benchmarks turn that off by default).
    fn = numfuse.jit(prog.fn, static_argnames=prog.static_argnames, target=target, numpy_fallback=True)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        np_args, nf_args = copy.deepcopy(args), copy.deepcopy(args)
        expected = prog.fn(*np_args)
        start = time.perf_counter()
        got = fn(*nf_args)
        first = time.perf_counter() - start
        try:
            compare(prog, got, expected, nf_args, np_args)
        except AssertionError as err:
            lines = [l.strip() for l in str(err).splitlines() if l.strip()]
            return {"name": name, "error": "differs from NumPy: " + "; ".join(lines[:4])}
        times = {"numpy": [], "numfuse": []}
        trial = 2 * ROUNDS  # numfuse's calls that time its plan against the plain function
        for _ in range(trial + repeat):
            for who, run in (("numpy", prog.fn), ("numfuse", fn)):
                fresh = copy.deepcopy(args)
                start = time.perf_counter()
                run(*fresh)
                times[who].append(time.perf_counter() - start)
        choice = fn.numpy_choice(*copy.deepcopy(args))
    if choice is not None and choice.reason is not None and "segment by segment" in choice.reason:
        kernels = "segments, then NumPy: over budget"  # (frontend/eager.py)
    elif choice is not None and choice.reason is not None:
        kernels = "none: trace over budget"
    else:
        try:
            plan = fn.plan(*copy.deepcopy(args))
            kernels = f"{len(plan.kernels)} + {len(plan.library_steps)}"
        except Exception:  # noqa: BLE001 - a function with graph breaks has a plan per segment
            kernels = "segments"
    # (no plan's time where the trace passed its budget: the plain function ran from the start)
    fused = choice.fused if choice is not None else times["numfuse"]
    plan_ms = 1e3 * min(fused) if fused else None
    return {"name": name, "numpy_ms": 1e3 * min(times["numpy"]), "numfuse_ms": 1e3 * min(times["numfuse"][trial:]),
            "plan_ms": plan_ms, "runs": choice.chosen if choice is not None else "numfuse",
            "first_s": first, "steps": kernels}


def _run_child(name: str, target: str, repeat: int, timeout: float) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.corpus_speed", "--child", name, "--target", target,
           "--repeat", str(repeat)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"name": name, "error": f"more than {timeout:.0f} s"}
    lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"name": name, "error": tail[:200]}
    return json.loads(lines[-1])


def table(rows: list[dict], target: str, repeat: int) -> str:
    out = [f"# The corpus's public programs at large sizes: numfuse (target={target}) against NumPy", "",
           f"`python -m benchmarks.corpus_speed --target {target} --repeat {repeat}`; "
           f"{os.cpu_count()} CPU(s), NumPy {np.__version__}. Each program checked against NumPy first, "
           "then both timed alternately in one process. 'first call' includes tracing and compiling; "
           f"the next {2 * ROUNDS} calls time numfuse's plan against the plain function (numpy_fallback), "
           "'runs' is what they chose, 'numfuse ms' the best of the rounds after them, 'plan ms' the best "
           "of the plan's timed calls.", "",
           "| program | NumPy ms | numfuse ms | NumPy / numfuse | runs | plan ms | first call s | "
           "kernels + library calls |",
           "|---|---:|---:|---:|---|---:|---:|---:|"]
    ratios = []
    for r in rows:
        if "error" in r:
            out.append(f"| {r['name']} | | | {r['error']} | | | | |")
            continue
        ratio = r["numpy_ms"] / r["numfuse_ms"]
        ratios.append((ratio, r["name"]))
        plan = "untraced" if r["plan_ms"] is None else f"{r['plan_ms']:.2f}"
        out.append(f"| {r['name']} | {r['numpy_ms']:.2f} | {r['numfuse_ms']:.2f} | {ratio:.2f}x | {r['runs']} | "
                   f"{plan} | {r['first_s']:.1f} | {r['steps']} |")
    if ratios:
        geo = math.exp(sum(math.log(x) for x, _ in ratios) / len(ratios))
        slow, slow_name = min(ratios)
        plans = [r["numpy_ms"] / r["plan_ms"] for r in rows if "error" not in r and r["plan_ms"] is not None]
        chose = sum(1 for r in rows if r.get("runs") == "numpy")
        plans_text = "no plan was timed (each ran as the plain function from its first call, or from within it)."
        if plans:
            plan_geo = math.exp(sum(math.log(x) for x in plans) / len(plans))
            plans_text = (f"numfuse's plans alone (where traced): geometric mean {plan_geo:.2f}x over {len(plans)}, "
                          f"slowest {min(plans):.2f}x.")
        out += ["", f"Geometric mean {geo:.2f}x NumPy over {len(ratios)} programs; slowest {slow_name} at "
                    f"{slow:.2f}x; {sum(1 for x, _ in ratios if x < 1)} slower than NumPy. {chose} run as the plain "
                    f"function; " + plans_text]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--only", default="")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--out", default="")
    parser.add_argument("--child", default="")
    ns = parser.parse_args(argv)
    if ns.child:
        print(json.dumps(measure(ns.child, ns.target, ns.repeat)))
        return 0
    names = [n for n in SIZES if not ns.only or n in ns.only.split(",")]
    rows = []
    for name in names:
        row = _run_child(name, ns.target, ns.repeat, ns.timeout)
        rows.append(row)
        print(json.dumps(row), flush=True)
    text = table(rows, ns.target, ns.repeat)
    print(text)
    if ns.out:
        (RESULTS / ns.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
