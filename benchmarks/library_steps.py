"""Plans with library calls: a matrix product with its bias and GELU, and a cumulative sum
normalized by its row sums, against plain CuPy and torch.compile on the same NumPy source.

    python -m benchmarks.library_steps --out FILE.md        # on a GPU: times; anywhere: plans

On any machine it writes each workload's plan (library calls and kernels, modeled bytes, and
what one pass per operation would move). On a GPU with CuPy it adds the median time of each
implementation (CUDA events, L2 flushed before every call, benchmarks.timing.DeviceTimer) and
numfuse's time over CuPy's and torch.compile's.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import numfuse


def mlp_gelu(x, w, b):
    """A linear layer with tanh-GELU: one library call (the product) and one kernel."""
    h = x @ w + b
    return 0.5 * h * (1.0 + np.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))


def cumsum_normalized(x):
    """Running sums over each row, divided by the row's total: a fused scan (with the row's
    total beside it), then the division."""
    return np.cumsum(x * 2.0, axis=1) / x.sum(axis=1, keepdims=True)


def _torch_mlp_gelu(x, w, b):
    import torch

    h = x @ w + b
    return 0.5 * h * (1.0 + torch.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))


def _torch_cumsum_normalized(x):
    import torch

    return torch.cumsum(x * 2.0, dim=1) / x.sum(dim=1, keepdim=True)


def _inputs(name: str, xp, large: bool):
    rng = np.random.default_rng(0)
    if name == "mlp_gelu":
        m, k, n = (4096, 1024, 4096) if large else (256, 128, 256)
        arrays = [rng.uniform(-1, 1, (m, k)), rng.uniform(-0.05, 0.05, (k, n)), rng.uniform(-1, 1, n)]
    else:
        rows, cols = (4096, 4096) if large else (256, 256)
        arrays = [rng.uniform(0.5, 1.5, (rows, cols))]
    return [xp.asarray(a.astype(np.float32)) for a in arrays]


WORKLOADS = {
    "mlp_gelu": (mlp_gelu, _torch_mlp_gelu),
    "cumsum_normalized": (cumsum_normalized, _torch_cumsum_normalized),
}


def plan_rows(large: bool) -> list[str]:
    rows = ["| workload | steps | kernels | library calls | bytes moved | one pass per operation |", "|---|---|---|---|---|---|"]
    for name, (fn, _) in WORKLOADS.items():
        plan = numfuse.jit(fn, target="cuda").plan(*_inputs(name, np, large))
        steps = " → ".join("library " + s.prim if not hasattr(s, "nest") else s.nest.kind for s in plan.steps)
        rows.append(f"| {name} | {steps} | {len(plan.kernels)} | {len(plan.library_steps)} | "
                    f"{plan.bytes_moved} | {plan.unfused_bytes} |")
    return rows


def gpu_rows(repeat: int) -> list[str]:
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except Exception as err:  # noqa: BLE001  (no GPU: the plans are the whole report)
        return [f"No GPU timing: {type(err).__name__}: {err}"]
    from .timing import DeviceTimer, median

    timer = DeviceTimer(cp)
    rows = ["| workload | numfuse ms | CuPy ms | torch.compile ms | CuPy / numfuse | torch.compile / numfuse |",
            "|---|---|---|---|---|---|"]
    for name, (fn, torch_fn) in WORKLOADS.items():
        args = _inputs(name, cp, True)
        jitted = numfuse.jit(fn, target="cuda")
        jitted(*args)
        ours = median(timer.event_times(lambda: jitted(*args), repeat))
        cupy_ms = median(timer.event_times(lambda: fn(*args), repeat))
        torch_ms = None
        try:
            import torch

            compiled = torch.compile(torch_fn)
            targs = [torch.as_tensor(a, device="cuda") for a in args]
            compiled(*targs)

            def events():
                return (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True),
                        lambda s, e: s.elapsed_time(e))

            torch_ms = median(timer.event_times(lambda: compiled(*targs), repeat, events))
        except Exception as err:  # noqa: BLE001  (a missing or failing peer costs its cell only)
            print(f"torch.compile {name}: {type(err).__name__}: {err}", file=sys.stderr)
        torch_cell = f"{torch_ms:.3f}" if torch_ms is not None else "-"
        ratio = f"{torch_ms / ours:.2f}" if torch_ms is not None else "-"
        rows.append(f"| {name} | {ours:.3f} | {cupy_ms:.3f} | {torch_cell} | {cupy_ms / ours:.2f} | {ratio} |")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the report here (Markdown)")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    lines = ["# Plans with library calls", "", "Large sizes (mlp_gelu 4096x1024 @ 1024x4096, cumsum 4096x4096, float32):", ""]
    lines += plan_rows(large=True) + [""] + gpu_rows(args.repeat)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
