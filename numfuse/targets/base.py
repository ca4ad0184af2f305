"""What planning and lowering may ask of a target, and what a target must provide to run a plan.

A plan is made for one target. The planner and lowering never read a device's numbers: they ask
the Target they were given (its row cache, when it splits a reduction, the prose `explain`
prints for its schedules). Rendering and running belong to the target's own folder
(targets/cuda, targets/cpu), reached through `render` and `executable`, which import their
code only when called: a plan can be made, printed and tested without a compiler.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


# Operations whose second operand, an integer constant, a compiler turns into cheaper code.
_INTEGER_DIVISORS = frozenset({"divide", "floor_divide", "remainder", "fmod", "left_shift", "right_shift", "gcd",
                               "lcm"})


@dataclass(frozen=True)
class Target:
    name: str  # "cuda" | "cpu": numfuse.jit's target option
    # Bytes of a reduction's rows that stay close to the cores between the phases of one kernel
    # (a GPU block's shared memory; a CPU core's share of L2): a row that fits is read from
    # memory once, a longer one in every phase that uses it, and softmax accumulates its sum
    # in its maximum's pass (the online softmax).
    row_cache_bytes: int
    # A single-phase reduction of fewer rows than split_max_rows, each of at least
    # split_min_reduced points, spreads each row over several workers (GPU blocks, CPU threads).
    split_max_rows: int
    split_min_reduced: int
    # A "columns" reduction caching long rows keeps this many neighbouring outputs.
    column_cache_rows: int
    # Where the row cache lives, in words ("on-chip", "L2"), for explain's notes.
    row_cache_place: str
    # What the target runs kernels as, in words, for explain.
    description: str = ""
    # A pointwise kernel becomes a part of a kernel of several parts (plan/horizontal.py) only
    # up to this many points (may_be_part): see each target's reason. An estimate, not a
    # measurement.
    part_max_points: int = 1 << 12
    # A scan (np.cumsum) runs fused, each row by one worker in the row's order, when its rows
    # keep the target busy (split_max_rows of them or more) or are at most this long; otherwise
    # the library's scan runs it (plan/scans.py), between the kernels of its producers and
    # consumers.
    scan_serial_points: int = 1 << 62
    # The most operations (roughly weighted by their code: plan/code_size.py) that one value's
    # evaluation in a kernel may hold before a value it reads is stored instead: both targets
    # compile through Numba, whose passes grow faster than the code. And the most a scalar that
    # an array reads may hold before it is computed once and stored, not at every point.
    code_budget: int = 128
    scalar_budget: int = 24
    # The most independent reductions of one level, domain and axes that one kernel computes:
    # each is an accumulator and its code, and Numba's passes grow faster than the code (a
    # 200-accumulator kernel compiled for 25 s; conv2d_bias's 3,600 in kernels of 16: 18 s). Runs become
    # kernels of the same code, which compiles once, each reading the inputs once more.
    max_reductions: int = 16
    # The most reductions of one kernel of several phases (reductions that read another's
    # result over its own row: softmax's max and sum, for each of 12 heads: 24). Past it, the
    # next ones go one level later (plan/planner.py, _level_reduction): npbench's azimint_naive
    # (a max, then 200 sums over masks that compare with it) was one kernel of 201 accumulators
    # that compiled for 24 s. Below it, cutting costs more than it saves: 8 heads of 12 fold
    # into lanes (targets/cpu/lanes.py), whose code compiled for 39 s against 11 s for all 12.
    max_phased_reductions: int = 32

    def fuses_product(self, dtype, sizes: list[int], space: int, terms: int, computed: bool) -> tuple[bool, str]:
        """Whether a matrix product (result dtype, operand and result sizes, multiply-adds, terms
        of each sum, whether an operand is computed by fusable operations rather than stored) is
        traced as a fused sum of products rather than a library call, and why
        (frontend/numpy_products.py)."""
        from ..ir.library_ops import fused_by_size

        return fused_by_size(dtype, sizes, space, terms, computed)

    def fuses_scan(self, rows: int, points: int) -> bool:
        """Whether a scan of `rows` rows of `points` points runs in a fused kernel."""
        return rows >= self.split_max_rows or points <= self.scan_serial_points

    def codes_literal(self, op: str, position: int, dtype: np.dtype) -> bool:
        """Whether the code of operation `op` depends on the value of a constant operand of
        `dtype` at `position`, which then stays in the code rather than becoming a kernel
        argument: a power's exponent (x**2 is a multiplication, as compilers also make it), and
        an integer divisor or shift (x // 7 is a multiplication and shifts, where a division by
        a value known only at run time takes tens of cycles a point)."""
        if op == "power" and position == 1:
            return True
        return np.dtype(dtype).kind in "iu" and position == 1 and op in _INTEGER_DIVISORS

    def times_are_real(self) -> bool:
        """Whether a call's time on this target says how fast it runs (numpy_fallback.py)."""
        return True

    def render(self, nest, header: str = ""):
        """The source of the module holding `nest`'s kernel (a codegen KernelSource)."""
        raise NotImplementedError

    def executable(self, plan, sources, leaf_kinds, options):
        """A callable that runs `plan` on arguments (graph input order)."""
        raise NotImplementedError

    def may_be_part(self, nest) -> bool:
        """Whether pointwise kernel `nest` may run as a part of a kernel of several parts: while
        it is small, as a part computes its loop variables from the flat index at every point
        and a large kernel saves little by sharing a launch."""
        return nest.outer_size <= self.part_max_points

    def strategy_text(self, nest) -> str:
        """How a kernel spreads its loops over the target's cores, in words, for explain."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<numfuse target {self.name}>"
