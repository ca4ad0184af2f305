"""The work per point of each kernel's inner loops, read from the PTX numfuse compiles (no GPU).

    python -m benchmarks.ptx_loops [--out FILE.md]

A memory-bound kernel runs at the bandwidth limit only if it issues few enough instructions per
point: an H200 moves about 4.8 TB/s and issues about 33 T thread-instructions/s, so a float32
kernel that reads and writes one value per point (8 bytes) has about 55 instructions per point
before issue, not memory, is the limit. An integer division by a size (64-bit, or 32-bit where
LLVM proves the values small) costs tens of instructions on its own.

For every workload of the suite (benchmarks/workloads.py) at 1 MiB, each kernel is compiled to
sm_90 PTX by numba-cuda's compiler, and each of its innermost loops (a backward branch in the
PTX; numfuse and LLVM unroll many by 4) is counted: PTX instructions per point (a point is a
global store, or for a loop that stores nothing a global load) and integer divisions and
remainders in the loop. Two loops are shown: the main loop (the most points per pass: an
unrolled loop rather than the one finishing its remainder), with the instructions its
enclosing loop runs once per pass outside it (a 2d kernel's or a reduction's work per row,
shared by the points a thread takes in that row); and the costliest loop (the most
instructions per point: a remainder loop, or a flat loop that divides by the sizes at every
point). Which one a launch spends its time in depends on the sizes. Also counted: Numba's
wraparound of a negative index (`shr.s64` by 63) in the whole kernel, and the registers per
thread ptxas allocates (above 32, an SM holds fewer than its 2048 threads: 65536 registers).
PTX is not SASS (ptxas schedules, folds and expands), so these are a proxy that compares code
generators, not a time.
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import date
from types import SimpleNamespace

import numfuse
from numfuse.targets.cuda.ptx import ptxas_usage

from . import suite, workloads

_BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);")
_DIVISION = re.compile(r"(div|rem)\.[su]\d+\b")


def _is_instruction(line: str) -> bool:
    return bool(line) and not line.startswith((".", "{", "}", "//", "$"))


def _global_load(line: str) -> bool:
    return line.startswith("ld.") and not line.startswith(("ld.param", "ld.shared", "ld.local", "ld.const"))


def _loops(ptx: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The PTX's lines and each loop's span: a label and the last branch back to it."""
    lines = [line.strip() for line in ptx[ptx.index("{"):].splitlines()]
    labels = {line[:-1]: i for i, line in enumerate(lines) if line.startswith("$L__BB") and line.endswith(":")}
    spans = {}
    for i, line in enumerate(lines):
        target = _BRANCH.search(line)
        if target and labels.get(target.group(1), i) < i:
            spans[labels[target.group(1)]] = i
    return lines, sorted(spans.items())


def _inside(inner: tuple[int, int], outer: tuple[int, int]) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1] and inner != outer


def innermost_loops(ptx: str) -> list[list[str]]:
    """The instructions of each innermost loop of the PTX's kernel (a range from a label to a
    branch back to it, holding no other such range)."""
    lines, spans = _loops(ptx)
    return [[x for x in lines[a:b + 1] if _is_instruction(x)]
            for a, b in spans if not any(_inside(other, (a, b)) for other in spans)]


def _per_row(lines, spans, loop: tuple[int, int]) -> int | None:
    """Instructions of the loop around `loop` that lie in no loop inside it: what runs once per
    pass of the outer loop (a row), or None where `loop` is outermost."""
    around = [s for s in spans if _inside(loop, s)]
    if not around:
        return None
    outer = min(around, key=lambda s: s[1] - s[0])
    nested = [s for s in spans if _inside(s, outer)]
    return sum(_is_instruction(lines[i]) for i in range(outer[0], outer[1] + 1)
               if not any(a <= i <= b for a, b in nested))


def loop_cost(body: list[str]) -> tuple[float, int, int]:
    """(instructions per point, points per pass, divisions) of one loop; points are its global
    stores, or its global loads where it stores nothing (a reduction's accumulating loop)."""
    points = sum(x.startswith("st.") and not x.startswith(("st.shared", "st.local")) for x in body)
    points = points or sum(_global_load(x) for x in body)
    divisions = sum(bool(_DIVISION.match(x)) for x in body)
    return (len(body) / points if points else float("inf")), points, divisions


def kernel_costs(ptx: str) -> dict:
    """Two of the inner loops that touch memory: the main one (taking the most points per pass,
    an unrolled loop rather than the one finishing its remainder; the costliest of those) with
    what its enclosing loop runs once per pass outside it, and the costliest one (most
    instructions per point: a remainder loop, or a flat loop's division-laden body); and the
    kernel's index wraparounds. Which one a launch spends its time in depends on the sizes."""
    lines, spans = _loops(ptx)
    costs = []
    for a, b in spans:
        if not any(_inside(other, (a, b)) for other in spans):
            cost = loop_cost([x for x in lines[a:b + 1] if _is_instruction(x)])
            if cost[1]:
                costs.append((cost, (a, b)))
    none = ((0.0, 0, 0), None)
    (per_point, points, divisions), main = max(costs, key=lambda c: (c[0][1], c[0][0]), default=none)
    (worst_per_point, _, worst_divisions), _ = max(costs, key=lambda c: c[0][0], default=none)
    return {"per_point": per_point, "points_per_pass": points, "divisions": divisions,
            "per_row": None if main is None else _per_row(lines, spans, main),
            "worst_per_point": worst_per_point, "worst_divisions": worst_divisions,
            "wraparounds": len(re.findall(r"shr\.s64\s+%rd\d+, %rd\d+, 63;", ptx))}


def measure(n_bytes: int = 1 << 20) -> list[dict]:
    rows = []
    for workload in workloads.WORKLOADS:
        args = workload.make(n_bytes, None, 0)
        jf = numfuse.jit(workload.fn, target="cuda")
        plan = jf.plan(*args)
        for kernel, ptx in zip(plan.kernels, jf.compile(*args)):
            usage = ptxas_usage(SimpleNamespace(ptx=ptx))
            rows.append({"workload": workload.name, "kernel": kernel.nest.name,
                         "strategy": kernel.nest.strategy, **kernel_costs(ptx),
                         "registers": usage.registers if usage else None})
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| workload | kernel | strategy | main loop: points per pass | main loop: PTX instructions per point "
             "| main loop: divisions | once per pass of the loop around it | costliest loop: PTX instructions "
             "per point | costliest loop: divisions | index wraparounds in the kernel | registers per thread (ptxas) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        registers = "n/a" if r["registers"] is None else r["registers"]
        per_row = "—" if r["per_row"] is None else r["per_row"]
        lines.append(f"| {r['workload']} | {r['kernel']} | {r['strategy']} | {r['points_per_pass']} "
                     f"| {r['per_point']:.1f} | {r['divisions']} | {per_row} | {r['worst_per_point']:.1f} "
                     f"| {r['worst_divisions']} | {r['wraparounds']} | {registers} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ptx_loops", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="also write the table to this markdown file")
    args = parser.parse_args(argv)
    text = table(measure())
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(f"# PTX instructions per point\n\n`python -m benchmarks.ptx_loops` on {date.today()} "
                    f"(commit {suite.commit()}), numba-cuda's compiler for sm_90, every suite workload at 1 MiB."
                    f"\n\n{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
