"""Updates of disjoint regions as parts of one kernel (plan/horizontal.py, loops/horizontal.py):
the printed kernel, the points each loop nest touches, why a kernel could not join the one
before it, the cap on parts, and one compiled code for the runs of one loop body. Their values
against NumPy: run/test_disjoint_updates.py."""

import numpy as np

import numfuse
from numfuse.loops.horizontal import Access, access_boxes, boxes_overlap
from numfuse.plan.horizontal import MAX_PARTS
from numfuse.targets.cpu import CPU
from numfuse.targets.cuda import CUDA
from numfuse_tests.trace.test_plans import split_reason


def borders(u):
    u[0, :] = 0.0
    u[-1, :] = 0.0
    u[:, 0] = 1.0
    u[:, -1] = 1.0
    return u


def test_the_borders_of_a_grid_print_as_two_kernels_of_two_parts():
    plan = numfuse.jit(borders).plan(np.zeros((6, 7)))
    assert len(plan.kernels) == 2
    assert str(plan.kernels[0].nest) == """\
kernel nf_parts  pointwise[flat, 2 parts]
  in    p0_n0:i64=7  p1_off0:i64=5  p1_n0:i64=7  start1:i64=7
  out out_b:f64[6,7]  out_c:f64[6,7]
  for i0 < n0:  (n0=14)
    if i0 < start1:  part 0: p0_i0 < p0_n0 from i0
      store out_b[0, p0_i0] = 0.0:f64
    else:  part 1: p1_i0 < p1_n0 from i0 - start1
      store out_c[p1_off0, p1_i0] = 0.0:f64"""
    first, second = plan.kernels
    assert "2 parts of one kernel: they touch no common point" in first.reason
    assert split_reason(first.reason) == ""
    # The columns write the corners the rows wrote: NumPy's order, so a kernel after.
    assert split_reason(second.reason) == (
        "it writes points of a's buffer that the kernel before it writes: a true dependence, so it runs after"
    )
    # Bytes: each part writes its own region.
    assert [k.bytes_written for k in plan.kernels] == [2 * 7 * 8, 2 * 6 * 8]


def test_each_statement_bounds_the_points_it_touches():
    def f(u, v):
        u[1, 2:5] = v[::2, 0] * 2.0
        return u

    nest = numfuse.jit(f).plan(np.zeros((4, 6)), np.ones((6, 3))).kernels[0].nest
    boxes = access_boxes(nest)
    (store,) = boxes["out_e"]
    assert store.write and store.box == ((1, 1), (2, 4))
    (load,) = boxes["in_b"]
    assert not load.write and load.box[0] == (0, 4)


def test_boxes_of_other_views_meet_by_their_offsets():
    rows = Access(True, (4, 6), False, ((1, 1), (0, 5)))  # row 1 of a (4, 6) array: offsets 6..11
    flat = Access(False, (24,), False, ((12, 23),))
    assert not boxes_overlap(rows, flat)
    assert boxes_overlap(rows, Access(False, (24,), False, ((11, 11),)))
    assert boxes_overlap(rows, Access(False, (24,), True, ((12, 23),)))  # strided: assumed to meet
    assert not boxes_overlap(rows, Access(False, (4, 6), False, ((2, 1), (0, 5))))  # no point


def test_a_row_read_where_the_update_does_not_write_needs_no_temporary():
    def copy_row(u):
        u[0] = u[1]
        return u

    def shift(u):
        u[1:] = u[:-1]
        return u

    plan = numfuse.jit(copy_row).plan(np.zeros((4, 5)))
    assert len(plan.kernels) == 1 and "temporary" not in plan.kernels[0].reason, str(plan)
    plan = numfuse.jit(shift).plan(np.zeros((4, 5)))
    assert len(plan.kernels) == 2 and "temporary" in plan.kernels[0].reason, str(plan)


def diagonal(u):
    # From 1: an index of 0 is a constant in the code, the others are arguments (`off0`).
    for i in range(1, u.shape[0]):
        u[i, i] = -u[i, i]
    return u


def test_parts_are_capped_and_the_runs_of_one_loop_body_are_one_code():
    n = 2 * MAX_PARTS + 4
    jf = numfuse.jit(diagonal)
    plan = jf.plan(np.zeros((n, n)))
    assert [len(k.members) for k in plan.kernels] == [MAX_PARTS, MAX_PARTS, 3]
    assert split_reason(plan.kernels[1].reason).endswith(f"; the kernel before it already has {MAX_PARTS} parts")
    sources = jf.kernel_sources(np.zeros((n, n)))
    assert sources[0].code_digest == sources[1].code_digest
    assert sources[0].code_digest != sources[2].code_digest


def test_each_target_says_which_kernels_may_be_parts():
    def halves(u, v):
        u[:, :50] = v[:, :50] + 1.0
        u[:, 50:] = v[:, 50:] - 1.0
        return u

    u, v = np.zeros((100, 100)), np.ones((100, 100))
    assert 100 * 50 > CPU.part_max_points and 100 * 50 <= CUDA.part_max_points
    assert len(numfuse.jit(halves, target="cpu").plan(u, v).kernels) == 2
    assert len(numfuse.jit(halves, target="cuda").plan(u, v).kernels) == 1
    # Small ones join on both.
    assert len(numfuse.jit(halves, target="cpu").plan(u[:40], v[:40]).kernels) == 1

    def rows(u, v):  # each half one flat loop of 80,000 points
        u[:80000] = v[:80000] + 1.0
        u[80000:] = v[80000:] - 1.0
        return u

    u, v = np.zeros(160000), np.ones(160000)
    assert 80000 > CUDA.part_max_points
    assert len(numfuse.jit(rows, target="cuda").plan(u, v).kernels) == 2  # would lose its unrolled loop
    assert len(numfuse.jit(rows, target="cpu").plan(u, v).kernels) == 1  # a loop a part: as fast


def test_a_reduction_between_updates_is_a_kernel_of_its_own():
    def f(u):
        u[0] = 1.0
        s = u.sum()
        u[-1] = s
        return u

    plan = numfuse.jit(f).plan(np.zeros((4, 5)))
    assert all(not k.members for k in plan.kernels), str(plan)


def test_elementwise_results_of_other_shapes_are_parts_of_one_kernel():
    def f(x):
        # Three domains that do not broadcast together, all reading x, each through its own view.
        return x.reshape(3, 2, 4) + 1.0, x.ravel()[::3] * 2.0, np.expand_dims(x, 1) * x[:, None, :]

    plan = numfuse.jit(f).plan(np.ones((4, 6), np.float32))
    (kernel,) = plan.kernels
    assert len(kernel.members) == 3 and plan.bytes_moved == plan.min_bytes
    # x is read through two views: two parameters, both x's buffer.
    names = [b.name for b in kernel.nest.buffers if b.role == "in"]
    assert names == ["in_a", "in_p2_a"], names
    assert kernel.buffer_vars["in_a"] is kernel.buffer_vars["in_p2_a"] is plan.graph.inputs[0]


def test_the_cpu_runs_each_part_as_a_loop_of_its_own():
    # One loop a part, without a branch at every point (LLVM vectorizes each); the GPU's grid
    # branches to a part at each point.
    plan = numfuse.jit(borders, target="cpu").plan(np.zeros((6, 7)))
    cpu = CPU.render(plan.kernels[0].nest).source
    assert "for lin in prange(start1):" in cpu and "for lin in prange(total - start1):" in cpu
    assert "if i0 < start1" not in cpu
    gpu = CUDA.render(plan.kernels[0].nest).source
    assert "if i0 < start1:" in gpu
