"""Views, item assignment and strided arguments at trace time: printed IR, loop nests, plans."""

import numpy as np
import pytest

import numfuse
from numfuse.ir import format_graph
from numfuse_tests.helpers import with_offsets

X = np.zeros((5, 6), np.float32)


def nest_text(fn, *args, k=0):
    return with_offsets(numfuse.jit(fn).plan(*args).kernels[k].nest)


def test_stencil_is_one_kernel_loading_at_offsets():
    def f(a):
        return 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])

    graph = format_graph(numfuse.jit(f).graph(X), with_locs=False)
    assert "b:f32[3,4] = slice[start=(0,1) step=(1,1) drop=()] a" in graph
    plan = numfuse.jit(f).plan(X)
    assert len(plan.kernels) == 1 and plan.bytes_moved == plan.min_bytes
    text = nest_text(f, X)
    for load in ("in_a[i0, i1 + 1]", "in_a[i0 + 2, i1 + 1]", "in_a[i0 + 1, i1]", "in_a[i0 + 1, i1 + 2]"):
        assert f"load {load}" in text, text


def test_steps_negative_steps_and_integer_indices_are_affine_loads():
    text = nest_text(lambda x: x[::2, ::-1] + x[1, None, :], X)
    assert "load in_a[2*i0, -i1 + 5]" in text and "load in_a[1, i1]" in text, text
    text = nest_text(lambda x: x[::2, 1:] + x[1, 1:], X)
    assert "load in_a[2*i0, i1 + 1]" in text and "load in_a[1, i1 + 1]" in text, text


def test_view_functions_are_index_maps_without_kernels_of_their_own():
    def f(x):
        return (np.swapaxes(x, 0, 1) + np.moveaxis(x[..., None], 2, 0)[0].T
                + np.expand_dims(x, 0).squeeze().T + np.broadcast_to(x[:1], (5, 6)).T)

    plan = numfuse.jit(f).plan(X)
    assert len(plan.kernels) == 1
    assert numfuse.jit(f).graph(X).eqns[-1].out.aval.shape == (6, 5)


def test_reshape_view_merges_with_div_and_mod():
    text = nest_text(lambda x: x.reshape(3, 10) + x.T.T.reshape(3, 10), X)
    assert "load in_a[(i1 + 10*i0) // 6, (i1 + 10*i0) % 6]" in text, text
    text = nest_text(lambda x: x.reshape(5, 2, 3) * 2.0, X)
    assert "load in_a[i0, i2 + 3*i1]" in text, text  # a split is affine
    text = nest_text(lambda x: x.reshape(30)[::2], X)
    assert "load in_a[(2*i0) // 6, (2*i0) % 6]" in text, text


def test_reshape_that_numpy_copies_is_materialized_with_a_reason():
    plan = numfuse.jit(lambda x: x.T.reshape(-1) * 2.0).plan(X)
    assert len(plan.kernels) == 2, str(plan)
    assert "reads b from #0" in plan.kernels[1].reason
    graph = format_graph(numfuse.jit(lambda x: x.T.reshape(-1) * 2.0).graph(X), with_locs=False)
    assert "reshape[shape=(30,) copy=True] b" in graph


def test_setitem_on_an_argument_is_an_update_written_back():
    def f(a, v):
        a[1:-1, ::2] = v
        return a

    v = np.zeros((3, 3), np.float32)
    graph = format_graph(numfuse.jit(f).graph(X, v), with_locs=False)
    assert graph == (
        "{ lambda a:f32[5,6] b:f32[3,3] .\n"
        "  let c:f32[5,6] = update[at=[i0 + 1, 2*i1] shape=(3,3)] a b\n"
        "  in (c)  writes a<-c }"
    )
    plan = numfuse.jit(f).plan(X, v)
    assert len(plan.kernels) == 1
    assert plan.kernels[0].reason.startswith("update c = a with region [3,3] set, in place in a's buffer")
    assert "store out_c[i0 + 1, 2*i1] = v0" in with_offsets(plan.kernels[0].nest)
    assert plan.kernels[0].bytes_written == 36


def test_in_place_stencil_computes_the_right_side_into_a_temporary():
    def jacobi(a):
        a[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])

    plan = numfuse.jit(jacobi).plan(X)
    assert len(plan.kernels) == 2, str(plan)
    assert "(a temporary: the right side of j reads the array it writes at other points" in plan.kernels[0].reason
    assert plan.kernels[1].spec.update is not None


def test_pointwise_update_reading_only_its_own_points_is_one_kernel():
    def f(a, b):
        a += b
        a[0] *= 2  # reads a[0] only where it writes
        return None

    plan = numfuse.jit(f).plan(X, X)
    assert len(plan.kernels) == 2 and all(k.spec.update is not None for k in plan.kernels)


def test_out_argument_assignment_is_one_kernel():
    def f(x, out):
        out[...] = np.exp(x)

    plan = numfuse.jit(f).plan(X, X.copy())
    assert len(plan.kernels) == 1 and plan.bytes_moved == 2 * X.nbytes


def test_local_array_updates_copy_first_and_leave_the_source_alone():
    def f(x):
        y = x.copy()
        y[0] = 1.0
        return y, x

    graph = format_graph(numfuse.jit(f).graph(X), with_locs=False)
    assert "b:f32[5,6] = convert[dtype=f32] a" in graph and "writes" not in graph


def test_reading_an_old_version_after_it_was_overwritten_writes_into_a_copy():
    def f(x):
        x[0] = 1.0
        y = x.copy()  # the same value as x now: its buffer is x's
        x[1] = 2.0
        return y + x.sum()  # y is read after x.sum(), which needs x[1] = 2 written

    plan = numfuse.jit(f).plan(X)
    # The second write goes into a copy, which y's later read needs; the first stays in place.
    converts = [e for e in plan.graph.eqns if e.prim == "convert"]
    assert len(converts) == 1 and converts[0].loc.text == "x[1] = 2.0"
    assert any("old values are read after this write" in note for note in plan.notes)


def test_a_reduction_read_before_an_overwrite_plans():
    def f(x):
        d = x.sum()  # NumPy reads x before the write; the plan fuses the sum later
        x[0] = 0.0
        return x * d

    plan = numfuse.jit(f).plan(X)
    # Not yet at the fewest bytes: the write goes into a copy rather than the sum running first.
    assert [e.loc.text for e in plan.graph.eqns if e.prim == "convert"] == ["x[0] = 0.0"]


def test_writing_through_a_slice_view_writes_the_base():
    def f(x):
        v = x[1:, ::2]
        v[1:, 1] = 5.0
        return x

    graph = format_graph(numfuse.jit(f).graph(X), with_locs=False)
    assert "update[at=[i0 + 2, 2] shape=(3,)] a 5.0:f32" in graph


def test_strided_arguments_keep_their_rank_and_signature():
    f = numfuse.jit(lambda x: x * 2.0)
    c = f.plan(X).kernels[0].nest
    fortran = f.plan(np.asfortranarray(X)).kernels[0].nest
    assert c.buffer("in_a").view == (30,) and not c.buffer("in_a").strided
    assert fortran.buffer("in_a").view == (5, 6) and fortran.buffer("in_a").strided
    assert "load in_a[i0, i1]" in str(fortran)
    assert fortran.buffer("out_b").view == (30,) or fortran.buffer("out_b").view == (5, 6)


def test_what_several_branches_of_a_concatenation_read_is_computed_once_before_them():
    def step(y):
        return y + 0.5 * np.array([y[1] - y[0], y[0] * y[2], y[1] + y[2]])

    text = nest_text(step, np.zeros((3, 4), np.float32))
    before, branches = text.split("if i0 < 1:")
    for load in ("in_a[0, i1]", "in_a[1, i1]", "in_a[2, i1]"):
        assert f"load {load}" in before and f"load {load}" not in branches, text
    # The same points of a value read by two branches (here at each point's own): before them.
    text = nest_text(lambda x: np.concatenate([(np.sin(x) + 1)[:2] * 2, (np.sin(x) + 1)[2:] * 3]), X)
    before, branches = text.split("if i0 < 2:")
    assert before.count("= sin") == 1 and "= sin" not in branches and "= add" in before, text
    # What one branch alone reads stays in it: other rows do not compute it.
    text = nest_text(lambda x: np.concatenate([x[:1] * 3, x[1:] - 1]), X)
    before, branches = text.split("if i0 < 1:")
    assert "= multiply" not in before and "= multiply" in branches and "load in_a[0, i1]" in branches, text


def test_an_unrolled_loop_of_concatenated_rows_lowers_to_a_kernel_linear_in_its_steps():
    def euler(y, steps):
        for _ in range(steps):  # each step reads every row of the last
            y = y + 0.001 * np.array([10 * (y[1] - y[0]), y[0] * (28 - y[2]) - y[1], y[0] * y[1] - 2.5 * y[2]])
        return y

    y = np.zeros((3, 50))
    sizes = [len(str(numfuse.jit(euler, static_argnums=1).plan(y, n).kernels[0].nest)) for n in (4, 8, 16)]
    assert sizes[2] < 2.5 * sizes[1] < 6.25 * sizes[0], sizes  # (each branch computing it all: x4 a doubling)


def test_concatenate_and_stack_shapes_and_errors_follow_numpy():
    f = numfuse.jit(lambda x, y: (np.concatenate([x, y]), np.stack([x, x], axis=-1)))
    graph = f.graph(X, X[:2])
    assert [o.aval.shape for o in graph.outputs] == [(7, 6), (5, 6, 2)]
    with pytest.raises(ValueError, match="must match exactly"):
        numfuse.jit(lambda x, y: np.concatenate([x, y], axis=0)).graph(X, X[:, :2])
