"""Run the benchmark suite and write its JSON, markdown table and PNG.

    python -m benchmarks                          # both sizes, every workload -> benchmarks/results/
    python -m benchmarks --size small --only softmax layer_norm --repeat 50
    python -m benchmarks --cpu --no-compile       # plans and planning times only (no GPU, no NVVM)
    python -m benchmarks --size both --out DIR --max-seconds 150   # what gpu_check.sh runs
    python -m benchmarks --target cpu             # numfuse's CPU target and the CPU peers (cpu.py)

Without a GPU (or CuPy) it runs the columns that need none: kernels, bytes, planning and compile
times, NumPy on the CPU. See docs/performance.md for the method.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from benchmarks.suite import RESULTS, SIZES, Options, run_suite
from benchmarks.workloads import BY_NAME


def parse(argv) -> Options:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=(*SIZES, "both"), default="both",
                        help="small: 1 MiB of input per workload (call overhead); large: 512 MiB")
    parser.add_argument("--only", nargs="+", metavar="NAME", default=(),
                        help=f"these workloads only: {', '.join(BY_NAME)}")
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory for the results (%(default)s)")
    parser.add_argument("--name", help="file name of the results, without extension (default: date-device-commit)")
    parser.add_argument("--repeat", type=int, default=20, help="timed calls per measurement (median)")
    parser.add_argument("--plan-repeat", type=int, default=5, help="fresh plans per planning time (median)")
    parser.add_argument("--no-compile", action="store_true", help="skip the PTX compile times (no NVVM)")
    parser.add_argument("--cpu", action="store_true", help="the columns that need no GPU only, even with one")
    parser.add_argument("--numpy-large", action="store_true", help="time NumPy on the CPU at the large size too")
    parser.add_argument("--max-seconds", type=float,
                        help="after this long, skip the peers not yet run (numfuse and CuPy always run)")
    args = parser.parse_args(argv)
    return Options(
        sizes=tuple(SIZES) if args.size == "both" else (args.size,),
        only=tuple(args.only),
        out=args.out,
        repeat=max(1, args.repeat),
        compile=not args.no_compile,
        cpu_only=args.cpu,
        max_seconds=args.max_seconds,
        numpy_large=args.numpy_large,
        plan_repeat=max(1, args.plan_repeat),
        command=shlex.join(["python", "-m", "benchmarks", *argv]),
        stem=args.name,
    )


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["--target", "cpu"]:
        from benchmarks import cpu

        return cpu.main(argv[2:])
    run_suite(parse(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
