"""Build docs/performance.md from the benchmark workloads and benchmarks/results/.

    python -m benchmarks.report            # rewrite docs/performance.md
    python -m benchmarks.report --check    # exit 1 if docs/performance.md is stale

The page explains the method, shows every workload's plan at the large size (computed here: no
GPU, no numba needed), then every run committed under benchmarks/results/ (`*.json` written by
`python -m benchmarks`), GPU runs first, newest first, each with its full tables.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks import output
from benchmarks.suite import RESULTS, SIZES, plan_row
from benchmarks.workloads import TARGETS, WORKLOADS

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "performance.md"


def plan_table(size: str = "large") -> list[str]:
    lines = output.table_header(["workload", "kind", "target", "shapes", "kernels", "strategy", "bytes moved",
                            "minimum bytes", "moved / minimum", "one pass per NumPy operation / minimum"])
    for w in WORKLOADS:
        r = plan_row(w, size)
        target = f"{w.target_pct}% of copy" if w.target_pct is not None else "none"
        lines.append(
            f"| {w.name} | {w.kind} | {target} | {output.shapes_text(r)} | {r['kernels']} | {'; '.join(r['strategies'])} | "
            f"{r['bytes_moved']:,} | {r['min_bytes']:,} | {r['bytes_moved'] / r['min_bytes']:.2f} | "
            f"{r['unfused_bytes'] / r['min_bytes']:.2f} |"
        )
    return lines


def runs() -> list[str]:
    found = []
    for path in sorted(RESULTS.glob("*.json")):
        if path.stem.endswith("-cpu-target"):
            continue  # the CPU target's runs: MEASUREMENTS
        data = json.loads(path.read_text())
        found.append((data["meta"]["gpu"] == "cpu", data["meta"]["date"], path.name, data))
    gpu_runs = [f for f in found if not f[0]]
    lines = []
    if not gpu_runs:
        lines += [
            "No GPU run has been committed yet: every session so far had no GPU, so numfuse's kernels "
            "have run only on Numba's CUDA simulator and been compiled to sm_90 PTX. "
            "`bash benchmarks/gpu_check.sh DIR` on a GPU machine writes the suite's results into "
            "`DIR/bench/`; commit them under `benchmarks/results/` and run `python -m benchmarks.report`.",
            "",
        ]
    # GPU runs first, then CPU-only ones; newest first within each.
    ordered = sorted(gpu_runs, key=lambda f: f[1], reverse=True) + sorted(
        [f for f in found if f[0]], key=lambda f: f[1], reverse=True)
    for _, _, name, data in ordered:
        lines += [f"From `benchmarks/results/{name}`:", "", output.markdown(data, level=3), ""]
    return lines


METHOD = f"""\
## Method

`python -m benchmarks` runs every workload of `benchmarks/workloads.py` at two sizes: small, 1 MiB
of input (where the cost of a call dominates), and large, 512 MiB of input, so that every
memory-bound workload moves 512 MiB or more. The KDE reads almost nothing: its size is that of
the samples x grid matrix it evaluates and never stores, and it has no bandwidth target.

Columns that need no GPU, measured on any machine:

- **kernels, bytes moved, minimum bytes**: numfuse's plan (`jf.plan(...)`) on NumPy zeros of the
  real shapes (never touched, so the large size costs no memory). Bytes moved are modeled
  global-memory traffic; the minimum reads every input once and writes every output once; "one
  pass per op" is what NumPy or plain CuPy, one pass per operation, moves.
- **plan (ms)**: tracing, planning and generating the kernel source, median of fresh `jit` objects.
- **compile (s)**: NVVM compiling every kernel of the plan to sm_90 PTX (numba-cuda's
  `compile_ptx`, no GPU needed), after one warm-up compile; the same code serves every shape, so
  the large size reuses the small size's measurement when the code is the same.
- **NumPy CPU (ms)**: NumPy on the host, median of the repeats (small size; `--numpy-large` for
  the large one).

With a GPU (and CuPy), on the same device arrays (made on the GPU by CuPy; PyTorch and JAX read
them through DLPack): numfuse, plain CuPy (the NumPy function itself, through NumPy's dispatch),
torch.compile (`dynamic=False`), jax.jit (the NumPy source with `np` bound to `jax.numpy`), and
cupy.fuse where it can express the workload (one elementwise kernel or one reduction).

- **time**: the median of `--repeat` calls (default 20) after a first call and two warm-up
  calls. Before each call a 256 MiB buffer is read (four times H200's L2, so inputs come from
  memory, not from the cache the previous call left, and no dirty line is left for the call to
  write back) and the device is left idle; CUDA events on
  the stream then time the call. The GPU being idle at the start event, a call whose host side
  is slower than its kernels is timed with that cost, which is what the small size shows. jax.jit
  runs on its own streams: it is timed on the host clock around the call and `block_until_ready`.
- **copy**: a 1 GiB device-to-device `cudaMemcpyAsync` in the same run; its bandwidth counts the
  bytes read and the bytes written. **GB/s** is the workload's minimum bytes over the median
  time, for every implementation, and **% of copy** compares it with the copy.
- **kernels per call** of every implementation: counted by PyTorch's profiler (CUPTI sees every
  kernel of the process, whichever library launched it), after all timings.
- **max rel diff**: max |result − reference| / max |reference|, against NumPy's result at the
  small size and plain CuPy's at the large one; above {output.MISMATCH:g} the table marks it wrong.

Targets, at the large size: numfuse reaches {TARGETS['elementwise']}% of the copy's bandwidth on
elementwise workloads, {TARGETS['reduction']}% on reductions and {TARGETS['normalization']}% on
normalizations (softmax, log_softmax, layer norm, RMS norm), and is no slower than torch.compile
on any workload. Where a target is missed the table says by how many points or by what
percentage.

`bash benchmarks/gpu_check.sh DIR` runs the tests, this suite (`--size both --max-seconds`, so
that the peers left when time runs out are skipped, and said to be) and the fuzzer on a GPU
machine. Without a GPU, `python -m benchmarks` runs the columns that need none.
"""


# Other measurements committed as markdown under benchmarks/results/: (file suffix, heading, what).
MEASUREMENTS = [
    ("cpu-target", "The CPU target against NumPy and the CPU peers",
     "`python -m benchmarks --target cpu` (benchmarks/cpu.py): every workload at 1 MiB and 256 MiB on "
     "numfuse's CPU target, beside NumPy, numexpr, jax.jit and torch.compile where installed, and a "
     "memory copy of the same size (the bandwidth limit). Targets: memory-bound workloads at 80% of the "
     "copy or more, every workload at least as fast as the fastest peer."),
    ("corpus-speed-cpu", "Public programs at large sizes on the CPU target",
     "`python -m benchmarks.corpus_speed --target cpu`: the corpus's programs written by others "
     "(npbench's kernels, picoGPT's layers) at sizes where NumPy takes milliseconds to seconds, each "
     "checked against NumPy first, then NumPy and numfuse timed alternately in one process: what a user "
     "gets (numfuse's plan, or the plain function where timing both chose it: numpy_fallback) and the "
     "plan's own time beside it."),
    ("gomp-spincount-cpu", "OpenMP's spinning beside NumPy's BLAS",
     "`python -m benchmarks.spin_count`: the corpus's programs that mix kernels and matrix products, "
     "and a few of kernels only, under three settings of GOMP_SPINCOUNT."),
    ("vector-math", "The CPU target's exp, tanh, log, sin and cos",
     "`python -m benchmarks.vector_math_accuracy`: the vectorizable templates over every float32 input, "
     "in ULP of NumPy's results (the target is 4)."),
    ("complex-log-bits-cpu", "Complex np.log bit for bit",
     "`python -m benchmarks.complex_log_bits --target cpu`: numfuse's complex np.log (glibc's clog, whose "
     "x2y2m1 the template reduces to five compare-and-swaps) against NumPy's on millions of values near, "
     "on and off the unit circle and over every magnitude: parts whose bits differ."),
    ("host-overhead", "Cost of a cached call",
     "`python -m benchmarks.host_overhead`: numfuse's own host work per call of a one-kernel function on "
     "three device arrays (the target is 5 µs), on the CPU target the whole call on NumPy arrays, kernel "
     "included (target 5 µs), and on a GPU the whole call (target 15 µs)."),
    ("disk-cache", "The disk cache across processes",
     "`python -m benchmarks.disk_cache`: a fresh process's first use of each workload with a cold "
     "cache and with a warm one (target: warm at most 10% of cold)."),
    ("shape-reuse", "Kernels reused across shapes",
     "`python -m benchmarks.shape_reuse`: kernels compiled over 20 sizes against the kernels in the plan."),
    ("roll-loops", "Time loops through concatenations",
     "`python -m benchmarks.roll_loops`: np.roll stencils, a game of life and an RK4 integrator whose "
     "steps read the step before through concatenations: the first call with an empty kernel cache "
     "(trace, plan, compile), a later call, NumPy (plan/select_nesting.py keeps each kernel's code bounded)."),
    ("compile-time-cpu", "First-call compile time of vector math (CPU target)",
     "`python -m benchmarks.compile_time`: the first call, with an empty cache, of loops chaining 8 or 24 of "
     "exp, tanh, log1p, sin and cos, each in a fresh process; run at two commits to compare them."),
    ("ptx-loops", "Instructions per point",
     "`python -m benchmarks.ptx_loops`: PTX instructions per point in each kernel's costliest inner "
     "loop, integer divisions in it, and negative-index wraparounds in the kernel (no GPU needed; "
     "a proxy for the ALU work that must stay under the memory time)."),
]


def measurements() -> list[str]:
    lines = []
    for suffix, heading, what in MEASUREMENTS:
        found = sorted(RESULTS.glob(f"*-{suffix}.md"), reverse=True)
        lines += [f"## {heading}", "", what, ""]
        if not found:
            lines += ["No measurement committed yet.", ""]
        for path in found:
            lines += [f"From `benchmarks/results/{path.name}`:", "", path.read_text().strip(), ""]
    return lines


def page() -> str:
    lines = [
        "# Performance",
        "",
        "Generated by `python -m benchmarks.report` from `benchmarks/workloads.py` and",
        "`benchmarks/results/`; a test fails when this page is stale.",
        "",
        METHOD,
        "## Plans",
        "",
        f"Each workload at the large size ({SIZES['large'] // 2**20} MiB of input), as `plan()` models it.",
        "",
        *plan_table(),
        "",
        "## Runs",
        "",
        *runs(),
        *measurements(),
    ]
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the page is current")
    args = parser.parse_args(argv)
    text = page()
    if args.check:
        current = PAGE.read_text() if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE} is stale: run python -m benchmarks.report", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
