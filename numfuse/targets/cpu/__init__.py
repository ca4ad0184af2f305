"""The CPU target: each kernel a pair of Numba CPU functions, parallel and serial
(targets/cpu/codegen.py), run in place on the caller's NumPy arrays (executable.py).

Its planning numbers: a reduction's rows stay in a core's share of L2 between phases (a row
longer than row_cache_bytes is read from memory in each phase, and softmax's sum joins its
maximum's pass); few long rows split into fixed chunks across threads."""

from __future__ import annotations

from dataclasses import dataclass

from ..base import Target


@dataclass(frozen=True, repr=False)
class CpuTarget(Target):
    # Row reductions of at most this many points sum them in order, in one accumulator (as
    # NumPy's pairwise sum does below 8 points): lanes would leave their unrolled loop unused,
    # and the scratch row of a computed point's lanes costs more than the row.
    short_row_points: int = 7

    # A call of fewer points than this runs the serial function: waking threads costs more.
    serial_points: int = 1 << 15
    # A split reduction's chunks: at least this many points each, at most this many in all
    # (fixed numbers, so the partial results, and the bits, are the same for any thread count).
    split_chunk_points: int = 1 << 14
    split_max_chunks: int = 64
    # A column reduction's chunks: at least this many reduced points (rows) each.
    column_chunk_rows: int = 64
    # Independent accumulators of a reduction along its innermost loop (lanes.lanes_loop).
    lanes: int = 8
    # How far ahead (bytes) a reduction's lanes prefetch the rows they read (lanes._prefetches):
    # 2 KiB ran a 512 MiB row sum 1.4x faster on one thread and 1.5x on two, as fast as torch.compile's
    # (benchmarks/results/2026-12-03-prefetch-ab-cpu-target.md).
    prefetch_bytes: int = 2048
    # A matrix product of stored operands summing more terms than this runs in NumPy's own
    # matmul (its BLAS), not as a fused sum: that reads its operands at memory bandwidth on every
    # core, blocked for reuse, and gives NumPy's bits, whose order of summation is the BLAS's
    # (4000 x 4000 @ 4000: 4.2 ms against 8.7 ms fused). Shorter sums (outer products, batches
    # of tiny matrices) fuse, and so do products of a computed operand (`alpha * A @ x`), which
    # the library would need stored first: a pass to write it and one to read it again. A dot
    # product of stored vectors is NumPy's whatever its length: its one output gains nothing from
    # a kernel, and the BLAS's bits are the ones a recursion like npbench's durbin builds on.
    fused_product_terms: int = 16

    def fuses_product(self, dtype, sizes, space, terms, computed):
        fused, why = super().fuses_product(dtype, sizes, space, terms, computed)
        if fused and not computed and (terms > self.fused_product_terms or (terms > 1 and space == terms)):
            return False, (f"its operands are stored and its sums of {terms} products run in NumPy's matmul "
                           f"on the CPU target (its BLAS's speed and bits); sums of at most "
                           f"{self.fused_product_terms} with several outputs, or of a computed operand, fuse")
        return fused, why

    def nsplit(self, nest) -> int:
        """The chunks a reduction's reduced points are cut into: a split reduction's (few long
        rows), or a single-phase "columns" reduction's, whose threads then stream whole rows of
        the input; 1: not cut."""
        from .codegen import column_chunks, split_chunks
        from .pairwise import uses_pairwise

        if nest.kind == "reduction" and nest.schedule == "columns":
            if len(nest.phases) != 1:
                return 1
            return column_chunks(nest, self.split_chunk_points, self.split_max_chunks, self.column_chunk_rows)
        if not nest.split:
            return 1
        chunks = split_chunks(nest, self.split_chunk_points, self.split_max_chunks)
        if any(uses_pairwise(nest, p, self.lanes) for p in nest.phases):
            if any(a.blocks for a in nest.accumulators):
                # A sum of cast values: NumPy adds its buffers' sums one after another, in
                # one chain; one job a row follows it.
                return 1
            # NumPy's pairwise sum: nodes of its tree at one depth (codegen._split_ast)
            return 1 << (chunks.bit_length() - 1)
        return chunks

    def render(self, nest, header: str = ""):
        from .codegen import render

        short = nest.kind == "reduction" and nest.inner_size <= self.short_row_points
        return render(nest, header, self.nsplit(nest), 1 if short else self.lanes, self.prefetch_bytes)

    def executable(self, plan, sources, leaf_kinds, options):
        from .executable import CpuExecutable

        return CpuExecutable(plan, sources, leaf_kinds, self, options.get("label", "the function"))

    def may_be_part(self, nest) -> bool:
        """A flat kernel of any size: a part is a loop of its own here (codegen._part_loops),
        as fast as the kernel alone. One of several loops only up to part_max_points: as a part
        it computes its loop variables at every point, not once a row."""
        return nest.schedule == "flat" or nest.outer_size <= self.part_max_points

    def strategy_text(self, nest) -> str:
        if nest.kind == "pointwise":
            if nest.schedule == "2d":
                return "; ".join(["2d: a prange over the rows of all loops but the last (their indices computed once "
                                  "per row), the last loop inside, serial and vectorizable"] + self._trig_text(nest))
            if "parts" in nest.strategy:
                return "; ".join(["flat, in parts: each part a prange over its own points, one part after another, "
                                  "in one function"] + self._trig_text(nest))
            return "; ".join(["flat: a prange over all points, each thread a contiguous range"] + self._trig_text(nest))
        if nest.schedule == "columns" and self.nsplit(nest) > 1:
            parts = [f"columns: the reduced points cut into {self.nsplit(nest)} fixed chunks, a prange over (block of "
                     "outputs, chunk) jobs streaming whole rows into partial results, combined in chunk order"]
        else:
            what = "outputs (rows)" if nest.schedule == "rows" else "outputs (columns)"
            parts = [f"{nest.schedule}: a prange over the {what}; each output's reduced points in one thread, in order"]
        if nest.scans:
            parts.append("a scan: each row's running value in that thread, point by point (NumPy's order)")
        if len(nest.phases) > 1:
            parts.append(f"{len(nest.phases)} passes over each row (phases; a short row stays in cache between them)")
        if nest.split and nest.schedule == "rows":
            parts.append("each row cut into fixed chunks (a prange over rows and chunks), combined in chunk order")
        parts.append(f"calls under {self.serial_points} points run serially")
        return "; ".join(parts + self._trig_text(nest))

    @staticmethod
    def _trig_text(nest) -> list[str]:
        from .codegen import uses_trig

        if not uses_trig(nest):
            return []
        return ["sin and cos vectorized (vector_math.py) in each loop whose arguments are all within 2**28 "
                "(float32) or 1e6 (float64), checked first; a loop meeting a larger one, or inf, runs libm's"]


CPU = CpuTarget(
    name="cpu",
    # 256 KiB: a core's share of L2 on current server CPUs (1-2 MiB per core), with room for
    # the other streams a kernel reads.
    row_cache_bytes=256 * 1024,
    split_max_rows=64,
    split_min_reduced=1 << 15,
    column_cache_rows=8,
    row_cache_place="L2",
    description="Numba parallel CPU functions, in place on NumPy arrays",
)
