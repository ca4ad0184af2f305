"""Run the differential program fuzzer: random NumPy programs through numfuse and NumPy.

    python -m numfuse_tests.fuzz --programs 1000             # on the CUDA simulator
    python -m numfuse_tests.fuzz --programs 5000 --gpu       # on the GPU
    python -m numfuse_tests.fuzz --programs 1000 --cpu       # on the CPU target
    python -m numfuse_tests.fuzz --programs 300 --seed 7     # the same programs again
    python -m numfuse_tests.fuzz --programs 5000 --max-seconds 120   # as many as fit in 2 minutes
    python -m numfuse_tests.fuzz --programs 1000 --eager-after 5     # runs with breaks go on in NumPy

Prints one summary line (programs run, mismatches, time, seed); at a mismatch, the shrunk
program as a ready-to-run script first, and exits with status 1.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import warnings


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numfuse_tests.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=300, help="how many programs to run (default 300)")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: a random one, printed)")
    parser.add_argument("--gpu", action="store_true", help="run on the GPU (default: the CUDA simulator)")
    parser.add_argument("--cpu", action="store_true", help="run on the CPU target (default: the CUDA simulator)")
    parser.add_argument("--max-ops", type=int, default=None, help="operations drawn per program (default 30)")
    parser.add_argument("--no-shrink", action="store_true", help="report the first mismatch as found")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="stop starting programs after this long (the summary counts those run)")
    parser.add_argument("--eager-after", type=int, default=None, metavar="N",
                        help="runs segment by segment go on in NumPy past N traced operations in a call "
                             "(numfuse/frontend/eager.py), as numpy_fallback's budget makes them")
    args = parser.parse_args(argv)

    # Thousands of first calls, each compiling: no progress line for each (debug.py).
    os.environ.setdefault("NUMFUSE_QUIET", "1")
    # numba.cuda picks the simulator or the GPU when first imported: decide before that.
    os.environ["NUMFUSE_TARGET"] = "cpu" if args.cpu else "cuda"
    if args.gpu:
        os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    else:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    from numfuse.targets.cuda.device import backend

    from .numerics import ErrorModel
    from .runner import fuzz
    from .strategies import MAX_STEPS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        device = backend()
    if args.gpu and device.simulated:
        print("numfuse fuzz: --gpu, but numba.cuda found no GPU", file=sys.stderr)
        return 2
    if args.eager_after is not None:
        from numfuse.frontend import graph_breaks

        # (the fuzzer's calls are numpy_fallback=False, which has no budget)
        segmented, went_on = graph_breaks.run_segmented, []

        def run_segmented(*a, budget=None, **k):
            run = segmented(*a, budget=args.eager_after, **k)
            went_on.append(run.on_numpy is not None)
            return run

        graph_breaks.run_segmented = run_segmented
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    name = "CUDA simulator" if device.simulated else f"GPU {device.cuda.get_current_device().name}"
    # Every target rounds each multiply and add as NumPy does: a GPU's products are libdevice's
    # mul.rn, which NVVM never fuses (targets/cuda/products.py), and LLVM on the CPU contracts
    # nothing without fast-math. So no target gets numerics.py's FMA allowance.
    name = "CPU target" if args.cpu else name
    summary = fuzz(args.programs, seed, ErrorModel(), name,
                   max_steps=args.max_ops or MAX_STEPS, shrink=not args.no_shrink, max_seconds=args.max_seconds)
    if summary.mismatches:
        print("\n".join(summary.problems))
        print("\n# ---- shrunk repro: save as repro.py and run `python repro.py` ----")
        print(summary.repro)
    if args.eager_after is not None:
        print(f"{sum(went_on)} of {len(went_on)} runs segment by segment went on in NumPy")
    print(summary.line(), flush=True)
    return 1 if summary.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
